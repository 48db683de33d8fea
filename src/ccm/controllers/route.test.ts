import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event, V1NodeCondition } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import type { Port } from '../../openstack/network/v2/ports.ts';
import type { Route } from '../../openstack/network/v2/routers.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { CcmUsageError } from '../cmd.ts';
import { counterValue, startCcmEnv, type CcmEnv, type RunningCcm } from '../testing/env.ts';
import { NETWORK_UNAVAILABLE, ROUTE_CONTROLLER } from './route.ts';

const wait = { timeoutMs: 20_000, intervalMs: 20 };
const CLUSTER_CIDR = '10.244.0.0/16';

describe('route controller (end to end: kube and OpenStack emulators)', () => {
  let env: CcmEnv;
  let routerId: string;
  let networkId: string;
  let conf: string;
  /** An address of the node subnet that no port has: a nexthop for routes that are not ours. */
  const spare = '10.60.0.250';
  const foreign: Route[] = [];

  before(async () => {
    env = await startCcmEnv();
    const net = await env.os.network.networks.create({ name: 'rt-nodes' });
    networkId = net.id;
    const subnet = await env.os.network.subnets.create({
      network_id: net.id,
      cidr: '10.60.0.0/24',
      ip_version: 4,
    });
    const router = await env.os.network.routers.create({ name: 'rt-router' });
    routerId = router.id;
    await env.os.network.routers.addInterface(routerId, { subnet_id: subnet.id });
    conf = await env.cloudConf(`[Route]\nrouter-id = ${routerId}\n`);
  });
  after(async () => {
    await env?.close();
  });

  /** A running server with one port on the node network; its address. */
  async function server(name: string): Promise<{ id: string; port: Port; ip: string }> {
    const port = await env.os.network.ports.create({ network_id: networkId, name: `${name}-port` });
    const created = await env.os.compute.servers.create({
      name,
      flavorRef: env.boot.flavorId,
      imageRef: env.boot.imageId,
      networks: [{ port: port.id }],
    });
    await env.os.compute.servers.waitForActive(created.id, { intervalMs: 20, timeoutMs: 10_000 });
    return { id: created.id, port, ip: port.fixed_ips[0]!.ip_address };
  }

  /** An initialized Node: providerID, podCIDRs and its InternalIP, as kubelet and the cloud-node controller leave it. */
  async function node(name: string, podCIDR: string, ip: string, serverId?: string): Promise<void> {
    await env.api.create(kinds.Node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      spec: { podCIDR, podCIDRs: [podCIDR], ...(serverId ? { providerID: `openstack:///${serverId}` } : {}) },
    });
    await env.api.patch(
      kinds.Node,
      { name },
      'merge',
      { status: { addresses: [{ type: 'InternalIP', address: ip }] } },
      { subresource: 'status' },
    );
  }

  const startCcm = (extra: Parameters<CcmEnv['startCcm']>[0] = {}) =>
    env.startCcm({
      cloudConfig: conf,
      controllers: [ROUTE_CONTROLLER],
      clusterCidr: CLUSTER_CIDR,
      routeReconciliationPeriodMs: 50,
      ...extra,
    });

  const routes = async () =>
    (await env.os.network.routers.get(routerId)).routes
      .map((r) => `${r.destination} via ${r.nexthop}`)
      .sort();
  const has = (list: string[], r: Route) => list.includes(`${r.destination} via ${r.nexthop}`);
  const pairs = async (portId: string) =>
    (await env.os.network.ports.get(portId)).allowed_address_pairs.map((p) => p.ip_address);
  const condition = async (name: string): Promise<V1NodeCondition | undefined> =>
    (await env.api.get(kinds.Node, { name })).status?.conditions?.find((c) => c.type === NETWORK_UNAVAILABLE);
  const events = async (name: string): Promise<EventsV1Event[]> =>
    (await env.api.listAll(kinds.EventsV1Event, { namespace: 'default' })).items.filter(
      (e) => e.regarding?.name === name,
    );
  const calls = (ccm: RunningCcm, request: string) =>
    counterValue(ccm.registry, 'openstack_api_requests_total', { request });
  const passes = (ccm: RunningCcm) =>
    counterValue(ccm.registry, 'controller_runtime_reconcile_total', { controller: ROUTE_CONTROLLER });

  let a: Awaited<ReturnType<typeof server>>;
  let b: Awaited<ReturnType<typeof server>>;
  const routeA = () => ({ destination: '10.244.1.0/24', nexthop: a.ip });
  const routeB = () => ({ destination: '10.244.2.0/24', nexthop: b.ip });

  it('routes every Node’s podCIDR in one call, allows it on the Node’s port, and sets RouteCreated', async () => {
    a = await server('rt-a');
    b = await server('rt-b');
    // Routes that are not the cluster's: outside --cluster-cidr, even via a Node's address.
    foreign.push(
      { destination: '192.168.50.0/24', nexthop: a.ip },
      { destination: '172.16.0.0/24', nexthop: spare },
    );
    await env.os.network.routers.update(routerId, { routes: foreign });
    await node('rt-a', '10.244.1.0/24', a.ip, a.id);
    await node('rt-b', '10.244.2.0/24', b.ip, b.id);

    const ccm = await startCcm();
    try {
      await eventually(
        async () =>
          (await condition('rt-a'))?.status === 'False' && (await condition('rt-b'))?.status === 'False',
        { ...wait, what: 'NetworkUnavailable=False on both Nodes' },
      );
      const list = await routes();
      assert.ok(has(list, routeA()) && has(list, routeB()), list.join(', '));
      for (const f of foreign) assert.ok(has(list, f), `foreign route ${f.destination} kept`);
      assert.equal(list.length, 4);
      assert.deepEqual(await pairs(a.port.id), ['10.244.1.0/24']);
      assert.deepEqual(await pairs(b.port.id), ['10.244.2.0/24']);
      const c = (await condition('rt-a'))!;
      assert.equal(c.reason, 'RouteCreated');
      assert.equal(c.message, 'RouteController created a route');
      // Both Nodes were there at the first pass: one add_extraroutes call for both routes.
      assert.equal(await calls(ccm, 'router_add_extraroutes'), 1);
      assert.equal(await calls(ccm, 'port_update'), 2, 'one pair write per Node port');

      // Settled: more passes write nothing.
      const writes = async () =>
        (await calls(ccm, 'router_add_extraroutes')) +
        (await calls(ccm, 'router_remove_extraroutes')) +
        (await calls(ccm, 'router_update')) +
        (await calls(ccm, 'port_update'));
      const before = await writes();
      const seen = await passes(ccm);
      await eventually(async () => (await passes(ccm)) >= seen + 5, { ...wait, what: 'five more passes' });
      assert.equal(await writes(), before);
    } finally {
      await ccm.stop();
    }
  });

  it('takes a deleted Node’s route and pair away, and leaves every other route', async () => {
    const ccm = await startCcm();
    try {
      await env.api.delete(kinds.Node, { name: 'rt-b' });
      await eventually(async () => !has(await routes(), routeB()), { ...wait, what: 'rt-b route removed' });
      assert.deepEqual(await pairs(b.port.id), []);
      const list = await routes();
      assert.ok(has(list, routeA()));
      for (const f of foreign) assert.ok(has(list, f), `foreign route ${f.destination} kept`);
      assert.deepEqual(await pairs(a.port.id), ['10.244.1.0/24']);
    } finally {
      await ccm.stop();
    }
  });

  it('is restart-safe: what changed while no CCM ran is repaired by the next one, nothing twice', async () => {
    // While no CCM runs: one Node goes, another comes, and someone removes a pair by hand.
    await env.api.delete(kinds.Node, { name: 'rt-a' });
    const c = await server('rt-c');
    await node('rt-c', '10.244.3.0/24', c.ip, c.id);
    const routeC = { destination: '10.244.3.0/24', nexthop: c.ip };

    const ccm = await startCcm();
    try {
      await eventually(async () => (await condition('rt-c'))?.status === 'False', {
        ...wait,
        what: 'rt-c routed',
      });
      await eventually(async () => !has(await routes(), routeA()), { ...wait, what: 'rt-a route removed' });
      assert.deepEqual(await pairs(a.port.id), []);
      assert.deepEqual(await pairs(c.port.id), ['10.244.3.0/24']);
      const list = await routes();
      assert.deepEqual(
        list,
        [
          ...foreign.map((f) => `${f.destination} via ${f.nexthop}`),
          `${routeC.destination} via ${routeC.nexthop}`,
        ].sort(),
      );

      // A pair taken away by hand comes back; the route is not added a second time.
      await env.os.network.ports.update(c.port.id, { allowed_address_pairs: [] });
      await eventually(async () => (await pairs(c.port.id)).length === 1, { ...wait, what: 'pair restored' });
      assert.equal((await routes()).filter((r) => r.startsWith('10.244.3.0/24 ')).length, 1);
    } finally {
      await ccm.stop();
    }
  });

  it('marks a Node whose route Neutron refuses NoRouteCreated with a Warning, and routes the others', async () => {
    const e = await server('rt-e');
    // An InternalIP off the router's subnets: Neutron refuses the nexthop.
    await node('rt-d', '10.244.4.0/24', '198.51.100.9');
    await node('rt-e', '10.244.5.0/24', e.ip, e.id);
    const ccm = await startCcm();
    try {
      await eventually(async () => (await condition('rt-d'))?.status === 'True', {
        ...wait,
        what: 'rt-d NetworkUnavailable=True',
      });
      assert.equal((await condition('rt-d'))!.reason, 'NoRouteCreated');
      const warning = await eventually(
        async () => (await events('rt-d')).find((x) => x.reason === 'FailedToCreateRoute'),
        { ...wait, what: 'FailedToCreateRoute event' },
      );
      assert.equal((warning as EventsV1Event).type, 'Warning');
      assert.match(String((warning as EventsV1Event).note), /10\.244\.4\.0\/24 via 198\.51\.100\.9/);
      await eventually(async () => (await condition('rt-e'))?.status === 'False', {
        ...wait,
        what: 'rt-e routed',
      });
      const list = await routes();
      assert.ok(has(list, { destination: '10.244.5.0/24', nexthop: e.ip }));
      assert.ok(!list.some((r) => r.startsWith('10.244.4.0/24 ')));
    } finally {
      await ccm.stop();
      await env.api.delete(kinds.Node, { name: 'rt-d' });
    }
  });

  it('runs only with [Route] router-id and --configure-cloud-routes, and needs --cluster-cidr', async () => {
    const without = await env.startCcm({ controllers: ['*'], clusterCidr: CLUSTER_CIDR });
    try {
      assert.ok(!without.ccm.controllers.run.includes(ROUTE_CONTROLLER));
    } finally {
      await without.stop();
    }
    const off = await startCcm({ controllers: ['*'], configureCloudRoutes: false });
    try {
      assert.ok(!off.ccm.controllers.run.includes(ROUTE_CONTROLLER));
    } finally {
      await off.stop();
    }
    const on = await startCcm({ controllers: ['*'] });
    try {
      assert.ok(on.ccm.controllers.run.includes(ROUTE_CONTROLLER));
    } finally {
      await on.stop();
    }
    await assert.rejects(startCcm({ clusterCidr: undefined }), (err: unknown) => {
      assert.ok(err instanceof CcmUsageError);
      assert.match(err.message, /--cluster-cidr is required by the route controller/);
      return true;
    });
    await assert.rejects(startCcm({ clusterCidr: '10.244.0.0' }), CcmUsageError);
  });
});
