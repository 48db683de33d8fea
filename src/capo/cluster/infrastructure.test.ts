/**
 * The OpenStack side of the cluster controller, module by module, against the OpenStack emulator:
 * what each step creates, that a second run (a restart) adopts instead of creating again, and that
 * teardown removes exactly what was made.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { OpenStackClient } from '../../openstack/client.ts';
import { openClientTargetOn, type ClientTarget } from '../../openstack/core/testing/target.ts';
import { DependencyError } from '../../openstack/services/server/index.ts';
import { startTestCloud } from '../../sim/openstack/testing/harness.ts';
import type { OpenStackClusterSpec } from '../api/index.ts';
import { deleteManagedNetwork } from './delete.ts';
import { reconcileExternalNetwork } from './external-network.ts';
import { failureDomainsFrom, reconcileFailureDomains } from './failure-domains.ts';
import { networkName, resourceDescription, securityGroupName } from './names.ts';
import { reconcileNetwork } from './network.ts';
import { deleteSecurityGroups, reconcileSecurityGroups } from './security-groups.ts';

let target: ClientTarget;
let os: OpenStackClient;
let admin: OpenStackClient;
const signal = new AbortController().signal;

before(async () => {
  target = await openClientTargetOn(await startTestCloud({ profile: 'fast' }));
  os = await target.client(target.demo);
  admin = await target.client(target.admin!);
});
after(async () => {
  await target.close();
});

const spec = (extra: Partial<OpenStackClusterSpec> = {}): OpenStackClusterSpec => ({
  identityRef: { name: 'cloud', cloudName: 'openstack' },
  managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['8.8.8.8'] }],
  managedSecurityGroups: { allowAllInClusterTraffic: false },
  tags: ['capo-test'],
  ...extra,
});

test('the only external network is found; a named one is used; none is fine when disabled', async () => {
  const ext = await reconcileExternalNetwork(os, spec(), signal);
  assert.equal(ext?.name, 'public');
  const named = await reconcileExternalNetwork(
    os,
    spec({ externalNetwork: { filter: { name: 'public' } } }),
    signal,
  );
  assert.equal(named?.id, ext?.id);
  assert.equal(await reconcileExternalNetwork(os, spec({ disableExternalNetwork: true }), signal), undefined);
  await assert.rejects(
    reconcileExternalNetwork(os, spec({ externalNetwork: { filter: { name: 'no-such-net' } } }), signal),
    (err: unknown) => DependencyError.is(err) && err.problem === 'NotFound',
  );
});

test('two external networks and none named: refused rather than guessed', async () => {
  const second = await admin.network.networks.create({ name: 'public-2', 'router:external': true });
  try {
    await assert.rejects(
      reconcileExternalNetwork(os, spec(), signal),
      (err: unknown) =>
        DependencyError.is(err) && err.problem === 'Ambiguous' && /disableExternalNetwork/.test(err.message),
    );
  } finally {
    await admin.network.networks.delete(second.id);
  }
});

test('managed network, subnet and router: created once, adopted on the next run, torn down', async () => {
  const resourceName = 'ns1-alpha';
  const ext = await reconcileExternalNetwork(os, spec(), signal);
  const created: string[] = [];
  const ctx = {
    api: os,
    spec: spec(),
    resourceName,
    externalNetworkID: ext?.id,
    signal,
    onCreate: (what: string) => created.push(what),
  };
  const first = await reconcileNetwork(ctx);
  assert.deepEqual(created, ['network', 'subnet', 'router']);
  assert.equal(first.network?.name, networkName(resourceName));
  assert.deepEqual(first.network?.tags, ['capo-test']);
  assert.equal(first.network?.subnets?.[0]?.cidr, '10.6.0.0/24');
  assert.equal(first.router?.name, networkName(resourceName));
  assert.equal(first.router?.ips?.length, 1, 'the router gateway has an external address');

  const router = await os.network.routers.get(first.router.id);
  assert.equal(router.external_gateway_info?.network_id, ext?.id);
  const subnet = await os.network.subnets.get(first.network.subnets[0].id);
  assert.deepEqual(subnet.dns_nameservers, ['8.8.8.8']);
  const interfaces = await os.network.ports
    .list({ device_id: router.id, device_owner: 'network:router_interface' })
    .all();
  assert.equal(interfaces.length, 1);
  assert.equal(interfaces[0]!.fixed_ips[0]!.subnet_id, subnet.id);

  // A restart: everything is found by name, nothing is created twice.
  created.length = 0;
  const again = await reconcileNetwork(ctx);
  assert.deepEqual(created, []);
  assert.deepEqual(again, first);
  assert.equal((await os.network.networks.list({ name: networkName(resourceName) }).all()).length, 1);

  // dnsNameservers is the one mutable field of the managed subnet.
  await reconcileNetwork({
    ...ctx,
    spec: spec({ managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['1.1.1.1'] }] }),
  });
  assert.deepEqual((await os.network.subnets.get(subnet.id)).dns_nameservers, ['1.1.1.1']);

  const down = await deleteManagedNetwork(os, spec(), { resourceName, clusterName: 'alpha' }, signal);
  assert.ok(down.done, down.waitingFor);
  assert.equal((await os.network.networks.list({ name: networkName(resourceName) }).all()).length, 0);
  assert.equal((await os.network.routers.list({ name: networkName(resourceName) }).all()).length, 0);
});

test('teardown deletes only the ports its marks say it made; foreign ones are reported and the network waits', async () => {
  const resourceName = 'ns1-marks';
  const ext = await reconcileExternalNetwork(os, spec(), signal);
  const made = await reconcileNetwork({
    api: os,
    spec: spec({ managedSubnets: [{ cidr: '10.11.0.0/24' }] }),
    resourceName,
    externalNetworkID: ext?.id,
    signal,
  });
  const network_id = made.network!.id;
  // Ours: a port CAPO made (its description) and a bastion port left by a force-deleted bastion.
  const capoPort = await os.network.ports.create({
    network_id,
    name: 'marks-md-0-abcde-0',
    description: resourceDescription(resourceName),
  });
  const bastionPort = await os.network.ports.create({ network_id, name: 'marks-bastion-0123456789-0' });
  // Foreign: a user's port, a server's port and another project's router attached to the subnet.
  const userPort = await os.network.ports.create({ network_id, name: 'my-vip' });
  const serverPort = await admin.network.ports.create({
    network_id,
    name: 'marks-md-0-xyz-0',
    device_owner: 'compute:nova',
    device_id: '7c9a1d2e-0000-4000-8000-000000000001',
  });
  const otherRouter = await os.network.routers.create({ name: 'someone-elses' });
  // Their router on our subnet through a port of its own (the gateway address is our router's).
  const routerPort = await os.network.ports.create({ network_id, name: 'someone-elses-if' });
  const iface = await os.network.routers.addInterface(otherRouter.id, { port_id: routerPort.id });

  const blocked = await deleteManagedNetwork(os, spec(), { resourceName, clusterName: 'marks' }, signal);
  assert.equal(blocked.done, false);
  assert.deepEqual(
    blocked.foreign.map((p) => p.id).sort(),
    [userPort.id, serverPort.id, iface.port_id].sort(),
  );
  const owners = new Map(blocked.foreign.map((p) => [p.id, p.deviceOwner]));
  assert.equal(owners.get(serverPort.id), 'compute:nova');
  assert.equal(owners.get(iface.port_id), 'network:router_interface');
  assert.match(blocked.network ?? '', new RegExp(network_id));
  const left = (await os.network.ports.list({ network_id }).all()).map((p) => p.id);
  for (const id of [userPort.id, serverPort.id, iface.port_id]) assert.ok(left.includes(id), `${id} kept`);
  for (const id of [capoPort.id, bastionPort.id]) assert.ok(!left.includes(id), `${id} deleted`);
  assert.equal((await os.network.networks.get(network_id)).id, network_id, 'the network waits');

  // The user clears what is theirs: the teardown completes.
  await os.network.ports.delete(userPort.id);
  await admin.network.ports.delete(serverPort.id);
  await os.network.routers.removeInterface(otherRouter.id, { port_id: iface.port_id });
  await os.network.routers.delete(otherRouter.id);
  const down = await deleteManagedNetwork(os, spec(), { resourceName, clusterName: 'marks' }, signal);
  assert.ok(down.done, down.waitingFor);
  assert.deepEqual(down.foreign, []);
  assert.equal((await os.network.networks.list({ name: networkName(resourceName) }).all()).length, 0);
});

test('a bring-your-own network is resolved by filter and never deleted', async () => {
  const net = await os.network.networks.create({ name: 'byo-net' });
  const sub = await os.network.subnets.create({
    network_id: net.id,
    cidr: '10.7.0.0/24',
    ip_version: 4,
    name: 'byo-sub',
  });
  try {
    const byo = spec({ managedSubnets: undefined, network: { filter: { name: 'byo-net' } } });
    const out = await reconcileNetwork({
      api: os,
      spec: byo,
      resourceName: 'ns1-byo',
      externalNetworkID: undefined,
      signal,
    });
    assert.equal(out.network?.id, net.id);
    assert.deepEqual(
      out.network?.subnets?.map((s) => s.id),
      [sub.id],
    );
    assert.equal(out.router, undefined);
    const bySubnet = await reconcileNetwork({
      api: os,
      spec: spec({ managedSubnets: undefined, subnets: [{ filter: { name: 'byo-sub' } }] }),
      resourceName: 'ns1-byo',
      externalNetworkID: undefined,
      signal,
    });
    assert.equal(bySubnet.network?.id, net.id, 'the network comes from the subnet');
    const down = await deleteManagedNetwork(os, byo, { resourceName: 'ns1-byo', clusterName: 'byo' }, signal);
    assert.ok(down.done);
    assert.deepEqual(down.deleted, []);
    assert.equal((await os.network.networks.get(net.id)).id, net.id);
  } finally {
    await os.network.networks.delete(net.id);
  }
});

test('security groups: CAPO’s groups and rules, a steady state costs no write, a stray rule goes', async () => {
  const resourceName = 'ns1-sg';
  const ctx = {
    api: os,
    spec: spec(),
    resourceName,
    bastionEnabled: true,
    subnetCidrs: ['10.6.0.0/24'],
    signal,
  };
  const first = await reconcileSecurityGroups(ctx);
  assert.ok(first);
  assert.equal(first.controlPlane.name, securityGroupName(resourceName, 'controlplane'));
  assert.equal(first.worker.name, securityGroupName(resourceName, 'worker'));
  assert.equal(first.bastion?.name, securityGroupName(resourceName, 'bastion'));
  // Neutron's two default egress rules per group give way to CAPO's "Full open" ones.
  assert.equal(first.deleted, 6);

  const cp = await os.network.securityGroups.get(first.controlPlane.id);
  assert.deepEqual(cp.tags, ['capo-test']);
  const etcd = cp.security_group_rules.find((r) => r.port_range_min === 2379);
  assert.equal(etcd?.remote_group_id, cp.id);
  assert.equal(etcd?.port_range_max, 2380);
  const ssh = cp.security_group_rules.find((r) => r.port_range_min === 22);
  assert.equal(ssh?.remote_group_id, first.bastion?.id);

  const steady = await reconcileSecurityGroups(ctx);
  assert.equal(steady!.created + steady!.deleted, 0);

  const stray = await os.network.securityGroupRules.create({
    security_group_id: first.worker.id,
    direction: 'ingress',
    protocol: 'tcp',
    port_range_min: 8080,
    port_range_max: 8080,
  });
  const healed = await reconcileSecurityGroups(ctx);
  assert.equal(healed!.deleted, 1);
  assert.equal(healed!.created, 0);
  await assert.rejects(os.network.securityGroupRules.get(stray.id));

  // Disabling the bastion removes its group and the SSH rules.
  const noBastion = await reconcileSecurityGroups({ ...ctx, bastionEnabled: false });
  assert.equal(noBastion!.bastion, undefined);
  assert.equal(
    (await os.network.securityGroups.list({ name: securityGroupName(resourceName, 'bastion') }).all()).length,
    0,
  );
  const cpAfter = await os.network.securityGroups.get(first.controlPlane.id);
  assert.ok(!cpAfter.security_group_rules.some((r) => r.port_range_min === 22));

  const gone = await deleteSecurityGroups(os, resourceName, signal);
  assert.deepEqual(gone.remaining, []);
  assert.equal(
    (await os.network.securityGroups.list({ name: securityGroupName(resourceName, 'worker') }).all()).length,
    0,
  );
});

test('failure domains are Nova’s zones; controlPlaneAvailabilityZones or controlPlaneOmitAvailabilityZone restrict the control plane', async () => {
  assert.deepEqual(await reconcileFailureDomains(os, spec(), signal), { nova: { controlPlane: true } });
  const zones = [
    { zoneName: 'az1', zoneState: { available: true }, hosts: null },
    { zoneName: 'az2', zoneState: { available: true }, hosts: null },
    { zoneName: 'down', zoneState: { available: false }, hosts: null },
    { zoneName: 'internal', zoneState: { available: true }, hosts: null },
  ];
  assert.deepEqual(failureDomainsFrom(zones, { controlPlaneAvailabilityZones: ['az2'] }), {
    az1: { controlPlane: false },
    az2: { controlPlane: true },
  });
  // CAPO: omitting the zone leaves the control plane to the Nova scheduler; an explicit list wins.
  assert.deepEqual(failureDomainsFrom(zones, { controlPlaneOmitAvailabilityZone: true }), {
    az1: { controlPlane: false },
    az2: { controlPlane: false },
  });
  assert.deepEqual(
    failureDomainsFrom(zones, {
      controlPlaneOmitAvailabilityZone: true,
      controlPlaneAvailabilityZones: ['az1'],
    }),
    { az1: { controlPlane: true }, az2: { controlPlane: false } },
  );
});
