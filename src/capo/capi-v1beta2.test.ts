/**
 * Cluster API v1beta2 Cluster and Machine through the Kubernetes emulator, which converts through
 * the bed's webhook as kube-apiserver does: written in v1beta2 (as CAPI v1.11's templates write
 * them), stored as v1beta1, reconciled by the Cluster API core stand-in (which reads v1beta1), and
 * readable in both versions, with v1beta2's own fields kept.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../sim/openstack/testing/harness.ts';
import { capoKinds, CLUSTER_NAME_LABEL, type Cluster, type Machine } from './api/index.ts';
import {
  clusterV1beta2,
  machineV1beta2,
  type ClusterV1beta2,
  type MachineV1beta2,
} from './api/capi-v1beta2.ts';
import { registerClusterAPICoreControllers } from './controllers/capi-core.ts';
import { CAPO_CONTROLLERS, startCapoEnv, type CapoEnv, type RunningCapo } from './testing/env.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 50 };
const CLUSTER = 'v1beta2-demo';
const MACHINE = 'v1beta2-demo-md-0';
const PROVIDER_ID = 'openstack:///3d1e2f4a-5b6c-4d7e-8f90-a1b2c3d4e5f6';
const CORE = 'capi-core-v1beta2';

CAPO_CONTROLLERS[CORE] = (mgr) => registerClusterAPICoreControllers(mgr, { machineWorkers: 2 });

describe('Cluster API v1beta2 Cluster and Machine', () => {
  let env: CapoEnv;
  let capo: RunningCapo;
  const key = (name: string) => ({ namespace: env.namespace, name });

  before(async () => {
    env = await startCapoEnv();
    capo = await env.startCapo({ controllers: [CORE] });
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  it('written in v1beta2, stored as v1beta1, reconciled, readable in both versions', async () => {
    const labels = { [CLUSTER_NAME_LABEL]: CLUSTER };
    await env.api.create<ClusterV1beta2>(clusterV1beta2.resource, {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: CLUSTER, namespace: env.namespace },
      spec: {
        infrastructureRef: {
          apiGroup: 'infrastructure.cluster.x-k8s.io',
          kind: 'OpenStackCluster',
          name: CLUSTER,
        },
      },
    });
    await env.api.create(capoKinds.OpenStackMachine, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackMachine',
      metadata: { name: MACHINE, namespace: env.namespace, labels },
      spec: { flavor: 'm1.small', image: { filter: { name: 'ubuntu-22.04' } }, providerID: PROVIDER_ID },
    });
    await env.api.patch(
      capoKinds.OpenStackMachine,
      key(MACHINE),
      'merge',
      { status: { ready: true, addresses: [{ type: 'InternalIP', address: '10.6.0.21' }] } },
      { subresource: 'status' },
    );
    await env.api.create<MachineV1beta2>(machineV1beta2.resource, {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: { name: MACHINE, namespace: env.namespace, labels },
      spec: {
        clusterName: CLUSTER,
        version: 'v1.32.4',
        bootstrap: { dataSecretName: MACHINE },
        infrastructureRef: {
          apiGroup: 'infrastructure.cluster.x-k8s.io',
          kind: 'OpenStackMachine',
          name: MACHINE,
        },
        minReadySeconds: 30,
        deletion: { nodeDrainTimeoutSeconds: 90 },
      },
    });

    // The stand-in reads v1beta1: the reference with the contract's version, the timeout in Go's form.
    const provisioned = await eventually(
      async () => {
        const m = await env.api.get<Machine>(capoKinds.Machine, key(MACHINE));
        return m.status?.phase === 'Provisioned' ? m : undefined;
      },
      { ...WAIT, what: `Machine ${MACHINE} Provisioned` },
    );
    assert.equal(provisioned!.apiVersion, 'cluster.x-k8s.io/v1beta1');
    assert.deepEqual(provisioned!.spec.infrastructureRef, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackMachine',
      name: MACHINE,
      namespace: env.namespace,
    });
    assert.equal(provisioned!.spec['nodeDrainTimeout'], '1m30s');
    assert.equal(provisioned!.spec.providerID, PROVIDER_ID);

    // In v1beta2: what the stand-in wrote, and what only v1beta2 holds, as written.
    const v1beta2 = await env.api.get<MachineV1beta2>(machineV1beta2.resource, key(MACHINE));
    assert.equal(v1beta2.apiVersion, 'cluster.x-k8s.io/v1beta2');
    assert.deepEqual(v1beta2.spec.infrastructureRef, {
      apiGroup: 'infrastructure.cluster.x-k8s.io',
      kind: 'OpenStackMachine',
      name: MACHINE,
    });
    assert.equal(v1beta2.spec.minReadySeconds, 30);
    assert.deepEqual(v1beta2.spec.deletion, { nodeDrainTimeoutSeconds: 90 });
    assert.equal(v1beta2.spec.providerID, PROVIDER_ID);
    assert.equal(v1beta2.status?.phase, 'Provisioned');
    assert.equal(v1beta2.status?.initialization?.infrastructureProvisioned, true);
    assert.deepEqual(v1beta2.status?.addresses, [{ type: 'InternalIP', address: '10.6.0.21' }]);

    const cluster = await env.api.get<Cluster>(capoKinds.Cluster, key(CLUSTER));
    assert.equal(cluster.spec?.infrastructureRef?.apiVersion, 'infrastructure.cluster.x-k8s.io/v1beta1');
    const clusterUp = await env.api.get<ClusterV1beta2>(clusterV1beta2.resource, key(CLUSTER));
    assert.deepEqual(clusterUp.spec?.infrastructureRef, {
      apiGroup: 'infrastructure.cluster.x-k8s.io',
      kind: 'OpenStackCluster',
      name: CLUSTER,
    });

    // Listed in v1beta2 too (one review for the list).
    const list = await env.api.list<MachineV1beta2>(machineV1beta2.resource, { namespace: env.namespace });
    assert.deepEqual(
      list.items.map((m) => [m.apiVersion, m.metadata?.name]),
      [['cluster.x-k8s.io/v1beta2', MACHINE]],
    );
  });
});
