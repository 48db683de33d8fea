import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { metaTime, microTime, timeMs } from './time.ts';

describe('API times', () => {
  it('writes Time at second precision and MicroTime with microseconds', () => {
    const ms = Date.UTC(2025, 0, 1, 10, 0, 0, 789);
    assert.equal(metaTime(ms), '2025-01-01T10:00:00Z');
    assert.equal(microTime(ms), '2025-01-01T10:00:00.789000Z');
  });

  it('reads a Time typed a Date by client-node or a string off the wire', () => {
    const ms = Date.UTC(2025, 0, 1, 10);
    assert.equal(timeMs(new Date(ms)), ms);
    assert.equal(timeMs('2025-01-01T10:00:00Z'), ms);
    assert.equal(timeMs(undefined), undefined);
    assert.equal(timeMs('not a time'), undefined);
  });
});
