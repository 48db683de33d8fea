/** Neutron v2.0 through `client.network`, against the emulator or the real cloud of OS_CLOUD. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRegistry } from '../../../lib/metrics.ts';
import type { OpenStackClient } from '../../client.ts';
import { isConflict, isNotFound, isPreconditionFailed, OpenStackHttpError } from '../../core/errors.ts';
import { requestCount } from '../../core/testing/metrics.ts';
import { openClientTarget, unique, type ClientTarget } from '../../core/testing/target.ts';
import type { Network } from './networks.ts';
import { portQuery } from './ports.ts';
import type { Subnet } from './subnets.ts';
import { Cleanup, externalNetwork, scratchNetwork } from './testing/fixtures.ts';

describe('network v2', () => {
  let t: ClientTarget;
  let os: OpenStackClient;
  const registry = createRegistry({ defaultMetrics: false });
  const cleanup = new Cleanup();
  let net: Network;
  let subnet: Subnet;
  let projectId: string;

  before(async () => {
    t = await openClientTarget();
    os = await t.client(t.demo, { registry });
    projectId = (await os.session.token()).token.project!.id;
    ({ network: net, subnet } = await scratchNetwork(os, cleanup, 'client-netv2'));
  });
  after(async () => {
    await cleanup.run();
    await t?.close();
  });

  it('creates, reads, updates (If-Match) and deletes a network', async () => {
    const name = unique('client-net');
    const created = await os.network.networks.create({ name, description: 'first' });
    try {
      assert.equal(created.status, 'ACTIVE');
      assert.equal(created.project_id, projectId);
      const got = await os.network.networks.get(created.id);
      assert.equal(got.name, name);
      const updated = await os.network.networks.update(
        created.id,
        { description: 'second' },
        { ifRevision: got.revision_number },
      );
      assert.equal(updated.description, 'second');
      assert.ok(updated.revision_number > got.revision_number);
      const stale = await os.network.networks
        .update(created.id, { description: 'third' }, { ifRevision: got.revision_number })
        .catch((e: unknown) => e);
      assert.ok(isPreconditionFailed(stale), String(stale));
      assert.equal(stale.kind, 'PreconditionFailed');
      const byName = await os.network.networks.list({ name }).all();
      assert.deepEqual(
        byName.map((n) => n.id),
        [created.id],
      );
    } finally {
      await os.network.networks.delete(created.id);
    }
    await assert.rejects(os.network.networks.get(created.id), isNotFound);
  });

  it('pages through networks and ports, following every next link', async () => {
    const tag = unique('client-page');
    const local = new Cleanup();
    try {
      const nets: string[] = [];
      for (let i = 0; i < 3; i++) {
        const n = await os.network.networks.create({ name: `${tag}-${i}` });
        local.add(`network ${n.id}`, () => os.network.networks.delete(n.id));
        await os.network.tags.add('networks', n.id, tag);
        nets.push(n.id);
      }
      const pages = [];
      for await (const page of os.network.networks.list({ tags: [tag], limit: 2 }).pages()) pages.push(page);
      assert.equal(pages.length, 2);
      assert.deepEqual(pages.flatMap((p) => p.items.map((n) => n.id)).sort(), [...nets].sort());

      const ports = await os.network.ports.createBulk(
        [0, 1, 2].map((i) => ({ network_id: net.id, name: `${tag}-port-${i}` })),
      );
      for (const p of ports) {
        local.add(`port ${p.id}`, () => os.network.ports.delete(p.id));
        await os.network.tags.add('ports', p.id, tag);
      }
      assert.deepEqual(
        ports.map((p) => p.name),
        [0, 1, 2].map((i) => `${tag}-port-${i}`),
      );
      const before = await requestCount(registry, 'port_list');
      const listed = [];
      for await (const p of os.network.ports.list({ network_id: net.id, tags: [tag], limit: 1 }))
        listed.push(p);
      assert.equal(listed.length, 3);
      // Three pages of one, plus the empty page Neutron's last next link leads to (or not): at least three calls.
      assert.ok((await requestCount(registry, 'port_list')) - before >= 3);
      assert.equal(
        (await os.network.ports.list({ network_id: net.id, tags: [tag], limit: 1 }).all({ limit: 2 })).length,
        2,
      );
    } finally {
      await local.run();
    }
  });

  it('filters ports by device_id, fixed IP, tags and revision-checked updates', async () => {
    const port = await os.network.ports.create({
      network_id: net.id,
      name: unique('client-port'),
      fixed_ips: [{ subnet_id: subnet.id }],
    });
    try {
      await os.network.tags.replace('ports', port.id, ['client-a']);
      const ip = port.fixed_ips[0]!.ip_address;
      assert.equal(port.status, 'DOWN');
      assert.equal(port.device_id, '');
      const byIp = await os.network.ports
        .list({ fixed_ips: [{ ip_address: ip, subnet_id: subnet.id }] })
        .all();
      assert.deepEqual(
        byIp.map((p) => p.id),
        [port.id],
      );
      const device = unique('device');
      const current = await os.network.ports.get(port.id);
      const updated = await os.network.ports.update(
        port.id,
        { device_id: device, description: 'owned' },
        { ifRevision: current.revision_number },
      );
      assert.equal(updated.device_id, device);
      await assert.rejects(
        os.network.ports.update(port.id, { description: 'late' }, { ifRevision: current.revision_number }),
        (e: unknown) => isPreconditionFailed(e) && e.errorType === 'RevisionNumberConstraintFailed',
      );
      assert.deepEqual(
        (await os.network.ports.list({ device_id: device }).all()).map((p) => p.id),
        [port.id],
      );
      assert.deepEqual(
        (await os.network.ports.list({ network_id: net.id, 'tags-any': ['client-a', 'client-b'] }).all()).map(
          (p) => p.id,
        ),
        [port.id],
      );
      assert.deepEqual(
        await os.network.ports
          .list({ network_id: net.id, 'not-tags': ['client-a'], device_id: device })
          .all(),
        [],
      );
    } finally {
      await os.network.ports.delete(port.id);
    }
  });

  it('sends fixed_ips filters in the key=value form Neutron reads', () => {
    assert.deepEqual(
      portQuery({ fixed_ips: [{ ip_address: '10.0.0.5' }, { subnet_id: 's' }], tags: ['a', 'b'] }),
      {
        tags: 'a,b',
        fixed_ips: ['ip_address=10.0.0.5', 'subnet_id=s'],
      },
    );
  });

  it('filters subnets by IPv6 address and RA modes', async () => {
    const v6 = await os.network.subnets.create({
      network_id: net.id,
      name: unique('client-v6'),
      ip_version: 6,
      cidr: 'fd00:6e7::/64',
      ipv6_address_mode: 'slaac',
      ipv6_ra_mode: 'slaac',
    });
    try {
      const slaac = await os.network.subnets
        .list({ network_id: net.id, ipv6_address_mode: 'slaac', ipv6_ra_mode: 'slaac' })
        .all();
      assert.deepEqual(
        slaac.map((s) => s.id),
        [v6.id],
      );
      const stateful = await os.network.subnets
        .list({ network_id: net.id, ipv6_address_mode: 'dhcpv6-stateful' })
        .all();
      assert.deepEqual(stateful, []);
    } finally {
      await os.network.subnets.delete(v6.id);
    }
  });

  it('creates ports in bulk all or nothing', async () => {
    const first = await os.network.ports.create({ network_id: net.id, name: unique('client-bulk') });
    try {
      const taken = first.fixed_ips[0]!.ip_address;
      const name = unique('client-bulk-batch');
      const err = await os.network.ports
        .createBulk([
          { network_id: net.id, name },
          { network_id: net.id, name, fixed_ips: [{ subnet_id: subnet.id, ip_address: taken }] },
        ])
        .catch((e: unknown) => e);
      assert.ok(isConflict(err), String(err));
      assert.equal(err.errorType, 'IpAddressAlreadyAllocated');
      assert.deepEqual(await os.network.ports.list({ network_id: net.id, name }).all(), []);
      assert.deepEqual(await os.network.ports.createBulk([]), []);
    } finally {
      await os.network.ports.delete(first.id);
    }
  });

  it('adds, replaces, checks and removes tags', async () => {
    const id = net.id;
    await os.network.tags.add('networks', id, 'one');
    await os.network.tags.add('networks', id, 'one');
    assert.equal(await os.network.tags.has('networks', id, 'one'), true);
    assert.equal(await os.network.tags.has('networks', id, 'two'), false);
    assert.deepEqual((await os.network.tags.replace('networks', id, ['two', 'three'])).sort(), [
      'three',
      'two',
    ]);
    assert.deepEqual((await os.network.tags.list('networks', id)).sort(), ['three', 'two']);
    await os.network.tags.remove('networks', id, 'two');
    await assert.rejects(os.network.tags.remove('networks', id, 'two'), isNotFound);
    assert.deepEqual(await os.network.tags.list('networks', id), ['three']);
    await os.network.tags.removeAll('networks', id);
    assert.deepEqual((await os.network.networks.get(id)).tags, []);
  });

  it('builds a trunk and adds, reads and removes subports', async () => {
    const local = new Cleanup();
    try {
      const [parent, sub1, sub2] = await os.network.ports.createBulk(
        ['parent', 'sub1', 'sub2'].map((n) => ({ network_id: net.id, name: unique(`client-trunk-${n}`) })),
      );
      for (const p of [parent!, sub1!, sub2!]) local.add(`port ${p.id}`, () => os.network.ports.delete(p.id));
      const trunk = await os.network.trunks.create({
        port_id: parent!.id,
        name: unique('client-trunk'),
        sub_ports: [{ port_id: sub1!.id, segmentation_type: 'vlan', segmentation_id: 101 }],
      });
      local.add(`trunk ${trunk.id}`, () => os.network.trunks.delete(trunk.id));
      assert.equal(trunk.sub_ports.length, 1);
      const added = await os.network.trunks.addSubports(trunk.id, [
        { port_id: sub2!.id, segmentation_type: 'vlan', segmentation_id: 102 },
      ]);
      assert.equal(added.id, trunk.id);
      assert.deepEqual(added.sub_ports.map((s) => s.segmentation_id).sort(), [101, 102]);
      const subs = await os.network.trunks.getSubports(trunk.id);
      assert.deepEqual(subs.map((s) => s.port_id).sort(), [sub1!.id, sub2!.id].sort());
      const parentNow = await os.network.ports.get(parent!.id);
      assert.equal(parentNow.trunk_details?.trunk_id, trunk.id);
      await assert.rejects(
        os.network.trunks.addSubports(trunk.id, [
          { port_id: sub1!.id, segmentation_type: 'vlan', segmentation_id: 103 },
        ]),
        isConflict,
      );
      const removed = await os.network.trunks.removeSubports(trunk.id, [{ port_id: sub1!.id }]);
      assert.deepEqual(
        removed.sub_ports.map((s) => s.port_id),
        [sub2!.id],
      );
      assert.deepEqual(
        (await os.network.trunks.list({ port_id: parent!.id }).all()).map((x) => x.id),
        [trunk.id],
      );
    } finally {
      await local.run();
    }
  });

  it('manages security groups and rules', async () => {
    const sg = await os.network.securityGroups.create({ name: unique('client-sg'), description: 'test' });
    try {
      assert.ok(sg.security_group_rules.every((r) => r.direction === 'egress'));
      const rule = await os.network.securityGroupRules.create({
        security_group_id: sg.id,
        direction: 'ingress',
        protocol: 'tcp',
        port_range_min: 22,
        port_range_max: 22,
        remote_ip_prefix: '0.0.0.0/0',
      });
      assert.equal(rule.ethertype, 'IPv4');
      const dup = await os.network.securityGroupRules
        .create({
          security_group_id: sg.id,
          direction: 'ingress',
          protocol: 'tcp',
          port_range_min: 22,
          port_range_max: 22,
          remote_ip_prefix: '0.0.0.0/0',
        })
        .catch((e: unknown) => e);
      assert.ok(isConflict(dup), String(dup));
      assert.match(dup.message, new RegExp(rule.id));
      const [r1, r2] = await os.network.securityGroupRules.createBulk([
        {
          security_group_id: sg.id,
          direction: 'ingress',
          protocol: 'udp',
          port_range_min: 53,
          port_range_max: 53,
        },
        { security_group_id: sg.id, direction: 'ingress', protocol: 'icmp' },
      ]);
      assert.deepEqual([r1!.protocol, r2!.protocol], ['udp', 'icmp']);
      const ingress = await os.network.securityGroupRules
        .list({ security_group_id: sg.id, direction: 'ingress' })
        .all();
      assert.deepEqual(ingress.map((r) => r.id).sort(), [rule.id, r1!.id, r2!.id].sort());
      await os.network.securityGroupRules.delete(rule.id);
      await assert.rejects(os.network.securityGroupRules.get(rule.id), isNotFound);
      const renamed = await os.network.securityGroups.update(sg.id, { description: 'renamed' });
      assert.equal(renamed.description, 'renamed');
      assert.deepEqual(
        (await os.network.securityGroups.list({ name: sg.name }).all()).map((g) => g.id),
        [sg.id],
      );
    } finally {
      await os.network.securityGroups.delete(sg.id);
    }
  });

  it('routes a subnet to an external network and moves a floating IP between ports', async (s) => {
    const local = new Cleanup();
    try {
      const ext = await externalNetwork(t, os, local);
      if (!ext) return s.skip('no external network and no admin cloud (OS_CLOUD_ADMIN) to create one');
      const router = await os.network.routers.create({
        name: unique('client-router'),
        external_gateway_info: { network_id: ext.id },
      });
      local.add(`router ${router.id}`, () => os.network.routers.delete(router.id));
      assert.equal(router.external_gateway_info?.network_id, ext.id);
      const iface = await os.network.routers.addInterface(router.id, { subnet_id: subnet.id });
      local.add(`router interface ${iface.port_id}`, () =>
        os.network.routers.removeInterface(router.id, { subnet_id: subnet.id }),
      );
      assert.equal(iface.subnet_id, subnet.id);
      assert.equal((await os.network.ports.get(iface.port_id)).device_id, router.id);

      const [a, b] = await os.network.ports.createBulk(
        ['a', 'b'].map((n) => ({ network_id: net.id, name: unique(`client-fip-${n}`) })),
      );
      for (const p of [a!, b!]) local.add(`port ${p.id}`, () => os.network.ports.delete(p.id));
      const fip = await os.network.floatingIps.create({ floating_network_id: ext.id, port_id: a!.id });
      local.add(`floating ip ${fip.id}`, () => os.network.floatingIps.delete(fip.id));
      assert.equal(fip.port_id, a!.id);
      assert.equal(fip.fixed_ip_address, a!.fixed_ips[0]!.ip_address);
      assert.deepEqual(
        (await os.network.floatingIps.list({ port_id: a!.id }).all()).map((f) => f.id),
        [fip.id],
      );
      assert.deepEqual(
        (await os.network.floatingIps.list({ floating_ip_address: fip.floating_ip_address }).all()).map(
          (f) => f.id,
        ),
        [fip.id],
      );
      const loose = await os.network.floatingIps.disassociate(fip.id);
      assert.equal(loose.port_id, null);
      const moved = await os.network.floatingIps.associate(fip.id, b!.id);
      assert.equal(moved.port_id, b!.id);
      assert.deepEqual(await os.network.floatingIps.list({ port_id: a!.id }).all(), []);
      await os.network.floatingIps.delete(fip.id);

      await os.network.routers.removeInterface(router.id, { subnet_id: subnet.id });
      const cleared = await os.network.routers.clearGateway(router.id);
      assert.equal(cleared.external_gateway_info, null);
      const gw = await os.network.routers.setGateway(router.id, { network_id: ext.id });
      assert.equal(gw.external_gateway_info?.network_id, ext.id);
    } finally {
      await local.run();
    }
  });

  it('reads extensions once per client and answers has()', async () => {
    const list = await os.network.extensions.list();
    assert.ok(list.some((e) => e.alias === 'trunk'));
    const before = await requestCount(registry, 'network_extension_list');
    assert.equal(await os.network.extensions.has('trunk'), true);
    assert.equal(await os.network.extensions.has('revision-if-match'), true);
    assert.equal(await os.network.extensions.has('no-such-extension'), false);
    assert.equal((await requestCount(registry, 'network_extension_list')) - before, 1);
  });

  it('reads the project quota with and without usage', async () => {
    const quota = await os.network.quotas.get(projectId);
    assert.ok(typeof quota.port === 'number');
    const details = await os.network.quotas.getDetails(projectId);
    assert.ok(details.network!.used >= 1);
    assert.equal(details.network!.limit, quota.network);
  });

  it('reports a missing object in Neutron’s words', async () => {
    const err = await os.network.ports.get('00000000-0000-0000-0000-000000000000').catch((e: unknown) => e);
    assert.ok(OpenStackHttpError.is(err));
    assert.equal(err.kind, 'NotFound');
    assert.equal(err.errorType, 'PortNotFound');
    assert.match(err.message, /GET .*\/v2\.0\/ports\/0{8}-.* → 404 NotFound/);
    assert.ok((await requestCount(registry, 'port_get', 'openstack_api_request_errors_total')) >= 1);
  });
});
