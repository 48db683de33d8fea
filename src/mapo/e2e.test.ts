/**
 * mapo end to end, on both emulators through HTTP, as `shiftstack mapo --act-as-machine-api-operator`
 * runs it (the machine controller, capo's OpenStackServer controller, the MachineSet, nodelink and
 * drain controllers, the migration controller) with the demo's kubelet stand-in for the servers'
 * kubelets, and capo's OpenStackMachine controller with Cluster API core stood in for beside it:
 *
 * 1. examples/mapo applied with kubectl: the worker MachineSet's 3 Machines reach Running with a
 *    nodeRef, providerID, labels, annotations and addresses; the MachineSet counts them; their
 *    Nodes name their Machine.
 * 2. `kubectl scale` down with `machine.openshift.io/delete-machine` on one Machine of a set with
 *    volumes: that Machine alone is drained and deleted with its server, ports, volumes and Node,
 *    and the cloud's census differs by exactly those.
 * 3. A bad flavor: Failed, InvalidConfiguration, a message naming the field and the flavor, no
 *    OpenStack write.
 * 4. A preDrain hook holds the deletion (Drainable=False, the server kept) until it is removed.
 * 5. A Machine moved to Cluster API and back: the same server and ports, no OpenStack write for
 *    either switch, Paused while Cluster API is authoritative, Running again after.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { capoKinds, type OpenStackServer } from '../capo/api/index.ts';
import { registerClusterAPICoreControllers } from '../capo/controllers/capi-core.ts';
import { OPENSTACK_MACHINE_CONTROLLER } from '../capo/controllers/openstackmachine.ts';
import { CAPO_CONTROLLERS, type RunningCapo } from '../capo/testing/env.ts';
import { leaks, takeCensus, type CensusKind } from '../demo/census.ts';
import { isNotFound, kinds, type KubernetesObject } from '../kube/index.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
import {
  Annotations,
  Labels,
  MachineConditions,
  mapoKinds,
  PausedReasons,
  type Machine,
  type MachineSet,
} from './api/index.ts';
import { getMachineCondition } from './conditions.ts';
import { DRAINABLE, DRAINED, DrainEventReasons, DrainReasons } from './mao/index.ts';
import { CLUSTER_ID, MAPI_NAMESPACE, startMapoEnv, type MapoEnv, type RunningMapo } from './testing/env.ts';

const NS = MAPI_NAMESPACE;
const WAIT = { timeoutMs: 120_000, intervalMs: 50 };
const EXAMPLE = join(import.meta.dirname, '..', '..', 'examples', 'mapo', 'machineset.yaml');
const WORKERS = `${CLUSTER_ID}-worker-0`;
const VOLUMES = `${CLUSTER_ID}-worker-vol`;
const CORE = 'capi-core';

CAPO_CONTROLLERS[CORE] ??= (mgr) => registerClusterAPICoreControllers(mgr, { machineWorkers: 2 });

describe('mapo end to end (examples/mapo)', () => {
  let env: MapoEnv;
  let mapo: RunningMapo;
  let capo: RunningCapo;

  before(async () => {
    env = await startMapoEnv();
    mapo = await env.startMapo({ mao: true, migration: true, kubelets: true });
    // Cluster API's side for the migration: capo's OpenStackMachine controller and CAPI core.
    capo = await env.startCapo({ controllers: [OPENSTACK_MACHINE_CONTROLLER, CORE] });
  });
  after(async () => {
    await mapo?.stop();
    await capo?.stop();
    await env?.close();
  });

  async function kubectl(...args: string[]): Promise<string> {
    const child = spawn('/usr/bin/kubectl', args, {
      env: { ...process.env, KUBECONFIG: env.kube.kubeconfigPath, HOME: env.dir },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    assert.equal(code, 0, `kubectl ${args.join(' ')}: ${err}`);
    return out;
  }

  async function find<T extends KubernetesObject>(
    type: Parameters<MapoEnv['api']['get']>[0],
    key: { namespace?: string; name: string },
  ): Promise<T | undefined> {
    try {
      return (await env.api.get(type, key)) as T;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
  const machine = (name: string) => find<Machine>(mapoKinds.Machine, { namespace: NS, name });
  const node = (name: string) => find<V1Node>(kinds.Node, { name });
  const openStackServer = (name: string) =>
    find<OpenStackServer>(capoKinds.OpenStackServer, { namespace: NS, name });
  const condition = (m: Machine | undefined, type: string) =>
    getMachineCondition(m?.status?.conditions, type);

  const machinesOf = async (set: string) =>
    (await env.api.listAll(mapoKinds.Machine, { namespace: NS })).items
      .filter((m) => m.metadata?.labels?.[Labels.MachineSet] === set)
      .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  const running = (m: Machine) => m.status?.phase === 'Running' && Boolean(m.status.nodeRef?.name);

  /** The set's Machines once `count` of them, and no other, are Running with a nodeRef. */
  async function allRunning(set: string, count: number): Promise<Machine[]> {
    return (await eventually(
      async () => {
        const ms = await machinesOf(set);
        return ms.length === count && ms.every(running) ? ms : undefined;
      },
      { ...WAIT, what: `${count} Machines of ${set} Running` },
    ))!;
  }

  async function gone(what: string, get: () => Promise<unknown>): Promise<void> {
    await eventually(async () => (await get()) === undefined, { ...WAIT, what: `${what} gone` });
  }

  const serversNamed = async (name: string) =>
    (await env.admin.compute.servers.list({ all_tenants: true }).all()).filter((s) => s.name === name);

  /** Nova, Neutron, Cinder, Glance writes since `seq` (a Keystone token changes nothing in the cloud). */
  const cloudWrites = (since: number) =>
    env.sim.cloud.stats
      .requests(since, { writes: true })
      .requests.filter((r) => r.service !== 'keystone')
      .map((r) => `${r.service} ${r.operation} (${r.caller})`);

  const events = async (name: string, reason: string) =>
    (await env.api.listAll(kinds.EventsV1Event, { namespace: NS })).items.filter(
      (e) => e.regarding?.name === name && e.reason === reason,
    );

  /** A copy of the example's worker MachineSet under another name, its provider spec edited. */
  function machineSetLike(
    name: string,
    replicas: number,
    edit: (v: Record<string, unknown>) => void,
  ): MachineSet {
    const ms = structuredClone(env.machineSet);
    ms.metadata = { name, namespace: NS, labels: { ...ms.metadata?.labels } };
    ms.spec!.replicas = replicas;
    ms.spec!.selector = { matchLabels: { [Labels.Cluster]: CLUSTER_ID, [Labels.MachineSet]: name } };
    ms.spec!.template!.metadata!.labels![Labels.MachineSet] = name;
    edit(ms.spec!.template!.spec!.providerSpec!.value as Record<string, unknown>);
    return ms;
  }

  it('examples/mapo applied with kubectl: 3 workers Running with nodeRef, providerID, labels, annotations, addresses; the set counts them', async () => {
    await kubectl('apply', '-f', EXAMPLE);
    await allRunning(WORKERS, 3);
    // The kubelet stand-in joins a Node as soon as Nova says ACTIVE, which can be before the
    // OpenStackServer says so: the Machine's annotation and addresses follow it, then or after.
    const workers = (await eventually(
      async () => {
        const ms = await machinesOf(WORKERS);
        const settled = (m: Machine) =>
          m.metadata?.annotations?.[Annotations.InstanceState] === 'ACTIVE' &&
          (m.status?.addresses ?? []).some((a) => a.type === 'InternalIP');
        return ms.every(settled) ? ms : undefined;
      },
      { ...WAIT, what: `the ${WORKERS} Machines annotated ACTIVE, with addresses` },
    ))!;
    for (const m of workers) {
      const name = m.metadata!.name!;
      assert.match(name, new RegExp(`^${WORKERS}-[a-z0-9]{5}$`), 'generateName <machineset>-');
      const [server, ...more] = await serversNamed(name);
      assert.ok(server && more.length === 0, `one Nova server for ${name}`);
      assert.equal(server.status, 'ACTIVE');
      assert.equal(m.spec?.providerID, `openstack:///${server.id}`);
      assert.equal(m.metadata?.annotations?.[Annotations.ResourceID], server.id);
      assert.equal(m.metadata?.annotations?.[Annotations.InstanceState], 'ACTIVE');
      assert.equal(m.metadata?.labels?.[Labels.InstanceType], 'm1.xlarge');
      assert.equal(m.metadata?.labels?.[Labels.Region], env.sim.cloud.options.region);
      assert.equal(m.metadata?.labels?.[Labels.Zone], server['OS-EXT-AZ:availability_zone']);
      const fixed = Object.values(server.addresses ?? {})
        .flat()
        .map((a) => a.addr);
      const addresses = m.status?.addresses ?? [];
      assert.deepEqual(
        addresses.filter((a) => a.type === 'InternalIP').map((a) => a.address),
        fixed,
      );
      assert.deepEqual(
        addresses.filter((a) => a.type !== 'InternalIP'),
        [
          { type: 'Hostname', address: name },
          { type: 'InternalDNS', address: name },
        ],
      );
      assert.equal(condition(m, MachineConditions.InstanceExists)?.status, 'True');
      assert.equal(m.metadata?.ownerReferences?.find((r) => r.controller)?.name, WORKERS);

      // The kubelet stand-in registered the Node; nodelink linked it both ways.
      const n = await node(m.status!.nodeRef!.name!);
      assert.equal(n?.metadata?.name, name);
      assert.equal(n?.spec?.providerID, m.spec?.providerID);
      assert.equal(m.status?.nodeRef?.uid, n?.metadata?.uid);
      assert.equal(n?.metadata?.annotations?.[Annotations.Machine], `${NS}/${name}`);
    }
    const set = (await eventually(
      async () => {
        const s = await env.api.get(mapoKinds.MachineSet, { namespace: NS, name: WORKERS });
        const st = s.status;
        return st?.replicas === 3 &&
          st.fullyLabeledReplicas === 3 &&
          st.readyReplicas === 3 &&
          st.availableReplicas === 3
          ? s
          : undefined;
      },
      { ...WAIT, what: `${WORKERS} status counting 3 ready Machines` },
    ))!;
    assert.equal(set.status?.observedGeneration, set.metadata?.generation);
    // The example's control-plane Machine comes up beside them.
    await eventually(
      async () => {
        const m = await machine(`${CLUSTER_ID}-master-0`);
        return m !== undefined && running(m);
      },
      { ...WAIT, what: 'the control-plane Machine Running' },
    );
  });

  it('kubectl scale with delete-machine: that Machine alone is drained and deleted with its server, ports, volumes and Node', async () => {
    await env.api.create(
      mapoKinds.MachineSet,
      machineSetLike(VOLUMES, 3, (v) => {
        delete v.image;
        v.rootVolume = { sourceUUID: `${CLUSTER_ID}-rhcos`, diskSize: 1 };
        v.additionalBlockDevices = [{ name: 'etcd', sizeGiB: 1, storage: { type: 'Volume' } }];
      }),
    );
    const machines = await allRunning(VOLUMES, 3);
    const chosen = machines[1]!;
    const name = chosen.metadata!.name!;
    const nodeName = chosen.status!.nodeRef!.name!;
    const serverID = chosen.metadata!.annotations![Annotations.ResourceID]!;
    // A workload on its Node, which the drain must evict.
    await env.api.create<V1Pod>(kinds.Pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: 'default' },
      spec: { nodeName, containers: [{ name: 'web', image: 'nginx' }] },
    });
    const ports = (await env.admin.network.ports.list({ device_id: serverID }).all()).map((p) => p.id);
    const volumes = (await env.admin.blockStorage.volumes.list({ all_tenants: true }).all())
      .filter((v) => v.attachments.some((a) => a.server_id === serverID))
      .map((v) => v.id);
    // The example's `trunk: true`: each port is a trunk's parent.
    const trunks = (await env.admin.network.trunks.list({}).all())
      .filter((t) => ports.includes(t.port_id))
      .map((t) => t.id);
    assert.ok(ports.length > 0);
    assert.equal(trunks.length, ports.length, 'a trunk per port');
    assert.equal(volumes.length, 2, 'the root volume and the etcd one');
    const others = [...machines.filter((m) => m !== chosen), ...(await machinesOf(WORKERS))];
    const census = await takeCensus(env.admin);

    await env.api.patch(mapoKinds.Machine, { namespace: NS, name }, 'merge', {
      metadata: { annotations: { [Annotations.DeleteMachine]: 'true' } },
    });
    await kubectl('scale', 'machinesets.machine.openshift.io', VOLUMES, '-n', NS, '--replicas=2');

    // Two left, and the one gone is the one marked.
    await eventually(async () => (await machinesOf(VOLUMES)).length === 2, {
      ...WAIT,
      what: `${VOLUMES} down to 2 Machines`,
    });
    assert.deepEqual(
      (await machinesOf(VOLUMES)).map((m) => m.metadata?.name),
      machines.filter((m) => m !== chosen).map((m) => m.metadata?.name),
    );
    await gone(`Node ${nodeName}`, () => node(nodeName));
    await gone('the evicted pod', () => find(kinds.Pod, { namespace: 'default', name: 'web' }));
    assert.ok((await events(name, DrainEventReasons.DrainSucceeded)).length > 0, 'drained, not skipped');
    assert.deepEqual(await serversNamed(name), []);

    // The cloud now is the census minus exactly that server, its ports and volumes.
    const now = await takeCensus(env.admin);
    assert.deepEqual(leaks(census, now), [], 'nothing new in the cloud');
    const removed = leaks(now, census).map((l) => `${l.kind} ${l.id}`);
    const expected: [CensusKind, string[]][] = [
      ['servers', [serverID]],
      ['ports', ports],
      ['trunks', trunks],
      ['volumes', volumes],
    ];
    assert.deepEqual(
      removed.sort(),
      expected.flatMap(([kind, ids]) => ids.map((id) => `${kind} ${id}`)).sort(),
    );
    // The other Machines untouched: the same objects, still Running, on the same servers.
    for (const m of others) {
      const now = await machine(m.metadata!.name!);
      assert.equal(now?.metadata?.uid, m.metadata?.uid);
      assert.equal(now?.metadata?.deletionTimestamp, undefined);
      assert.equal(now?.spec?.providerID, m.spec?.providerID);
      assert.ok(now && running(now));
    }
    await eventually(
      async () =>
        (await env.api.get(mapoKinds.MachineSet, { namespace: NS, name: VOLUMES })).status?.replicas === 2,
      { ...WAIT, what: `${VOLUMES} status.replicas 2` },
    );
  });

  it('a bad flavor: Failed, InvalidConfiguration, the field and flavor named, no OpenStack write', async () => {
    const set = `${CLUSTER_ID}-worker-bad`;
    const since = env.sim.cloud.stats.requests().last;
    await env.api.create(
      mapoKinds.MachineSet,
      machineSetLike(set, 1, (v) => {
        v.flavor = 'm9.nonexistent';
      }),
    );
    const [failed] = (await eventually(
      async () => {
        const ms = await machinesOf(set);
        return ms.length === 1 && ms[0]!.status?.phase === 'Failed' ? ms : undefined;
      },
      { ...WAIT, what: `the Machine of ${set} Failed` },
    ))!;
    const name = failed!.metadata!.name!;
    assert.equal(failed!.status?.errorReason, 'InvalidConfiguration');
    assert.match(
      failed!.status?.errorMessage ?? '',
      /spec\.providerSpec\.value\.flavor: flavor "m9\.nonexistent" does not exist/,
    );
    assert.equal(await openStackServer(name), undefined);
    assert.deepEqual(cloudWrites(since), [], 'no OpenStack write for it');
    assert.ok((await events(name, 'InvalidConfiguration')).length > 0, 'a Warning Event on the Machine');
    await kubectl('delete', 'machinesets.machine.openshift.io', set, '-n', NS, '--wait=false');
  });

  it('a preDrain hook holds the deletion (Drainable=False, the server kept) until it is removed', async () => {
    const [target] = await allRunning(WORKERS, 3);
    const name = target!.metadata!.name!;
    const nodeName = target!.status!.nodeRef!.name!;
    const serverID = target!.metadata!.annotations![Annotations.ResourceID]!;
    await env.api.patch(mapoKinds.Machine, { namespace: NS, name }, 'merge', {
      spec: { lifecycleHooks: { preDrain: [{ name: 'EtcdQuorum', owner: 'clusteroperator/etcd' }] } },
    });
    await kubectl('delete', 'machines.machine.openshift.io', name, '-n', NS, '--wait=false');
    const held = (await eventually(
      async () => {
        const m = await machine(name);
        return m?.status?.phase === 'Deleting' && condition(m, DRAINABLE)?.status === 'False' ? m : undefined;
      },
      { ...WAIT, what: `${name} Deleting with Drainable=False` },
    ))!;
    assert.equal(condition(held, DRAINABLE)?.reason, DrainReasons.HookPresent);
    assert.match(condition(held, DRAINABLE)?.message ?? '', /EtcdQuorum/);
    assert.notEqual(condition(held, DRAINED)?.status, 'True');
    // Held: the OpenStackServer is not being deleted, the Nova server and the Node are there.
    assert.equal((await openStackServer(name))?.metadata?.deletionTimestamp, undefined);
    assert.equal((await env.admin.compute.servers.get(serverID)).status, 'ACTIVE');
    assert.equal((await node(nodeName))?.spec?.unschedulable, undefined, 'not even cordoned');

    await env.api.patch(mapoKinds.Machine, { namespace: NS, name }, 'json', [
      { op: 'remove', path: '/spec/lifecycleHooks/preDrain' },
    ]);
    await gone(`Machine ${name}`, () => machine(name));
    await gone(`Node ${nodeName}`, () => node(nodeName));
    assert.deepEqual(await serversNamed(name), []);
    // The MachineSet replaces it.
    const again = await allRunning(WORKERS, 3);
    assert.ok(!again.some((m) => m.metadata?.name === name));
  });

  it('a Machine moves to Cluster API and back: same server and ports, no OpenStack write, Paused meanwhile', async () => {
    const [target] = await allRunning(WORKERS, 3);
    const name = target!.metadata!.name!;
    const instanceID = target!.metadata!.annotations![Annotations.ResourceID]!;
    const portsOf = async () =>
      (await env.admin.network.ports.list({ device_id: instanceID }).all())
        .map((p) => ({
          id: p.id,
          mac: p.mac_address,
          ips: p.fixed_ips,
          groups: [...(p.security_groups ?? [])].sort(),
        }))
        .sort((a, b) => a.id.localeCompare(b.id));
    const ports = await portsOf();
    assert.ok(ports.length > 0);

    // The Cluster API Cluster the Machine's cluster label names, in its namespace (OpenShift's
    // cluster-capi-operator makes it; its infrastructure exists already).
    await env.api.create(capoKinds.OpenStackCluster, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackCluster',
      metadata: { name: CLUSTER_ID, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': CLUSTER_ID } },
      spec: { identityRef: { type: 'Secret', name: 'openstack-cloud-credentials', cloudName: 'openstack' } },
    });
    await env.api.create(capoKinds.Cluster, {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Cluster',
      metadata: { name: CLUSTER_ID, namespace: NS },
      spec: {
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'OpenStackCluster',
          name: CLUSTER_ID,
        },
      },
    });
    await env.api.patch(
      capoKinds.Cluster,
      { namespace: NS, name: CLUSTER_ID },
      'merge',
      { status: { infrastructureReady: true } },
      { subresource: 'status' },
    );

    const since = env.sim.cloud.stats.requests().last;
    await env.api.patch(mapoKinds.Machine, { namespace: NS, name }, 'merge', {
      spec: { authoritativeAPI: 'ClusterAPI' },
    });
    const paused = (await eventually(
      async () => {
        const m = await machine(name);
        return m?.status?.authoritativeAPI === 'ClusterAPI' &&
          condition(m, MachineConditions.Paused)?.status === 'True'
          ? m
          : undefined;
      },
      { ...WAIT, what: `${name} ClusterAPI and Paused` },
    ))!;
    assert.equal(condition(paused, MachineConditions.Paused)?.reason, PausedReasons.NotMachineAPI);
    const osm = (await eventually(
      async () => {
        const o = await find<KubernetesObject & { status?: { ready?: boolean; instanceID?: string } }>(
          capoKinds.OpenStackMachine,
          { namespace: NS, name },
        );
        return o?.status?.ready ? o : undefined;
      },
      { ...WAIT, what: 'the OpenStackMachine ready' },
    ))!;
    assert.equal(osm.status?.instanceID, instanceID);
    await eventually(
      async () => {
        const m = await find<KubernetesObject & { status?: { nodeRef?: { name?: string } } }>(
          capoKinds.Machine,
          {
            namespace: NS,
            name,
          },
        );
        return m?.status?.nodeRef?.name === name;
      },
      { ...WAIT, what: 'the Cluster API Machine linked to the same Node' },
    );
    const server = await openStackServer(name);
    assert.deepEqual(
      server?.metadata?.ownerReferences?.filter((r) => r.controller).map((r) => [r.kind, r.uid]),
      [['OpenStackMachine', osm.metadata?.uid]],
    );
    assert.equal(server?.status?.instanceID, instanceID);
    assert.deepEqual(await portsOf(), ports);
    assert.deepEqual(cloudWrites(since), [], 'no OpenStack write for the switch to Cluster API');
    // Still paused: the machine controller leaves it alone.
    assert.equal(condition(await machine(name), MachineConditions.Paused)?.status, 'True');

    const back = env.sim.cloud.stats.requests().last;
    await env.api.patch(mapoKinds.Machine, { namespace: NS, name }, 'merge', {
      spec: { authoritativeAPI: 'MachineAPI' },
    });
    const returned = (await eventually(
      async () => {
        const m = await machine(name);
        return m?.status?.authoritativeAPI === 'MachineAPI' &&
          condition(m, MachineConditions.Paused)?.status === 'False' &&
          running(m)
          ? m
          : undefined;
      },
      { ...WAIT, what: `${name} MachineAPI again, not Paused, Running` },
    ))!;
    assert.equal(condition(returned, MachineConditions.Paused)?.reason, PausedReasons.MachineAPI);
    assert.equal(returned.spec?.providerID, `openstack:///${instanceID}`);
    assert.equal(returned.metadata?.uid, target!.metadata?.uid);
    const served = await openStackServer(name);
    assert.deepEqual(
      served?.metadata?.ownerReferences?.filter((r) => r.controller).map((r) => r.uid),
      [target!.metadata?.uid],
    );
    assert.equal(served?.status?.instanceID, instanceID);
    assert.deepEqual(await portsOf(), ports);
    assert.deepEqual(cloudWrites(back), [], 'no OpenStack write for the switch back');
    assert.deepEqual(
      (await serversNamed(name)).map((s) => s.id),
      [instanceID],
    );
  });
});
