import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { OpenStackClient } from '../../openstack/client.ts';
import { openClientTargetOn, type ClientTarget } from '../../openstack/core/testing/target.ts';
import { LoadBalancerEngine, type EnsureResult } from '../../openstack/services/loadbalancer/index.ts';
import { startTestCloud } from '../../sim/openstack/testing/harness.ts';
import type { OpenStackClusterSpec, OpenStackMachine } from '../api/index.ts';
import {
  canonicalAllowedCIDRs,
  controlPlaneMembers,
  desiredApiLoadBalancer,
  EndpointError,
  ensureApiFloatingIP,
} from './api-endpoint.ts';
import { reconcileExternalNetwork } from './external-network.ts';
import { reconcileNetwork } from './network.ts';

const base: OpenStackClusterSpec = {
  identityRef: { name: 'cloud', cloudName: 'openstack' },
  apiServerLoadBalancer: { enabled: true },
};

const machine = (
  name: string,
  labels: Record<string, string>,
  address?: string,
  deleting = false,
): OpenStackMachine => ({
  metadata: { name, labels, ...(deleting ? { deletionTimestamp: new Date() } : {}) },
  spec: { image: { id: 'x' }, flavor: 'm1.small' },
  ...(address ? { status: { addresses: [{ type: 'InternalIP', address }] } } : {}),
});

test('members: control-plane machines with an InternalIP that are not being deleted', () => {
  const cp = { 'cluster.x-k8s.io/control-plane': '' };
  const members = controlPlaneMembers([
    machine('cp-b', cp, '10.6.0.12'),
    machine('cp-a', cp, '10.6.0.11'),
    machine('worker', {}, '10.6.0.20'),
    machine('cp-new', cp),
    machine('cp-going', cp, '10.6.0.13', true),
  ]);
  assert.deepEqual(members, [
    { machine: 'cp-a', address: '10.6.0.11' },
    { machine: 'cp-b', address: '10.6.0.12' },
  ]);
});

test('the desired load balancer: CAPO’s names, TCP listeners per API port, monitor defaults, FIP intent', () => {
  const spec: OpenStackClusterSpec = {
    ...base,
    apiServerLoadBalancer: { enabled: true, additionalPorts: [8443] },
    tags: ['t1'],
  };
  const d = desiredApiLoadBalancer({
    spec,
    status: {},
    resourceName: 'ns-c',
    vipSubnetID: 'subnet-1',
    members: [{ machine: 'cp-a', address: '10.6.0.11' }],
    externalNetworkID: 'ext-1',
    allowedCIDRs: [],
    provider: undefined,
    flavorID: undefined,
  });
  assert.equal(d.identity.name, 'k8s-clusterapi-cluster-ns-c-kubeapi');
  assert.equal(d.identity.description, 'Created by cluster-api-provider-openstack cluster ns-c');
  assert.deepEqual(d.vip, { subnetId: 'subnet-1' });
  assert.deepEqual(
    d.listeners.map((l) => [l.name, l.protocol, l.port, l.pool.algorithm]),
    [
      ['k8s-clusterapi-cluster-ns-c-kubeapi-6443', 'TCP', 6443, 'ROUND_ROBIN'],
      ['k8s-clusterapi-cluster-ns-c-kubeapi-8443', 'TCP', 8443, 'ROUND_ROBIN'],
    ],
  );
  const pool = d.listeners[0]!.pool;
  assert.deepEqual(pool.members, [
    { name: 'k8s-clusterapi-cluster-ns-c-kubeapi-6443-cp-a', address: '10.6.0.11', port: 6443 },
  ]);
  assert.deepEqual(
    [
      pool.healthMonitor?.type,
      pool.healthMonitor?.delay,
      pool.healthMonitor?.timeout,
      pool.healthMonitor?.maxRetries,
      pool.healthMonitor?.maxRetriesDown,
    ],
    ['TCP', 10, 5, 5, 3],
  );
  assert.deepEqual(d.listeners[0]!.allowedCidrs, []);
  assert.equal(d.floatingIp?.networkId, 'ext-1');
  assert.equal(d.floatingIp?.keep, false);
  assert.equal(d.floatingIp?.address, undefined);

  const ovn = desiredApiLoadBalancer({
    spec: {
      ...base,
      apiServerPort: 7443,
      disableAPIServerFloatingIP: true,
      apiServerFixedIP: '10.6.0.5',
      apiServerFloatingIP: undefined,
    },
    status: {},
    resourceName: 'ns-c',
    vipSubnetID: 'subnet-1',
    members: [],
    externalNetworkID: undefined,
    allowedCIDRs: undefined,
    provider: 'ovn',
    flavorID: 'flavor-1',
  });
  assert.equal(ovn.floatingIp, undefined);
  assert.deepEqual(ovn.vip, { subnetId: 'subnet-1', address: '10.6.0.5' });
  assert.equal(ovn.listeners[0]!.port, 7443);
  assert.equal(ovn.listeners[0]!.pool.algorithm, 'SOURCE_IP_PORT');
  assert.equal('allowedCidrs' in ovn.listeners[0]!, false);
  assert.equal(ovn.provider, 'ovn');
  assert.equal(ovn.flavorId, 'flavor-1');

  // A floating IP the user named is kept; the recorded one comes first.
  const named = desiredApiLoadBalancer({
    spec: { ...base, apiServerFloatingIP: '172.24.4.50' },
    status: { apiServerLoadBalancer: { name: 'x', id: 'lb-1', ip: '172.24.4.60', internalIP: '10.6.0.9' } },
    resourceName: 'ns-c',
    vipSubnetID: 's',
    members: [],
    externalNetworkID: 'ext-1',
    allowedCIDRs: undefined,
    provider: undefined,
    flavorID: undefined,
  });
  assert.equal(named.floatingIp?.address, '172.24.4.60');
  assert.equal(named.floatingIp?.keep, true);
  assert.equal(named.identity.id, 'lb-1');

  assert.throws(
    () =>
      desiredApiLoadBalancer({
        spec: base,
        status: {},
        resourceName: 'ns-c',
        vipSubnetID: 's',
        members: [],
        externalNetworkID: undefined,
        allowedCIDRs: undefined,
        provider: undefined,
        flavorID: undefined,
      }),
    EndpointError,
  );
});

