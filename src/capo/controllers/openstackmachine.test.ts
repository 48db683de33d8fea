/**
 * The OpenStackMachine controller through both emulators, with the OpenStackCluster and
 * OpenStackServer controllers running and Cluster API core stood in for (actAsClusterAPICore):
 * the example cluster's first control-plane machine and first worker wait for the cluster and
 * their bootstrap data, then become ready with providerIDs and addresses, the control-plane one a
 * member of the API load balancer; a spec change is refused; deleting the Machines removes the
 * servers, their ports and the member. A cluster without a load balancer puts its API floating IP
 * on a control-plane machine, and on another one when that machine goes.
 */
import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { createLogger } from '../../lib/log.ts';
import { isNotFound, kinds, type KubernetesObject } from '../../kube/index.ts';
import { addFault } from '../../openstack/core/testing/target.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import {
  capoKinds,
  MACHINE_FINALIZER,
  type CapiCondition,
  type Cluster,
  type Machine,
  type OpenStackCluster,
  type OpenStackMachine,
  type OpenStackServer,
} from '../api/index.ts';
import { reconcileCount, settled } from '../../kube/testing/settle.ts';
import { startCapoEnv, type CapoEnv, type RunningCapo } from '../testing/env.ts';
import { OPENSTACK_MACHINE_CONTROLLER } from './openstackmachine.ts';

const WAIT = { timeoutMs: 120_000, intervalMs: 50 };
const ROOT = join(import.meta.dirname, '..', '..', '..');
const NAME = 'capo-demo';
const CP = 'capo-demo-control-plane-7xk2p';
const WORKER = 'capo-demo-md-0-5c9f8-hq2vn';

type Obj = KubernetesObject & { spec?: Record<string, unknown> };

/** The objects of examples/capo/cluster.yaml, in the test namespace. */
async function example(namespace: string): Promise<Obj[]> {
  const text = await readFile(join(ROOT, 'examples', 'capo', 'cluster.yaml'), 'utf8');
  return parseAllDocuments(text)
    .map((d) => d.toJSON() as Obj)
    .map((o) => ({ ...o, metadata: { ...o.metadata, namespace } }));
}

const condition = (o: { status?: { conditions?: CapiCondition[] } } | undefined, type: string) =>
  o?.status?.conditions?.find((c) => c.type === type);

