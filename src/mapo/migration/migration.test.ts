/**
 * The migration controller through both emulators, with CAPO's OpenStackServer and
 * OpenStackMachine controllers, Cluster API core stood in for (actAsClusterAPICore) and the
 * kubelet stand-in: a Machine API Machine with an ACTIVE OpenStackServer it controls (built as the
 * actuator builds it) is switched to Cluster API — refused while its Cluster is missing, then
 * taken over by an OpenStackMachine that becomes ready on the same instance, a Node linked to the
 * Cluster API Machine — and back, and to Cluster API again, with the same server and ports and no
 * Nova, Neutron or Cinder write. A Machine without a server and a Failed one are refused.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { createLogger } from '../../lib/log.ts';
import {
  isAlreadyExists,
  isNotFound,
  kinds,
  Manager,
  ownerReference,
  type KubernetesObject,
} from '../../kube/index.ts';
import { kubeConfigFrom } from '../../kube/testing/env.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { capoKinds, type OpenStackServer } from '../../capo/api/index.ts';
import { registerClusterAPICoreControllers } from '../../capo/controllers/capi-core.ts';
import { OPENSTACK_MACHINE_CONTROLLER } from '../../capo/controllers/openstackmachine.ts';
import { OPENSTACK_SERVER_CONTROLLER } from '../../capo/controllers/openstackserver.ts';
import { CAPO_CONTROLLERS, startCapoEnv, type CapoEnv, type RunningCapo } from '../../capo/testing/env.ts';
import { openServerFixtures, type ServerFixtures } from '../../capo/testing/server-fixtures.ts';
import { emulatedHosts, registerKubelets } from '../../demo/kubelet.ts';
import { CRD_DIR, Labels, MachineConditions, mapoKinds, PausedReasons, type Machine } from '../api/index.ts';
import {
  MigrationEventReasons,
  PAUSED_ANNOTATION,
  RefusalReasons,
  registerMigrationController,
} from './index.ts';
import { deriveClusterAPIMachine } from './derive.ts';
import { withController } from './owners.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const WAIT = { timeoutMs: 120_000, intervalMs: 50 };
const CLUSTER = 'ostest';
const CORE = 'capi-core';
const KUBELETS = 'kubelets';

CAPO_CONTROLLERS[CORE] ??= (mgr) => registerClusterAPICoreControllers(mgr, { machineWorkers: 2 });

/** deploy/mapo/crds applied as `kubectl apply -f` does, then waited for until served. */
async function applyMapoCrds(env: CapoEnv): Promise<void> {
  const dir = join(ROOT, CRD_DIR);
  for (const f of (await readdir(dir)).filter((n) => n.endsWith('.yaml')).sort()) {
    const crd = parseYaml(await readFile(join(dir, f), 'utf8')) as KubernetesObject;
    try {
      await env.api.create(kinds.CustomResourceDefinition, crd as never);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
  await eventually(
    async () => {
      await env.api.list(mapoKinds.Machine, { limit: 1 });
      return true;
    },
    { timeoutMs: 20_000, what: 'the Machine CRD served' },
  );
}

describe('migration controller', () => {
  let env: CapoEnv;
  let capo: RunningCapo;
  let fx: ServerFixtures;
  let stopMapo: (() => Promise<void>) | undefined;

  /** The mapo process: its own Manager, as `shiftstack mapo` runs it; a restart remembers nothing. */
  function startMapo(): () => Promise<void> {
    const mapo = new Manager({
      name: 'mapo-test',
      kubeConfig: kubeConfigFrom(env.kube.kubeconfigPath),
      qps: 0,
      log: createLogger({ level: 'silent' }),
      gracefulShutdownTimeoutMs: 5_000,
    });
    registerMigrationController(mapo, { refusedRetryMs: 200 });
    const stopper = new AbortController();
    const done = mapo.start(stopper.signal);
    return async () => {
      stopper.abort(new Error('test done'));
      await done;
    };
  }

  before(async () => {
    env = await startCapoEnv();
    await applyMapoCrds(env);
    fx = await openServerFixtures(env);
    const cloud = env.sim.cloud;
    CAPO_CONTROLLERS[KUBELETS] = (mgr) => {
      registerKubelets(mgr, {
        host: emulatedHosts(cloud),
        heartbeatMs: 60_000,
        pollMs: 50,
        // The kubelet sets the providerID itself, as no ccm runs here.
        cloudProvider: 'openstack',
      });
    };
    capo = await env.startCapo({
      controllers: [OPENSTACK_SERVER_CONTROLLER, OPENSTACK_MACHINE_CONTROLLER, CORE, KUBELETS],
    });
    stopMapo = startMapo();
  });
  after(async () => {
    await stopMapo?.();
    await capo?.stop();
    delete CAPO_CONTROLLERS[KUBELETS];
    await env?.close();
  });

  const ns = () => env.namespace;
  async function get<T extends KubernetesObject>(
    type: Parameters<CapoEnv['api']['get']>[0],
    name: string,
  ): Promise<T | undefined> {
    try {
      return (await env.api.get(type, { namespace: ns(), name })) as T;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
  const machine = (name: string) => get<Machine>(mapoKinds.Machine, name);
  const condition = (m: Machine | undefined, type: string) =>
    m?.status?.conditions?.find((c) => c.type === type);

  /** A Machine API Machine as the installer's MachineSet makes them, its status set as the machine controller would. */
  async function createMachine(name: string, status: Machine['status'] = {}): Promise<Machine> {
    await env.api.create(mapoKinds.Machine, {
      apiVersion: 'machine.openshift.io/v1beta1',
      kind: 'Machine',
      metadata: {
        name,
        namespace: ns(),
        labels: {
          [Labels.Cluster]: CLUSTER,
          [Labels.MachineRole]: 'worker',
          [Labels.MachineType]: 'worker',
          [Labels.MachineSet]: `${CLUSTER}-worker-0`,
        },
      },
      spec: {
        providerSpec: {
          value: {
            apiVersion: 'machine.openshift.io/v1alpha1',
            kind: 'OpenstackProviderSpec',
            cloudName: 'openstack',
            cloudsSecret: { name: env.identityRef.name, namespace: ns() },
            flavor: fx.flavor.name,
            image: fx.imageName,
            userDataSecret: { name: 'worker-user-data' },
          },
        },
      },
    });
    return env.api.patch(
      mapoKinds.Machine,
      { namespace: ns(), name },
      'merge',
      { status: { authoritativeAPI: 'MachineAPI', ...status } },
      { subresource: 'status' },
    );
  }

  /** The OpenStackServer the actuator makes for a Machine: controlled by it, user data in `<machine>-user-data`. */
  async function createServer(owner: Machine): Promise<OpenStackServer> {
    const name = owner.metadata?.name ?? '';
    await env.api.create(kinds.Secret, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-user-data`, namespace: ns() },
      stringData: { value: '#cloud-config\n' },
    });
    const ownerRef = {
      apiVersion: 'machine.openshift.io/v1beta1',
      kind: 'Machine',
      name,
      uid: owner.metadata?.uid ?? '',
      controller: true,
      blockOwnerDeletion: true,
    };
    return env.api.create(capoKinds.OpenStackServer, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
      kind: 'OpenStackServer',
      metadata: {
        name,
        namespace: ns(),
        labels: { [Labels.Cluster]: CLUSTER },
        ownerReferences: [ownerRef],
      },
      spec: { ...fx.spec(), availabilityZone: 'nova', userDataRef: { name: `${name}-user-data` } },
    });
  }

  async function switchTo(name: string, api: 'MachineAPI' | 'ClusterAPI'): Promise<void> {
    await env.api.patch(mapoKinds.Machine, { namespace: ns(), name }, 'merge', {
      spec: { authoritativeAPI: api },
    });
  }

  /** Ports of the instance as Neutron has them: what must not change. */
  async function portsOf(instanceID: string) {
    const ports = await env.os.network.ports.list({ device_id: instanceID }).all();
    return ports
      .map((p) => ({
        id: p.id,
        mac: p.mac_address,
        ips: p.fixed_ips,
        groups: [...(p.security_groups ?? [])].sort(),
      }))
      .sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Nova, Neutron and Cinder writes since `seq` (Keystone token requests change nothing in the cloud). */
  function cloudWrites(since: number): string[] {
    return env.sim.cloud.stats
      .requests(since, { writes: true })
      .requests.filter((r) => r.service !== 'keystone')
      .map((r) => `${r.service} ${r.operation} (${r.caller})`);
  }

  const events = async (name: string, reason: string) =>
    (await env.api.listAll(kinds.EventsV1Event, { namespace: ns() })).items.filter(
      (e) => e.regarding?.name === name && e.reason === reason,
    );

  async function createCluster(): Promise<void> {
    await env.api.create(capoKinds.OpenStackCluster, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackCluster',
      metadata: { name: CLUSTER, namespace: ns(), labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER } },
      spec: { identityRef: { name: env.identityRef.name, cloudName: env.identityRef.cloudName } },
    });
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
    // OpenShift's cluster exists already: its infrastructure is ready (no OpenStackCluster controller runs here).
    await env.api.patch(
      capoKinds.Cluster,
      { namespace: ns(), name: CLUSTER },
      'merge',
      { status: { infrastructureReady: true } },
      { subresource: 'status' },
    );
  }

  it('hands a running Machine to Cluster API and back with the same server and ports and no OpenStack write', async () => {
    const name = `${CLUSTER}-worker-0-abcde`;
    const owner = await createMachine(name);
    await createServer(owner);
    const server = (await eventually(
      async () => {
        const s = await get<OpenStackServer>(capoKinds.OpenStackServer, name);
        return s?.status?.ready && s.status.instanceID ? s : undefined;
      },
      { ...WAIT, what: 'the OpenStackServer ACTIVE' },
    ))!;
    const instanceID = server.status!.instanceID!;
    // What the actuator writes once the server is ACTIVE.
    await env.api.patch(mapoKinds.Machine, { namespace: ns(), name }, 'merge', {
      spec: { providerID: `openstack:///${instanceID}` },
    });
    const ports = await portsOf(instanceID);
    assert.equal(ports.length, 2);

    // No Cluster API Cluster yet: refused, nothing moves.
    const since = env.sim.cloud.stats.requests().last;
    await switchTo(name, 'ClusterAPI');
    const refused = await eventually(
      async () => {
        const m = await machine(name);
        return condition(m, MachineConditions.MigrationRefused)?.reason === RefusalReasons.ClusterNotFound
          ? m
          : undefined;
      },
      { ...WAIT, what: 'MigrationRefused ClusterNotFound' },
    );
    assert.equal(refused?.status?.authoritativeAPI, 'MachineAPI');
    assert.match(
      condition(refused, MachineConditions.MigrationRefused)?.message ?? '',
      new RegExp(`no Cluster API Cluster ${CLUSTER} .*Fix: create the Cluster`),
    );
    await eventually(async () => (await events(name, MigrationEventReasons.Refused)).length > 0, {
      ...WAIT,
      what: 'a MigrationRefused Warning Event',
    });
    assert.equal(await get(capoKinds.Machine, name), undefined, 'no Cluster API Machine while refused');
    assert.equal(
      (await get<OpenStackServer>(capoKinds.OpenStackServer, name))?.metadata?.ownerReferences?.find(
        (r) => r.controller,
      )?.uid,
      owner.metadata?.uid,
    );

    // The Cluster appears: the switch goes through.
    await createCluster();
    const migrated = await eventually(
      async () => {
        const m = await machine(name);
        return m?.status?.authoritativeAPI === 'ClusterAPI' ? m : undefined;
      },
      { ...WAIT, what: 'status.authoritativeAPI ClusterAPI' },
    );
    assert.equal(condition(migrated, MachineConditions.MigrationRefused), undefined);
    assert.equal(condition(migrated, MachineConditions.Paused)?.status, 'True');
    assert.equal(condition(migrated, MachineConditions.Paused)?.reason, PausedReasons.NotMachineAPI);
    const osm = (await eventually(
      async () => {
        const o = await get<KubernetesObject & { status?: { ready?: boolean; instanceID?: string } }>(
          capoKinds.OpenStackMachine,
          name,
        );
        return o?.status?.ready ? o : undefined;
      },
      { ...WAIT, what: 'the OpenStackMachine ready' },
    ))!;
    assert.equal(osm.status?.instanceID, instanceID);
    assert.equal(osm.metadata?.annotations?.[PAUSED_ANNOTATION], undefined);
    const capiMachine = (await eventually(
      async () => {
        const m = await get<KubernetesObject & { status?: { nodeRef?: { name?: string } } }>(
          capoKinds.Machine,
          name,
        );
        return m?.status?.nodeRef?.name ? m : undefined;
      },
      { ...WAIT, what: 'the Cluster API Machine with its nodeRef' },
    ))!;
    assert.equal(capiMachine.metadata?.labels?.['cluster.x-k8s.io/cluster-name'], CLUSTER);
    const handed = await get<OpenStackServer>(capoKinds.OpenStackServer, name);
    const controller = handed?.metadata?.ownerReferences?.filter((r) => r.controller);
    assert.deepEqual(
      controller?.map((r) => [r.kind, r.name, r.uid]),
      [['OpenStackMachine', name, osm.metadata?.uid]],
    );
    assert.ok(
      handed?.metadata?.ownerReferences?.some((r) => r.uid === owner.metadata?.uid),
      'the Machine stays an owner',
    );
    assert.equal(handed?.status?.instanceID, instanceID);
    assert.deepEqual(await portsOf(instanceID), ports);
    assert.deepEqual(cloudWrites(since), [], 'no OpenStack write for the switch to Cluster API');

    // Back to the Machine API.
    const back = env.sim.cloud.stats.requests().last;
    await switchTo(name, 'MachineAPI');
    const returned = await eventually(
      async () => {
        const m = await machine(name);
        return m?.status?.authoritativeAPI === 'MachineAPI' ? m : undefined;
      },
      { ...WAIT, what: 'status.authoritativeAPI MachineAPI' },
    );
    assert.equal(condition(returned, MachineConditions.Paused)?.status, 'False');
    assert.equal(condition(returned, MachineConditions.Paused)?.reason, PausedReasons.MachineAPI);
    const served = await get<OpenStackServer>(capoKinds.OpenStackServer, name);
    assert.deepEqual(
      served?.metadata?.ownerReferences?.filter((r) => r.controller).map((r) => r.uid),
      [owner.metadata?.uid],
    );
    for (const type of [capoKinds.Machine, capoKinds.OpenStackMachine]) {
      const o = await get(type, name);
      assert.notEqual(o?.metadata?.annotations?.[PAUSED_ANNOTATION], undefined, `${type.kind} paused`);
    }
    assert.equal(served?.status?.instanceID, instanceID);
    assert.deepEqual(await portsOf(instanceID), ports);

    // And to Cluster API again: the paused objects are found by name and taken up.
    await switchTo(name, 'ClusterAPI');
    await eventually(async () => (await machine(name))?.status?.authoritativeAPI === 'ClusterAPI', {
      ...WAIT,
      what: 'status.authoritativeAPI ClusterAPI again',
    });
    const again = await get<KubernetesObject & { status?: { ready?: boolean; instanceID?: string } }>(
      capoKinds.OpenStackMachine,
      name,
    );
    assert.equal(again?.metadata?.uid, osm.metadata?.uid, 'the same OpenStackMachine');
    assert.equal(again?.metadata?.annotations?.[PAUSED_ANNOTATION], undefined);
    assert.equal(again?.status?.instanceID, instanceID);
    assert.deepEqual(await portsOf(instanceID), ports);
    assert.deepEqual(cloudWrites(back), [], 'no OpenStack write for the switches back and again');
    assert.equal((await fx.census()).servers, 1);
  });

  it('refuses a Machine with no OpenStackServer yet, and a Failed one; their status stays', async () => {
    await createMachine('no-server');
    await createMachine('failed', {
      phase: 'Failed',
      errorReason: 'InvalidConfiguration',
      errorMessage: 'spec.providerSpec.value.flavor: is required',
    });
    await switchTo('no-server', 'ClusterAPI');
    await switchTo('failed', 'ClusterAPI');
    for (const [name, reason, text] of [
      [
        'no-server',
        RefusalReasons.NoOpenStackServer,
        /has no OpenStackServer yet.*Fix: wait until the Machine is Provisioned/,
      ],
      [
        'failed',
        RefusalReasons.MachineFailed,
        /is Failed \(spec\.providerSpec\.value\.flavor: is required\).*Fix: delete it/,
      ],
    ] as const) {
      const m = await eventually(
        async () => {
          const got = await machine(name);
          return condition(got, MachineConditions.MigrationRefused) ? got : undefined;
        },
        { ...WAIT, what: `${name} refused` },
      );
      const c = condition(m, MachineConditions.MigrationRefused);
      assert.equal(c?.status, 'True');
      assert.equal(c?.reason, reason);
      assert.match(c?.message ?? '', text);
      assert.equal(m?.status?.authoritativeAPI, 'MachineAPI');
      assert.equal(await get(capoKinds.Machine, name), undefined);
      await eventually(async () => (await events(name, MigrationEventReasons.Refused)).length > 0, {
        ...WAIT,
        what: `a MigrationRefused Event on ${name}`,
      });
    }
    // Switching back answers the refusal: the condition goes.
    await switchTo('failed', 'MachineAPI');
    await eventually(
      async () => condition(await machine('failed'), MachineConditions.MigrationRefused) === undefined,
      { ...WAIT, what: 'the refusal cleared' },
    );
  });

  it('finishes a switch interrupted after the server changed hands, with no OpenStack write', async () => {
    const name = `${CLUSTER}-worker-0-fghij`;
    const owner = await createMachine(name);
    await createServer(owner);
    const server = (await eventually(
      async () => {
        const s = await get<OpenStackServer>(capoKinds.OpenStackServer, name);
        return s?.status?.ready && s.status.instanceID ? s : undefined;
      },
      { ...WAIT, what: 'the OpenStackServer ACTIVE' },
    ))!;
    const instanceID = server.status!.instanceID!;
    const ports = await portsOf(instanceID);

    // What a run stopped between steps 4 and 5 leaves: status Migrating, the Cluster API objects
    // made paused, the server's controller already the OpenStackMachine.
    await stopMapo?.();
    stopMapo = undefined;
    const since = env.sim.cloud.stats.requests().last;
    await switchTo(name, 'ClusterAPI');
    const machineNow = await env.api.patch(
      mapoKinds.Machine,
      { namespace: ns(), name },
      'merge',
      { status: { authoritativeAPI: 'Migrating', synchronizedAPI: 'MachineAPI' } },
      { subresource: 'status' },
    );
    const derived = deriveClusterAPIMachine({ machine: machineNow, server, clusterName: CLUSTER });
    assert.ok(derived.ok);
    const paused = { [PAUSED_ANNOTATION]: 'true' };
    const capiMachine = await env.api.create(capoKinds.Machine, {
      ...derived.objects.machine,
      metadata: {
        ...derived.objects.machine.metadata,
        annotations: paused,
        ownerReferences: [ownerReference(machineNow)],
      },
    });
    const osm = await env.api.create(capoKinds.OpenStackMachine, {
      ...derived.objects.openStackMachine,
      metadata: {
        ...derived.objects.openStackMachine.metadata,
        annotations: paused,
        ownerReferences: [ownerReference(capiMachine)],
      },
    });
    await env.api.patch(capoKinds.OpenStackServer, { namespace: ns(), name }, 'merge', {
      metadata: { ownerReferences: withController(server.metadata?.ownerReferences, ownerReference(osm)) },
    });

    stopMapo = startMapo();
    const done = (await eventually(
      async () => {
        const m = await machine(name);
        return m?.status?.authoritativeAPI === 'ClusterAPI' ? m : undefined;
      },
      { ...WAIT, what: 'status.authoritativeAPI ClusterAPI after the restart' },
    ))!;
    assert.equal(condition(done, MachineConditions.Paused)?.status, 'True');
    const ready = (await eventually(
      async () => {
        const o = await get<KubernetesObject & { status?: { ready?: boolean; instanceID?: string } }>(
          capoKinds.OpenStackMachine,
          name,
        );
        return o?.status?.ready ? o : undefined;
      },
      { ...WAIT, what: 'the OpenStackMachine ready' },
    ))!;
    assert.equal(ready.metadata?.uid, osm.metadata?.uid, 'the OpenStackMachine the stopped run made');
    assert.equal(ready.status?.instanceID, instanceID);
    assert.equal((await get(capoKinds.Machine, name))?.metadata?.uid, capiMachine.metadata?.uid);
    assert.deepEqual(await portsOf(instanceID), ports);
    assert.deepEqual(cloudWrites(since), []);
  });
});
