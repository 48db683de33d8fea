/**
 * CAPO end to end, issue 8's "done when": examples/capo/cluster.yaml applied as it is (only the
 * identity Secret's clouds.yaml is the emulator's, since the example's credentials are fake) to the
 * Kubernetes emulator, every CAPO controller running against both emulators, and Cluster API core
 * stood in for (`actAsClusterAPICore`; no CAPI runs here).
 *
 * - The cluster becomes ready: network, subnet, router, security groups, the API load balancer
 *   ACTIVE with a floating IP that is the endpoint, the bastion ACTIVE with its floating IP.
 * - The three control-plane and two worker machines become ready with providerIDs and addresses;
 *   the API load balancer's pool has exactly the control-plane addresses as members.
 * - A bastion flavor change replaces the bastion: a new server, the old one gone, the floating IP
 *   moved, nothing leaked.
 * - Deleting the Cluster and its Machines, as Cluster API would, removes everything: the admin's
 *   census of the cloud is the one taken before the test.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import {
  isAlreadyExists,
  isNotFound,
  kinds,
  type Condition,
  type KubernetesObject,
  type ResourceType,
} from '../kube/index.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
import {
  ALL_KINDS,
  capoKinds,
  CONTROL_PLANE_LABEL,
  type OpenStackCluster,
  type OpenStackMachine,
  type OpenStackServer,
} from './api/index.ts';
import { CLOUDS_YAML_KEY } from './identity.ts';
import { IDENTITY_SECRET, startCapoEnv, type CapoEnv, type RunningCapo } from './testing/env.ts';

/** Generous: the whole file stays well under this on a loaded 2-core machine. */
const WAIT = { timeoutMs: 60_000, intervalMs: 50 };
const EXAMPLE = join(import.meta.dirname, '..', '..', 'examples', 'capo', 'cluster.yaml');
const NAME = 'capo-demo';

type Obj = KubernetesObject & { spec?: Record<string, unknown>; stringData?: Record<string, string> };

/** Every OpenStack object id by kind, across projects: "nothing of ours left" is checked against it. */
interface Census {
  servers: string[];
  ports: string[];
  networks: string[];
  subnets: string[];
  routers: string[];
  securityGroups: string[];
  floatingIps: string[];
  loadBalancers: string[];
  volumes: string[];
  trunks: string[];
}

async function census(env: CapoEnv): Promise<Census> {
  const { admin } = env;
  const ids = (xs: readonly { id: string }[]) => xs.map((x) => x.id).sort();
  return {
    servers: ids(await admin.compute.servers.list({ all_tenants: true }).all()),
    ports: ids(await admin.network.ports.list().all()),
    networks: ids(await admin.network.networks.list().all()),
    subnets: ids(await admin.network.subnets.list().all()),
    routers: ids(await admin.network.routers.list().all()),
    // Neutron makes a project's `default` group on first use: not ours.
    securityGroups: ids(
      (await admin.network.securityGroups.list().all()).filter((g) => g.name !== 'default'),
    ),
    floatingIps: ids(await admin.network.floatingIps.list().all()),
    loadBalancers: ids(
      (await admin.loadBalancer.loadBalancers.list().all()).filter(
        (lb) => lb.provisioning_status !== 'DELETED',
      ),
    ),
    volumes: ids(await admin.blockStorage.volumes.list({ all_tenants: true }).all()),
    trunks: ids(await admin.network.trunks.list().all()),
  };
}

/** What is in `b` and not in `a`, and the reverse, per kind (only the kinds that differ). */
function diff(a: Census, b: Census): Record<string, { added: string[]; removed: string[] }> {
  const out: Record<string, { added: string[]; removed: string[] }> = {};
  for (const k of Object.keys(a) as (keyof Census)[]) {
    const added = b[k].filter((id) => !a[k].includes(id));
    const removed = a[k].filter((id) => !b[k].includes(id));
    if (added.length + removed.length > 0) out[k] = { added, removed };
  }
  return out;
}

const TYPES: ResourceType[] = [kinds.Secret, ...ALL_KINDS.map((k) => k.resource)];

function typeOf(obj: Obj): ResourceType {
  const t = TYPES.find((r) => r.apiVersion === obj.apiVersion && r.kind === obj.kind);
  assert.ok(t, `no resource type for ${obj.apiVersion} ${obj.kind}`);
  return t;
}

const condition = (o: { status?: { conditions?: unknown } } | undefined, type: string) =>
  (o?.status?.conditions as Condition[] | undefined)?.find((c) => c.type === type);

