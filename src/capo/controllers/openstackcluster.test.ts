/**
 * The OpenStackCluster controller through both emulators, with the OpenStackServer controller
 * running for the bastion: the cluster of examples/capo/cluster.yaml becomes ready (network,
 * subnet, router with its gateway, the three security groups and their rules, the API load
 * balancer ACTIVE with a floating IP, the endpoint, failure domains, the bastion ACTIVE with a
 * floating IP); control-plane machines become pool members; a bastion spec change replaces the
 * bastion without a leak; disabling the bastion removes it; deleting the cluster leaves nothing of
 * ours in the cloud. A second cluster on the user's own network leaves that network as it was.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { isNotFound, kinds, type Condition, type KubernetesObject } from '../../kube/index.ts';
import { addFault } from '../../openstack/core/testing/target.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import {
  capoKinds,
  CLUSTER_FINALIZER,
  Conditions,
  type OpenStackCluster,
  type OpenStackServer,
} from '../api/index.ts';
import { BASTION_SPEC_ANNOTATION } from '../cluster/bastion.ts';
import { startCapoEnv, type CapoEnv, type RunningCapo } from '../testing/env.ts';

const WAIT = { timeoutMs: 90_000, intervalMs: 50 };
const ROOT = join(import.meta.dirname, '..', '..', '..');
const NAME = 'capo-demo';
const RESOURCE = `k8s-clusterapi-cluster-capo-demo-${NAME}`;

/** Every OpenStack object id, by kind, across projects: what "nothing of ours left" is checked against. */
interface Census {
  networks: string[];
  subnets: string[];
  routers: string[];
  ports: string[];
  securityGroups: string[];
  floatingIps: string[];
  loadBalancers: string[];
  servers: string[];
  volumes: string[];
}

async function census(env: CapoEnv): Promise<Census> {
  const { admin } = env;
  const ids = (xs: readonly { id: string }[]) => xs.map((x) => x.id).sort();
  const lbs = (await admin.loadBalancer.loadBalancers.list().all()).filter(
    (lb) => lb.provisioning_status !== 'DELETED',
  );
  return {
    networks: ids(await admin.network.networks.list().all()),
    subnets: ids(await admin.network.subnets.list().all()),
    routers: ids(await admin.network.routers.list().all()),
    ports: ids(await admin.network.ports.list().all()),
    // Neutron makes a project's `default` group on first use: not ours.
    securityGroups: ids(
      (await admin.network.securityGroups.list().all()).filter((g) => g.name !== 'default'),
    ),
    floatingIps: ids(await admin.network.floatingIps.list().all()),
    loadBalancers: ids(lbs),
    servers: ids(await admin.compute.servers.list({ all_tenants: true }).all()),
    volumes: ids(await admin.blockStorage.volumes.list({ all_tenants: true }).all()),
  };
}

/** The objects of examples/capo/cluster.yaml of the given kinds, in the test namespace. */
async function exampleObjects(
  namespace: string,
  kindsWanted: readonly string[],
): Promise<KubernetesObject[]> {
  const text = await readFile(join(ROOT, 'examples', 'capo', 'cluster.yaml'), 'utf8');
  return parseAllDocuments(text)
    .map((d) => d.toJSON() as KubernetesObject)
    .filter((o) => kindsWanted.includes(o.kind ?? ''))
    .map((o) => ({ ...o, metadata: { ...o.metadata, namespace } }));
}

/** Reconciles of the OpenStackCluster controller this manager ran, whatever their result. */
async function reconciles(capo: RunningCapo): Promise<number> {
  const metric = (await capo.registry.getMetricsAsJSON()).find(
    (m) => m.name === 'controller_runtime_reconcile_total',
  );
  return (metric?.values ?? [])
    .filter((v) => v.labels.controller === 'openstackcluster')
    .reduce((sum, v) => sum + v.value, 0);
}

const condition = (o: { status?: { conditions?: unknown } } | undefined, type: string) =>
  (o?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);

