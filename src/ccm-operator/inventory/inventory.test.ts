import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubernetesObject } from '../../kube/index.ts';
import { PLATFORM_LABEL, operandKind } from './kinds.ts';
import { planPrune, stamp } from './plan.ts';
import { rolloutOf } from './rollout.ts';

const MANAGER = 'cloud-controller-manager';
const obj = (
  kind: string,
  name: string,
  extra: Partial<KubernetesObject['metadata']> = {},
  apiVersion = 'v1',
) => ({ apiVersion, kind, metadata: { name, namespace: 'ns', ...extra } }) as KubernetesObject;
const ours = (platform: string) => ({
  labels: { [PLATFORM_LABEL]: platform },
  managedFields: [{ manager: MANAGER, operation: 'Apply' }],
});

describe('the operand inventory', () => {
  it('labels what it applies with the platform, leaving the original alone', () => {
    const o = obj('ConfigMap', 'c', { labels: { app: 'x' } });
    const s = stamp(o, 'OpenStack');
    assert.deepEqual(s.metadata?.labels, { app: 'x', [PLATFORM_LABEL]: 'OpenStack' });
    assert.deepEqual(o.metadata?.labels, { app: 'x' });
    // What the renderer marked as every platform's keeps its mark.
    const shared = stamp(obj('ServiceAccount', 's', { labels: { [PLATFORM_LABEL]: 'shared' } }), 'AWS');
    assert.equal(shared.metadata?.labels?.[PLATFORM_LABEL], 'shared');
  });

  it('removes what the new set lacks, workloads first, and only what it applied', () => {
    const desired = [obj('ConfigMap', 'keep')];
    const inventory = [
      obj('ServiceAccount', 'old-sa', ours('OpenStack')),
      obj('ConfigMap', 'keep', ours('OpenStack')),
      obj('Deployment', 'old', ours('OpenStack'), 'apps/v1'),
      obj(
        'ClusterRole',
        'old-role',
        { ...ours('OpenStack'), namespace: undefined },
        'rbac.authorization.k8s.io/v1',
      ),
      // Labelled by someone else (an Update, or another manager): not ours to delete.
      obj('ConfigMap', 'copied-label', {
        labels: { [PLATFORM_LABEL]: 'OpenStack' },
        managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
      }),
      obj('ConfigMap', 'updated-only', {
        labels: { [PLATFORM_LABEL]: 'AWS' },
        managedFields: [{ manager: MANAGER, operation: 'Update' }],
      }),
      obj('ConfigMap', 'going', { ...ours('AWS'), deletionTimestamp: new Date() }),
      // The namespace also holds cloud-conf and the CCM's Lease: applied, never removed.
      obj('Namespace', 'openshift-cloud-controller-manager', { ...ours('shared'), namespace: undefined }),
    ];
    assert.deepEqual(
      planPrune(desired, inventory, MANAGER).map((o) => `${o.kind}/${o.metadata?.name}`),
      ['Deployment/old', 'ClusterRole/old-role', 'ServiceAccount/old-sa'],
    );
  });

  it('knows the kinds it may apply', () => {
    assert.equal(operandKind(obj('Deployment', 'd', {}, 'apps/v1'))?.plural, 'deployments');
    assert.equal(operandKind(obj('Secret', 's')), undefined);
    assert.equal(operandKind(obj('Deployment', 'd', {}, 'apps/v1beta1')), undefined);
  });
});

describe('rollouts', () => {
  const deployment = (generation: number, status: Record<string, unknown>, replicas = 2) =>
    ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'ccm', namespace: 'ns', generation },
      spec: { replicas },
      status,
    }) as KubernetesObject;

  it('judges a Deployment as kubectl rollout status does', () => {
    assert.deepEqual(rolloutOf(deployment(2, { observedGeneration: 1 })), {
      state: 'progressing',
      message: 'Deployment ns/ccm: generation 2 not observed yet',
    });
    assert.equal(
      rolloutOf(deployment(2, { observedGeneration: 2, updatedReplicas: 1, replicas: 2 }))?.state,
      'progressing',
    );
    assert.equal(
      rolloutOf(
        deployment(2, { observedGeneration: 2, updatedReplicas: 2, replicas: 3, availableReplicas: 2 }),
      )?.state,
      'progressing',
    );
    assert.equal(
      rolloutOf(
        deployment(2, { observedGeneration: 2, updatedReplicas: 2, replicas: 2, availableReplicas: 1 }),
      )?.state,
      'progressing',
    );
    assert.deepEqual(
      rolloutOf(
        deployment(2, { observedGeneration: 2, updatedReplicas: 2, replicas: 2, availableReplicas: 2 }),
      ),
      { state: 'done' },
    );
    assert.equal(
      rolloutOf(
        deployment(2, {
          observedGeneration: 2,
          conditions: [
            {
              type: 'Progressing',
              status: 'False',
              reason: 'ProgressDeadlineExceeded',
              message: 'ReplicaSet "ccm-1" has timed out progressing.',
            },
          ],
        }),
      )?.state,
      'failed',
    );
  });

  it('judges a DaemonSet on updated pods, not unavailable ones', () => {
    const ds = (status: Record<string, unknown>) =>
      ({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'n', generation: 1 },
        status,
      }) as KubernetesObject;
    assert.equal(
      rolloutOf(ds({ observedGeneration: 1, desiredNumberScheduled: 3, updatedNumberScheduled: 2 }))?.state,
      'progressing',
    );
    assert.deepEqual(
      rolloutOf(
        ds({
          observedGeneration: 1,
          desiredNumberScheduled: 3,
          updatedNumberScheduled: 3,
          numberUnavailable: 1,
        }),
      ),
      { state: 'done' },
    );
    assert.equal(rolloutOf(obj('ConfigMap', 'c')), undefined);
  });
});
