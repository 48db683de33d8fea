/**
 * The Cluster API core stand-in (`actAsClusterAPICore`) through the Kubernetes emulator: a Machine
 * follows its OpenStackMachine (Provisioning, then Provisioned with providerID and addresses), and
 * runs — nodeRef set — once a Node with its providerID exists, also when the Node registers before
 * the ccm gives it the providerID; its Cluster becomes Provisioned and its control plane ready.
 * `shiftstack capo` registers these controllers only with the option.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { createLogger } from '../../lib/log.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import {
  capoKinds,
  CLUSTER_NAME_LABEL,
  CONTROL_PLANE_LABEL,
  type CapiCondition,
  type Cluster,
  type Machine,
} from '../api/index.ts';
import { buildCapo, CAPO_DEFAULTS } from '../cmd.ts';
import { kubeConfigFrom } from '../../kube/testing/env.ts';
import { CAPO_CONTROLLERS, startCapoEnv, type CapoEnv, type RunningCapo } from '../testing/env.ts';
import { CAPI_CORE_MACHINE_CONTROLLER, registerClusterAPICoreControllers } from './capi-core.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 50 };
const CLUSTER = 'core-demo';
const CORE = 'capi-core';

CAPO_CONTROLLERS[CORE] = (mgr) => registerClusterAPICoreControllers(mgr, { machineWorkers: 2 });

const condition = (o: { status?: { conditions?: CapiCondition[] } } | undefined, type: string) =>
  o?.status?.conditions?.find((c) => c.type === type);

describe('Cluster API core stand-in', () => {
  let env: CapoEnv;
  let capo: RunningCapo;
  const ns = () => env.namespace;

  before(async () => {
    env = await startCapoEnv();
    capo = await env.startCapo({ controllers: [CORE] });
    await env.api.create(capoKinds.Cluster, {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Cluster',
      metadata: { name: CLUSTER, namespace: ns() },
      spec: {
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'OpenStackCluster',
          name: CLUSTER,
        },
      },
    });
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  async function createMachine(name: string, controlPlane: boolean): Promise<void> {
    const labels = { [CLUSTER_NAME_LABEL]: CLUSTER, ...(controlPlane ? { [CONTROL_PLANE_LABEL]: '' } : {}) };
    await env.api.create(capoKinds.OpenStackMachine, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackMachine',
      metadata: { name, namespace: ns(), labels },
      spec: { flavor: 'm1.small', image: { filter: { name: 'ubuntu-22.04' } } },
    });
    await env.api.create(capoKinds.Machine, {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Machine',
      metadata: { name, namespace: ns(), labels },
      spec: {
        clusterName: CLUSTER,
        version: 'v1.32.4',
        bootstrap: { dataSecretName: name },
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'OpenStackMachine',
          name,
        },
      },
    });
  }

  /** What the OpenStackMachine controller writes once the server is ACTIVE. */
  async function infrastructureReady(name: string, providerID: string, ip: string): Promise<void> {
    const key = { namespace: ns(), name };
    await env.api.patch(capoKinds.OpenStackMachine, key, 'merge', { spec: { providerID } });
    await env.api.patch(
      capoKinds.OpenStackMachine,
      key,
      'merge',
      { status: { ready: true, addresses: [{ type: 'InternalIP', address: ip }] } },
      { subresource: 'status' },
    );
  }

  async function createNode(name: string, providerID?: string): Promise<V1Node> {
    return env.api.create(kinds.Node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      spec: providerID ? { providerID } : {},
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
  }

  /** The Machine once it reaches `phase`. */
  async function inPhase(name: string, phase: string): Promise<Machine> {
    const m = await eventually(
      async () => {
        const got = await machine(name);
        return got.status?.phase === phase ? got : undefined;
      },
      { ...WAIT, what: `Machine ${name} ${phase}` },
    );
    assert.ok(m);
    return m;
  }

  const machine = (name: string) => env.api.get(capoKinds.Machine, { namespace: ns(), name });
  const cluster = () => env.api.get<Cluster>(capoKinds.Cluster, { namespace: ns(), name: CLUSTER });

  it('a control-plane Machine goes Provisioning → Provisioned → Running, its nodeRef set when the Node comes', async () => {
    const name = `${CLUSTER}-control-plane-0`;
    const providerID = 'openstack:///6c1f5a6e-1d0b-4f43-9f47-8a0d7e3c2b10';
    await createMachine(name, true);
    const provisioning = await inPhase(name, 'Provisioning');
    assert.equal(provisioning.status?.bootstrapReady, true);
    assert.equal(condition(provisioning, 'InfrastructureReady')?.reason, 'WaitingForInfrastructure');
    assert.equal(condition(provisioning, 'NodeHealthy')?.reason, 'WaitingForNodeRef');
    assert.equal((await cluster()).status?.phase, 'Provisioning');

    await infrastructureReady(name, providerID, '10.6.0.4');
    const provisioned = await inPhase(name, 'Provisioned');
    assert.equal(provisioned.spec.providerID, providerID);
    assert.equal(provisioned.status?.infrastructureReady, true);
    assert.deepEqual(provisioned.status?.addresses, [{ type: 'InternalIP', address: '10.6.0.4' }]);
    assert.equal(provisioned.status?.nodeRef, undefined);
    assert.equal(condition(provisioned, 'NodeHealthy')?.reason, 'NodeProvisioning');
    assert.equal(condition(provisioned, 'Ready')?.status, 'True');

    // The Node comes after the machine is ready: its create event alone must bring the nodeRef.
    const node = await createNode(name, providerID);
    const running = await inPhase(name, 'Running');
    assert.deepEqual(running.status?.nodeRef, {
      apiVersion: 'v1',
      kind: 'Node',
      name,
      uid: node.metadata?.uid,
    });
    assert.equal(condition(running, 'NodeHealthy')?.status, 'True');
    assert.ok(running.status?.['lastUpdated']);

    // The control plane runs: the Cluster says so once its infrastructure is ready too.
    await env.api.patch(capoKinds.Cluster, { namespace: ns(), name: CLUSTER }, 'merge', {
      spec: { controlPlaneEndpoint: { host: '172.24.4.3', port: 6443 } },
    });
    await env.api.patch(
      capoKinds.Cluster,
      { namespace: ns(), name: CLUSTER },
      'merge',
      { status: { infrastructureReady: true } },
      { subresource: 'status' },
    );
    const provisionedCluster = await eventually<Cluster | undefined>(
      async () => {
        const c = await cluster();
        return c.status?.phase === 'Provisioned' && c.status.controlPlaneReady ? c : undefined;
      },
      { ...WAIT, what: 'the Cluster Provisioned with its control plane ready' },
    );
    assert.ok(provisionedCluster);
    assert.equal(condition(provisionedCluster, 'ControlPlaneInitialized')?.status, 'True');
    assert.equal(condition(provisionedCluster, 'Ready')?.status, 'True');
  });

  it('a Node that registers without a providerID is linked once the ccm sets it', async () => {
    const name = `${CLUSTER}-md-0-0`;
    const providerID = 'openstack:///0e5d2c4b-7a9f-4f0e-8a61-2b3c4d5e6f70';
    // The kubelet (--cloud-provider=external) registers before the ccm initializes the Node.
    const node = await createNode(name);
    await createMachine(name, false);
    await infrastructureReady(name, providerID, '10.6.0.5');
    assert.equal((await inPhase(name, 'Provisioned')).status?.nodeRef, undefined);

    await env.api.patch(kinds.Node, { name }, 'merge', { spec: { providerID } });
    const running = await inPhase(name, 'Running');
    assert.equal(running.status?.nodeRef?.uid, node.metadata?.uid);
    assert.equal(running.status?.nodeRef?.name, name);
  });

  it('shiftstack capo registers the stand-in only with actAsClusterAPICore', async () => {
    const build = (actAsClusterAPICore: boolean) =>
      buildCapo(
        { ...CAPO_DEFAULTS, leaderElect: false, health: undefined, actAsClusterAPICore },
        { log: createLogger({ level: 'silent' }), kubeConfig: kubeConfigFrom(env.kube.kubeconfigPath) },
      );
    // A second registration under the same names is refused: the first is there.
    const on = build(true);
    assert.throws(
      () => registerClusterAPICoreControllers(on.manager),
      new RegExp(`${CAPI_CORE_MACHINE_CONTROLLER} exists already`),
    );
    const off = build(false);
    assert.doesNotThrow(() => registerClusterAPICoreControllers(off.manager));
    await Promise.all([on.scopes.close(), off.scopes.close()]);
  });
});