describe('OpenStackCluster controller', () => {
  let env: CapoEnv;
  let capo: RunningCapo;
  let baseline: Census;

  before(async () => {
    env = await startCapoEnv();
    await env.os.compute.keypairs.create({ name: 'capo-demo' });
    baseline = await census(env);
    capo = await env.startCapo({ controllers: ['openstackcluster', 'openstackserver'] });
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  const get = async (name = NAME): Promise<OpenStackCluster | undefined> => {
    try {
      return await env.api.get(capoKinds.OpenStackCluster, { namespace: env.namespace, name });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };

  /** A Cluster and its OpenStackCluster `name`, as a user writes them. */
  async function createPair(name: string, spec: OpenStackCluster['spec']): Promise<void> {
    await env.api.create(capoKinds.Cluster, {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Cluster',
      metadata: { name, namespace: env.namespace },
      spec: {
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'OpenStackCluster',
          name,
        },
      },
    });
    await env.api.create(capoKinds.OpenStackCluster, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackCluster',
      metadata: { name, namespace: env.namespace, labels: { 'cluster.x-k8s.io/cluster-name': name } },
      spec,
    });
  }

  const bastions = async (): Promise<OpenStackServer[]> =>
    (await env.api.listAll(capoKinds.OpenStackServer, { namespace: env.namespace })).items;

  async function events(name: string): Promise<EventsV1Event[]> {
    const all = (await env.api.listAll(kinds.EventsV1Event, { namespace: env.namespace })).items;
    return all.filter((e) => e.regarding?.name === name);
  }

  async function bastionReady(name: string): Promise<OpenStackCluster> {
    const osc = await eventually(
      async () => {
        const osc = await get();
        const b = osc?.status?.bastion;
        return b?.name === name && b.state === 'ACTIVE' && b.floatingIP ? osc : undefined;
      },
      { ...WAIT, what: `bastion ${name} ACTIVE with a floating IP` },
    );
    return osc!;
  }

  /** Addresses of the members of each pool of the API load balancer. */
  async function poolMembers(lbId: string): Promise<string[][]> {
    const pools = await env.admin.loadBalancer.pools.list({ loadbalancer_id: lbId }).all();
    const out = [];
    for (const p of pools.sort((a, b) => a.name.localeCompare(b.name)))
      out.push((await env.admin.loadBalancer.members.list(p.id).all()).map((m) => m.address).sort());
    return out;
  }

  it('makes the example cluster ready: network, router, security groups, load balancer, endpoint, bastion', async () => {
    for (const obj of await exampleObjects(env.namespace, ['Cluster', 'OpenStackCluster'])) {
      const type = obj.kind === 'Cluster' ? capoKinds.Cluster : capoKinds.OpenStackCluster;
      await env.api.create(type, obj);
    }
    const osc = await bastionReady(`${NAME}-bastion`);
    const st = osc.status!;
    assert.equal(st.ready, true);
    assert.equal(st.initialization?.provisioned, true);
    assert.ok(osc.metadata?.finalizers?.includes(CLUSTER_FINALIZER));
    for (const type of [
      'Ready',
      'NetworkReady',
      'RouterReady',
      'SecurityGroupsReady',
      'APIEndpointReady',
      'SpecAccepted',
      'OpenStackAuthenticationSucceeded',
    ])
      assert.equal(condition(osc, type)?.status, 'True', type);

    // Network, subnet, router with its gateway on the external network.
    assert.equal(st.externalNetwork?.name, 'public');
    assert.equal(st.network?.name, RESOURCE);
    assert.deepEqual(st.network?.tags, ['capo-demo']);
    assert.equal(st.network?.subnets?.[0]?.cidr, '10.6.0.0/24');
    const router = await env.admin.network.routers.get(st.router!.id);
    assert.equal(router.name, RESOURCE);
    assert.equal(router.external_gateway_info?.network_id, st.externalNetwork?.id);
    const subnet = await env.admin.network.subnets.get(st.network.subnets[0].id);
    assert.deepEqual(subnet.dns_nameservers, ['8.8.8.8']);

    // The three security groups and their rules, the example's calico rules on both node groups.
    const groups = new Map(
      await Promise.all(
        (['controlPlaneSecurityGroup', 'workerSecurityGroup', 'bastionSecurityGroup'] as const).map(
          async (k) => [k, await env.admin.network.securityGroups.get(st[k]!.id)] as const,
        ),
      ),
    );
    const cp = groups.get('controlPlaneSecurityGroup')!;
    const worker = groups.get('workerSecurityGroup')!;
    const bastionGroup = groups.get('bastionSecurityGroup')!;
    assert.equal(cp.name, 'k8s-cluster-capo-demo-capo-demo-secgroup-controlplane');
    assert.equal(worker.name, 'k8s-cluster-capo-demo-capo-demo-secgroup-worker');
    assert.equal(bastionGroup.name, 'k8s-cluster-capo-demo-capo-demo-secgroup-bastion');
    const rule = (g: typeof cp, min: number, remote?: string) =>
      g.security_group_rules.find(
        (r) => r.port_range_min === min && (remote === undefined || r.remote_group_id === remote),
      );
    assert.ok(rule(cp, 6443), 'API from anywhere');
    assert.equal(rule(cp, 2379, cp.id)?.port_range_max, 2380, 'etcd between control-plane nodes');
    assert.ok(rule(cp, 10250, worker.id), 'kubelet from workers');
    assert.ok(rule(cp, 22, bastionGroup.id), 'SSH from the bastion');
    assert.ok(rule(worker, 30000, worker.id), 'NodePorts from the nodes');
    assert.ok(
      worker.security_group_rules.some(
        (r) => r.port_range_min === 30000 && r.remote_ip_prefix === '10.6.0.0/24',
      ),
    );
    for (const g of [cp, worker]) {
      assert.ok(rule(g, 179, cp.id) && rule(g, 179, worker.id), `BGP on ${g.name}`);
      assert.ok(g.security_group_rules.some((r) => r.protocol === '4' && r.remote_group_id === worker.id));
    }
    assert.deepEqual(
      bastionGroup.security_group_rules.filter((r) => r.direction === 'ingress').map((r) => r.port_range_min),
      [22],
    );

    // The API load balancer: ACTIVE, a floating IP on its VIP, which is the endpoint.
    const lbStatus = st.apiServerLoadBalancer!;
    // Once the bastion has its address, the listeners' allowed CIDRs grow to let it in.
    const bastionCidr = `${st.bastion!.floatingIP}/32`;
    const lb = (await eventually(
      async () => {
        const l = await env.admin.loadBalancer.loadBalancers.get(lbStatus.id);
        const [first] = await env.admin.loadBalancer.listeners.list({ loadbalancer_id: l.id }).all();
        return l.provisioning_status === 'ACTIVE' && first?.allowed_cidrs?.includes(bastionCidr)
          ? l
          : undefined;
      },
      { ...WAIT, what: 'the load balancer ACTIVE, the bastion allowed' },
    ))!;
    assert.equal(lb.name, `${RESOURCE}-kubeapi`);
    assert.equal(lb.vip_subnet_id, subnet.id);
    assert.equal(lbStatus.internalIP, lb.vip_address);
    const [lbFip] = await env.admin.network.floatingIps.list({ port_id: lb.vip_port_id }).all();
    assert.equal(lbFip?.floating_ip_address, lbStatus.ip);
    assert.deepEqual(lbFip?.tags, ['capo-demo']);
    assert.deepEqual(
      lb.tags?.filter((t) => t === 'capo-demo'),
      ['capo-demo'],
    );
    assert.deepEqual(osc.spec.controlPlaneEndpoint, { host: lbStatus.ip, port: 6443 });
    const [listener] = await env.admin.loadBalancer.listeners.list({ loadbalancer_id: lb.id }).all();
    assert.equal(listener?.name, `${RESOURCE}-kubeapi-6443`);
    assert.equal(listener?.protocol_port, 6443);
    assert.deepEqual(
      listener?.allowed_cidrs?.sort(),
      ['0.0.0.0/0', '10.6.0.0/24', bastionCidr, `${st.bastion!.ip}/32`, `${st.router!.ips![0]}/32`].sort(),
    );
    const [monitor] = await env.admin.loadBalancer.healthMonitors.list().all();
    assert.deepEqual(
      [monitor?.type, monitor?.delay, monitor?.timeout, monitor?.max_retries],
      ['TCP', 10, 5, 5],
    );

    assert.deepEqual(st.failureDomains, { nova: { controlPlane: true } });

    // The bastion: its OpenStackServer, owned by the cluster, ACTIVE, on the cluster network
    // with the bastion group, its floating IP on its port.
    const [bastion] = await bastions();
    assert.equal(bastion?.metadata?.name, `${NAME}-bastion`);
    assert.equal(bastion?.metadata?.ownerReferences?.[0]?.kind, 'OpenStackCluster');
    assert.ok(bastion?.metadata?.annotations?.[BASTION_SPEC_ANNOTATION]);
    const server = await env.admin.compute.servers.get(bastion.status!.instanceID!);
    assert.equal(server.status, 'ACTIVE');
    assert.equal(server.key_name, 'capo-demo');
    const [bastionPort] = await env.admin.network.ports.list({ device_id: server.id }).all();
    assert.equal(bastionPort?.network_id, st.network.id);
    assert.deepEqual(bastionPort?.security_groups, [bastionGroup.id]);
    const [bastionFip] = await env.admin.network.floatingIps.list({ port_id: bastionPort.id }).all();
    assert.equal(bastionFip?.floating_ip_address, st.bastion?.floatingIP);
    assert.deepEqual(bastionFip?.tags, ['capo-demo']);
    assert.deepEqual(server.tags, ['capo-demo']);

    // Acting as Cluster API core: the Cluster learns the endpoint and readiness.
    const cluster = await env.api.get(capoKinds.Cluster, { namespace: env.namespace, name: NAME });
    assert.equal(cluster.status?.infrastructureReady, true);
    assert.deepEqual(cluster.spec?.controlPlaneEndpoint, osc.spec.controlPlaneEndpoint);
    assert.ok((await events(NAME)).some((e) => e.reason === 'SuccessfulCreateLoadBalancer'));
  });

  it('a restarted controller adopts what exists: not one OpenStack object more, still ready', async () => {
    const before = await census(env);
    await capo.stop();
    capo = await env.startCapo({ controllers: ['openstackcluster', 'openstackserver'] });
    // The fresh manager reconciles every object once it has listed them.
    await eventually(async () => (await reconciles(capo)) >= 1, {
      ...WAIT,
      what: 'reconciles after the restart',
    });
    const osc = (await get())!;
    assert.equal(osc.status?.ready, true);
    assert.equal(condition(osc, 'Ready')?.status, 'True');
    assert.deepEqual(await census(env), before);
  });

  it('makes the control-plane machines the pool members, one batch per change', async () => {
    const osc = (await get())!;
    const lbId = osc.status!.apiServerLoadBalancer!.id;
    const labels = { 'cluster.x-k8s.io/cluster-name': NAME };
    const machine = async (name: string, address: string, controlPlane: boolean) => {
      const created = await env.api.create(capoKinds.OpenStackMachine, {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'OpenStackMachine',
        metadata: {
          name,
          namespace: env.namespace,
          labels: controlPlane ? { ...labels, 'cluster.x-k8s.io/control-plane': '' } : labels,
        },
        spec: { flavor: 'm1.medium', image: { filter: { name: 'ubuntu-22.04' } } },
      });
      await env.api.patch(
        capoKinds.OpenStackMachine,
        { namespace: env.namespace, name },
        'merge',
        { status: { addresses: [{ type: 'InternalIP', address }] } },
        { subresource: 'status' },
      );
      return created;
    };
    await machine('cp-0', '10.6.0.100', true);
    await machine('cp-1', '10.6.0.101', true);
    await machine('worker-0', '10.6.0.150', false);
    await eventually(
      async () => JSON.stringify(await poolMembers(lbId)) === JSON.stringify([['10.6.0.100', '10.6.0.101']]),
      { ...WAIT, what: 'the two control-plane machines as members' },
    );
    await env.api.delete(capoKinds.OpenStackMachine, { namespace: env.namespace, name: 'cp-0' });
    await eventually(
      async () => JSON.stringify(await poolMembers(lbId)) === JSON.stringify([['10.6.0.101']]),
      {
        ...WAIT,
        what: 'the deleted machine leaves the pool',
      },
    );
    for (const name of ['cp-1', 'worker-0'])
      await env.api.delete(capoKinds.OpenStackMachine, { namespace: env.namespace, name });
    await eventually(async () => JSON.stringify(await poolMembers(lbId)) === JSON.stringify([[]]), {
      ...WAIT,
      what: 'an empty pool',
    });
  });

  it('replaces the bastion on a spec change: the new one first, the floating IP moves, nothing leaks', async () => {
    const before = (await get())!;
    const address = before.status!.bastion!.floatingIP!;
    const oldServer = (await bastions())[0]!;
    const oldPort = oldServer.status!.resources!.ports![0]!.id;
    // The new server stays in BUILD until we say so: meanwhile the old bastion must keep serving.
    await addFault(env.sim, { kind: 'stuck', service: 'nova', resource: 'server', times: 1 });
    const patch = { spec: { bastion: { spec: { ...before.spec.bastion!.spec, flavor: 'm1.medium' } } } };
    await env.api.patch(capoKinds.OpenStackCluster, { namespace: env.namespace, name: NAME }, 'merge', patch);

    const hash = (s: OpenStackServer) => s.metadata?.annotations?.[BASTION_SPEC_ANNOTATION];
    const building = (await eventually(
      async () => {
        const servers = await bastions();
        const fresh = servers.find((s) => s.metadata?.uid !== oldServer.metadata?.uid);
        return fresh?.status?.instanceID && fresh.status.instanceState === 'BUILD' ? fresh : undefined;
      },
      { ...WAIT, what: 'the new bastion created and building' },
    ))!;
    const during = (await get())!;
    assert.equal(
      during.status?.bastion?.name,
      oldServer.metadata?.name,
      'status still names the old bastion',
    );
    assert.equal(during.status?.bastion?.floatingIP, address);
    assert.ok(
      !(await bastions()).find((s) => s.metadata?.uid === oldServer.metadata?.uid)?.metadata
        ?.deletionTimestamp,
    );
    const [onOld] = await env.admin.network.floatingIps.list({ port_id: oldPort }).all();
    assert.equal(onOld?.floating_ip_address, address, 'the old bastion keeps its address meanwhile');
    assert.ok((await events(NAME)).some((e) => e.reason === 'ReplacingBastion'));

    const forced = await fetch(`${env.sim.url}/_sim/state/nova/server/${building.status!.instanceID}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'ACTIVE' }),
    });
    assert.equal(forced.status, 204);
    const replaced = await eventually(
      async () => {
        const osc = await get();
        const servers = await bastions();
        const b = osc?.status?.bastion;
        return b?.name && b.name !== oldServer.metadata?.name && b.state === 'ACTIVE' && servers.length === 1
          ? { osc: osc!, servers }
          : undefined;
      },
      { ...WAIT, what: 'the new bastion ready and the old one gone' },
    );
    const [fresh] = replaced!.servers;
    assert.match(fresh!.metadata!.name!, new RegExp(`^${NAME}-bastion-[0-9a-f]{10}$`));
    assert.notEqual(hash(fresh!), hash(oldServer));
    assert.equal(
      replaced!.osc.status!.bastion!.floatingIP,
      address,
      'the floating IP moved to the new bastion',
    );
    const server = await env.admin.compute.servers.get(fresh!.status!.instanceID!);
    assert.equal('original_name' in server.flavor ? server.flavor.original_name : '', 'm1.medium');
    // Exactly one bastion server, its one port, and its floating IP (plus the API one) remain.
    await eventually(
      async () => {
        const now = await census(env);
        const servers = now.servers.filter((s) => !baseline.servers.includes(s));
        return servers.length === 1 && servers[0] === server.id;
      },
      { ...WAIT, what: 'the old bastion server deleted in Nova' },
    );
    const ports = await env.admin.network.ports.list({ network_id: replaced!.osc.status!.network!.id }).all();
    assert.deepEqual(
      ports.filter((p) => p.device_owner.startsWith('compute:')).map((p) => p.device_id),
      [server.id],
    );
    const fips = (await census(env)).floatingIps.filter((f) => !baseline.floatingIps.includes(f));
    assert.equal(fips.length, 2, 'the API floating IP and the bastion floating IP');
  });

  it('refuses removing the bastion before disabling it, and keeps the bastion', async () => {
    const before = (await get())!;
    await env.api.patch(capoKinds.OpenStackCluster, { namespace: env.namespace, name: NAME }, 'json', [
      { op: 'remove', path: '/spec/bastion' },
    ]);
    const refused = (await eventually(
      async () => {
        const o = await get();
        return condition(o, 'SpecAccepted')?.reason === 'ImmutableFieldChanged' ? o : undefined;
      },
      { ...WAIT, what: 'SpecAccepted=False' },
    ))!;
    assert.equal(condition(refused, 'SpecAccepted')?.status, 'False');
    assert.match(
      condition(refused, 'SpecAccepted')?.message ?? '',
      /spec\.bastion: cannot be removed before disabling it/,
    );
    await eventually(
      async () => (await events(NAME)).some((e) => e.reason === 'SpecChangeRefused' && e.type === 'Warning'),
      {
        ...WAIT,
        what: 'a SpecChangeRefused Event',
      },
    );
    assert.equal(refused.status?.bastion?.name, before.status?.bastion?.name);
    assert.equal((await bastions()).length, 1);
    assert.ok(!(await bastions())[0]!.metadata?.deletionTimestamp);

    await env.api.patch(capoKinds.OpenStackCluster, { namespace: env.namespace, name: NAME }, 'merge', {
      spec: { bastion: before.spec.bastion },
    });
    await eventually(async () => condition(await get(), 'SpecAccepted')?.status === 'True', {
      ...WAIT,
      what: 'the spec accepted again',
    });
  });

  it('deletes the bastion when disabled, its floating IP and security group with it', async () => {
    await env.api.patch(capoKinds.OpenStackCluster, { namespace: env.namespace, name: NAME }, 'merge', {
      spec: { bastion: { enabled: false } },
    });
    const osc = await eventually(
      async () => {
        const o = await get();
        return !o?.status?.bastion && !o?.status?.bastionSecurityGroup && (await bastions()).length === 0
          ? o
          : undefined;
      },
      { ...WAIT, what: 'the bastion gone' },
    );
    await eventually(
      async () => (await census(env)).servers.filter((s) => !baseline.servers.includes(s)).length === 0,
      { ...WAIT, what: 'no bastion server in Nova' },
    );
    const fips = (await census(env)).floatingIps.filter((f) => !baseline.floatingIps.includes(f));
    assert.equal(fips.length, 1, 'only the API floating IP is left');
    assert.equal(
      (
        await env.admin.network.securityGroups
          .list({ name: 'k8s-cluster-capo-demo-capo-demo-secgroup-bastion' })
          .all()
      ).length,
      0,
    );
    assert.equal(osc!.status?.ready, true);
  });

  it('deletes everything it made when the cluster is deleted, once its machines are gone', async () => {
    const machine = { namespace: env.namespace, name: 'cp-left' };
    await env.api.create(capoKinds.Machine, {
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Machine',
      metadata: { ...machine, labels: { 'cluster.x-k8s.io/cluster-name': NAME } },
      spec: {
        clusterName: NAME,
        bootstrap: { dataSecretName: 'none' },
        infrastructureRef: { kind: 'OpenStackMachine', name: 'cp-left' },
      },
    });
    await env.api.delete(capoKinds.OpenStackCluster, { namespace: env.namespace, name: NAME });
    const waiting = (await eventually(
      async () => {
        const o = await get();
        return condition(o, 'Ready')?.reason === 'Deleting' ? o : undefined;
      },
      { ...WAIT, what: 'the delete seen' },
    ))!;
    assert.ok(waiting.metadata?.deletionTimestamp);
    assert.equal(
      (await env.admin.loadBalancer.loadBalancers.get(waiting.status!.apiServerLoadBalancer!.id))
        .provisioning_status,
      'ACTIVE',
      'nothing is deleted while a Machine is left',
    );

    await env.api.delete(capoKinds.Machine, machine);
    await eventually(async () => (await get()) === undefined, { ...WAIT, what: 'the OpenStackCluster gone' });
    assert.deepEqual(await census(env), baseline);
  });

  it('on the user’s own network: ready through the VIP, and deleting it leaves that network alone', async () => {
    const { os } = env;
    const network = await os.network.networks.create({ name: 'user-net' });
    const subnet = await os.network.subnets.create({
      network_id: network.id,
      cidr: '10.9.0.0/24',
      ip_version: 4,
      name: 'user-subnet',
    });
    const router = await os.network.routers.create({ name: 'user-router' });
    await os.network.routers.addInterface(router.id, { subnet_id: subnet.id });
    const userOwned = await census(env);

    const name = 'byo';
    await createPair(name, {
      identityRef: env.identityRef,
      network: { filter: { name: 'user-net' } },
      subnets: [{ filter: { name: 'user-subnet' } }],
      router: { filter: { name: 'user-router' } },
      disableAPIServerFloatingIP: true,
      apiServerLoadBalancer: { enabled: true },
      managedSecurityGroups: { allowAllInClusterTraffic: true },
    });
    const osc = (await eventually(
      async () => {
        const o = await get(name);
        return o?.status?.ready ? o : undefined;
      },
      { ...WAIT, what: 'the cluster on the user network ready' },
    ))!;
    assert.equal(osc.status?.network?.id, network.id);
    assert.equal(osc.status?.router?.id, router.id);
    const lb = await env.admin.loadBalancer.loadBalancers.get(osc.status.apiServerLoadBalancer!.id);
    assert.equal(lb.vip_subnet_id, subnet.id);
    assert.deepEqual(osc.spec.controlPlaneEndpoint, { host: lb.vip_address, port: 6443 });
    assert.equal(osc.status.apiServerLoadBalancer!.ip, '');
    assert.equal((await env.admin.network.floatingIps.list({ port_id: lb.vip_port_id }).all()).length, 0);

    await env.api.delete(capoKinds.OpenStackCluster, { namespace: env.namespace, name });
    await eventually(async () => (await get(name)) === undefined, { ...WAIT, what: 'the cluster gone' });
    assert.deepEqual(
      await census(env),
      userOwned,
      'exactly the user’s network, subnet, router and ports remain',
    );
    assert.equal((await os.network.routers.get(router.id)).id, router.id);
  });
  it('puts the API load balancer VIP on spec.primarySubnet, and fills in the port of a host-only controlPlaneEndpoint', async () => {
    const { os } = env;
    const network = await os.network.networks.create({ name: 'multi-net' });
    const subnet = async (name: string, cidr: string) =>
      os.network.subnets.create({ network_id: network.id, cidr, ip_version: 4, name });
    const first = await subnet('multi-a', '10.11.0.0/24');
    const primary = await subnet('multi-b', '10.11.1.0/24');
    const third = await subnet('multi-c', '10.11.2.0/24');
    const router = await os.network.routers.create({ name: 'multi-router' });
    for (const s of [first, primary, third])
      await os.network.routers.addInterface(router.id, { subnet_id: s.id });

    const name = 'multi';
    await createPair(name, {
      identityRef: env.identityRef,
      network: { filter: { name: 'multi-net' } },
      subnets: [
        { filter: { name: 'multi-a' } },
        { filter: { name: 'multi-b' } },
        { filter: { name: 'multi-c' } },
      ],
      primarySubnet: { filter: { name: 'multi-b' } },
      router: { filter: { name: 'multi-router' } },
      disableAPIServerFloatingIP: true,
      apiServerLoadBalancer: { enabled: true },
      managedSecurityGroups: { allowAllInClusterTraffic: true },
      controlPlaneEndpoint: { host: 'api.multi.example.com' },
    });
    const osc = (await eventually(
      async () => {
        const o = await get(name);
        return o?.status?.ready ? o : undefined;
      },
      { ...WAIT, what: 'the cluster on three subnets ready' },
    ))!;
    assert.deepEqual(
      osc.status?.network?.subnets?.map((s) => s.id),
      [primary.id, first.id, third.id],
      'the primary subnet first: machines get their first fixed IP there',
    );
    const lb = await env.admin.loadBalancer.loadBalancers.get(osc.status.apiServerLoadBalancer!.id);
    assert.equal(lb.vip_subnet_id, primary.id);
    assert.deepEqual(osc.spec.controlPlaneEndpoint, { host: 'api.multi.example.com', port: 6443 });
    assert.equal(
      osc.status?.conditions?.find((c) => c.type === Conditions.SpecAccepted)?.status ?? 'True',
      'True',
      'filling in the port is not a refused change',
    );

    await env.api.delete(capoKinds.OpenStackCluster, { namespace: env.namespace, name });
    await eventually(async () => (await get(name)) === undefined, { ...WAIT, what: 'the cluster gone' });
  });

  it('a wrong password in the identity Secret: OpenStackAuthenticationSucceeded False and an Event; fixed, True', async () => {
    const name = 'badauth';
    const ref = await env.identitySecret('badauth-creds');
    await env.api.patch(kinds.Secret, { namespace: env.namespace, name: 'badauth-creds' }, 'merge', {
      stringData: { 'clouds.yaml': env.cloudsYaml().replace(/password: .*/, 'password: not-the-password') },
    });
    await createPair(name, {
      identityRef: ref,
      managedSubnets: [{ cidr: '10.8.0.0/24' }],
      disableExternalNetwork: true,
      disableAPIServerFloatingIP: true,
      apiServerFixedIP: '10.8.0.10',
    });
    const refused = (await eventually(
      async () => {
        const o = await get(name);
        return condition(o, 'OpenStackAuthenticationSucceeded')?.status === 'False' ? o : undefined;
      },
      { ...WAIT, what: 'OpenStackAuthenticationSucceeded False' },
    ))!;
    const auth = condition(refused, 'OpenStackAuthenticationSucceeded')!;
    assert.equal(auth.reason, 'OpenStackAuthenticationFailed');
    assert.match(
      auth.message ?? '',
      /Keystone at .* refused the credentials of Secret capo-demo\/badauth-creds/,
    );
    assert.doesNotMatch(auth.message ?? '', /not-the-password/);
    assert.equal(condition(refused, 'Ready')?.status, 'False');
    assert.equal(refused.status?.network, undefined, 'nothing is made with refused credentials');
    await eventually(
      async () =>
        (await events(name)).some(
          (e) => e.reason === 'OpenStackAuthenticationFailed' && e.type === 'Warning',
        ),
      { ...WAIT, what: 'an OpenStackAuthenticationFailed Event' },
    );

    await env.identitySecret('badauth-creds');
    const accepted = (await eventually(
      async () => {
        const o = await get(name);
        return condition(o, 'OpenStackAuthenticationSucceeded')?.status === 'True' && o?.status?.ready
          ? o
          : undefined;
      },
      { ...WAIT, what: 'authenticated and ready once the Secret is fixed' },
    ))!;
    assert.equal(accepted.status?.network?.subnets?.[0]?.cidr, '10.8.0.0/24');

    await env.api.delete(capoKinds.OpenStackCluster, { namespace: env.namespace, name });
    await eventually(async () => (await get(name)) === undefined, { ...WAIT, what: 'the cluster gone' });
    assert.equal(
      (await env.admin.network.networks.list({ name: `k8s-clusterapi-cluster-capo-demo-${name}` }).all())
        .length,
      0,
    );
  });

  it('deleting leaves what the cluster did not make: a floating IP on the bastion and a port on the network are named, kept, waited for', async () => {
    const name = 'foreign';
    await createPair(name, {
      identityRef: env.identityRef,
      managedSubnets: [{ cidr: '10.12.0.0/24' }],
      apiServerLoadBalancer: { enabled: false },
      disableAPIServerFloatingIP: true,
      apiServerFixedIP: '10.12.0.10',
      bastion: {
        enabled: true,
        spec: {
          flavor: 'm1.small',
          image: { filter: { name: 'ubuntu-22.04' } },
          ports: [{}, { nameSuffix: 'extra' }],
        },
      },
    });
    const osc = (await eventually(
      async () => {
        const o = await get(name);
        return o?.status?.bastion?.state === 'ACTIVE' && o.status.bastion.floatingIP ? o : undefined;
      },
      { ...WAIT, what: 'the bastion ACTIVE with its floating IP' },
    ))!;
    const bastion = (await bastions()).find((b) => b.metadata?.ownerReferences?.[0]?.name === name)!;
    const extraPort = bastion.status!.resources!.ports![1]!.id;
    // Someone else's: a floating IP put on the bastion's second port, a port on the cluster network.
    const theirFip = await env.os.network.floatingIps.create({
      floating_network_id: osc.status!.externalNetwork!.id,
      port_id: extraPort,
      description: 'team-b jump address',
    });
    const theirPort = await env.admin.network.ports.create({
      network_id: osc.status!.network!.id,
      name: 'team-b-vip',
    });

    await env.api.delete(capoKinds.OpenStackCluster, { namespace: env.namespace, name });
    const ready = async (pattern: RegExp, what: string) =>
      condition(
        await eventually(
          async () => {
            const o = await get(name);
            const c = condition(o, 'Ready');
            return c?.reason === 'ForeignResources' && pattern.test(c.message ?? '') ? o : undefined;
          },
          { ...WAIT, what },
        ),
        'Ready',
      )!;
    const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

    // The bastion waits: deleting its port would detach their address.
    const onBastion = await ready(
      new RegExp(escape(theirFip.floating_ip_address)),
      'Ready names the floating IP',
    );
    assert.equal(onBastion.status, 'False');
    assert.match(
      onBastion.message ?? '',
      new RegExp(
        `floating IP ${escape(theirFip.floating_ip_address)} \\(id ${theirFip.id}, description "team-b jump address"\\) on port ${extraPort}`,
      ),
    );
    assert.match(onBastion.message ?? '', /openstack floating ip unset --port/);
    await eventually(
      async () =>
        (await events(name)).some(
          (e) => e.reason === 'ForeignResources' && e.type === 'Warning' && e.note?.includes(theirFip.id),
        ),
      { ...WAIT, what: 'a Warning Event naming the floating IP' },
    );
    assert.equal((await env.admin.network.floatingIps.get(theirFip.id)).port_id, extraPort, 'left as it is');
    assert.ok(
      !(await bastions()).find((b) => b.metadata?.uid === bastion.metadata?.uid)?.metadata?.deletionTimestamp,
    );

    // They take their address back: the bastion goes, then the network waits for their port.
    await env.os.network.floatingIps.disassociate(theirFip.id);
    const onNetwork = await ready(new RegExp(theirPort.id), 'Ready names the port');
    assert.match(onNetwork.message ?? '', new RegExp(`port ${theirPort.id} \\(name team-b-vip, unused\\)`));
    assert.match(onNetwork.message ?? '', new RegExp(`openstack port delete ${theirPort.id}`));
    await eventually(
      async () =>
        (await events(name)).some(
          (e) => e.reason === 'ForeignResources' && e.type === 'Warning' && e.note?.includes(theirPort.id),
        ),
      { ...WAIT, what: 'a Warning Event naming the port' },
    );
    assert.equal((await env.admin.network.ports.get(theirPort.id)).id, theirPort.id, 'the port is kept');
    assert.equal((await bastions()).filter((b) => b.metadata?.ownerReferences?.[0]?.name === name).length, 0);

    // Their port gone, the deletion completes; their floating IP survived it.
    await env.admin.network.ports.delete(theirPort.id);
    await eventually(async () => (await get(name)) === undefined, { ...WAIT, what: 'the cluster gone' });
    assert.equal((await env.os.network.floatingIps.get(theirFip.id)).id, theirFip.id);
    assert.equal(
      (await env.admin.network.networks.list({ name: `k8s-clusterapi-cluster-capo-demo-${name}` }).all())
        .length,
      0,
    );
    await env.os.network.floatingIps.delete(theirFip.id);
  });
});
