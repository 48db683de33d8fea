/**
 * Services on Octavia, end to end on both emulators: the service, endpointslice and
 * kuryrloadbalancer controllers with the EndpointSlice stand-in (kube-controller-manager's part),
 * this test playing the kubelet (pods with an IP and a Ready condition).
 *
 * A ClusterIP Service gets a load balancer whose VIP is its clusterIP and whose members follow its
 * pods; a burst of endpoint changes seen at once is one batch member update; a LoadBalancer Service
 * gets a floating IP and its ingress; the ovn provider puts members on the pods' subnet; a load
 * balancer Octavia leaves in ERROR is made again; deleting the Services leaves nothing of ours.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event, V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import { kinds, Manager } from '../../kube/index.ts';
import { kubeConfigFrom } from '../../kube/testing/env.ts';
import { createLogger } from '../../lib/log.ts';
import { createRegistry } from '../../lib/metrics.ts';
import { addFault } from '../../openstack/core/testing/target.ts';
import type { LoadBalancer } from '../../openstack/loadbalancer/v2/loadbalancers.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { registerEndpointSliceController as registerStandIn } from '../../demo/endpointslices.ts';
import { Finalizers, kuryrKinds, type KuryrLoadBalancer } from '../api/index.ts';
import { FLOATING_IP_MARKER } from '../lb/names.ts';
import { startKuryrEnv, type KuryrEnv, type RunningKuryr } from '../testing/env.ts';
import { ENDPOINTSLICE_CONTROLLER, SERVICE_CONTROLLER } from './service.ts';
import { KURYRLOADBALANCER_CONTROLLER } from './kuryrloadbalancer.ts';

const NS = 'shop';
const WAIT = { timeoutMs: 30_000, intervalMs: 20 };
const MEMBERS_PUT = 'PUT /v2/lbaas/pools/{pool_id}/members';
const CONTROLLERS = [SERVICE_CONTROLLER, ENDPOINTSLICE_CONTROLLER, KURYRLOADBALANCER_CONTROLLER];

describe('kuryr Services on Octavia', () => {
  let env: KuryrEnv;
  let kuryr: RunningKuryr;
  let kcm: { stop(): Promise<void> };
  let baselineFips: number;
  let pods = 0;

  before(async () => {
    env = await startKuryrEnv({ nodes: 1 });
    await env.ensureNamespace(NS);
    baselineFips = (await env.admin.network.floatingIps.list().all()).length;
    kcm = startStandIn(env);
    kuryr = await env.startKuryr({ controllers: CONTROLLERS });
  });
  after(async () => {
    await kuryr?.stop();
    await kcm?.stop();
    await env?.close();
  });

  const service = (name: string, spec: Partial<NonNullable<V1Service['spec']>>): V1Service => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: NS },
    spec: { selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 'http' }], ...spec },
  });

  /** What kubelet and kuryr's pod side leave: a running pod with an IP of the pod subnet, Ready. */
  async function runPod(app: string, ready = true): Promise<string> {
    const n = ++pods;
    const ip = `10.128.${n >> 8}.${(n & 255) + 10}`;
    const name = `${app}-${n}`;
    await env.api.create(kinds.Pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: NS, labels: { app } },
      spec: {
        nodeName: env.workers[0]!.name,
        containers: [{ name: 'app', image: 'app', ports: [{ name: 'http', containerPort: 8080 }] }],
      },
    } satisfies V1Pod);
    await env.api.patch(
      kinds.Pod,
      { namespace: NS, name },
      'merge',
      {
        status: {
          phase: 'Running',
          podIP: ip,
          podIPs: [{ ip }],
          conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
        },
      },
      { subresource: 'status' },
    );
    return ip;
  }

  const klb = (name: string) =>
    env.api.get<KuryrLoadBalancer>(kuryrKinds.KuryrLoadBalancer, { namespace: NS, name });
  const lbNamed = async (name: string): Promise<LoadBalancer[]> =>
    env.os.loadBalancer.loadBalancers.list({ name: `${NS}/${name}` }).all();
  const members = async (lb: LoadBalancer) => {
    const [pool] = await env.os.loadBalancer.pools.list({ loadbalancer_id: lb.id }).all();
    return (await env.os.loadBalancer.members.list(pool!.id).all())
      .map((m) => `${m.address}:${m.protocol_port}@${m.subnet_id}`)
      .sort();
  };
  /** The load balancer once its KuryrLoadBalancer status lists exactly `addresses` as members. */
  async function readyWith(name: string, addresses: string[]): Promise<LoadBalancer> {
    const want = addresses.map((a) => `${a}:8080`).sort();
    await eventually(
      async () => {
        const s = (await klb(name)).status;
        const have = (s?.members ?? []).map((m) => `${m.ip}:${m.port}`).sort();
        return have.join() === want.join() && s?.loadbalancer?.id;
      },
      { ...WAIT, what: `${name}'s status with members ${want.join(', ')}` },
    );
    const [lb] = await lbNamed(name);
    assert.ok(lb, `load balancer ${NS}/${name}`);
    return lb;
  }
  async function events(name: string, reason: string): Promise<EventsV1Event[]> {
    const list = await env.api.list(kinds.EventsV1Event, { namespace: NS });
    return list.items.filter((e) => e.regarding?.name === name && e.reason === reason);
  }

  it('a ClusterIP Service: VIP = clusterIP on the service subnet, a listener per port, members = ready pods', async () => {
    const a = await runPod('web');
    const b = await runPod('web');
    await runPod('web', false);
    await env.api.create(kinds.Service, service('web', {}));
    const lb = await readyWith('web', [a, b]);
    const svc = await env.api.get(kinds.Service, { namespace: NS, name: 'web' });
    assert.equal(lb.vip_address, svc.spec?.clusterIP);
    assert.equal(lb.vip_subnet_id, env.net.services.subnetId);
    assert.deepEqual(lb.tags, [`${NS}/web`, 'kuryr-cluster:kubernetes']);
    assert.ok(svc.metadata?.finalizers?.includes(Finalizers.Service));
    const listeners = await env.os.loadBalancer.listeners.list({ loadbalancer_id: lb.id }).all();
    assert.deepEqual(
      listeners.map((l) => [l.name, l.protocol, l.protocol_port]),
      [[`${NS}/web:TCP:80`, 'TCP', 80]],
    );
    // L3 member mode (the default): members routed from the VIP's subnet.
    assert.deepEqual(
      await members(lb),
      [a, b].sort().map((ip) => `${ip}:8080@${env.net.services.subnetId}`),
    );
    const status = (await klb('web')).status!;
    assert.equal(status.loadbalancer?.id, lb.id);
    assert.equal(status.loadbalancer?.ip, lb.vip_address);
    assert.deepEqual(
      status.listeners?.map((l) => l.id),
      listeners.map((l) => l.id),
    );
    assert.equal(status.pools?.[0]?.listener_id, listeners[0]!.id);
    assert.deepEqual(status.members?.map((m) => m.name).sort(), [`${NS}/web-1:8080`, `${NS}/web-2:8080`]);
    assert.equal(status.service_pub_ip_info, undefined);

    // A pod goes: its member goes, in one batch update.
    const puts = env.sim.cloud.stats.count('octavia', MEMBERS_PUT);
    await env.api.delete(kinds.Pod, { namespace: NS, name: 'web-1' });
    await readyWith('web', [b]);
    assert.equal(env.sim.cloud.stats.count('octavia', MEMBERS_PUT), puts + 1);
  });

  it('a burst of endpoint changes seen at once is one batch member update', async () => {
    // The test plays kube-controller-manager batching its writes: one slice write, many endpoints.
    await env.api.create(kinds.Service, service('burst', { selector: { app: 'burst-none' } }));
    const slice = (ips: string[]): V1EndpointSlice => ({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'burst-batched',
        namespace: NS,
        labels: { 'kubernetes.io/service-name': 'burst', 'endpointslice.kubernetes.io/managed-by': 'test' },
      },
      addressType: 'IPv4',
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      endpoints: ips.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    });
    const before = ['10.129.0.1', '10.129.0.2'];
    await env.api.create(kinds.EndpointSlice, slice(before));
    const lb = await readyWith('burst', before);
    const since = env.sim.cloud.stats.requests().last;
    const after = ['10.129.0.2', '10.129.0.3', '10.129.0.4', '10.129.0.5', '10.129.0.6', '10.129.0.7'];
    const current = await env.api.get(kinds.EndpointSlice, { namespace: NS, name: 'burst-batched' });
    await env.api.update(kinds.EndpointSlice, {
      ...slice(after),
      metadata: { ...slice(after).metadata, resourceVersion: current.metadata?.resourceVersion },
    });
    await readyWith('burst', after);
    const writes = env.sim.cloud.stats.requests(since, { service: 'octavia', writes: true }).requests;
    assert.deepEqual(
      writes.map((r) => r.operation),
      [MEMBERS_PUT],
      'six members in, one out: one PUT of the pool',
    );
    assert.equal((await members(lb)).length, 6);
  });

  it('a LoadBalancer Service gets a floating IP and its ingress; back to ClusterIP, both go', async () => {
    const ip = await runPod('shop');
    await env.api.create(kinds.Service, service('shop', { type: 'LoadBalancer' }));
    const lb = await readyWith('shop', [ip]);
    const fipAddress = await eventually(
      async () => {
        const s = (await klb('shop')).status?.service_pub_ip_info;
        const ingress = (await env.api.get(kinds.Service, { namespace: NS, name: 'shop' })).status
          ?.loadBalancer?.ingress;
        return s && ingress?.[0]?.ip === s.ip_addr ? s.ip_addr : undefined;
      },
      { ...WAIT, what: 'the floating IP in the status and the ingress' },
    );
    const [fip] = await env.os.network.floatingIps.list({ floating_ip_address: fipAddress! }).all();
    assert.equal(fip?.port_id, lb.vip_port_id);
    assert.ok(fip?.description.includes(FLOATING_IP_MARKER));
    assert.equal(fip?.floating_network_id, env.net.externalNetworkId);

    await env.api.patch(kinds.Service, { namespace: NS, name: 'shop' }, 'merge', {
      spec: { type: 'ClusterIP' },
    });
    await eventually(
      async () => {
        const svc = await env.api.get(kinds.Service, { namespace: NS, name: 'shop' });
        const gone =
          (await env.os.network.floatingIps.list({ floating_ip_address: fipAddress! }).all()).length === 0;
        return (
          gone &&
          (svc.status?.loadBalancer?.ingress ?? []).length === 0 &&
          !(await klb('shop')).status?.service_pub_ip_info
        );
      },
      { ...WAIT, what: 'the floating IP and the ingress gone' },
    );
    assert.equal((await lbNamed('shop'))[0]?.id, lb.id, 'the same load balancer serves on');
  });

  it('a load balancer Octavia leaves in ERROR is deleted and made again', async () => {
    await addFault(env.sim, {
      kind: 'error-on-create',
      service: 'octavia',
      resource: 'loadbalancer',
      times: 1,
    });
    const ip = await runPod('flaky');
    await env.api.create(kinds.Service, service('flaky', {}));
    const lb = await readyWith('flaky', [ip]);
    assert.equal(lb.provisioning_status, 'ACTIVE');
    assert.equal((await lbNamed('flaky')).length, 1);
    assert.equal((await events('flaky', 'RecreatingLoadBalancer')).length, 1);
  });

  it('deleting the Services leaves nothing of ours: load balancers, floating IPs, KuryrLoadBalancers', async () => {
    for (const name of ['web', 'burst', 'shop', 'flaky'])
      await env.api.delete(kinds.Service, { namespace: NS, name });
    await eventually(
      async () => {
        const svcs = (await env.api.list(kinds.Service, { namespace: NS })).items;
        const klbs = (await env.api.list(kuryrKinds.KuryrLoadBalancer, { namespace: NS })).items;
        const lbs = await env.admin.loadBalancer.loadBalancers.list().all();
        return svcs.length === 0 && klbs.length === 0 && lbs.length === 0;
      },
      { ...WAIT, what: 'no Service, KuryrLoadBalancer or load balancer left' },
    );
    assert.equal((await env.admin.network.floatingIps.list().all()).length, baselineFips);
  });
});

