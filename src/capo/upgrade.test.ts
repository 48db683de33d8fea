/**
 * The upgrade to the release that serves v1beta2: the CRDs of the release before (v1beta1 only, no
 * conversion), objects created and reconciled under them; then this release's CRDs applied over
 * them (v1beta2 served beside v1beta1, stored as v1beta1, the conversion webhook named) and capo
 * restarted. The objects keep working: read as they were and as v1beta2 (the emulator asks the
 * webhook, as kube-apiserver does), reconciled on, deleted cleanly, and
 * `status.storedVersions` still v1beta1 only, so nothing needs migrating.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isNotFound, kinds, type ResourceType } from '../kube/index.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
import { capoKinds, CLUSTER_NAME_LABEL, type Machine } from './api/index.ts';
import { machineV1beta2, type MachineV1beta2 } from './api/capi-v1beta2.ts';
import { registerClusterAPICoreControllers } from './controllers/capi-core.ts';
import { CAPO_CONTROLLERS, startCapoEnv, type CapoEnv, type RunningCapo } from './testing/env.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 50 };
const CLUSTER = 'upgrade-demo';
const MACHINE = 'upgrade-demo-md-0';
const PROVIDER_ID = 'openstack:///0b4c1f7e-7d0e-4b8e-9d55-5c1b2a7e9f01';
const CORE = 'capi-core-upgrade';

CAPO_CONTROLLERS[CORE] = (mgr) => registerClusterAPICoreControllers(mgr, { machineWorkers: 2 });

describe('upgrading from the v1beta1-only CRDs', () => {
  let env: CapoEnv;
  let capo: RunningCapo | undefined;
  const key = (name: string) => ({ namespace: env.namespace, name });
  const machine = () => env.api.get<Machine>(capoKinds.Machine, key(MACHINE));
  const inPhase = async (phase: string) =>
    (await eventually(
      async () => {
        const m = await machine();
        return m.status?.phase === phase ? m : undefined;
      },
      { ...WAIT, what: `Machine ${MACHINE} ${phase}` },
    ))!;

  before(async () => {
    env = await startCapoEnv({}, { crds: 'previous' });
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  it('objects reconciled under the old CRDs keep working after the new CRDs and a capo restart', async () => {
    const before = await env.api.get(kinds.CustomResourceDefinition, { name: 'machines.cluster.x-k8s.io' });
    assert.deepEqual(
      before.spec.versions.map((v) => v.name),
      ['v1beta1'],
    );
    assert.equal(before.spec.conversion?.strategy ?? 'None', 'None');

    // The previous release: a Cluster, an OpenStackMachine and a Machine, reconciled to Provisioned.
    capo = await env.startCapo({ controllers: [CORE] });
    const labels = { [CLUSTER_NAME_LABEL]: CLUSTER };
    await env.api.create(capoKinds.Cluster, {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Cluster',
      metadata: { name: CLUSTER, namespace: env.namespace },
      spec: {
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
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
      { status: { ready: true, addresses: [{ type: 'InternalIP', address: '10.6.0.9' }] } },
      { subresource: 'status' },
    );
    await env.api.create(capoKinds.Machine, {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Machine',
      metadata: { name: MACHINE, namespace: env.namespace, labels },
      spec: {
        clusterName: CLUSTER,
        version: 'v1.32.4',
        bootstrap: { dataSecretName: MACHINE },
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'OpenStackMachine',
          name: MACHINE,
        },
      },
    });
    const provisioned = await inPhase('Provisioned');
    assert.equal(provisioned.spec.providerID, PROVIDER_ID);
    await capo.stop();
    capo = undefined;

    // The upgrade: this release's CRDs applied over the old ones, then capo started again.
    await env.applyCurrentCrds();
    const after = await env.api.get(kinds.CustomResourceDefinition, { name: 'machines.cluster.x-k8s.io' });
    assert.deepEqual(
      after.spec.versions.map((v) => [v.name, v.served, v.storage]),
      [
        ['v1beta1', true, true],
        ['v1beta2', true, false],
      ],
    );
    assert.equal(after.spec.conversion?.strategy, 'Webhook');
    assert.equal(after.spec.conversion?.webhook?.clientConfig?.url, env.webhook.url);
    assert.deepEqual(after.status?.storedVersions, ['v1beta1']);
    capo = await env.startCapo({ controllers: [CORE] });

    // Read as it was written, and still reconciled: the Node comes, the Machine runs.
    const read = await machine();
    assert.equal(read.apiVersion, 'cluster.x-k8s.io/v1beta1');
    assert.deepEqual(read.spec.infrastructureRef, provisioned.spec.infrastructureRef);
    await env.api.create(kinds.Node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: MACHINE },
      spec: { providerID: PROVIDER_ID },
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            lastHeartbeatTime: new Date(),
            lastTransitionTime: new Date(),
          },
        ],
      },
    });
    const running = await inPhase('Running');
    assert.equal(running.status?.nodeRef?.name, MACHINE);
    assert.equal(running.metadata?.uid, provisioned.metadata?.uid);

    // Readable as v1beta2, converted by the webhook from what the old release stored.
    const v1beta2 = await env.api.get<MachineV1beta2>(machineV1beta2.resource, key(MACHINE));
    assert.equal(v1beta2.apiVersion, 'cluster.x-k8s.io/v1beta2');
    assert.deepEqual(v1beta2.spec.infrastructureRef, {
      apiGroup: 'infrastructure.cluster.x-k8s.io',
      kind: 'OpenStackMachine',
      name: MACHINE,
    });
    assert.deepEqual(v1beta2.status?.nodeRef, { name: MACHINE });
    assert.equal(v1beta2.status?.initialization?.infrastructureProvisioned, true);
    assert.equal(v1beta2.status?.phase, 'Running');

    // Deleted cleanly: nothing holds them.
    const owned: [ResourceType, string][] = [
      [capoKinds.Machine, MACHINE],
      [capoKinds.OpenStackMachine, MACHINE],
      [capoKinds.Cluster, CLUSTER],
    ];
    for (const [type, name] of owned) {
      await env.api.delete(type, key(name));
      await eventually(
        async () => {
          try {
            await env.api.get(type, key(name));
            return undefined;
          } catch (err) {
            if (isNotFound(err)) return true;
            throw err;
          }
        },
        { ...WAIT, what: `${type.kind} ${name} gone` },
      );
    }
    const stored = await env.api.get(kinds.CustomResourceDefinition, { name: 'clusters.cluster.x-k8s.io' });
    assert.deepEqual(stored.status?.storedVersions, ['v1beta1']);
  });
});
