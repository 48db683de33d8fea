import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseGoDuration } from './duration.ts';

describe('parseGoDuration', () => {
  it('reads what Go reads', () => {
    assert.equal(parseGoDuration('60s'), 60_000);
    assert.equal(parseGoDuration('1m30s'), 90_000);
    assert.equal(parseGoDuration('1.5h'), 5_400_000);
    assert.equal(parseGoDuration('250ms'), 250);
    assert.equal(parseGoDuration('.5s'), 500);
    assert.equal(parseGoDuration('1500us'), 1.5);
    assert.equal(parseGoDuration('2\u00b5s'), 0.002);
    assert.equal(parseGoDuration('0'), 0);
    assert.equal(parseGoDuration('-1s'), -1000);
    assert.equal(parseGoDuration('+2m'), 120_000);
  });

  it('rejects what Go rejects', () => {
    for (const bad of ['60', '', '1 m', '1d', 's', '1s2', 'ten seconds', '1.s.', '-']) {
      assert.equal(parseGoDuration(bad), undefined, bad);
    }
  });
});
