import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startTestCloud, type TestCloud } from '../testing/harness.ts';
import {
  boot,
  getPort,
  imageId,
  makeNetwork,
  makePort,
  nova,
  waitFor,
  waitGone,
} from './testing/fixtures.ts';

describe('nova servers', () => {
  let t: TestCloud;
  let image: string;
  let net: { networkId: string; subnetId: string };

  before(async () => {
    t = await startTestCloud();
    image = await imageId(t);
    net = await makeNetwork(t, 'demo', 'vm-net', '10.40.0.0/24');
  });
  after(() => t.close());

  it('boots on a network: 202 with Location, BUILD progression, then ACTIVE with addresses from Neutron', async () => {
    // A slower build, so the first states can be seen before the server settles.
    const transitions = t.cloud.timing.profile.transitions;
    const fast = transitions['nova.server.build'];
    transitions['nova.server.build'] = 1000;
    const res = await nova(t, 'POST', '/servers', {
      user: 'demo',
      body: {
        server: { name: 'web-1', imageRef: image, flavorRef: '1', networks: [{ uuid: net.networkId }] },
      },
    });
    assert.equal(res.status, 202);
    const created = res.body.server;
    assert.deepEqual(Object.keys(created).sort(), [
      'OS-DCF:diskConfig',
      'adminPass',
      'id',
      'links',
      'security_groups',
    ]);
    assert.deepEqual(created.security_groups, [{ name: 'default' }]);
    assert.equal(res.headers.get('location'), `${t.cloud.serviceUrl('nova')}/v2.1/servers/${created.id}`);

    const building = (await nova(t, 'GET', `/servers/${created.id}`, { user: 'demo' })).body.server;
    assert.equal(building.status, 'BUILD');
    assert.equal(building['OS-EXT-STS:task_state'], 'scheduling');
    assert.equal(building['OS-EXT-STS:vm_state'], 'building');
    assert.equal(building['OS-EXT-STS:power_state'], 0);
    assert.equal(building.hostId, '');
    assert.deepEqual(building.addresses, {}, 'ports come with the host');
    const seen: string[] = [];
    const s = await eventually(async () => {
      const cur = (await nova(t, 'GET', `/servers/${created.id}`, { user: 'demo' })).body.server;
      const state = `${cur.status}/${cur['OS-EXT-STS:task_state']}`;
      if (seen.at(-1) !== state) seen.push(state);
      return cur.status === 'ACTIVE' ? cur : undefined;
    });
    transitions['nova.server.build'] = fast;
    const order = [
      'BUILD/scheduling',
      'BUILD/null',
      'BUILD/block_device_mapping',
      'BUILD/spawning',
      'ACTIVE/null',
    ];
    assert.deepEqual(
      seen,
      order.filter((x) => seen.includes(x)),
      'task states in Nova order',
    );
    assert.equal(seen.at(-1), 'ACTIVE/null');
    assert.equal(s['OS-EXT-STS:task_state'], null);
    assert.equal(s['OS-EXT-STS:power_state'], 1);
    assert.match(s['OS-SRV-USG:launched_at'], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
    assert.match(s.hostId, /^[0-9a-f]{56}$/);
    assert.equal(s['OS-EXT-AZ:availability_zone'], 'nova');
    assert.equal(s.image.id, image);
    assert.deepEqual(s.flavor, {
      vcpus: 1,
      ram: 512,
      disk: 1,
      ephemeral: 0,
      swap: 0,
      original_name: 'm1.tiny',
      extra_specs: {},
    });
    assert.deepEqual(s.server_groups, []);
    assert.equal(s['OS-EXT-SRV-ATTR:host'], undefined, 'members do not see the host');
    const [addr] = s.addresses['vm-net'];
    assert.equal(addr.version, 4);
    assert.match(addr.addr, /^10\.40\.0\.\d+$/);
    assert.equal(addr['OS-EXT-IPS:type'], 'fixed');

    const ports = await t.request('neutron', 'GET', `/v2.0/ports?device_id=${created.id}`, { user: 'demo' });
    assert.equal(ports.body.ports.length, 1);
    const port = (await getPort(t, ports.body.ports[0].id)).body.port;
    assert.equal(port.device_owner, 'compute:nova');
    assert.equal(port['binding:host_id'], 'compute-0');
    assert.equal(port.mac_address, addr['OS-EXT-IPS-MAC:mac_addr']);

    assert.equal((await nova(t, 'DELETE', `/servers/${created.id}`, { user: 'demo' })).status, 204);
    const deleting = await nova(t, 'GET', `/servers/${created.id}`, { user: 'demo' });
    if (deleting.status === 200) assert.equal(deleting.body.server['OS-EXT-STS:task_state'], 'deleting');
    await waitGone(t, 'demo', created.id);
    assert.equal((await getPort(t, port.id)).status, 404, 'the port Nova created goes with the server');
  });

  it('boots with a pre-created port, refuses it to a second server, and only unbinds it on delete', async () => {
    const port = await makePort(t, 'demo', net.networkId, 'vm-port-0');
    const id = await boot(t, 'demo', { name: 'probe-vm-0', imageRef: image, networks: [{ port: port.id }] });
    const s = await waitFor(t, 'demo', id, 'ACTIVE');
    assert.deepEqual(s.addresses['vm-net'][0].addr, port.fixed_ips[0]!.ip_address);
    const bound = (await getPort(t, port.id)).body.port;
    assert.equal(bound.device_id, id);
    assert.equal(bound.device_owner, 'compute:nova');
    assert.equal(bound['binding:host_id'], 'compute-0');

    const dup = await nova(t, 'POST', '/servers', {
      user: 'demo',
      body: { server: { name: 'dup-port', imageRef: image, flavorRef: '1', networks: [{ port: port.id }] } },
    });
    assert.equal(dup.status, 409);
    assert.deepEqual(dup.body, {
      conflictingRequest: { code: 409, message: `Port ${port.id} is still in use.` },
    });

    await nova(t, 'DELETE', `/servers/${id}`, { user: 'demo' });
    await waitGone(t, 'demo', id);
    const after = (await getPort(t, port.id)).body.port;
    assert.equal(after.device_id, '');
    assert.equal(after.device_owner, '');
    assert.equal(after['binding:host_id'], '');
  });

  it("answers the create errors in Nova's words", async () => {
    const post = (server: Record<string, unknown>, version?: string) =>
      nova(t, 'POST', '/servers', { user: 'demo', body: { server }, ...(version ? { version } : {}) });
    const badFlavor = await post({ name: 'bad', imageRef: image, flavorRef: 'nope', networks: 'none' });
    assert.deepEqual(badFlavor.body, {
      badRequest: { code: 400, message: 'Flavor nope could not be found.' },
    });

    const noNetworks = await post({ name: 'bad', imageRef: image, flavorRef: '1' });
    assert.equal(noNetworks.status, 400);
    assert.equal(
      noNetworks.body.badRequest.message,
      `Invalid input for field/attribute server. Value: {'name': 'bad', 'imageRef': '${image}', 'flavorRef': '1'}. 'networks' is a required property`,
    );
    assert.equal(
      (await post({ name: 'ok-before-2.37', imageRef: image, flavorRef: '1' }, '2.36')).status,
      202,
    );

    const userData = await post({
      name: 'x',
      imageRef: image,
      flavorRef: '1',
      networks: 'none',
      user_data: 'not base64!',
    });
    assert.equal(userData.status, 400);
    assert.equal(
      userData.body.badRequest.message,
      "Invalid input for field/attribute user_data. Value: not base64!. 'not base64!' is not a 'base64'",
    );
    // The IPv4 tail of an IPv6 address comes last; netaddr refuses it anywhere else.
    const access = await post({
      name: 'x',
      imageRef: image,
      flavorRef: '1',
      networks: 'none',
      accessIPv6: '1.2.3.4::',
    });
    assert.equal(access.status, 400);
    assert.equal(
      access.body.badRequest.message,
      "Invalid input for field/attribute accessIPv6. Value: 1.2.3.4::. '1.2.3.4::' is not a 'ipv6'",
    );
    const accessOk = await post({
      name: 'x',
      imageRef: image,
      flavorRef: '1',
      networks: 'none',
      accessIPv4: '010.0.0.1',
      accessIPv6: '::ffff:10.0.0.1',
    });
    assert.equal(accessOk.status, 202);
    const okData = await post({
      name: 'x',
      imageRef: image,
      flavorRef: '1',
      networks: 'none',
      user_data: 'I2Nsb3VkLWNvbmZpZwo=',
    });
    assert.equal(okData.status, 202);

    const az = await post({
      name: 'x',
      imageRef: image,
      flavorRef: '1',
      networks: 'none',
      availability_zone: 'moon',
    });
    assert.deepEqual(az.body.badRequest.message, 'The requested availability zone is not available');
    const key = await post({
      name: 'x',
      imageRef: image,
      flavorRef: '1',
      networks: 'none',
      key_name: 'nokey',
    });
    assert.equal(key.body.badRequest.message, 'Invalid key_name provided.');
    const img = await post({ name: 'x', imageRef: 'not-a-uuid', flavorRef: '1', networks: 'none' });
    assert.equal(img.status, 400);
    const noImg = await post({
      name: 'x',
      imageRef: '7e57d1d0-0000-4000-8000-000000000000',
      flavorRef: '1',
      networks: 'none',
    });
    assert.equal(noImg.body.badRequest.message, 'Can not find requested image');
    const noNet = await post({
      name: 'x',
      imageRef: image,
      flavorRef: '1',
      networks: [{ uuid: '7e57d1d0-0000-4000-8000-000000000000' }],
    });
    assert.equal(
      noNet.body.badRequest.message,
      'Network 7e57d1d0-0000-4000-8000-000000000000 could not be found.',
    );
    const extra = await post({ name: 'x', imageRef: image, flavorRef: '1', networks: 'none', color: 'blue' });
    assert.match(
      extra.body.badRequest.message,
      /Additional properties are not allowed \('color' was unexpected\)$/,
    );
    const big = await post({
      name: 'x',
      imageRef: await imageId(t, 'ubuntu-22.04'),
      flavorRef: '1',
      networks: 'none',
    });
    assert.equal(big.status, 400, 'ubuntu needs min_disk 10 > m1.tiny');
  });

  it('keeps projects apart; admins see all with all_tenants and the extended attributes', async () => {
    const id = await boot(t, 'demo', { name: 'isolated', imageRef: image });
    const foreign = await nova(t, 'GET', `/servers/${id}`, { user: 'alt_demo' });
    assert.equal(foreign.status, 404);
    assert.deepEqual(foreign.body, {
      itemNotFound: { code: 404, message: `Instance ${id} could not be found.` },
    });
    assert.equal((await nova(t, 'DELETE', `/servers/${id}`, { user: 'alt_demo' })).status, 404);
    assert.ok(
      !(await nova(t, 'GET', '/servers', { user: 'alt_demo' })).body.servers.some((s: any) => s.id === id),
    );
    assert.ok(
      !(await nova(t, 'GET', '/servers', { user: 'admin' })).body.servers.some((s: any) => s.id === id),
    );
    const all = await nova(t, 'GET', '/servers?all_tenants=1', { user: 'admin' });
    assert.ok(all.body.servers.some((s: any) => s.id === id));
    const denied = await nova(t, 'GET', '/servers/detail?all_tenants=1', { user: 'demo' });
    assert.equal(denied.status, 403);
    assert.equal(
      denied.body.forbidden.message,
      "Policy doesn't allow os_compute_api:servers:detail:get_all_tenants to be performed.",
    );

    await waitFor(t, 'demo', id, 'ACTIVE');
    const admin = (await nova(t, 'GET', `/servers/${id}`, { user: 'admin' })).body.server;
    assert.equal(admin['OS-EXT-SRV-ATTR:host'], 'compute-0');
    assert.equal(admin['OS-EXT-SRV-ATTR:hypervisor_hostname'], 'compute-0');
    assert.match(admin['OS-EXT-SRV-ATTR:instance_name'], /^instance-[0-9a-f]{8}$/);
    assert.match(admin['OS-EXT-SRV-ATTR:reservation_id'], /^r-[0-9a-z]{8}$/);
    assert.equal(admin['OS-EXT-SRV-ATTR:hostname'], 'isolated');
    assert.equal(admin['OS-EXT-SRV-ATTR:root_device_name'], '/dev/vda');
    assert.equal(admin.host_status, 'UP');
  });

  it('lists newest first with servers_links, and filters like Nova', async () => {
    const tagged = async (name: string, tags: string[]) =>
      boot(t, 'alt_demo', { name, imageRef: image, tags });
    const a = await tagged('web-1', ['web', 'prod']);
    const b = await tagged('web-22', ['web']);
    const c = await tagged('db-1', ['db', 'prod']);
    await Promise.all([a, b, c].map((id) => waitFor(t, 'alt_demo', id, 'ACTIVE')));

    const page = await nova(t, 'GET', '/servers/detail?limit=1', { user: 'alt_demo' });
    assert.deepEqual(
      page.body.servers.map((s: any) => s.id),
      [c],
    );
    assert.equal(page.body.servers_links[0].rel, 'next');
    assert.equal(
      page.body.servers_links[0].href,
      `${t.cloud.serviceUrl('nova')}/v2.1/servers/detail?limit=1&marker=${c}`,
    );
    const next = await nova(t, 'GET', `/servers?limit=5&marker=${c}`, { user: 'alt_demo' });
    assert.deepEqual(
      next.body.servers.map((s: any) => s.id),
      [b, a],
    );
    assert.deepEqual(Object.keys(next.body.servers[0]).sort(), ['id', 'links', 'name']);
    assert.equal(next.body.servers_links, undefined);

    const names = async (query: string) =>
      (await nova(t, 'GET', `/servers?${query}`, { user: 'alt_demo' })).body.servers
        .map((s: any) => s.name)
        .sort();
    assert.deepEqual(await names('name=web'), ['web-1', 'web-22']);
    assert.deepEqual(await names(`name=${encodeURIComponent('^web-[0-9]$')}`), ['web-1']);
    assert.deepEqual(await names('name=-1'), ['db-1', 'web-1']);
    assert.deepEqual(await names('tags=web,prod'), ['web-1']);
    assert.deepEqual(await names('tags-any=db,nothing'), ['db-1']);
    assert.deepEqual(await names('not-tags=prod'), ['web-22']);
    assert.deepEqual(await names('not-tags-any=db'), ['web-1', 'web-22']);
    assert.deepEqual(await names('status=ACTIVE&name=web'), ['web-1', 'web-22']);
    assert.deepEqual(await names('status=SHUTOFF'), []);
    assert.equal((await nova(t, 'GET', '/servers?status=NOPE', { user: 'alt_demo' })).status, 400);
    assert.deepEqual(await names('flavor=2'), []);
    assert.deepEqual(await names(`image=${image}&name=db`), ['db-1']);
    assert.deepEqual(await names(`changes-since=${encodeURIComponent('2999-01-01T00:00:00Z')}`), []);
    assert.deepEqual(await names('sort_key=display_name&sort_dir=asc').then((n) => n.length), 3);
    const sorted = await nova(t, 'GET', '/servers?sort_key=display_name&sort_dir=asc', { user: 'alt_demo' });
    assert.deepEqual(
      sorted.body.servers.map((s: any) => s.name),
      ['db-1', 'web-1', 'web-22'],
    );
    const marker = await nova(t, 'GET', '/servers?marker=nope', { user: 'alt_demo' });
    assert.equal(marker.body.badRequest.message, 'marker [nope] not found');
  });

  it('filters by fixed IP (re.match) and shows floating IPs in addresses', async () => {
    const port = await makePort(t, 'demo', net.networkId, 'ip-filter');
    const id = await boot(t, 'demo', { name: 'ip-target', imageRef: image, networks: [{ port: port.id }] });
    await waitFor(t, 'demo', id, 'ACTIVE');
    const ip = port.fixed_ips[0]!.ip_address;
    const found = await nova(t, 'GET', `/servers?ip=${encodeURIComponent(ip.replaceAll('.', '\\.') + '$')}`, {
      user: 'demo',
    });
    assert.deepEqual(
      found.body.servers.map((s: any) => s.id),
      [id],
    );

    // A floating IP on the port shows as OS-EXT-IPS:type floating right after its fixed IP.
    const ext = await t.request('neutron', 'POST', '/v2.0/networks', {
      user: 'admin',
      body: { network: { name: 'public', 'router:external': true } },
    });
    await t.request('neutron', 'POST', '/v2.0/subnets', {
      user: 'admin',
      body: { subnet: { network_id: ext.body.network.id, cidr: '172.24.4.0/24', ip_version: 4 } },
    });
    const router = await t.request('neutron', 'POST', '/v2.0/routers', {
      user: 'demo',
      body: { router: { name: 'r', external_gateway_info: { network_id: ext.body.network.id } } },
    });
    await t.request('neutron', 'PUT', `/v2.0/routers/${router.body.router.id}/add_router_interface`, {
      user: 'demo',
      body: { subnet_id: net.subnetId },
    });
    const fip = await t.request('neutron', 'POST', '/v2.0/floatingips', {
      user: 'demo',
      body: { floatingip: { floating_network_id: ext.body.network.id, port_id: port.id } },
    });
    assert.equal(fip.status, 201, JSON.stringify(fip.body));
    const s = (await nova(t, 'GET', `/servers/${id}`, { user: 'demo' })).body.server;
    assert.deepEqual(
      s.addresses['vm-net'].map((a: any) => [a.addr, a['OS-EXT-IPS:type']]),
      [
        [ip, 'fixed'],
        [fip.body.floatingip.floating_ip_address, 'floating'],
      ],
    );
    const ips = await nova(t, 'GET', `/servers/${id}/ips`, { user: 'demo' });
    assert.deepEqual(Object.keys(ips.body.addresses['vm-net'][0]).sort(), ['addr', 'version']);
  });

  it('updates names, metadata and tags, refusing tag changes while building', async () => {
    const id = await boot(t, 'demo', { name: 'meta', imageRef: image, metadata: { role: 'web' } });
    const early = await nova(t, 'PUT', `/servers/${id}/tags/x`, { user: 'demo' });
    assert.equal(early.status, 409);
    assert.equal(
      early.body.conflictingRequest.message,
      `Cannot 'update tag' instance ${id} while it is in vm_state building`,
    );
    await waitFor(t, 'demo', id, 'ACTIVE');

    const renamed = await nova(t, 'PUT', `/servers/${id}`, {
      user: 'demo',
      body: { server: { name: 'meta-2' } },
    });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.server.name, 'meta-2');
    assert.equal(renamed.body.server['OS-EXT-STS:vm_state'], 'active', '2.75+ answers the full view');

    const merged = await nova(t, 'POST', `/servers/${id}/metadata`, {
      user: 'demo',
      body: { metadata: { env: 'prod' } },
    });
    assert.deepEqual(merged.body, { metadata: { role: 'web', env: 'prod' } });
    const one = await nova(t, 'PUT', `/servers/${id}/metadata/env`, {
      user: 'demo',
      body: { meta: { env: 'dev' } },
    });
    assert.deepEqual(one.body, { meta: { env: 'dev' } });
    const mismatch = await nova(t, 'PUT', `/servers/${id}/metadata/env`, {
      user: 'demo',
      body: { meta: { other: 'x' } },
    });
    assert.equal(mismatch.body.badRequest.message, 'Request body and URI mismatch');
    assert.equal((await nova(t, 'DELETE', `/servers/${id}/metadata/role`, { user: 'demo' })).status, 204);
    assert.equal((await nova(t, 'GET', `/servers/${id}/metadata/role`, { user: 'demo' })).status, 404);
    const replaced = await nova(t, 'PUT', `/servers/${id}/metadata`, {
      user: 'demo',
      body: { metadata: { a: '1' } },
    });
    assert.deepEqual(replaced.body, { metadata: { a: '1' } });

    const put = await nova(t, 'PUT', `/servers/${id}/tags/blue`, { user: 'demo' });
    assert.equal(put.status, 201);
    assert.equal(put.headers.get('location'), `${t.cloud.serviceUrl('nova')}/v2.1/servers/${id}/tags/blue`);
    assert.equal((await nova(t, 'PUT', `/servers/${id}/tags/blue`, { user: 'demo' })).status, 204);
    assert.equal((await nova(t, 'GET', `/servers/${id}/tags/blue`, { user: 'demo' })).status, 204);
    assert.equal((await nova(t, 'GET', `/servers/${id}/tags/red`, { user: 'demo' })).status, 404);
    const all = await nova(t, 'PUT', `/servers/${id}/tags`, { user: 'demo', body: { tags: ['a', 'b'] } });
    assert.deepEqual(all.body, { tags: ['a', 'b'] });
    assert.equal((await nova(t, 'PUT', `/servers/${id}/tags/a,b`, { user: 'demo' })).status, 400);
    assert.deepEqual((await nova(t, 'GET', `/servers/${id}`, { user: 'demo' })).body.server.tags, ['a', 'b']);
    assert.equal(
      (await nova(t, 'GET', `/servers/${id}/tags`, { user: 'demo', version: '2.25' })).status,
      404,
    );
  });

  it('survives a snapshot and restore into another cloud', async () => {
    const port = await makePort(t, 'demo', net.networkId, 'kept');
    const id = await boot(t, 'demo', {
      name: 'kept',
      imageRef: image,
      networks: [{ port: port.id }],
      tags: ['x'],
    });
    await waitFor(t, 'demo', id, 'ACTIVE');
    const other = await startTestCloud();
    try {
      other.cloud.restore(t.cloud.snapshot());
      const s = (await nova(other, 'GET', `/servers/${id}`, { user: 'demo' })).body.server;
      assert.equal(s.status, 'ACTIVE');
      assert.deepEqual(s.tags, ['x']);
      assert.equal(s.addresses['vm-net'][0].addr, port.fixed_ips[0]!.ip_address);
      assert.equal((await nova(other, 'GET', '/flavors/1', { user: 'demo' })).body.flavor.name, 'm1.tiny');
    } finally {
      await other.close();
    }
  });

  it('creates several servers with max_count and names them name-N', async () => {
    const res = await nova(t, 'POST', '/servers', {
      user: 'alt_demo',
      body: {
        server: {
          name: 'many',
          imageRef: image,
          flavorRef: '1',
          networks: 'none',
          min_count: 2,
          max_count: 2,
        },
      },
    });
    assert.equal(res.status, 202);
    const list = await nova(t, 'GET', '/servers?name=^many-', { user: 'alt_demo' });
    assert.deepEqual(list.body.servers.map((s: any) => s.name).sort(), ['many-1', 'many-2']);
    const resv = await nova(t, 'POST', '/servers', {
      user: 'alt_demo',
      body: {
        server: { name: 'r', imageRef: image, flavorRef: '1', networks: 'none', return_reservation_id: true },
      },
    });
    assert.match(resv.body.reservation_id, /^r-/);
    await eventually(
      async () =>
        (await nova(t, 'GET', '/servers?status=BUILD', { user: 'alt_demo' })).body.servers.length === 0,
    );
  });
});