describe('OpenStackMachine controller', () => {
  let env: CapoEnv;
  let capo: RunningCapo;
  let objects: Obj[];

  before(async () => {
    env = await startCapoEnv();
    await env.os.compute.keypairs.create({ name: 'capo-demo' });
    capo = await env.startCapo(
      process.env.CAPO_TEST_LOG
        ? { log: createLogger({ level: 'debug', destination: createWriteStream(process.env.CAPO_TEST_LOG) }) }
        : {},
    );
    objects = await example(env.namespace);
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  const ns = () => env.namespace;
  async function getOrUndefined<T extends KubernetesObject>(
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
  const osm = (name: string) => getOrUndefined<OpenStackMachine>(capoKinds.OpenStackMachine, name);
  const oss = (name: string) => getOrUndefined<OpenStackServer>(capoKinds.OpenStackServer, name);
  const events = async (name: string): Promise<EventsV1Event[]> =>
    (await env.api.listAll(kinds.EventsV1Event, { namespace: ns() })).items.filter(
      (e) => e.regarding?.name === name,
    );

  async function create(obj: Obj): Promise<void> {
    switch (obj.kind) {
      case 'Secret':
        await env.api.create(kinds.Secret, obj);
        return;
      case 'Cluster':
        await env.api.create(capoKinds.Cluster, obj);
        return;
      case 'OpenStackCluster':
        await env.api.create(capoKinds.OpenStackCluster, obj as OpenStackCluster);
        return;
      case 'Machine':
        await env.api.create(capoKinds.Machine, obj as Machine);
        return;
      case 'OpenStackMachine':
        await env.api.create(capoKinds.OpenStackMachine, obj as OpenStackMachine);
        return;
      default:
        throw new Error(`unexpected ${obj.kind}`);
    }
  }
  const named = (kind: string, name: string) =>
    structuredClone(objects.find((o) => o.kind === kind && o.metadata?.name === name)!);

  async function ready(name: string): Promise<OpenStackMachine> {
    const m = await eventually(
      async () => {
        const m = await osm(name);
        return m?.status?.ready && m.spec.providerID && condition(m, 'Ready')?.status === 'True'
          ? m
          : undefined;
      },
      { ...WAIT, what: `OpenStackMachine ${name} ready` },
    );
    return m!;
  }

  async function poolMembers(lbId: string): Promise<string[][]> {
    const pools = await env.admin.loadBalancer.pools.list({ loadbalancer_id: lbId }).all();
    const out = [];
    for (const p of pools)
      out.push((await env.admin.loadBalancer.members.list(p.id).all()).map((m) => m.address).sort());
    return out;
  }

  it('machines wait for the cluster and their bootstrap data, then become ready with providerID, addresses and the API member', async () => {
    // The cluster (no bastion, to keep the test short) with credentials that do not exist yet:
    // its infrastructure cannot get ready, and the machines must wait for it.
    const osc = named('OpenStackCluster', NAME) as OpenStackCluster;
    delete osc.spec.bastion;
    osc.spec.identityRef = { ...osc.spec.identityRef, name: 'not-yet' };
    await create(named('Cluster', NAME));
    await create(osc);
    for (const s of [named('Secret', CP), named('Secret', WORKER)]) await create(s);
    const worker = named('Machine', WORKER);
    delete (worker.spec!.bootstrap as { dataSecretName?: string }).dataSecretName;
    for (const o of [
      named('Machine', CP),
      worker,
      named('OpenStackMachine', CP),
      named('OpenStackMachine', WORKER),
    ])
      await create(o);
    await eventually(
      async () => condition(await osm(CP), 'InstanceReady')?.reason === 'WaitingForClusterInfrastructure',
      { ...WAIT, what: 'WaitingForClusterInfrastructure' },
    );
    assert.equal(await oss(CP), undefined, 'no OpenStackServer before the cluster is ready');
    assert.ok(!(await osm(CP))?.metadata?.finalizers?.includes(MACHINE_FINALIZER), 'no finalizer yet');
    assert.equal(condition(await osm(CP), 'Ready')?.status, 'False');

    // The right credentials: the cluster gets ready.
    await env.api.patch(capoKinds.OpenStackCluster, { namespace: ns(), name: NAME }, 'merge', {
      spec: { identityRef: env.identityRef },
    });

    // The worker has no bootstrap data yet: it says so, and nothing is made for it.
    await eventually(
      async () => condition(await osm(WORKER), 'InstanceReady')?.reason === 'WaitingForBootstrapData',
      { ...WAIT, what: 'WaitingForBootstrapData' },
    );
    assert.equal(await oss(WORKER), undefined);
    await env.api.patch(capoKinds.Machine, { namespace: ns(), name: WORKER }, 'merge', {
      spec: { bootstrap: { dataSecretName: WORKER } },
    });

    const cp = await ready(CP);
    const wk = await ready(WORKER);
    const cluster = (await env.api.get(capoKinds.OpenStackCluster, { namespace: ns(), name: NAME })).status!;
    const networkID = cluster.network!.id;

    for (const [m, group] of [
      [cp, cluster.controlPlaneSecurityGroup!.id],
      [wk, cluster.workerSecurityGroup!.id],
    ] as const) {
      const name = m.metadata!.name!;
      const st = m.status!;
      assert.ok(m.metadata?.finalizers?.includes(MACHINE_FINALIZER), name);
      assert.equal(m.spec.providerID, `openstack:///${st.instanceID}`, name);
      assert.equal(st.instanceState, 'ACTIVE');
      assert.equal(st.initialization?.provisioned, true);
      assert.equal(condition(m, 'InstanceReady')?.status, 'True');
      assert.equal(condition(m, 'SpecAccepted')?.status, 'True');
      const internal = st.addresses?.find((a) => a.type === 'InternalIP')?.address;
      assert.match(internal ?? '', /^10\.6\.0\.\d+$/, name);
      assert.ok(st.addresses?.some((a) => a.type === 'InternalDNS' && a.address === name));

      // Its OpenStackServer: controlled by the machine, spec from the machine and the cluster.
      const server = (await oss(name))!;
      assert.equal(server.metadata?.ownerReferences?.[0]?.kind, 'OpenStackMachine');
      assert.equal(server.metadata?.ownerReferences?.[0]?.controller, true);
      assert.equal(server.metadata?.labels?.['cluster.x-k8s.io/cluster-name'], NAME);
      assert.equal(server.spec.availabilityZone, 'nova');
      assert.deepEqual(server.spec.userDataRef, { name });
      assert.deepEqual(server.spec.tags, ['capo-demo']);
      assert.deepEqual(server.spec.identityRef, env.identityRef);
      assert.deepEqual(server.spec.ports, [
        {
          network: { id: networkID },
          fixedIPs: [{ subnet: { id: cluster.network!.subnets![0]!.id } }],
          securityGroups: [{ id: group }],
        },
      ]);

      // In Nova and Neutron.
      const nova = await env.admin.compute.servers.get(st.instanceID!);
      assert.equal(nova.name, name);
      assert.equal(nova.status, 'ACTIVE');
      const [port] = await env.admin.network.ports.list({ device_id: nova.id }).all();
      assert.deepEqual(port?.security_groups, [group]);
      assert.equal(port?.fixed_ips[0]?.ip_address, internal);

      // Cluster API core, stood in for: the Machine is provisioned with the same facts.
      const machine = await env.api.get(capoKinds.Machine, { namespace: ns(), name });
      assert.equal(machine.spec.providerID, m.spec.providerID);
      assert.equal(machine.status?.infrastructureReady, true);
      assert.equal(machine.status?.phase, 'Provisioned');
      assert.deepEqual(machine.status?.addresses, st.addresses);
      assert.ok(m.metadata?.ownerReferences?.some((r) => r.kind === 'Machine' && r.name === name));
      assert.ok((await events(name)).some((e) => e.reason === 'SuccessfulCreateOpenStackServer'));
    }

    // The control-plane machine is the API load balancer's member (the cluster controller's work),
    // and says so; the worker is not.
    await eventually(
      async () => condition(await osm(CP), 'APIServerIngressReadyCondition')?.status === 'True',
      { ...WAIT, what: 'APIServerIngressReadyCondition' },
    );
    assert.equal(condition(wk, 'APIServerIngressReadyCondition'), undefined);
    const cpIP = cp.status!.addresses!.find((a) => a.type === 'InternalIP')!.address;
    assert.deepEqual(await poolMembers(cluster.apiServerLoadBalancer!.id), [[cpIP]]);
  });

  it('refuses a spec change: condition, Warning Event, the server untouched; a revert is accepted', async () => {
    const before = (await oss(WORKER))!;
    await env.api.patch(capoKinds.OpenStackMachine, { namespace: ns(), name: WORKER }, 'merge', {
      spec: { flavor: 'm1.medium' },
    });
    const refused = await eventually(
      async () => {
        const m = await osm(WORKER);
        return condition(m, 'SpecAccepted')?.status === 'False' ? m : undefined;
      },
      { ...WAIT, what: 'SpecAccepted False' },
    );
    const c = condition(refused, 'SpecAccepted')!;
    assert.equal(c.reason, 'ImmutableFieldChanged');
    assert.match(c.message ?? '', /spec\.flavor/);
    await eventually(async () => (await events(WORKER)).some((e) => e.reason === 'SpecChangeRefused'), {
      ...WAIT,
      what: 'a SpecChangeRefused Event',
    });
    assert.deepEqual((await oss(WORKER))!.spec, before.spec);
    assert.equal(refused!.status?.ready, true, 'the machine keeps running on the accepted spec');

    await env.api.patch(capoKinds.OpenStackMachine, { namespace: ns(), name: WORKER }, 'merge', {
      spec: { flavor: 'm1.small' },
    });
    await eventually(async () => condition(await osm(WORKER), 'SpecAccepted')?.status === 'True', {
      ...WAIT,
      what: 'SpecAccepted True again',
    });
  });

  it('deleting the Machines deletes the servers, their ports and the API member', async () => {
    const cluster = (await env.api.get(capoKinds.OpenStackCluster, { namespace: ns(), name: NAME })).status!;
    const ids = await Promise.all([CP, WORKER].map(async (n) => (await osm(n))!.status!.instanceID!));
    for (const name of [CP, WORKER]) await env.api.delete(capoKinds.Machine, { namespace: ns(), name });
    for (const name of [CP, WORKER]) {
      await eventually(async () => (await osm(name)) === undefined && (await oss(name)) === undefined, {
        ...WAIT,
        what: `OpenStackMachine and OpenStackServer ${name} gone`,
      });
    }
    const servers = await env.admin.compute.servers.list({ all_tenants: true }).all();
    assert.deepEqual(
      servers.filter((s) => ids.includes(s.id)),
      [],
    );
    for (const id of ids) assert.deepEqual(await env.admin.network.ports.list({ device_id: id }).all(), []);
    const nodePorts = (await env.admin.network.ports.list({ network_id: cluster.network!.id }).all()).filter(
      (p) => p.device_owner.startsWith('compute:'),
    );
    assert.deepEqual(nodePorts, []);
    await eventually(
      async () =>
        JSON.stringify(await poolMembers(cluster.apiServerLoadBalancer!.id)) === JSON.stringify([[]]),
      { ...WAIT, what: 'no member left' },
    );
  });

  it('an instance in ERROR: the machine fails for good (it never was a node), says why, and still deletes', async () => {
    const name = 'capo-demo-md-0-err';
    const labels = { 'cluster.x-k8s.io/cluster-name': NAME };
    await addFault(env.sim, { kind: 'error-on-create', service: 'nova', resource: 'server', times: 1 });
    await create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: ns(), labels },
      stringData: { value: '#cloud-config\n' },
    } as Obj);
    await create({
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Machine',
      metadata: { name, namespace: ns(), labels },
      spec: {
        clusterName: NAME,
        bootstrap: { dataSecretName: name },
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'OpenStackMachine',
          name,
        },
      },
    });
    await create({
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackMachine',
      metadata: { name, namespace: ns(), labels },
      spec: { flavor: 'm1.small', image: { filter: { name: 'ubuntu-22.04' } } },
    });
    const failed = await eventually(
      async () => {
        const m = await osm(name);
        return m?.status?.failureReason ? m : undefined;
      },
      { ...WAIT, what: 'failureReason' },
    );
    assert.equal(failed!.status?.failureReason, 'UpdateError');
    assert.equal(failed!.status?.instanceState, 'ERROR');
    assert.equal(failed!.status?.ready, false);
    assert.equal(failed!.spec.providerID, undefined);
    const ready = condition(failed, 'Ready')!;
    assert.deepEqual([ready.status, ready.reason, ready.severity], ['False', 'InstanceStateError', 'Error']);
    await eventually(async () => (await events(name)).some((e) => e.reason === 'InstanceStateError'), {
      ...WAIT,
      what: 'an InstanceStateError Event on the machine',
    });
    const instanceID = failed!.status.instanceID!;
    await env.api.delete(capoKinds.Machine, { namespace: ns(), name });
    await eventually(async () => (await osm(name)) === undefined && (await oss(name)) === undefined, {
      ...WAIT,
      what: `${name} gone`,
    });
    assert.deepEqual(await env.admin.network.ports.list({ device_id: instanceID }).all(), []);
  });

  it('without a load balancer, the API floating IP goes to a control-plane machine, then to another when it goes', async () => {
    const name = 'fip';
    const labels = { 'cluster.x-k8s.io/cluster-name': name };
    await create({
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Cluster',
      metadata: { name, namespace: ns() },
      spec: {
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'OpenStackCluster',
          name,
        },
      },
    });
    await create({
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackCluster',
      metadata: { name, namespace: ns(), labels },
      spec: {
        identityRef: env.identityRef,
        managedSubnets: [{ cidr: '10.7.0.0/24' }],
        externalNetwork: { filter: { name: 'public' } },
        managedSecurityGroups: { allowAllInClusterTraffic: true },
      },
    });
    const machine = async (m: string) => {
      await create({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: m, namespace: ns(), labels },
        spec: undefined,
        stringData: { value: '#cloud-config\n' },
      } as Obj);
      await create({
        apiVersion: 'cluster.x-k8s.io/v1beta1',
        kind: 'Machine',
        metadata: { name: m, namespace: ns(), labels: { ...labels, 'cluster.x-k8s.io/control-plane': '' } },
        spec: {
          clusterName: name,
          bootstrap: { dataSecretName: m },
          infrastructureRef: {
            apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
            kind: 'OpenStackMachine',
            name: m,
          },
        },
      });
      await create({
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'OpenStackMachine',
        metadata: { name: m, namespace: ns(), labels: { ...labels, 'cluster.x-k8s.io/control-plane': '' } },
        spec: { flavor: 'm1.small', image: { filter: { name: 'ubuntu-22.04' } } },
      });
    };
    await machine('fip-cp-0');
    await machine('fip-cp-1');
    const [a, b] = [await ready('fip-cp-0'), await ready('fip-cp-1')];
    const osc = await env.api.get(capoKinds.OpenStackCluster, { namespace: ns(), name });
    const address = osc.spec.controlPlaneEndpoint!.host;
    const holderPort = async () => {
      const [fip] = await env.admin.network.floatingIps.list({ floating_ip_address: address }).all();
      return fip?.port_id ?? undefined;
    };
    const portOf = async (m: OpenStackMachine) =>
      (await env.admin.network.ports.list({ device_id: m.status!.instanceID! }).all())[0]!.id;
    const ports = { a: await portOf(a), b: await portOf(b) };
    const first = await eventually(holderPort, { ...WAIT, what: 'the API floating IP on a port' });
    assert.ok(first === ports.a || first === ports.b, 'on one of the control-plane ports');
    for (const m of ['fip-cp-0', 'fip-cp-1']) {
      await eventually(
        async () => condition(await osm(m), 'APIServerIngressReadyCondition')?.status === 'True',
        {
          ...WAIT,
          what: `${m} APIServerIngressReadyCondition`,
        },
      );
    }

    const [goes, stays] = first === ports.a ? ['fip-cp-0', ports.b] : ['fip-cp-1', ports.a];
    await env.api.delete(capoKinds.Machine, { namespace: ns(), name: goes });
    await eventually(async () => (await holderPort()) === stays, {
      ...WAIT,
      what: 'the API floating IP on the remaining control-plane machine',
    });
    // The floating IP belongs to the cluster: the machine never deleted it.
    assert.equal(
      (await env.admin.network.floatingIps.list({ floating_ip_address: address }).all()).length,
      1,
    );
  });
});

