import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import { deploymentStatus, type ReplicaSetCounts } from './status.ts';

const rolling = { type: 'RollingUpdate' as const, maxSurge: '25%', maxUnavailable: '25%' };

function deployment(status: V1Deployment['status'] = {}): V1Deployment {
  return {
    metadata: { name: 'd', generation: 3 },
    spec: { replicas: 2, progressDeadlineSeconds: 600, selector: {}, template: {} },
    status,
  };
}

const rs = (
  name: string,
  desired: number,
  active: number,
  ready: number,
  available: number,
): ReplicaSetCounts => ({
  name,
  desired,
  active,
  ready,
  available,
});

describe('deploymentStatus: the Deployment controller’s status', () => {
  it('counts replicas and says Available and NewReplicaSetAvailable once every replica is', () => {
    const s = deploymentStatus({
      deployment: deployment(),
      strategy: rolling,
      current: rs('d-new', 2, 2, 2, 2),
      old: [],
      created: false,
      nowMs: 0,
    });
    assert.equal(s.observedGeneration, 3);
    assert.deepEqual(
      [s.replicas, s.updatedReplicas, s.readyReplicas, s.availableReplicas, s.unavailableReplicas],
      [2, 2, 2, 2, 0],
    );
    const byType = Object.fromEntries((s.conditions ?? []).map((c) => [c.type, c.reason]));
    assert.deepEqual(byType, {
      Available: 'MinimumReplicasAvailable',
      Progressing: 'NewReplicaSetAvailable',
    });
  });

  it('is unavailable below replicas - maxUnavailable, and progressing while a rollout moves', () => {
    const s = deploymentStatus({
      deployment: deployment({ replicas: 2, updatedReplicas: 0, readyReplicas: 1, availableReplicas: 1 }),
      strategy: rolling,
      current: rs('d-new', 1, 1, 0, 0),
      old: [rs('d-old', 2, 2, 1, 1)],
      created: true,
      nowMs: 0,
    });
    assert.equal(s.unavailableReplicas, 2);
    const available = s.conditions?.find((c) => c.type === 'Available');
    assert.equal(available?.reason, 'MinimumReplicasUnavailable');
    const progressing = s.conditions?.find((c) => c.type === 'Progressing');
    assert.equal(progressing?.reason, 'ReplicaSetUpdated');
    assert.equal(progressing?.message, 'ReplicaSet "d-new" is progressing.');
  });

  it('times out after progressDeadlineSeconds without progress', () => {
    const at = '2025-01-01T00:00:00Z';
    const stuck = deployment({
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: 0,
      availableReplicas: 0,
      conditions: [
        {
          type: 'Progressing',
          status: 'True',
          reason: 'ReplicaSetUpdated',
          lastUpdateTime: at as unknown as Date,
          lastTransitionTime: at as unknown as Date,
        },
      ],
    });
    const input = { strategy: rolling, current: rs('d-new', 2, 1, 0, 0), old: [], created: false };
    const early = deploymentStatus({ ...input, deployment: stuck, nowMs: Date.parse(at) + 599_000 });
    assert.equal(early.conditions?.find((c) => c.type === 'Progressing')?.reason, 'ReplicaSetUpdated');
    const late = deploymentStatus({ ...input, deployment: stuck, nowMs: Date.parse(at) + 601_000 });
    const p = late.conditions?.find((c) => c.type === 'Progressing');
    assert.equal(p?.status, 'False');
    assert.equal(p?.reason, 'ProgressDeadlineExceeded');
  });
});