test('the endpoint host is an address only when it is an IP literal, never a name or a bracketed literal', () => {
  const vipOf = (host: string) =>
    desiredApiLoadBalancer({
      spec: { ...base, disableAPIServerFloatingIP: true, controlPlaneEndpoint: { host, port: 6443 } },
      status: {},
      resourceName: 'ns-c',
      vipSubnetID: 's',
      members: [],
      externalNetworkID: undefined,
      allowedCIDRs: undefined,
      provider: undefined,
      flavorID: undefined,
    }).vip;
  assert.deepEqual(vipOf('10.6.0.5'), { subnetId: 's', address: '10.6.0.5' });
  assert.deepEqual(vipOf('2001:db8::5'), { subnetId: 's', address: '2001:db8::5' });
  // Go's LookupHost, CAPO's lookup, reads none of these as an address; Octavia would refuse them.
  for (const host of ['[2001:db8::5]', 'api.example.com:6443', '2001:db8::zz', '010.6.0.5'])
    assert.deepEqual(vipOf(host), { subnetId: 's' }, host);

  const fip = desiredApiLoadBalancer({
    spec: { ...base, controlPlaneEndpoint: { host: '[2001:db8::5]', port: 6443 } },
    status: {},
    resourceName: 'ns-c',
    vipSubnetID: 's',
    members: [],
    externalNetworkID: 'ext-1',
    allowedCIDRs: undefined,
    provider: undefined,
    flavorID: undefined,
  }).floatingIp;
  assert.equal(fip?.address, undefined);
});

test('allowed CIDRs are widened as CAPO widens them, canonical and sorted', () => {
  const spec: OpenStackClusterSpec = {
    ...base,
    apiServerLoadBalancer: {
      enabled: true,
      // k8s.io/utils/net reads leading zeros as decimal and keeps the text; IPv6 is not allowed.
      allowedCIDRs: ['192.168.1.0/24', '8.8.8.8', 'bogus', '10.1.0.0/33', '010.2.0.0/16', 'fd00::/64'],
    },
  };
  const out = canonicalAllowedCIDRs(spec, {
    bastion: { floatingIP: '172.24.4.7', ip: '10.6.0.7' },
    network: { id: 'n', name: 'n', subnets: [{ id: 's', name: 's', cidr: '10.6.0.0/24' }] },
    router: { id: 'r', name: 'r', ips: ['172.24.4.2'] },
  });
  assert.deepEqual(out.cidrs, [
    '010.2.0.0/16',
    '10.6.0.0/24',
    '10.6.0.7/32',
    '172.24.4.2/32',
    '172.24.4.7/32',
    '192.168.1.0/24',
    '8.8.8.8/32',
  ]);
  assert.deepEqual(out.invalid, ['bogus', '10.1.0.0/33', 'fd00::/64']);
  assert.deepEqual(canonicalAllowedCIDRs(base, {}), { cidrs: [], invalid: [] });
});

