/**
 * The demo's kubelets and the ccm on the demo's world, with this test playing CAPO's part: it
 * boots the servers and records their instance IDs on OpenStackMachines. A Node registers once its
 * server is ACTIVE, the ccm initializes it, a LoadBalancer Service gets an external IP, one more
 * machine costs exactly one batch member update per pool, and after the teardown the census finds
 * nothing of ours left.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Lease, V1Node, V1Service } from '@kubernetes/client-node';
import { isNotFound, kinds } from '../kube/index.ts';
import { createLogger } from '../lib/log.ts';
import { capoKinds, CONTROL_PLANE_LABEL, type OpenStackMachine } from '../capo/api/index.ts';
import { TAINT_UNINITIALIZED } from '../ccm/node-spec.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
import { leaks, takeCensus, type Census } from './census.ts';
import { startControllers, type Controllers } from './controllers.ts';
import { LABEL_CONTROL_PLANE_ROLE } from './kubelet.ts';
import { startWorld, type World } from './world.ts';

const NS = 'kubelet-test';
const WAIT = { timeoutMs: 60_000, intervalMs: 25 };
const MEMBERS_PUT = 'PUT /v2/lbaas/pools/{pool_id}/members';

describe('demo kubelets with the ccm', () => {
  let dir: string;
  let world: World;
  let controllers: Controllers;
  let census: Census;
  let networkId: string;
  let subnetId: string;
  let routerId: string;
  const servers = new Map<string, string>();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-demo-kubelet-'));
    world = await startWorld({ timeScale: 0.01, port: 0, dir });
    census = await takeCensus(world.admin);
    controllers = await startControllers(world, {
      log: createLogger({ level: 'silent' }),
      clusterName: 'kubelet-test',
      capo: false,
    });
    const os = world.demo;
    const net = await os.network.networks.create({ name: 'machines' });
    networkId = net.id;
    const subnet = await os.network.subnets.create({
      network_id: net.id,
      cidr: '10.6.0.0/24',
      ip_version: 4,
      name: 'machines',
    });
    subnetId = subnet.id;
    const [pub] = await os.network.networks.list({ 'router:external': true }).all();
    const router = await os.network.routers.create({
      name: 'machines',
      external_gateway_info: { network_id: pub!.id },
    });
    routerId = router.id;
    await os.network.routers.addInterface(router.id, { subnet_id: subnet.id });
    await world.api.create(kinds.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });

  after(async () => {
    await controllers?.stop();
    await world?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** What CAPO would do for one machine: the server, and its OpenStackMachine with the instance ID. */
  async function machine(name: string, controlPlane: boolean): Promise<void> {
    const os = world.demo;
    const flavor = (await os.compute.flavors.list().all()).find((f) => f.name === 'm1.small');
    const [image] = await os.image.images.list({ name: 'ubuntu-22.04' }).all();
    const server = await os.compute.servers.create({
      name,
      flavorRef: flavor!.id,
      imageRef: image!.id,
      networks: [{ uuid: networkId }],
    });
    servers.set(name, server.id);
    const labels: Record<string, string> = controlPlane ? { [CONTROL_PLANE_LABEL]: '' } : {};
    await world.api.create<OpenStackMachine>(capoKinds.OpenStackMachine, {
      apiVersion: capoKinds.OpenStackMachine.apiVersion,
      kind: 'OpenStackMachine',
      metadata: { name, namespace: NS, labels },
      spec: { flavor: 'm1.small', image: { filter: { name: 'ubuntu-22.04' } } },
    });
    await world.api.patch(
      capoKinds.OpenStackMachine,
      { namespace: NS, name },
      'merge',
      { status: { instanceID: server.id } },
      { subresource: 'status' },
    );
  }

  const node = async (name: string) => {
    try {
      return await world.api.get(kinds.Node, { name });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  const initialized = (n: V1Node | undefined) =>
    Boolean(n?.spec?.providerID) && !(n?.spec?.taints ?? []).some((t) => t.key === TAINT_UNINITIALIZED);

  it('registers a Node per ACTIVE server, tainted and with the kubelet’s own addresses, and the ccm initializes it', async () => {
    await machine('cp-0', true);
    await machine('w-0', false);
    await machine('w-1', false);
    for (const name of ['cp-0', 'w-0', 'w-1']) {
      const n = await eventually(
        async () => {
          const got = await node(name);
          return initialized(got) ? got : undefined;
        },
        { ...WAIT, what: `node ${name} initialized` },
      );
      const id = servers.get(name)!;
      assert.equal(n!.spec?.providerID, `openstack:///${id}`);
      const server = await world.demo.compute.servers.get(id);
      assert.equal(server.status, 'ACTIVE');
      const fixed = Object.values(server.addresses ?? {}).flat()[0]?.addr;
      assert.ok(fixed);
      assert.ok(n!.status?.addresses?.some((a) => a.type === 'InternalIP' && a.address === fixed));
      assert.equal(n!.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
      assert.equal(n!.metadata?.labels?.[LABEL_CONTROL_PLANE_ROLE] !== undefined, name === 'cp-0', name);
      assert.equal(n!.status?.nodeInfo?.osImage, 'Ubuntu 22.04 LTS');
    }
  });

  it('heartbeats: the Lease in kube-node-lease is renewed and the Ready condition’s heartbeat moves', async () => {
    const first = await node('w-0');
    const beat = first!.status!.conditions!.find((c) => c.type === 'Ready')!.lastHeartbeatTime;
    const lease = await world.api.get<V1Lease>(kinds.Lease, { namespace: 'kube-node-lease', name: 'w-0' });
    await eventually(
      async () => {
        const n = await node('w-0');
        const now = n!.status!.conditions!.find((c) => c.type === 'Ready')!.lastHeartbeatTime;
        const l = await world.api.get<V1Lease>(kinds.Lease, { namespace: 'kube-node-lease', name: 'w-0' });
        return String(now) !== String(beat) && String(l.spec?.renewTime) !== String(lease.spec?.renewTime);
      },
      { ...WAIT, what: 'a heartbeat' },
    );
    // The heartbeat leaves what the ccm set alone.
    assert.ok(initialized(await node('w-0')));
  });

  it('a LoadBalancer Service gets an external IP; one more machine is one batch member update per pool', async () => {
    await world.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        type: 'LoadBalancer',
        selector: { app: 'web' },
        ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
      },
    });
    const svc = await eventually(
      async () => {
        const s = await world.api.get<V1Service>(kinds.Service, { namespace: 'default', name: 'web' });
        return s.status?.loadBalancer?.ingress?.[0]?.ip ? s : undefined;
      },
      { ...WAIT, what: 'an external IP' },
    );
    const lbId = svc!.metadata!.annotations!['loadbalancer.openstack.org/load-balancer-id']!;
    const pools = await world.admin.loadBalancer.pools.list({ loadbalancer_id: lbId }).all();
    assert.equal(pools.length, 1);
    assert.equal((await world.admin.loadBalancer.members.list(pools[0]!.id).all()).length, 3);

    const puts = world.sim.cloud.stats.count('octavia', MEMBERS_PUT);
    await machine('w-2', false);
    await eventually(
      async () => {
        const lb = await world.admin.loadBalancer.loadBalancers.get(lbId);
        const members = await world.admin.loadBalancer.members.list(pools[0]!.id).all();
        return initialized(await node('w-2')) && lb.provisioning_status === 'ACTIVE' && members.length === 4;
      },
      { ...WAIT, what: 'w-2 a member' },
    );
    assert.equal(world.sim.cloud.stats.count('octavia', MEMBERS_PUT) - puts, 1);
  });

  it('deletes the Node when its machine goes; after the teardown the census finds no leak, and it finds one when there is', async () => {
    await world.api.delete(kinds.Service, { namespace: 'default', name: 'web' });
    await eventually(
      async () => {
        try {
          await world.api.get(kinds.Service, { namespace: 'default', name: 'web' });
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      { ...WAIT, what: 'the Service gone' },
    );
    for (const name of servers.keys()) {
      await world.api.delete(capoKinds.OpenStackMachine, { namespace: NS, name });
    }
    await eventually(async () => (await world.api.list(kinds.Node)).items.length === 0, {
      ...WAIT,
      what: 'every Node gone',
    });
    for (const id of servers.values()) await world.demo.compute.servers.delete(id);
    await eventually(async () => (await world.demo.compute.servers.list().all()).length === 0, {
      ...WAIT,
      what: 'servers gone',
    });

    // Left on purpose: the router, its interface and the network are leaks until removed.
    const left = leaks(census, await takeCensus(world.admin));
    assert.deepEqual([...new Set(left.map((l) => l.kind))].sort(), [
      'networks',
      'ports',
      'routers',
      'subnets',
    ]);
    await world.demo.network.routers.removeInterface(routerId, { subnet_id: subnetId });
    await world.demo.network.routers.delete(routerId);
    await world.demo.network.networks.delete(networkId);
    assert.deepEqual(leaks(census, await takeCensus(world.admin)), []);
  });
});
