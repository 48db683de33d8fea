/**
 * When a creating volume is looked at again: at the time Cinder typically needs, then quickly, then
 * by how long it has overrun — never by a clock, always from the volume's own created_at.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backoffPolicy, volumeWait } from './backoff.ts';

const CREATED = '2026-01-01T00:00:00.000000';
const at = (ms: number) => Date.parse('2026-01-01T00:00:00Z') + ms;

describe('volumeWait', () => {
  const policy = backoffPolicy({ initialMs: 1_000, maxMs: 10_000, volumeCreateMs: 3_000 });

  it('looks first when the volume should be available', () => {
    assert.equal(volumeWait(CREATED, at(0), policy), 3_000);
    assert.equal(volumeWait(CREATED, at(1_200), policy), 1_800);
    assert.equal(volumeWait(CREATED, at(2_990), policy), 10);
  });

  it('then every quarter of initialMs right after, fewer and fewer looks the longer it overruns', () => {
    assert.equal(volumeWait(CREATED, at(3_000), policy), 250);
    assert.equal(volumeWait(CREATED, at(3_400), policy), 250);
    assert.equal(volumeWait(CREATED, at(5_000), policy), 1_000);
    assert.equal(volumeWait(CREATED, at(13_000), policy), 5_000);
    assert.equal(volumeWait(CREATED, at(60_000), policy), 10_000);
  });

  it('without an expected time (0), by the age alone, as before', () => {
    const byAge = backoffPolicy({ initialMs: 1_000, maxMs: 10_000, volumeCreateMs: 0 });
    assert.equal(volumeWait(CREATED, at(0), byAge), 1_000);
    assert.equal(volumeWait(CREATED, at(6_000), byAge), 3_000);
  });

  it('3 s by default', () => {
    assert.equal(backoffPolicy().volumeCreateMs, 3_000);
  });
});
