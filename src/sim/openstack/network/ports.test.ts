import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startTestCloud, type TestCloud } from '../testing/harness.ts';
import { portList } from './lists.ts';
import type { NeutronState } from './state.ts';
import { neutron, neutronError, type Neutron } from './testing/neutron.ts';

describe('neutron: subnets, IPAM and ports', () => {
  let t: TestCloud;
  let n: Neutron;
  before(async () => {
    t = await startTestCloud();
    n = neutron(t);
  });
  after(async () => t.close());

  it('derives gateway and pools, honours explicit pools, refuses overlapping CIDRs', async () => {
    const { net, subnet } = await n.network('demo', '10.1.0.0/24');
    assert.equal(subnet.gateway_ip, '10.1.0.1');
    assert.deepEqual(subnet.allocation_pools, [{ start: '10.1.0.2', end: '10.1.0.254' }]);
    assert.equal(subnet.revision_number, 0);
    neutronError(
      await n.post(
        '/v2.0/subnets',
        { subnet: { network_id: net.id, cidr: '10.1.0.128/25', ip_version: 4 } },
        'demo',
      ),
      400,
      'InvalidInput',
      `Invalid input for operation: Requested subnet with cidr: 10.1.0.128/25 for network: ${net.id} overlaps with another subnet.`,
    );
    const pooled = await n.post(
      '/v2.0/subnets',
      {
        subnet: {
          network_id: net.id,
          cidr: '10.2.0.0/24',
          ip_version: 4,
          allocation_pools: [{ start: '10.2.0.10', end: '10.2.0.20' }],
        },
      },
      'demo',
    );
    assert.equal(pooled.status, 201);
    assert.deepEqual(pooled.body.subnet.allocation_pools, [{ start: '10.2.0.10', end: '10.2.0.20' }]);
    neutronError(
      await n.post(
        '/v2.0/subnets',
        { subnet: { network_id: net.id, cidr: '10.3.0.5/24', ip_version: 4 } },
        'demo',
      ),
      400,
      'HTTPBadRequest',
      "Invalid input for cidr. Reason: '10.3.0.5/24' isn't a recognized IP subnet cidr, '10.3.0.0/24' is recommended.",
    );
    neutronError(
      await n.post(
        '/v2.0/subnets',
        {
          subnet: {
            network_id: net.id,
            cidr: '10.4.0.0/24',
            ip_version: 4,
            allocation_pools: [{ start: '10.4.0.1', end: '10.4.0.9' }],
          },
        },
        'demo',
      ),
      409,
      'GatewayConflictWithAllocationPools',
    );
  });

  it('allocates the lowest free address, reuses released ones, and honours explicit requests', async () => {
    const { net, subnet } = await n.network('demo', '10.5.0.0/24');
    const a = await n.port('demo', { network_id: net.id });
    const b = await n.port('demo', { network_id: net.id });
    assert.deepEqual(a.fixed_ips, [{ subnet_id: subnet.id, ip_address: '10.5.0.2' }]);
    assert.equal(b.fixed_ips[0].ip_address, '10.5.0.3');
    const fixed = await n.port('demo', { network_id: net.id, fixed_ips: [{ ip_address: '10.5.0.50' }] });
    assert.deepEqual(fixed.fixed_ips, [{ subnet_id: subnet.id, ip_address: '10.5.0.50' }]);
    await n.del(`/v2.0/ports/${a.id}`, 'demo');
    const c = await n.port('demo', { network_id: net.id, fixed_ips: [{ subnet_id: subnet.id }] });
    assert.equal(c.fixed_ips[0].ip_address, '10.5.0.2', 'a released address is handed out again');
    neutronError(
      await n.post(
        '/v2.0/ports',
        { port: { network_id: net.id, fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.5.0.50' }] } },
        'demo',
      ),
      409,
      'IpAddressAlreadyAllocated',
      `IP address 10.5.0.50 already allocated in subnet ${subnet.id}`,
    );
    neutronError(
      await n.post(
        '/v2.0/ports',
        { port: { network_id: net.id, fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.99.0.5' }] } },
        'demo',
      ),
      400,
      'InvalidIpForSubnet',
      'IP address 10.99.0.5 is not a valid IP for the specified subnet.',
    );
    neutronError(
      await n.post(
        '/v2.0/ports',
        { port: { network_id: net.id, fixed_ips: [{ ip_address: '10.99.0.5' }] } },
        'demo',
      ),
      400,
      'InvalidIpForNetwork',
    );
    neutronError(
      await n.post(
        '/v2.0/ports',
        { port: { network_id: net.id, fixed_ips: [{ subnet_id: subnet.id, ip_address: '10.5.0.255' }] } },
        'demo',
      ),
      400,
      'InvalidIpForSubnet',
      undefined,
    );
  });

  it('fails with IpAddressGenerationFailure when the pool is exhausted', async () => {
    const { net } = await n.network('demo', '10.6.0.0/29');
    for (let i = 0; i < 5; i++) await n.port('demo', { network_id: net.id });
    neutronError(
      await n.post('/v2.0/ports', { port: { network_id: net.id } }, 'demo'),
      409,
      'IpAddressGenerationFailure',
      `No more IP addresses available on network ${net.id}.`,
    );
  });

  it('refuses a MAC already used on the network, and unknown networks', async () => {
    const { net } = await n.network('demo', '10.7.0.0/24');
    const a = await n.port('demo', { network_id: net.id, mac_address: 'FA:16:3E:00:00:01' });
    assert.equal(a.mac_address, 'fa:16:3e:00:00:01');
    neutronError(
      await n.post('/v2.0/ports', { port: { network_id: net.id, mac_address: 'fa:16:3e:00:00:01' } }, 'demo'),
      409,
      'MacAddressInUse',
      `Unable to complete operation for network ${net.id}. The mac address fa:16:3e:00:00:01 is in use.`,
    );
    const missing = crypto.randomUUID();
    neutronError(
      await n.post('/v2.0/ports', { port: { network_id: missing } }, 'demo'),
      404,
      'NetworkNotFound',
      `Network ${missing} could not be found.`,
    );
  });

  it('creates bulk ports all or nothing, and fails bulk creates on SLAAC networks as Zed does', async () => {
    const { net, subnet } = await n.network('demo', '10.8.0.0/24');
    const bulk = await n.post(
      '/v2.0/ports',
      {
        ports: [
          { network_id: net.id, name: 'b1' },
          { network_id: net.id, name: 'b2' },
        ],
      },
      'demo',
    );
    assert.equal(bulk.status, 201);
    assert.deepEqual(
      bulk.body.ports.map((p: { name: string }) => p.name),
      ['b1', 'b2'],
    );
    const taken = bulk.body.ports[0].fixed_ips[0].ip_address;
    neutronError(
      await n.post(
        '/v2.0/ports',
        {
          ports: [
            { network_id: net.id, name: 'ok' },
            { network_id: net.id, fixed_ips: [{ subnet_id: subnet.id, ip_address: taken }] },
          ],
        },
        'demo',
      ),
      409,
      'IpAddressAlreadyAllocated',
    );
    assert.equal((await n.get(`/v2.0/ports?network_id=${net.id}&name=ok`, 'demo')).body.ports.length, 0);
    const next = await n.port('demo', { network_id: net.id });
    assert.equal(next.fixed_ips[0].ip_address, '10.8.0.4', 'the rolled-back port released its address');

    const v6 = (await n.post('/v2.0/networks', { network: { name: 'slaac' } }, 'demo')).body.network;
    const slaac = {
      network_id: v6.id,
      cidr: 'fd00:9::/64',
      ip_version: 6,
      ipv6_address_mode: 'slaac',
      ipv6_ra_mode: 'slaac',
    };
    assert.equal((await n.post('/v2.0/subnets', { subnet: slaac }, 'demo')).status, 201);
    neutronError(
      await n.post('/v2.0/ports', { ports: [{ network_id: v6.id }, { network_id: v6.id }] }, 'demo'),
      500,
      'HTTPInternalServerError',
      'Request Failed: internal server error while processing your request.',
    );
  });

  it('gives SLAAC subnets EUI-64 addresses and their /64 defaults', async () => {
    const net = (await n.post('/v2.0/networks', { network: { name: 'v6' } }, 'demo')).body.network;
    const sub = await n.post(
      '/v2.0/subnets',
      {
        subnet: {
          network_id: net.id,
          cidr: 'fd00:10::/64',
          ip_version: 6,
          ipv6_address_mode: 'slaac',
          ipv6_ra_mode: 'slaac',
        },
      },
      'demo',
    );
    assert.equal(sub.status, 201);
    assert.equal(sub.body.subnet.gateway_ip, 'fd00:10::');
    assert.deepEqual(sub.body.subnet.allocation_pools, [
      { start: 'fd00:10::1', end: 'fd00:10::ffff:ffff:ffff:ffff' },
    ]);
    const port = await n.port('demo', { network_id: net.id, mac_address: 'fa:16:3e:5e:af:a1' });
    assert.deepEqual(port.fixed_ips, [
      { subnet_id: sub.body.subnet.id, ip_address: 'fd00:10::f816:3eff:fe5e:afa1' },
    ]);
  });

  it('gives ports the project’s default security group, created on first use', async () => {
    const { net } = await n.network('alt_demo', '10.9.0.0/24');
    const port = await n.port('alt_demo', { network_id: net.id });
    const groups = await n.get('/v2.0/security-groups?name=default', 'alt_demo');
    assert.equal(groups.body.security_groups.length, 1);
    const def = groups.body.security_groups[0];
    assert.deepEqual(port.security_groups, [def.id]);
    assert.equal(def.security_group_rules.length, 4);
    const noSecurity = await n.port('alt_demo', { network_id: net.id, port_security_enabled: false });
    assert.deepEqual(noSecurity.security_groups, []);
    neutronError(
      await n.post(
        '/v2.0/ports',
        { port: { network_id: net.id, port_security_enabled: false, security_groups: [def.id] } },
        'alt_demo',
      ),
      400,
      'PortSecurityAndIPRequiredForSecurityGroups',
    );
  });

  it('stores allowed address pairs with the port’s MAC by default, only with port security', async () => {
    const { net } = await n.network('demo', '10.18.0.0/24');
    const port = await n.port('demo', {
      network_id: net.id,
      allowed_address_pairs: [{ ip_address: '10.18.0.200/32' }],
    });
    assert.deepEqual(port.allowed_address_pairs, [
      { ip_address: '10.18.0.200/32', mac_address: port.mac_address },
    ]);
    neutronError(
      await n.put(`/v2.0/ports/${port.id}`, { port: { port_security_enabled: false } }, 'demo'),
      409,
      'PortSecurityPortHasSecurityGroup',
    );
    neutronError(
      await n.post(
        '/v2.0/ports',
        {
          port: {
            network_id: net.id,
            port_security_enabled: false,
            allowed_address_pairs: [{ ip_address: '10.18.0.9' }],
          },
        },
        'demo',
      ),
      409,
      'AddressPairAndPortSecurityRequired',
      'Port Security must be enabled in order to have allowed address pairs on a port.',
    );
  });

  it('updates fixed IPs, keeping the address of a bare subnet_id entry', async () => {
    const { net, subnet } = await n.network('demo', '10.10.0.0/24');
    const port = await n.port('demo', { network_id: net.id });
    const keep = await n.put(
      `/v2.0/ports/${port.id}`,
      { port: { fixed_ips: [{ subnet_id: subnet.id }] } },
      'demo',
    );
    assert.deepEqual(keep.body.port.fixed_ips, port.fixed_ips);
    const moved = await n.put(
      `/v2.0/ports/${port.id}`,
      { port: { fixed_ips: [{ ip_address: '10.10.0.77' }] } },
      'demo',
    );
    assert.deepEqual(moved.body.port.fixed_ips, [{ subnet_id: subnet.id, ip_address: '10.10.0.77' }]);
    const other = await n.port('demo', {
      network_id: net.id,
      fixed_ips: [{ ip_address: port.fixed_ips[0].ip_address }],
    });
    assert.equal(other.fixed_ips[0].ip_address, port.fixed_ips[0].ip_address, 'the old address was released');
  });

  it('keeps binding attributes for admins and turns a bound port ACTIVE', async () => {
    const { net } = await n.network('demo', '10.11.0.0/24');
    const port = await n.port('demo', { network_id: net.id });
    assert.equal(port.status, 'DOWN');
    assert.equal('binding:host_id' in port, false);
    assert.equal(port['binding:vnic_type'], 'normal');
    neutronError(
      await n.put(`/v2.0/ports/${port.id}`, { port: { 'binding:host_id': 'compute-1' } }, 'demo'),
      403,
      'PolicyNotAuthorized',
      '(rule:update_port and rule:update_port:binding:host_id) is disallowed by policy',
    );
    const bound = await n.put(`/v2.0/ports/${port.id}`, {
      port: { 'binding:host_id': 'compute-1', device_owner: 'compute:nova', device_id: crypto.randomUUID() },
    });
    assert.equal(bound.status, 200);
    assert.equal(bound.body.port['binding:vif_type'], 'ovs');
    assert.equal(bound.body.port['binding:vif_details'].port_filter, true);
    const active = await eventually(async () => {
      const r = await n.get(`/v2.0/ports/${port.id}`);
      return r.body.port.status === 'ACTIVE' ? r.body.port : undefined;
    });
    assert.equal(active.revision_number, bound.body.port.revision_number + 1);
    const unbound = await n.put(`/v2.0/ports/${port.id}`, {
      port: { 'binding:host_id': '', device_owner: '', device_id: '' },
    });
    assert.equal(unbound.body.port.status, 'DOWN');
    assert.equal(unbound.body.port['binding:vif_type'], 'unbound');
    assert.deepEqual(unbound.body.port['binding:vif_details'], {});
  });

  it('filters ports by fixed IP, device, id and status, and picks fields', async () => {
    const { net, subnet } = await n.network('demo', '10.12.0.0/24');
    const device = crypto.randomUUID();
    const a = await n.port('demo', {
      network_id: net.id,
      device_id: device,
      device_owner: 'compute:nova',
      name: 'fa',
    });
    const b = await n.port('demo', { network_id: net.id, name: 'fb' });
    const ip = a.fixed_ips[0].ip_address;
    const ids = (r: { body: { ports: { id: string }[] } }) => r.body.ports.map((p) => p.id).sort();
    assert.deepEqual(ids(await n.get(`/v2.0/ports?fixed_ips=ip_address%3D${ip}`, 'demo')), [a.id]);
    assert.deepEqual(
      ids(await n.get(`/v2.0/ports?fixed_ips=subnet_id%3D${subnet.id}`, 'demo')),
      [a.id, b.id].sort(),
    );
    assert.deepEqual(
      ids(
        await n.get(
          `/v2.0/ports?fixed_ips=ip_address_substr%3D${ip.split('.').slice(0, 3).join('.')}.&network_id=${net.id}`,
          'demo',
        ),
      ),
      [a.id, b.id].sort(),
    );
    assert.deepEqual(ids(await n.get(`/v2.0/ports?device_id=${device}`, 'demo')), [a.id]);
    assert.deepEqual(
      ids(await n.get(`/v2.0/ports?network_id=${net.id}&device_id=`, 'demo')),
      [b.id],
      'empty-string filtering',
    );
    assert.deepEqual(ids(await n.get(`/v2.0/ports?id=${a.id}&id=${b.id}`, 'demo')), [a.id, b.id].sort());
    assert.deepEqual(
      ids(await n.get(`/v2.0/ports?network_id=${net.id}&status=DOWN&device_owner=compute:nova`, 'demo')),
      [a.id],
    );
    const fields = await n.get(`/v2.0/ports?id=${a.id}&fields=id&fields=mac_address`, 'demo');
    assert.deepEqual(fields.body.ports, [{ id: a.id, mac_address: a.mac_address }]);
    const one = await n.get(`/v2.0/ports/${a.id}?fields=name`, 'demo');
    assert.deepEqual(one.body.port, { name: 'fa' });
  });

  it('finds ports by name through an index that follows renames (PUT and the admin state API)', async () => {
    const { net } = await n.network('demo', '10.13.0.0/24');
    const a = await n.port('demo', { network_id: net.id, name: 'by-name-a' });
    await n.port('demo', { network_id: net.id, name: 'by-name-b' });
    const ids = (r: { body: { ports: { id: string }[] } }) => r.body.ports.map((p) => p.id);
    assert.deepEqual(ids(await n.get('/v2.0/ports?name=by-name-a', 'demo')), [a.id]);
    // The list looks only at the ports of that name, not at every port of the cloud (CAPO and
    // kuryr look their ports up by name: a scan per lookup is quadratic in the machines).
    const state = (t.cloud.network as unknown as { state: NeutronState }).state;
    const named = (name: string) => [
      ...(portList(state, { projectId: '', isAdmin: true }).candidates!(new Map([['name', [name]]])) ?? []),
    ];
    assert.deepEqual(named('by-name-a'), [a.id]);

    await n.put(`/v2.0/ports/${a.id}`, { port: { name: 'by-name-c' } }, 'demo');
    assert.deepEqual(ids(await n.get('/v2.0/ports?name=by-name-a', 'demo')), []);
    assert.deepEqual(ids(await n.get('/v2.0/ports?name=by-name-c', 'demo')), [a.id]);
    const forced = await fetch(`${t.url}/_sim/state/neutron/port/${a.id}`, {
      method: 'POST',
      body: JSON.stringify({ name: 'by-name-d' }),
    });
    assert.equal(forced.status, 204);
    assert.deepEqual(named('by-name-c'), []);
    assert.deepEqual(ids(await n.get('/v2.0/ports?name=by-name-d', 'demo')), [a.id]);
  });

  it('pages with absolute next and previous links, forwards and back', async () => {
    const { net } = await n.network('demo', '10.13.0.0/24');
    const made = (
      await n.post(
        '/v2.0/ports',
        { ports: [1, 2, 3, 4, 5].map((i) => ({ network_id: net.id, name: `pg-${i}` })) },
        'demo',
      )
    ).body.ports;
    const sorted = made.map((p: { id: string }) => p.id).sort();
    const base = t.cloud.serviceUrl('neutron');
    const first = await n.get(`/v2.0/ports?network_id=${net.id}&limit=2`, 'demo');
    assert.deepEqual(
      first.body.ports.map((p: { id: string }) => p.id),
      sorted.slice(0, 2),
    );
    assert.deepEqual(first.body.ports_links, [
      { rel: 'next', href: `${base}/v2.0/ports?network_id=${net.id}&limit=2&marker=${sorted[1]}` },
      {
        rel: 'previous',
        href: `${base}/v2.0/ports?network_id=${net.id}&limit=2&marker=${sorted[0]}&page_reverse=True`,
      },
    ]);
    const seen: string[] = [];
    let href: string | undefined = first.body.ports_links[0].href;
    seen.push(...first.body.ports.map((p: { id: string }) => p.id));
    while (href) {
      const page: any = await n.get(href.slice(base.length), 'demo');
      seen.push(...page.body.ports.map((p: { id: string }) => p.id));
      href = page.body.ports_links.find((l: { rel: string }) => l.rel === 'next')?.href;
    }
    assert.deepEqual(seen, sorted);
    const back = await n.get(
      `/v2.0/ports?network_id=${net.id}&limit=2&marker=${sorted[4]}&page_reverse=True`,
      'demo',
    );
    assert.deepEqual(
      back.body.ports.map((p: { id: string }) => p.id),
      sorted.slice(2, 4),
    );
    const last = await n.get(`/v2.0/ports?network_id=${net.id}&limit=2&page_reverse=True`, 'demo');
    assert.deepEqual(
      last.body.ports.map((p: { id: string }) => p.id),
      sorted.slice(3, 5),
    );
    const byName = await n.get(
      `/v2.0/ports?network_id=${net.id}&sort_key=name&sort_dir=desc&limit=2`,
      'demo',
    );
    assert.deepEqual(
      byName.body.ports.map((p: { name: string }) => p.name),
      ['pg-5', 'pg-4'],
    );
    const nextByName = byName.body.ports_links[0].href;
    const page2 = await n.get(nextByName.slice(base.length), 'demo');
    assert.deepEqual(
      page2.body.ports.map((p: { name: string }) => p.name),
      ['pg-3', 'pg-2'],
    );
    neutronError(
      await n.get(`/v2.0/ports?limit=2&marker=${crypto.randomUUID()}`, 'demo'),
      404,
      'PortNotFound',
    );
  });

  it('lets network owners see ports others made on their network, and nobody else', async () => {
    const shared = (await n.post('/v2.0/networks', { network: { name: 'shared', shared: true } })).body
      .network;
    await n.post('/v2.0/subnets', { subnet: { network_id: shared.id, cidr: '10.14.0.0/24', ip_version: 4 } });
    const alt = await n.port('alt_demo', { network_id: shared.id });
    assert.equal((await n.get(`/v2.0/ports/${alt.id}`)).status, 200, 'admin owns the network');
    neutronError(await n.get(`/v2.0/ports/${alt.id}`, 'demo'), 404, 'PortNotFound');
    neutronError(await n.del(`/v2.0/ports/${alt.id}`, 'demo'), 404, 'PortNotFound');
  });

  it('serves other services through NetworkApi with the same IPAM and rules', async () => {
    const { net, subnet } = await n.network('demo', '10.15.0.0/24');
    const server = crypto.randomUUID();
    const port = t.cloud.network.createPort({
      network_id: net.id,
      project_id: net.project_id,
      device_id: server,
      device_owner: 'compute:nova',
      'binding:host_id': 'compute-0',
      security_groups: ['default'],
    });
    assert.equal(port.fixed_ips[0]!.subnet_id, subnet.id);
    assert.equal(port.project_id, net.project_id);
    assert.deepEqual(
      t.cloud.network.portsByDevice(server).map((p) => p.id),
      [port.id],
    );
    await eventually(() => t.cloud.network.getPort(port.id)?.status === 'ACTIVE');
    const listed = await n.get(`/v2.0/ports?device_id=${server}`, 'demo');
    assert.equal(listed.body.ports[0].status, 'ACTIVE');
    assert.throws(
      () =>
        t.cloud.network.createPort({
          network_id: net.id,
          project_id: net.project_id,
          fixed_ips: [{ ip_address: port.fixed_ips[0]!.ip_address }],
        }),
      (e: Error & { status?: number; type?: string }) =>
        e.status === 409 && e.type === 'IpAddressAlreadyAllocated',
    );
    t.cloud.network.updatePort(port.id, { device_id: '', device_owner: '', 'binding:host_id': '' });
    assert.equal(t.cloud.network.getPort(port.id)?.status, 'DOWN');
    assert.deepEqual(t.cloud.network.portsByDevice(server), []);
    t.cloud.network.deletePort(port.id);
    assert.equal(t.cloud.network.getPort(port.id), undefined);
  });

  it('injects ip-conflict faults and forces port state through the admin API', async () => {
    const { net } = await n.network('demo', '10.16.0.0/24');
    const fault = await fetch(`${t.url}/_sim/faults`, {
      method: 'POST',
      body: JSON.stringify({ kind: 'ip-conflict', service: 'neutron', resource: 'port', times: 1 }),
    });
    assert.equal(fault.status, 201);
    neutronError(
      await n.post('/v2.0/ports', { port: { network_id: net.id } }, 'demo'),
      409,
      'IpAddressAlreadyAllocated',
    );
    const port = await n.port('demo', { network_id: net.id });
    assert.equal(port.fixed_ips[0].ip_address, '10.16.0.2', 'the failed create kept no address');
    const forced = await fetch(`${t.url}/_sim/state/neutron/port/${port.id}`, {
      method: 'POST',
      body: JSON.stringify({ status: 'ERROR' }),
    });
    assert.equal(forced.status, 204);
    assert.equal((await n.get(`/v2.0/ports/${port.id}`, 'demo')).body.port.status, 'ERROR');
  });

  it('deletes subnets only when no port holds an address on them', async () => {
    const { net, subnet } = await n.network('demo', '10.17.0.0/24');
    const port = await n.port('demo', { network_id: net.id });
    neutronError(
      await n.del(`/v2.0/subnets/${subnet.id}`, 'demo'),
      409,
      'SubnetInUse',
      `Unable to complete operation on subnet ${subnet.id}: One or more ports have an IP allocation from this subnet.`,
    );
    await n.del(`/v2.0/ports/${port.id}`, 'demo');
    assert.equal((await n.del(`/v2.0/subnets/${subnet.id}`, 'demo')).status, 204);
    assert.deepEqual((await n.get(`/v2.0/networks/${net.id}`, 'demo')).body.network.subnets, []);
  });
});