let target: ClientTarget;
let os: OpenStackClient;
const signal = new AbortController().signal;

before(async () => {
  target = await openClientTargetOn(await startTestCloud({ profile: 'fast' }));
  os = await target.client(target.demo);
});
after(async () => {
  await target.close();
});

async function converge(
  engine: LoadBalancerEngine,
  desired: Parameters<LoadBalancerEngine['ensure']>[0],
): Promise<EnsureResult> {
  for (let i = 0; i < 200; i++) {
    const r = await engine.ensure(desired, { signal });
    if (r.phase !== 'Pending') return r;
    await new Promise((resolve) => setTimeout(resolve, Math.min(r.retryAfterMs, 50)));
  }
  throw new Error('the load balancer did not converge');
}

test('through the engine: ACTIVE with a floating IP, members follow the machines in one batch', async () => {
  const spec: OpenStackClusterSpec = { ...base, managedSubnets: [{ cidr: '10.6.0.0/24' }] };
  const ext = await reconcileExternalNetwork(os, spec, signal);
  const net = await reconcileNetwork({
    api: os,
    spec,
    resourceName: 'ns-lb',
    externalNetworkID: ext?.id,
    signal,
  });
  const input = {
    spec,
    status: {},
    resourceName: 'ns-lb',
    vipSubnetID: net.network!.subnets![0]!.id,
    members: [{ machine: 'cp-a', address: '10.6.0.11' }],
    externalNetworkID: ext?.id,
    allowedCIDRs: [],
    provider: undefined,
    flavorID: undefined,
  };
  const engine = new LoadBalancerEngine(os, { backoff: { initialMs: 10, maxMs: 50 } });
  const ready = await converge(engine, desiredApiLoadBalancer(input));
  assert.equal(ready.phase, 'Ready');
  assert.ok(ready.phase === 'Ready' && ready.floatingIp, 'a floating IP on the VIP');
  const lb = ready.loadBalancer;
  assert.equal(lb.provisioning_status, 'ACTIVE');
  const [pool] = await os.loadBalancer.pools.list({ loadbalancer_id: lb.id }).all();
  assert.deepEqual(
    (await os.loadBalancer.members.list(pool!.id).all()).map((m) => m.address),
    ['10.6.0.11'],
  );

  const more = desiredApiLoadBalancer({
    ...input,
    members: [
      { machine: 'cp-a', address: '10.6.0.11' },
      { machine: 'cp-b', address: '10.6.0.12' },
    ],
  });
  const step = await engine.ensure(more, { signal });
  assert.deepEqual(
    step.actions.map((a) => `${a.verb} ${a.resource}`),
    ['replace members'],
  );
  const after2 = await converge(engine, more);
  assert.equal(after2.phase, 'Ready');
  assert.deepEqual((await os.loadBalancer.members.list(pool!.id).all()).map((m) => m.address).sort(), [
    '10.6.0.11',
    '10.6.0.12',
  ]);
});

test('without a load balancer: the API floating IP is adopted again after a crash, never doubled', async () => {
  const spec: OpenStackClusterSpec = { ...base, apiServerLoadBalancer: undefined };
  const ext = await reconcileExternalNetwork(os, spec, signal);
  const first = await ensureApiFloatingIP(os, spec, 'ns-fip', ext?.id, signal);
  assert.ok(first.created);
  // The endpoint was not recorded (a crash): the next run finds the same address.
  const second = await ensureApiFloatingIP(os, spec, 'ns-fip', ext?.id, signal);
  assert.equal(second.created, false);
  assert.equal(second.fip.id, first.fip.id);
  // Once recorded as the endpoint host, the address is what is looked up.
  const third = await ensureApiFloatingIP(
    os,
    { ...spec, controlPlaneEndpoint: { host: first.fip.floating_ip_address, port: 6443 } },
    'ns-fip',
    ext?.id,
    signal,
  );
  assert.equal(third.fip.id, first.fip.id);
  await assert.rejects(ensureApiFloatingIP(os, spec, 'ns-fip', undefined, signal), EndpointError);
});
