import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event, V1Node, V1Service } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import type { LoadBalancer } from '../../openstack/loadbalancer/v2/loadbalancers.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { legacyLoadBalancerName, loadBalancerName } from '../naming.ts';
import { Annotation } from '../service/annotations.ts';
import { startCcmEnv, type CcmEnv, type RunningCcm } from '../testing/env.ts';
import { LOAD_BALANCER_FINALIZER } from './service.ts';

const wait = { timeoutMs: 20_000, intervalMs: 25 };
const MEMBERS_PUT = 'PUT /v2/lbaas/pools/{pool_id}/members';

async function until<T>(fn: () => Promise<T | undefined | false>, what: string): Promise<T> {
  return (await eventually(fn, { ...wait, what })) as T;
}

describe('service controller (end to end: kube and OpenStack emulators)', () => {
  let env: CcmEnv;
  let ccm: RunningCcm;
  let subnetId: string;
  let publicId: string;

  before(async () => {
    env = await startCcmEnv();
    const { subnet, publicNetwork: pub } = await env.routedSubnet('10.20.0.0/16');
    subnetId = subnet.id;
    publicId = pub.id;
    for (let i = 1; i <= 3; i++) await node(`node-${i}`, `10.20.0.${10 + i}`);
    ccm = await env.startCcm({
      controllers: ['service'],
      cloudConfig: await env.cloudConf(
        `[LoadBalancer]\nsubnet-id = ${subnetId}\nfloating-network-id = ${publicId}\n`,
      ),
    });
  });
  after(async () => {
    await env?.close();
  });

  /** An initialized Node (the service controller never looks at the taint). */
  function node(name: string, ip: string): Promise<V1Node> {
    return env.api.create(kinds.Node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      status: { addresses: [{ type: 'InternalIP', address: ip }] },
    });
  }

  function service(name: string, extra: Partial<V1Service> = {}): Promise<V1Service> {
    return env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'default', ...extra.metadata },
      spec: {
        type: 'LoadBalancer',
        selector: { app: name },
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'dns', protocol: 'UDP', port: 53 },
        ],
        ...extra.spec,
      },
    });
  }

  const get = async (name: string) => await env.api.get(kinds.Service, { namespace: 'default', name });

  /** The Service once it advertises an address; the load balancer behind it. */
  async function ready(name: string): Promise<{ svc: V1Service; lb: LoadBalancer }> {
    const svc = await until(async () => {
      const s = await get(name);
      return s.status?.loadBalancer?.ingress?.[0] && s.metadata?.annotations?.[Annotation.LoadBalancerId]
        ? s
        : undefined;
    }, `${name} has an ingress address`);
    const lb = await env.os.loadBalancer.loadBalancers.get(
      svc.metadata!.annotations![Annotation.LoadBalancerId]!,
    );
    return { svc, lb };
  }

  const lbsNamed = async (name: string) =>
    (await env.os.loadBalancer.loadBalancers.list({ name }).all()).filter(
      (l) => l.provisioning_status !== 'DELETED',
    );

  async function events(name: string, reason: string): Promise<EventsV1Event[]> {
    const list = await env.api.list(kinds.EventsV1Event, { namespace: 'default' });
    return list.items.filter((e) => e.regarding?.name === name && e.reason === reason);
  }

  async function membersOf(lbId: string): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    for (const pool of await env.os.loadBalancer.pools.list({ loadbalancer_id: lbId }).all()) {
      const members = await env.os.loadBalancer.members.list(pool.id).all();
      out.set(pool.name, members.map((m) => `${m.name}@${m.address}:${m.protocol_port}`).sort());
    }
    return out;
  }

  it('creates a TCP + UDP load balancer, ACTIVE, with the floating IP in status', async () => {
    await service('web');
    const { svc, lb } = await ready('web');
    assert.equal(lb.name, loadBalancerName('kubernetes', 'default', 'web'));
    assert.equal(lb.provisioning_status, 'ACTIVE');
    assert.ok(svc.metadata?.finalizers?.includes(LOAD_BALANCER_FINALIZER));
    const ip = svc.status!.loadBalancer!.ingress![0]!.ip!;
    assert.equal(svc.metadata!.annotations![Annotation.LoadBalancerAddress], ip);
    const [fip] = await env.os.network.floatingIps.list({ port_id: lb.vip_port_id }).all();
    assert.equal(fip?.floating_ip_address, ip);
    const listeners = await env.os.loadBalancer.listeners.list({ loadbalancer_id: lb.id }).all();
    assert.deepEqual(listeners.map((l) => `${l.protocol}:${l.protocol_port}`).sort(), ['TCP:80', 'UDP:53']);
    const members = await membersOf(lb.id);
    assert.equal(members.size, 2);
    for (const m of members.values()) assert.equal(m.length, 3);
    assert.equal(env.sim.cloud.stats.count('octavia', 'POST /v2/lbaas/loadbalancers'), 1);
    await until(async () => (await events('web', 'EnsuredLoadBalancer')).length > 0, 'EnsuredLoadBalancer');
  });

  it('applies a node added and a node removed with one batch member PUT per pool each', async () => {
    const { lb } = await ready('web');
    env.sim.cloud.stats.reset();
    await node('node-4', '10.20.0.14');
    await until(async () => [...(await membersOf(lb.id)).values()].every((m) => m.length === 4), '4 members');
    await until(
      async () => (await get('web')).metadata?.annotations?.[Annotation.LoadBalancerId] === lb.id,
      'steady',
    );
    assert.equal(env.sim.cloud.stats.count('octavia', MEMBERS_PUT), 2);

    env.sim.cloud.stats.reset();
    await env.api.delete(kinds.Node, { name: 'node-1' });
    await until(async () => [...(await membersOf(lb.id)).values()].every((m) => m.length === 3), '3 members');
    await until(async () => (await events('web', 'UpdatedLoadBalancer')).length > 0, 'UpdatedLoadBalancer');
    assert.equal(env.sim.cloud.stats.count('octavia', MEMBERS_PUT), 2);
    assert.equal(env.sim.cloud.stats.count('octavia', 'POST /v2/lbaas/loadbalancers'), 0);
    for (const m of (await membersOf(lb.id)).values()) assert.ok(!m.some((x) => x.startsWith('node-1@')));
  });

  it('applies an annotation change in place (no new load balancer)', async () => {
    const { lb } = await ready('web');
    env.sim.cloud.stats.reset();
    const svc = await get('web');
    await env.api.patch(kinds.Service, { namespace: 'default', name: 'web' }, 'merge', {
      metadata: { annotations: { ...svc.metadata?.annotations, [Annotation.ConnectionLimit]: '1000' } },
    });
    await until(
      async () =>
        (await env.os.loadBalancer.listeners.list({ loadbalancer_id: lb.id }).all()).every(
          (l) => l.connection_limit === 1000,
        ),
      'connection_limit 1000',
    );
    assert.equal(env.sim.cloud.stats.count('octavia', 'POST /v2/lbaas/loadbalancers'), 0);
    assert.equal((await lbsNamed(lb.name)).length, 1);
  });

  it('gives ETP=Local an HTTP monitor on the healthCheckNodePort', async () => {
    await service('local', {
      metadata: { name: 'local', annotations: { [Annotation.EnableHealthMonitor]: 'true' } },
      spec: { externalTrafficPolicy: 'Local', ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
    });
    const { svc, lb } = await ready('local');
    const hcnp = svc.spec!.healthCheckNodePort!;
    assert.ok(hcnp > 0);
    const [pool] = await env.os.loadBalancer.pools.list({ loadbalancer_id: lb.id }).all();
    const hm = await env.os.loadBalancer.healthMonitors.get(pool!.healthmonitor_id!);
    assert.equal(hm.type, 'HTTP');
    assert.equal(hm.url_path, '/healthz');
    for (const m of await env.os.loadBalancer.members.list(pool!.id).all())
      assert.equal(m.monitor_port, hcnp);
  });

  it('switches external → internal → external', async () => {
    await service('flip', { spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80 }] } });
    const { lb } = await ready('flip');
    const patch = (internal: string) =>
      env.api.patch(kinds.Service, { namespace: 'default', name: 'flip' }, 'merge', {
        metadata: {
          annotations: { 'service.beta.kubernetes.io/openstack-internal-load-balancer': internal },
        },
      });
    await patch('true');
    await until(
      async () => (await get('flip')).status?.loadBalancer?.ingress?.[0]?.ip === lb.vip_address,
      'VIP in status',
    );
    assert.equal((await env.os.network.floatingIps.list({ port_id: lb.vip_port_id }).all()).length, 0);
    await patch('false');
    const ip = await until(async () => {
      const a = (await get('flip')).status?.loadBalancer?.ingress?.[0]?.ip;
      return a && a !== lb.vip_address ? a : undefined;
    }, 'floating IP in status');
    const [fip] = await env.os.network.floatingIps.list({ port_id: lb.vip_port_id }).all();
    assert.equal(fip?.floating_ip_address, ip);
    assert.equal((await lbsNamed(lb.name)).length, 1);
  });

  it('adopts a legacy-named load balancer instead of creating a second one', async () => {
    const pre = await env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'legacy', namespace: 'default' },
      spec: { type: 'ClusterIP', ports: [{ name: 'http', protocol: 'TCP', port: 80 }] },
    });
    const legacy = legacyLoadBalancerName(pre.metadata!.uid!);
    const made = await env.os.loadBalancer.loadBalancers.create({ name: legacy, vip_subnet_id: subnetId });
    await env.os.loadBalancer.loadBalancers.waitForActive(made.id, { intervalMs: 20, timeoutMs: 10_000 });
    env.sim.cloud.stats.reset();
    await env.api.patch(kinds.Service, { namespace: 'default', name: 'legacy' }, 'merge', {
      spec: { type: 'LoadBalancer' },
    });
    const { lb } = await ready('legacy');
    assert.equal(lb.id, made.id);
    assert.equal(env.sim.cloud.stats.count('octavia', 'POST /v2/lbaas/loadbalancers'), 0);
    assert.equal((await lbsNamed(loadBalancerName('kubernetes', 'default', 'legacy'))).length, 0);
  });

  it('shares one load balancer between two Services through the load-balancer-id annotation', async () => {
    const { lb, svc } = await ready('web');
    await service('buddy', {
      metadata: { name: 'buddy', annotations: { [Annotation.LoadBalancerId]: lb.id } },
      spec: { ports: [{ name: 'alt', protocol: 'TCP', port: 8080 }] },
    });
    const buddy = await ready('buddy');
    assert.equal(buddy.lb.id, lb.id);
    assert.equal(buddy.svc.status!.loadBalancer!.ingress![0]!.ip, svc.status!.loadBalancer!.ingress![0]!.ip);
    const ports = (await env.os.loadBalancer.listeners.list({ loadbalancer_id: lb.id }).all()).map(
      (l) => l.protocol_port,
    );
    assert.deepEqual(
      ports.sort((a, b) => a - b),
      [53, 80, 8080],
    );
    // The second Service out leaves the first one's load balancer and listeners alone.
    await env.api.delete(kinds.Service, { namespace: 'default', name: 'buddy' });
    await until(
      async () =>
        (await env.api.list(kinds.Service, { namespace: 'default' })).items.every(
          (s) => s.metadata?.name !== 'buddy',
        ),
      'buddy gone',
    );
    const left = (await env.os.loadBalancer.listeners.list({ loadbalancer_id: lb.id }).all()).map(
      (l) => l.protocol_port,
    );
    assert.deepEqual(
      left.sort((a, b) => a - b),
      [53, 80],
    );
  });

  it('deletes everything of ours when the Services go', async () => {
    for (const name of ['web', 'local', 'flip', 'legacy']) {
      await env.api.delete(kinds.Service, { namespace: 'default', name });
    }
    await until(
      async () =>
        (await env.api.list(kinds.Service, { namespace: 'default' })).items.every(
          (s) => s.spec?.type !== 'LoadBalancer',
        ),
      'Services gone',
    );
    const lbs = (await env.os.loadBalancer.loadBalancers.list().all()).filter(
      (l) => l.provisioning_status !== 'DELETED',
    );
    assert.deepEqual(
      lbs.map((l) => l.name),
      [],
    );
    const fips = await env.os.network.floatingIps.list().all();
    assert.deepEqual(
      fips.filter((f) => (f.description ?? '').includes('Floating IP for Kubernetes external service')),
      [],
    );
    const vipPorts = (await env.os.network.ports.list().all()).filter((p) => p.device_owner === 'Octavia');
    assert.deepEqual(vipPorts, []);
    assert.ok((await events('web', 'DeletedLoadBalancer')).length > 0);
    await ccm.stop();
  });
});
