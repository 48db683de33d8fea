import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ageMs, engineWaitBounds, waitByAge } from './wait-by-age.ts';

describe('waits by age', () => {
  it('waits half the age, between the floor and the cap', () => {
    const bounds = { initialMs: 1_000, maxMs: 10_000 };
    assert.equal(waitByAge(0, bounds), 1_000);
    assert.equal(waitByAge(8_000, bounds), 4_000);
    assert.equal(waitByAge(3_600_000, bounds), 10_000);
    // A controller may wait longer than an engine: the cap is the caller's.
    assert.equal(waitByAge(100_000, { initialMs: 250, maxMs: 60_000 }), 50_000);
  });

  it('counts an unknown or future start as age 0', () => {
    assert.equal(ageMs(undefined, 5_000), 0);
    assert.equal(ageMs(Number.NaN, 5_000), 0);
    assert.equal(ageMs(6_000, 5_000), 0);
    assert.equal(ageMs(1_000, 5_000), 4_000);
  });

  it('bounds an engine policy to 10 s, the floor within the cap', () => {
    assert.deepEqual(engineWaitBounds({}), { initialMs: 1_000, maxMs: 10_000 });
    assert.deepEqual(engineWaitBounds({ maxMs: 60_000 }), { initialMs: 1_000, maxMs: 10_000 });
    assert.deepEqual(engineWaitBounds({ initialMs: 5_000, maxMs: 2_000 }), {
      initialMs: 2_000,
      maxMs: 2_000,
    });
    assert.deepEqual(engineWaitBounds({ initialMs: 0, maxMs: 0 }), { initialMs: 1, maxMs: 1 });
  });
});
