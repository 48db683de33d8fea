import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RestartBackoff } from './container.ts';

describe('RestartBackoff: the kubelet’s CrashLoopBackOff', () => {
  it('restarts at once, then waits 10 s doubling up to 5 min', () => {
    const b = new RestartBackoff(10_000, 300_000);
    const waits: number[] = [];
    let now = 0;
    for (let i = 0; i < 9; i++) {
      const wait = b.delay(now);
      waits.push(wait);
      now += wait;
      b.restarted(now);
      now += 1_000; // it runs a second, then exits again
    }
    assert.deepEqual(waits, [0, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000, 300_000]);
  });

  it('forgets the back-off after a run of twice its maximum', () => {
    const b = new RestartBackoff(10_000, 300_000);
    b.delay(0);
    b.restarted(0);
    assert.equal(b.delay(1_000), 10_000);
    b.restarted(11_000);
    assert.equal(b.delay(11_000 + 600_001), 0);
  });
});