describe('OpenStackMachine controller: reconciles', () => {
  let env: CapoEnv;
  let capo: RunningCapo;

  before(async () => {
    env = await startCapoEnv();
    await env.os.compute.keypairs.create({ name: 'capo-demo' });
    capo = await env.startCapo({ controllers: ['openstackcluster', 'openstackmachine', 'openstackserver'] });
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  it('one worker machine is created in a handful of reconciles, and its own status writes wake nothing', async () => {
    const ns = env.namespace;
    const objects = await example(ns);
    const named = (kind: string, name: string) =>
      structuredClone(objects.find((o) => o.kind === kind && o.metadata?.name === name)!);
    const osc = named('OpenStackCluster', NAME) as OpenStackCluster;
    delete osc.spec.bastion;
    await env.api.create(capoKinds.Cluster, named('Cluster', NAME));
    await env.api.create(capoKinds.OpenStackCluster, osc);
    await eventually(
      async () =>
        (await env.api.get(capoKinds.OpenStackCluster, { namespace: ns, name: NAME })).status?.ready === true,
      { ...WAIT, what: 'the OpenStackCluster ready' },
    );

    const mgr = capo.manager;
    const key = { namespace: ns, name: WORKER };
    const watched = [
      [capoKinds.OpenStackMachine, key],
      [capoKinds.Machine, key],
      [capoKinds.OpenStackServer, key],
    ] as const;
    const before = await reconcileCount(mgr, OPENSTACK_MACHINE_CONTROLLER);
    await env.api.create(kinds.Secret, named('Secret', WORKER));
    await env.api.create(capoKinds.Machine, named('Machine', WORKER) as Machine);
    await env.api.create(capoKinds.OpenStackMachine, named('OpenStackMachine', WORKER) as OpenStackMachine);
    await eventually(
      async () => {
        const m = await env.api.get(capoKinds.OpenStackMachine, key);
        return m.status?.ready && m.spec.providerID && condition(m, 'Ready')?.status === 'True';
      },
      { ...WAIT, what: 'the worker ready' },
    );
    await settled(mgr, OPENSTACK_MACHINE_CONTROLLER, watched, { timeoutMs: WAIT.timeoutMs });
    // Each event that can pass, none coalesced: the Machine's and the machine's creates, the
    // Machine's adoption, the server's create, instanceID, BUILD and ACTIVE, the Machine's
    // providerID (7); before the predicates it was 15 to 17, one per status write of anyone.
    const created = (await reconcileCount(mgr, OPENSTACK_MACHINE_CONTROLLER)) - before;
    assert.ok(created >= 3 && created <= 10, `${created} reconciles from create to ready`);

    // A status-only write wakes nothing (the controller's own patches are such writes)…
    const settledCount = await reconcileCount(mgr, OPENSTACK_MACHINE_CONTROLLER);
    await env.api.patch(
      capoKinds.OpenStackMachine,
      key,
      'merge',
      { status: { addresses: [] } },
      {
        subresource: 'status',
      },
    );
    await settled(mgr, OPENSTACK_MACHINE_CONTROLLER, watched, { timeoutMs: WAIT.timeoutMs });
    assert.equal(await reconcileCount(mgr, OPENSTACK_MACHINE_CONTROLLER), settledCount);

    // …a metadata change does, once: the reconcile puts the addresses back with its own status
    // patch, which does not wake it again.
    await env.api.patch(capoKinds.OpenStackMachine, key, 'merge', {
      metadata: { annotations: { 'example.com/touched': 'yes' } },
    });
    await eventually(
      async () => ((await env.api.get(capoKinds.OpenStackMachine, key)).status?.addresses ?? []).length > 0,
      { ...WAIT, what: 'the addresses written again' },
    );
    await settled(mgr, OPENSTACK_MACHINE_CONTROLLER, watched, { timeoutMs: WAIT.timeoutMs });
    assert.equal(await reconcileCount(mgr, OPENSTACK_MACHINE_CONTROLLER), settledCount + 1);
  });

  it('a machine that finds its OpenStackCluster not there yet is woken when it comes', async () => {
    // Each kind has its own watch, so a machine may be reconciled before its cluster's
    // OpenStackCluster reaches the cache; only the OpenStackCluster's arrival can wake it then.
    const ns = env.namespace;
    const objects = await example(ns);
    const cluster = 'late-cluster';
    const name = 'late-machine';
    const from = <T extends Obj>(kind: string, original: string, rename: string): T => {
      const o = structuredClone(objects.find((x) => x.kind === kind && x.metadata?.name === original)!);
      o.metadata = {
        ...o.metadata,
        name: rename,
        labels: { ...o.metadata?.labels, 'cluster.x-k8s.io/cluster-name': cluster },
      };
      return o as T;
    };
    const c = from<Cluster>('Cluster', NAME, cluster);
    c.spec = { ...c.spec, infrastructureRef: { ...c.spec!.infrastructureRef!, name: cluster } };
    const osc = from<OpenStackCluster>('OpenStackCluster', NAME, cluster);
    delete osc.spec.bastion;
    osc.spec.identityRef = { ...osc.spec.identityRef, name: 'not-yet' };
    const machine = from<Machine>('Machine', CP, name);
    machine.spec = {
      ...machine.spec,
      clusterName: cluster,
      bootstrap: { dataSecretName: name },
      infrastructureRef: { ...machine.spec.infrastructureRef, name },
    };
    const key = { namespace: ns, name };
    await env.api.create(capoKinds.Cluster, c);
    await env.api.create(capoKinds.Machine, machine);
    await env.api.create(capoKinds.OpenStackMachine, from<OpenStackMachine>('OpenStackMachine', CP, name));
    await settled(capo.manager, OPENSTACK_MACHINE_CONTROLLER, [[capoKinds.OpenStackMachine, key]], {
      timeoutMs: WAIT.timeoutMs,
    });
    const machineNow = () => env.api.get(capoKinds.OpenStackMachine, key);
    assert.equal(condition(await machineNow(), 'InstanceReady'), undefined, 'no OpenStackCluster yet');

    await env.api.create(capoKinds.OpenStackCluster, osc);
    await eventually(
      async () =>
        condition(await machineNow(), 'InstanceReady')?.reason === 'WaitingForClusterInfrastructure',
      { timeoutMs: 15_000, intervalMs: 50, what: 'the machine waiting for its cluster' },
    );
    await env.api.delete(capoKinds.Machine, key);
  });

  it('acting as Cluster API core, the reconcile that adopts the machine goes on to create its OpenStackServer', async () => {
    const ns = env.namespace;
    const objects = await example(ns);
    const name = 'adopted-in-one';
    const renamed = <T extends Obj>(kind: string): T => {
      const o = structuredClone(objects.find((x) => x.kind === kind && x.metadata?.name === WORKER)!);
      o.metadata = { ...o.metadata, name };
      return o as T;
    };
    const machine = renamed<Machine>('Machine');
    machine.spec = {
      ...machine.spec,
      bootstrap: { dataSecretName: name },
      infrastructureRef: { ...machine.spec.infrastructureRef, name },
    };
    const mgr = capo.manager;
    await env.api.create(kinds.Secret, renamed('Secret'));
    await env.api.create(capoKinds.Machine, machine);
    const key = { namespace: ns, name };
    await settled(mgr, OPENSTACK_MACHINE_CONTROLLER, [[capoKinds.Machine, key]], {
      timeoutMs: WAIT.timeoutMs,
    });
    const before = await reconcileCount(mgr, OPENSTACK_MACHINE_CONTROLLER);
    // Reconciles finished when the OpenStackServer's create arrives (the one creating it is still running).
    let finished: Promise<number> | undefined;
    const stop = env.kube.emulator.reactors.prepend('create', 'openstackservers', (a) => {
      if ((a.object?.['metadata'] as { name?: string } | undefined)?.name === name)
        finished ??= reconcileCount(mgr, OPENSTACK_MACHINE_CONTROLLER);
      return { handled: false };
    });
    try {
      await env.api.create(capoKinds.OpenStackMachine, renamed<OpenStackMachine>('OpenStackMachine'));
      await eventually(
        async () => finished !== undefined && (await env.api.get(capoKinds.OpenStackServer, key)),
        {
          ...WAIT,
          what: 'the OpenStackServer created',
        },
      );
    } finally {
      stop();
    }
    assert.equal((await finished!) - before, 0, 'no reconcile ended between the adoption and the server');
    const osm = await env.api.get(capoKinds.OpenStackMachine, key);
    assert.equal(osm.metadata?.ownerReferences?.[0]?.name, name);
    await env.api.delete(capoKinds.Machine, key);
    await eventually(
      async () => {
        try {
          await env.api.get(capoKinds.OpenStackMachine, key);
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      { ...WAIT, what: 'the machine gone' },
    );
  });
});
