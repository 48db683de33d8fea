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
import { isNotFound, kinds, Manager } from '../kube/index.ts';
import { kubeConfigFrom } from '../kube/testing/env.ts';
import { settled } from '../kube/testing/settle.ts';
import { createLogger } from '../lib/log.ts';
import { createRegistry } from '../lib/metrics.ts';
import { capoKinds, CONTROL_PLANE_LABEL, type OpenStackMachine } from '../capo/api/index.ts';
import { Labels, mapoKinds } from '../mapo/api/index.ts';
import { MAPI_NAMESPACE, startMapoEnv, type MapoEnv } from '../mapo/testing/env.ts';
import { TAINT_UNINITIALIZED } from '../ccm/node-spec.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
import { leaks, takeCensus, type Census } from './census.ts';
import { startControllers, type Controllers } from './controllers.ts';
import {
  emulatedHosts,
  LABEL_CONTROL_PLANE_ROLE,
  MACHINE_API_KUBELET_CONTROLLER,
  registerKubelets,
} from './kubelet.ts';
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

/**
 * The kubelets of Machine API Machines (`machineAPI`), with this test playing the actuator: a Nova
 * server and the Machine's OpenStackServer of its name with the instance ID. No machine
 * controller runs, so what happens to the Node on the Machine's deletion is the kubelet's alone.
 */
describe('demo kubelets of Machine API Machines', () => {
  let env: MapoEnv;
  let manager: Manager;
  let stop: () => Promise<void>;

  before(async () => {
    env = await startMapoEnv();
    manager = new Manager({
      name: 'kubelets',
      kubeConfig: kubeConfigFrom(env.kube.kubeconfigPath),
      qps: 0,
      log: createLogger({ level: 'silent' }),
      registry: createRegistry({ defaultMetrics: false }),
      gracefulShutdownTimeoutMs: 5_000,
    });
    const cloud = env.sim.cloud;
    registerKubelets(manager, {
      host: emulatedHosts(cloud),
      heartbeatMs: 100,
      pollMs: 20,
      cloudProvider: 'openstack',
      machineAPI: true,
    });
    const stopper = new AbortController();
    const done = manager.start(stopper.signal);
    stop = async () => {
      stopper.abort(new Error('test done'));
      await done;
    };
  });
  after(async () => {
    await stop?.();
    await env?.close();
  });

  const node = async (name: string) => {
    try {
      return await env.api.get(kinds.Node, { name });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };

  /** What the actuator and capo's OpenStackServer controller leave for a Machine: its server, recorded. */
  async function machine(name: string, role: 'worker' | 'master'): Promise<string> {
    const server = await env.os.compute.servers.create({
      name,
      flavorRef: env.boot.flavorId,
      imageRef: env.boot.imageId,
      networks: [{ uuid: env.nodes.networkId }],
    });
    const m = env.machineFrom(name);
    m.metadata!.labels![Labels.MachineRole] = role;
    await env.api.create(mapoKinds.Machine, m);
    await env.api.create(capoKinds.OpenStackServer, {
      apiVersion: capoKinds.OpenStackServer.apiVersion,
      kind: 'OpenStackServer',
      metadata: { name, namespace: MAPI_NAMESPACE },
      spec: { identityRef: env.identityRef, image: { filter: { name: 'rhcos' } }, ports: [{}] },
    });
    await env.api.patch(
      capoKinds.OpenStackServer,
      { namespace: MAPI_NAMESPACE, name },
      'merge',
      { status: { ready: true, instanceID: server.id } },
      { subresource: 'status' },
    );
    return server.id;
  }

  it('registers a Node per ACTIVE server of a Machine: providerID, addresses, the control-plane label of a master', async () => {
    const ids = new Map<string, string>();
    for (const [name, role] of [
      ['ostest-7xk2p-master-0', 'master'],
      ['ostest-7xk2p-worker-0-kbl01', 'worker'],
    ] as const) {
      ids.set(name, await machine(name, role));
    }
    for (const [name, id] of ids) {
      const n = (await eventually(() => node(name), { ...WAIT, what: `node ${name}` }))!;
      assert.equal(n.spec?.providerID, `openstack:///${id}`, 'the in-tree kubelet sets it');
      const fixed = env.sim.cloud.network
        .portsByDevice(id)
        .flatMap((p) => p.fixed_ips.map((f) => f.ip_address));
      assert.ok(fixed.length > 0);
      assert.deepEqual(n.status?.addresses, [
        ...fixed.map((address) => ({ type: 'InternalIP', address })),
        { type: 'Hostname', address: name },
      ]);
      assert.equal(n.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
      assert.equal(
        n.metadata?.labels?.[LABEL_CONTROL_PLANE_ROLE] !== undefined,
        name.includes('master'),
        name,
      );
      assert.equal(n.status?.nodeInfo?.kubeletVersion, 'v1.32.4');
      assert.equal((n.spec?.taints ?? []).length, 0, 'no uninitialized taint on the in-tree provider');
    }
    // It heartbeats: the Lease is renewed.
    const lease = (name: string) =>
      env.api.get<V1Lease>(kinds.Lease, { namespace: 'kube-node-lease', name }).catch((err: unknown) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
    const worker = 'ostest-7xk2p-worker-0-kbl01';
    const first = (await eventually(() => lease(worker), { ...WAIT, what: 'the Lease' }))!;
    await eventually(
      async () => String((await lease(worker))?.spec?.renewTime) !== String(first.spec?.renewTime),
      { ...WAIT, what: 'a heartbeat' },
    );
  });

  it('leaves the Node when its Machine goes, seen deleting or gone at once: the machine controller deletes it', async () => {
    // Held by a finalizer: the kubelet sees it deleting.
    const held = 'ostest-7xk2p-worker-0-kbl01';
    await env.api.patch(mapoKinds.Machine, { namespace: MAPI_NAMESPACE, name: held }, 'merge', {
      metadata: { finalizers: ['test.shiftstack.io/hold'] },
    });
    await env.api.delete(mapoKinds.Machine, { namespace: MAPI_NAMESPACE, name: held });
    await settled(manager, MACHINE_API_KUBELET_CONTROLLER, [
      [mapoKinds.Machine, { namespace: MAPI_NAMESPACE, name: held }],
    ]);
    assert.ok(await node(held), 'the Node of a deleting Machine stays');
    await env.api.patch(mapoKinds.Machine, { namespace: MAPI_NAMESPACE, name: held }, 'merge', {
      metadata: { finalizers: null },
    });

    // No finalizer: gone before the kubelet looks again.
    const quick = 'ostest-7xk2p-master-0';
    await env.api.delete(mapoKinds.Machine, { namespace: MAPI_NAMESPACE, name: quick });
    for (const name of [held, quick]) {
      await eventually(
        async () =>
          (await manager.client.get(mapoKinds.Machine, { namespace: MAPI_NAMESPACE, name })) === undefined,
        { ...WAIT, what: `Machine ${name} gone from the cache` },
      );
    }
    await settled(manager, MACHINE_API_KUBELET_CONTROLLER, []);
    assert.ok(await node(held), `Node ${held} stays`);
    assert.ok(await node(quick), `Node ${quick} stays`);
  });
});
