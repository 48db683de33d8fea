import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { requeueCountedFrom } from './requeue.ts';

describe('requeueCountedFrom', () => {
  it('takes off the time since the wait was decided', () => {
    assert.deepEqual(requeueCountedFrom({ requeueAfterMs: 3_000 }, 1_000, 1_250), { requeueAfterMs: 2_750 });
  });

  it('never below 1 ms, and a wait already over is due at once', () => {
    assert.deepEqual(requeueCountedFrom({ requeueAfterMs: 100 }, 1_000, 5_000), { requeueAfterMs: 1 });
  });

  it('leaves a result without a requeue, an unknown start, or a start not before now as it is', () => {
    assert.deepEqual(requeueCountedFrom({}, 1_000, 2_000), {});
    assert.deepEqual(requeueCountedFrom({ requeueAfterMs: 500 }, undefined, 2_000), { requeueAfterMs: 500 });
    assert.deepEqual(requeueCountedFrom({ requeueAfterMs: 500 }, 2_000, 2_000), { requeueAfterMs: 500 });
  });
});
