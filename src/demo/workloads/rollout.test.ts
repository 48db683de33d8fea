import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fenceposts, maxUnavailable, planRollout, type ReplicaSetView, type Strategy } from './rollout.ts';

const rolling: Strategy = { type: 'RollingUpdate', maxSurge: '25%', maxUnavailable: '25%' };

function rs(name: string, desired: number, available: number, createdAt: number): ReplicaSetView {
  return { name, desired, available, active: desired, terminating: 0, createdAt };
}

describe('rollout: the Deployment controller’s arithmetic', () => {
  it('rounds surge up and unavailable down, and never leaves both at 0', () => {
    assert.deepEqual(fenceposts(rolling, 2), { surge: 1, unavailable: 0 });
    assert.deepEqual(fenceposts(rolling, 10), { surge: 3, unavailable: 2 });
    assert.deepEqual(fenceposts({ type: 'RollingUpdate', maxSurge: 0, maxUnavailable: 0 }, 3), {
      surge: 0,
      unavailable: 1,
    });
    assert.equal(maxUnavailable({ type: 'Recreate' }, 4), 0);
    assert.equal(maxUnavailable({ type: 'RollingUpdate', maxSurge: 0, maxUnavailable: 5 }, 2), 2);
  });

  it('rolls 2 replicas one new available pod before one old stops', () => {
    // Simulate the controller and the pods: a pod becomes available one step after it is asked for.
    let cur = rs('new', 0, 0, 2);
    let old = rs('old', 2, 2, 1);
    const seen: string[] = [];
    for (let step = 0; step < 20; step++) {
      const plan = planRollout(2, rolling, cur, [old]);
      if (plan.size === 0) {
        if (cur.available === cur.desired && old.desired === 0) break;
        // Nothing to change: the pods catch up.
        cur = { ...cur, available: cur.desired, active: cur.desired };
        old = { ...old, available: old.desired, active: old.desired };
        continue;
      }
      cur = { ...cur, desired: plan.get('new') ?? cur.desired };
      old = { ...old, desired: plan.get('old') ?? old.desired };
      old = { ...old, available: Math.min(old.available, old.desired) };
      seen.push(`new=${cur.desired} old=${old.desired}`);
      // Never fewer than 2 available at once: old available + new available.
      assert.ok(cur.available + old.available >= 2, `availability dropped at ${seen.join(', ')}`);
    }
    assert.deepEqual(seen, ['new=1 old=2', 'new=1 old=1', 'new=2 old=1', 'new=2 old=0']);
  });

  it('drops the unavailable old pods first', () => {
    // 4 pods asked for, 3 must stay available, 1 new one is not: nothing may go yet.
    assert.equal(planRollout(3, rolling, rs('new', 1, 0, 2), [rs('old', 3, 1, 1)]).size, 0);
    const next = planRollout(3, { ...rolling, maxUnavailable: 1 }, rs('new', 1, 0, 2), [rs('old', 3, 1, 1)]);
    // maxScaledDown = 4 - 2 - 1 = 1: one unavailable old pod goes.
    assert.deepEqual([...next], [['old', 2]]);
  });

  it('scales the current ReplicaSet directly when nothing is rolling', () => {
    assert.deepEqual([...planRollout(3, rolling, rs('cur', 1, 1, 1), [])], [['cur', 3]]);
    assert.deepEqual([...planRollout(1, rolling, rs('cur', 3, 3, 1), [])], [['cur', 1]]);
  });

  it('recreates: old to 0, then the new one once no old pod runs', () => {
    const strategy: Strategy = { type: 'Recreate' };
    assert.deepEqual([...planRollout(2, strategy, rs('new', 0, 0, 2), [rs('old', 2, 2, 1)])], [['old', 0]]);
    const stopping = { ...rs('old', 0, 0, 1), terminating: 1 };
    assert.equal(planRollout(2, strategy, rs('new', 0, 0, 2), [stopping]).size, 0);
    assert.deepEqual([...planRollout(2, strategy, rs('new', 0, 0, 2), [rs('old', 0, 0, 1)])], [['new', 2]]);
  });
});