describe('kuryr Services with the ovn provider', () => {
  let env: KuryrEnv;
  let kuryr: RunningKuryr;
  let kcm: { stop(): Promise<void> };

  before(async () => {
    env = await startKuryrEnv({ nodes: 1 });
    await env.ensureNamespace(NS);
    kcm = startStandIn(env);
    kuryr = await env.startKuryr({
      controllers: CONTROLLERS,
      options: { octaviaDefaults: { provider: 'ovn' } },
    });
  });
  after(async () => {
    await kuryr?.stop();
    await kcm?.stop();
    await env?.close();
  });

  it('members on the pod subnet (L2), SOURCE_IP_PORT pools', async () => {
    await env.api.create(kinds.Pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'dns-1', namespace: NS, labels: { app: 'dns' } },
      spec: { containers: [{ name: 'dns', image: 'dns' }] },
    });
    await env.api.patch(
      kinds.Pod,
      { namespace: NS, name: 'dns-1' },
      'merge',
      { status: { phase: 'Running', podIP: '10.128.9.9', conditions: [{ type: 'Ready', status: 'True' }] } },
      { subresource: 'status' },
    );
    await env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'dns', namespace: NS },
      spec: {
        selector: { app: 'dns' },
        ports: [{ name: 'dns', port: 53, protocol: 'UDP', targetPort: 5353 }],
      },
    });
    const lb = await eventually(
      async () => {
        const [found] = await env.os.loadBalancer.loadBalancers.list({ name: `${NS}/dns` }).all();
        const status = (
          await env.api.get<KuryrLoadBalancer>(kuryrKinds.KuryrLoadBalancer, { namespace: NS, name: 'dns' })
        ).status;
        return found && (status?.members ?? []).length === 1 ? found : undefined;
      },
      { ...WAIT, what: 'the ovn load balancer with its member' },
    );
    assert.equal(lb!.provider, 'ovn');
    const [pool] = await env.os.loadBalancer.pools.list({ loadbalancer_id: lb!.id }).all();
    assert.equal(pool?.lb_algorithm, 'SOURCE_IP_PORT');
    const [member] = await env.os.loadBalancer.members.list(pool.id).all();
    assert.deepEqual(
      [member?.address, member?.protocol_port, member?.subnet_id],
      ['10.128.9.9', 5353, env.net.pods.subnetId],
    );
  });
});

/** kube-controller-manager's EndpointSlice controller, as the demo runs it. */
function startStandIn(env: KuryrEnv): { stop(): Promise<void> } {
  const manager = new Manager({
    name: 'kube-controller-manager',
    kubeConfig: kubeConfigFrom(env.kube.kubeconfigPath),
    qps: 0,
    log: createLogger({ level: 'silent' }),
    registry: createRegistry({ defaultMetrics: false }),
    gracefulShutdownTimeoutMs: 5_000,
  });
  registerStandIn(manager);
  const stopper = new AbortController();
  const done = manager.start(stopper.signal);
  return {
    async stop() {
      stopper.abort(new Error('test done'));
      await done;
    },
  };
}