describe('capo end to end: examples/capo/cluster.yaml', () => {
  let env: CapoEnv;
  let capo: RunningCapo;
  let baseline: Census;
  let objects: Obj[];

  before(async () => {
    env = await startCapoEnv();
    // The example's sshKeyName: a key pair the user has in their project.
    await env.os.compute.keypairs.create({ name: 'capo-demo' });
    baseline = await census(env);
    capo = await env.startCapo();
    objects = parseAllDocuments(await readFile(EXAMPLE, 'utf8')).map((d) => d.toJSON() as Obj);
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  const ns = () => env.namespace;
  const of = (kind: string) => objects.filter((o) => o.kind === kind);
  async function getOrUndefined<T extends KubernetesObject>(
    type: ResourceType<T>,
    name: string,
  ): Promise<T | undefined> {
    try {
      return await env.api.get(type, { namespace: ns(), name });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }
  const osc = () => getOrUndefined<OpenStackCluster>(capoKinds.OpenStackCluster, NAME);
  const bastions = async (): Promise<OpenStackServer[]> =>
    (await env.api.listAll(capoKinds.OpenStackServer, { namespace: ns() })).items.filter((s) =>
      s.metadata?.ownerReferences?.some((r) => r.kind === 'OpenStackCluster'),
    );

  async function poolMembers(lbId: string): Promise<string[][]> {
    const pools = await env.admin.loadBalancer.pools.list({ loadbalancer_id: lbId }).all();
    const out = [];
    for (const p of pools)
      out.push((await env.admin.loadBalancer.members.list(p.id).all()).map((m) => m.address).sort());
    return out;
  }

  it('applies the example as is; the cluster becomes ready with its load balancer, endpoint and bastion', async () => {
    const secrets = of('Secret');
    const identity = secrets.find((s) => s.metadata?.name === IDENTITY_SECRET);
    assert.ok(identity?.stringData?.[CLOUDS_YAML_KEY], 'the example carries the identity Secret');
    for (const obj of objects) {
      const doc: Obj = structuredClone({ ...obj, metadata: { ...obj.metadata, namespace: ns() } });
      // The example's credentials are fake; the emulator's take their place, nothing else changes.
      if (doc.kind === 'Secret' && doc.metadata?.name === IDENTITY_SECRET)
        doc.stringData = { ...doc.stringData, [CLOUDS_YAML_KEY]: env.cloudsYaml() };
      const type = typeOf(doc);
      try {
        await env.api.create(type, doc);
      } catch (err) {
        // The identity Secret the env made: replaced, as `kubectl apply` would.
        if (!isAlreadyExists(err)) throw err;
        const current = await env.api.get(type, { namespace: ns(), name: doc.metadata!.name! });
        await env.api.update(type, {
          ...doc,
          metadata: { ...doc.metadata, resourceVersion: current.metadata?.resourceVersion },
        });
      }
    }

    const ready = (await eventually(
      async () => {
        const o = await osc();
        const b = o?.status?.bastion;
        return o?.status?.ready && b?.state === 'ACTIVE' && b.floatingIP ? o : undefined;
      },
      { ...WAIT, what: 'the OpenStackCluster ready with an ACTIVE bastion that has a floating IP' },
    ))!;
    const st = ready.status!;
    for (const type of ['Ready', 'NetworkReady', 'RouterReady', 'SecurityGroupsReady', 'APIEndpointReady'])
      assert.equal(condition(ready, type)?.status, 'True', type);

    // Network, subnet and router, the router's gateway on the example's external network.
    assert.equal(st.externalNetwork?.name, 'public');
    const network = await env.admin.network.networks.get(st.network!.id);
    const subnet = await env.admin.network.subnets.get(st.network!.subnets![0]!.id);
    assert.equal(subnet.network_id, network.id);
    assert.equal(subnet.cidr, '10.6.0.0/24');
    const router = await env.admin.network.routers.get(st.router!.id);
    assert.equal(router.external_gateway_info?.network_id, st.externalNetwork?.id);
    const routerPorts = await env.admin.network.ports
      .list({ device_id: router.id, network_id: network.id })
      .all();
    assert.equal(routerPorts.length, 1, 'the router has an interface on the cluster subnet');

    // The three managed security groups.
    for (const k of ['controlPlaneSecurityGroup', 'workerSecurityGroup', 'bastionSecurityGroup'] as const)
      assert.equal((await env.admin.network.securityGroups.get(st[k]!.id)).id, st[k]!.id, k);

    // The API load balancer: ACTIVE on the cluster subnet, its floating IP is the endpoint. Once the
    // bastion has an address the controller widens the listener's allowed CIDRs, so it may still be
    // PENDING_UPDATE here.
    const lb = (await eventually(
      async () => {
        const found = await env.admin.loadBalancer.loadBalancers.get(st.apiServerLoadBalancer!.id);
        return found.provisioning_status === 'ACTIVE' ? found : undefined;
      },
      { ...WAIT, what: 'the API load balancer ACTIVE' },
    ))!;
    assert.equal(lb.vip_subnet_id, subnet.id);
    const [lbFip] = await env.admin.network.floatingIps.list({ port_id: lb.vip_port_id }).all();
    assert.ok(lbFip?.floating_ip_address);
    assert.equal(st.apiServerLoadBalancer?.ip, lbFip.floating_ip_address);
    assert.deepEqual(ready.spec.controlPlaneEndpoint, { host: lbFip.floating_ip_address, port: 6443 });

    // The bastion: a server ACTIVE in Nova, its floating IP on its port.
    const [bastion] = await bastions();
    const server = await env.admin.compute.servers.get(bastion!.status!.instanceID!);
    assert.equal(server.status, 'ACTIVE');
    const [bastionPort] = await env.admin.network.ports.list({ device_id: server.id }).all();
    const [bastionFip] = await env.admin.network.floatingIps.list({ port_id: bastionPort!.id }).all();
    assert.equal(bastionFip?.floating_ip_address, st.bastion?.floatingIP);

    // Cluster API core, stood in for: the Cluster is told.
    const cluster = await env.api.get(capoKinds.Cluster, { namespace: ns(), name: NAME });
    assert.equal(cluster.status?.infrastructureReady, true);
    assert.deepEqual(cluster.spec?.controlPlaneEndpoint, ready.spec.controlPlaneEndpoint);
  });

  it('makes 3 control-plane and 2 worker machines ready with providerIDs and addresses; the pool holds the 3 control-plane addresses', async () => {
    const names = of('OpenStackMachine').map((o) => o.metadata!.name!);
    assert.equal(names.length, 5);
    const machines = (await eventually(
      async () => {
        const all = await Promise.all(
          names.map((n) => getOrUndefined<OpenStackMachine>(capoKinds.OpenStackMachine, n)),
        );
        return all.every(
          (m) => m?.status?.ready && m.spec.providerID && condition(m, 'Ready')?.status === 'True',
        )
          ? (all as OpenStackMachine[])
          : undefined;
      },
      { ...WAIT, what: 'all five OpenStackMachines ready' },
    ))!;
    const cluster = (await osc())!.status!;
    const controlPlane = machines.filter((m) => m.metadata?.labels?.[CONTROL_PLANE_LABEL] !== undefined);
    assert.equal(controlPlane.length, 3);
    assert.equal(machines.length - controlPlane.length, 2);

    const instanceIDs = new Set<string>();
    for (const m of machines) {
      const name = m.metadata!.name!;
      const st = m.status!;
      assert.ok(st.instanceID, name);
      instanceIDs.add(st.instanceID);
      assert.equal(m.spec.providerID, `openstack:///${st.instanceID}`, name);
      const internal = st.addresses?.find((a) => a.type === 'InternalIP')?.address ?? '';
      assert.match(internal, /^10\.6\.0\.\d+$/, name);
      const server = await env.admin.compute.servers.get(st.instanceID);
      assert.equal(server.status, 'ACTIVE', name);
      assert.equal(server.name, name);
      const ports = await env.admin.network.ports.list({ device_id: server.id }).all();
      assert.deepEqual(
        ports.map((p) => p.fixed_ips[0]?.ip_address),
        [internal],
        `${name}: one port, with the InternalIP`,
      );
      const group = controlPlane.includes(m)
        ? cluster.controlPlaneSecurityGroup!.id
        : cluster.workerSecurityGroup!.id;
      assert.deepEqual(ports[0]!.security_groups, [group], name);
      const machine = await env.api.get(capoKinds.Machine, { namespace: ns(), name });
      assert.equal(machine.spec.providerID, m.spec.providerID, name);
      assert.equal(machine.status?.phase, 'Provisioned', name);
    }
    assert.equal(instanceIDs.size, 5, 'five distinct servers');

    // The workers' root volumes (rootVolume.sizeGiB: 20 in the example).
    for (const m of machines.filter((x) => !controlPlane.includes(x))) {
      const server = await env.admin.compute.servers.get(m.status!.instanceID!);
      const attached = server['os-extended-volumes:volumes_attached'] ?? [];
      assert.equal(attached.length, 1, `${m.metadata?.name}: a root volume`);
      assert.equal((await env.admin.blockStorage.volumes.get(attached[0]!.id)).size, 20);
    }

    const cpAddresses = controlPlane
      .map((m) => m.status!.addresses!.find((a) => a.type === 'InternalIP')!.address)
      .sort();
    const lbId = cluster.apiServerLoadBalancer!.id;
    await eventually(async () => JSON.stringify(await poolMembers(lbId)) === JSON.stringify([cpAddresses]), {
      ...WAIT,
      what: `exactly the control-plane addresses ${cpAddresses.join(', ')} as the pool's members`,
    });
    for (const m of controlPlane)
      await eventually(
        async () =>
          condition(
            await getOrUndefined<OpenStackMachine>(capoKinds.OpenStackMachine, m.metadata!.name!),
            'APIServerIngressReadyCondition',
          )?.status === 'True',
        { ...WAIT, what: `${m.metadata?.name} APIServerIngressReadyCondition` },
      );
  });

  it('replaces the bastion on a flavor change: a new server, the old one gone, the floating IP moved, nothing leaked', async () => {
    const before = (await osc())!;
    const address = before.status!.bastion!.floatingIP!;
    const [old] = await bastions();
    const oldInstance = old!.status!.instanceID!;
    const oldPorts = (await env.admin.network.ports.list({ device_id: oldInstance }).all()).map((p) => p.id);
    const [fipBefore] = await env.admin.network.floatingIps.list({ floating_ip_address: address }).all();
    const was = await census(env);

    assert.equal(before.spec.bastion?.spec?.flavor, 'm1.small');
    await env.api.patch(capoKinds.OpenStackCluster, { namespace: ns(), name: NAME }, 'merge', {
      spec: { bastion: { spec: { ...before.spec.bastion.spec, flavor: 'm1.medium' } } },
    });

    const replaced = (await eventually(
      async () => {
        const o = await osc();
        const servers = await bastions();
        const b = o?.status?.bastion;
        return b?.state === 'ACTIVE' &&
          servers.length === 1 &&
          servers[0]!.metadata?.uid !== old!.metadata?.uid &&
          b.id === servers[0]!.status?.instanceID
          ? { osc: o!, server: servers[0]! }
          : undefined;
      },
      { ...WAIT, what: 'the new bastion ready and the old OpenStackServer gone' },
    ))!;
    const fresh = replaced.server.status!.instanceID!;
    assert.equal(replaced.osc.status!.bastion!.floatingIP, address, 'the bastion keeps its address');
    assert.equal(condition(replaced.osc, 'SpecAccepted')?.status, 'True');
    const server = await env.admin.compute.servers.get(fresh);
    assert.equal(server.status, 'ACTIVE');
    assert.equal('original_name' in server.flavor ? server.flavor.original_name : '', 'm1.medium');
    const newPorts = (await env.admin.network.ports.list({ device_id: fresh }).all()).map((p) => p.id);
    assert.equal(newPorts.length, 1);
    const [fip] = await env.admin.network.floatingIps.list({ floating_ip_address: address }).all();
    assert.equal(fip?.port_id, newPorts[0], 'the floating IP moved to the new bastion');
    assert.equal(fip?.id, fipBefore?.id, 'the same floating IP, not a new one');

    // The admin's census: the old server and its port replaced by the new ones, nothing else.
    const expected = diff(was, was);
    expected.servers = { added: [fresh], removed: [oldInstance] };
    expected.ports = { added: newPorts, removed: oldPorts };
    await eventually(async () => JSON.stringify(diff(was, await census(env))) === JSON.stringify(expected), {
      ...WAIT,
      what: `the census to change by the bastion server and port only: ${JSON.stringify(expected)}`,
    });
  });

  it('deleting the Cluster and its Machines, as Cluster API would, removes everything it made', async () => {
    // CAPI deletes a Cluster's Machines (their OpenStackMachines go with them through their
    // owner references, which the controllers set acting as CAPI core) and the Cluster, whose
    // OpenStackCluster goes the same way; the OpenStackCluster waits for the machines.
    for (const m of of('Machine'))
      await env.api.delete(capoKinds.Machine, { namespace: ns(), name: m.metadata!.name! });
    await env.api.delete(capoKinds.Cluster, { namespace: ns(), name: NAME });

    await eventually(
      async () => {
        const left = await Promise.all([
          env.api.listAll(capoKinds.OpenStackCluster, { namespace: ns() }),
          env.api.listAll(capoKinds.OpenStackMachine, { namespace: ns() }),
          env.api.listAll(capoKinds.OpenStackServer, { namespace: ns() }),
        ]);
        return left.every((l) => l.items.length === 0);
      },
      { ...WAIT, what: 'no OpenStackCluster, OpenStackMachine or OpenStackServer left' },
    );
    const now = await eventually(
      async () => {
        const c = await census(env);
        return Object.keys(diff(baseline, c)).length === 0 ? c : undefined;
      },
      { ...WAIT, what: 'the cloud as it was before the test' },
    ).catch(async (err: unknown) => {
      throw new Error(`${String(err)}; left: ${JSON.stringify(diff(baseline, await census(env)))}`);
    });
    assert.deepEqual(now, baseline);
  });
});
