import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { neutron, neutronError, type Neutron } from './testing/neutron.ts';

describe('neutron: versions, errors and networks', () => {
  let t: TestCloud;
  let n: Neutron;
  before(async () => {
    t = await startTestCloud();
    n = neutron(t);
  });
  after(async () => t.close());

  it('serves the version list without a token and the resource list with one', async () => {
    const root = await t.request('neutron', 'GET', '', { token: null });
    assert.equal(root.status, 200);
    assert.deepEqual(root.body, {
      versions: [
        {
          id: 'v2.0',
          status: 'CURRENT',
          links: [{ rel: 'self', href: `${t.cloud.serviceUrl('neutron')}/v2.0/` }],
        },
      ],
    });
    const v2 = await n.get('/v2.0', 'demo');
    assert.equal(v2.status, 200);
    assert.ok(v2.body.resources.some((r: { collection: string }) => r.collection === 'ports'));
  });

  it('lists the extensions of a Zed ML2 cloud with router and trunk plugins', async () => {
    const res = await n.get('/v2.0/extensions', 'demo');
    const aliases = res.body.extensions.map((e: { alias: string }) => e.alias);
    for (const a of [
      'trunk',
      'trunk-details',
      'router',
      'external-net',
      'extraroute',
      'security-group',
      'binding',
      'port-security',
    ]) {
      assert.ok(aliases.includes(a), a);
    }
    assert.equal(aliases.includes('dns-integration'), false);
    assert.equal((await n.get('/v2.0/extensions/trunk', 'demo')).body.extension.alias, 'trunk');
    neutronError(
      await n.get('/v2.0/extensions/nope', 'demo'),
      404,
      'HTTPNotFound',
      'Extension with alias nope does not exist',
    );
  });

  it('answers 401 as keystonemiddleware does, with WWW-Authenticate', async () => {
    const res = await t.request('neutron', 'GET', '/v2.0/networks', { token: null });
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 401);
    assert.match(res.headers.get('www-authenticate') ?? '', /^Keystone uri="/);
  });

  it('seeds the external network public with public-subnet, visible to every project', async () => {
    const pub = await n.publicNet();
    assert.equal(pub['router:external'], true);
    assert.equal(pub.shared, false);
    assert.equal(pub.mtu, 1500);
    assert.equal('provider:network_type' in pub, false, 'provider attributes are admin-only');
    const asAdmin = await n.get(`/v2.0/networks/${pub.id}`);
    assert.equal(asAdmin.body.network['provider:network_type'], 'flat');
    const subnet = await n.get(`/v2.0/subnets/${pub.subnets[0]}`);
    assert.equal(subnet.body.subnet.name, 'public-subnet');
    assert.equal(subnet.body.subnet.cidr, '172.24.4.0/24');
    assert.equal(subnet.body.subnet.gateway_ip, '172.24.4.1');
    assert.deepEqual(subnet.body.subnet.allocation_pools, [{ start: '172.24.4.2', end: '172.24.4.254' }]);
  });

  it('creates, shows, updates and deletes a tenant network (vxlan, MTU 1450)', async () => {
    const created = await n.post(
      '/v2.0/networks',
      { network: { name: 'life', admin_state_up: true } },
      'demo',
    );
    assert.equal(created.status, 201);
    const net = created.body.network;
    assert.equal(net.mtu, 1450);
    assert.equal(net.status, 'ACTIVE');
    assert.equal(net.revision_number, 1);
    assert.equal(net.is_default, false, 'create responses carry is_default');
    assert.equal(net.tenant_id, net.project_id);
    const shown = await n.get(`/v2.0/networks/${net.id}`, 'demo');
    assert.equal('is_default' in shown.body.network, false, 'GET of an internal network has no is_default');
    const updated = await n.put(
      `/v2.0/networks/${net.id}`,
      { network: { name: 'renamed', description: 'd' } },
      'demo',
    );
    assert.equal(updated.status, 200);
    assert.equal(updated.body.network.name, 'renamed');
    assert.equal(updated.body.network.revision_number, 2);
    const asAdmin = await n.get(`/v2.0/networks/${net.id}`);
    assert.equal(asAdmin.body.network['provider:network_type'], 'vxlan');
    assert.equal(typeof asAdmin.body.network['provider:segmentation_id'], 'number');
    assert.equal((await n.del(`/v2.0/networks/${net.id}`, 'demo')).status, 204);
    neutronError(
      await n.get(`/v2.0/networks/${net.id}`, 'demo'),
      404,
      'NetworkNotFound',
      `Network ${net.id} could not be found.`,
    );
  });

  it('hides other projects’ networks (404) and lets admins see all', async () => {
    const { net } = await n.network('alt_demo', '10.77.0.0/24');
    neutronError(await n.get(`/v2.0/networks/${net.id}`, 'demo'), 404, 'NetworkNotFound');
    neutronError(await n.del(`/v2.0/networks/${net.id}`, 'demo'), 404, 'NetworkNotFound');
    const demoList = await n.get('/v2.0/networks', 'demo');
    assert.equal(
      demoList.body.networks.some((x: { id: string }) => x.id === net.id),
      false,
    );
    const adminList = await n.get('/v2.0/networks');
    assert.equal(
      adminList.body.networks.some((x: { id: string }) => x.id === net.id),
      true,
    );
  });

  it('keeps provider attributes for admins: 403 for demo, VLAN in use 409', async () => {
    neutronError(
      await n.post('/v2.0/networks', { network: { name: 'x', 'provider:network_type': 'vlan' } }, 'demo'),
      403,
      'PolicyNotAuthorized',
      '(rule:create_network and rule:create_network:provider:network_type) is disallowed by policy',
    );
    const body = {
      network: {
        name: 'v',
        'provider:network_type': 'vlan',
        'provider:physical_network': 'physnet1',
        'provider:segmentation_id': 150,
      },
    };
    const vlan = await n.post('/v2.0/networks', body);
    assert.equal(vlan.status, 201);
    assert.equal(vlan.body.network.mtu, 1500);
    neutronError(
      await n.post('/v2.0/networks', body),
      409,
      'VlanIdInUse',
      'Unable to create the network. The VLAN 150 on physical network physnet1 is in use.',
    );
    await n.del(`/v2.0/networks/${vlan.body.network.id}`);
    assert.equal((await n.post('/v2.0/networks', body)).status, 201, 'the VLAN is free again after delete');
  });

  it('rejects malformed bodies with Neutron’s messages', async () => {
    neutronError(
      await t.request('neutron', 'POST', '/v2.0/networks', { raw: '{not json' }),
      400,
      'HTTPBadRequest',
      'Body contains invalid data',
    );
    neutronError(
      await n.post('/v2.0/networks', { network: { bogus: 1 } }),
      400,
      'HTTPBadRequest',
      "Unrecognized attribute(s) 'bogus'",
    );
    neutronError(
      await n.post('/v2.0/networks', { network: { admin_state_up: 'maybe' } }),
      400,
      'InvalidInput',
      "Invalid input for operation: 'maybe' cannot be converted to boolean.",
    );
    neutronError(
      await n.post('/v2.0/networks', { network: { status: 'DOWN' } }),
      400,
      'HTTPBadRequest',
      "Attribute 'status' not allowed in POST",
    );
    neutronError(
      await n.post('/v2.0/networks', { port: {} }),
      400,
      'HTTPBadRequest',
      "Unable to find 'network' in request body",
    );
    neutronError(
      await n.get('/v2.0/networks?bogus=1'),
      400,
      'HTTPBadRequest',
      "['bogus'] is invalid attribute for filtering",
    );
    neutronError(
      await n.get('/v2.0/networks?sort_key=bogus&sort_dir=asc'),
      400,
      'HTTPBadRequest',
      "['bogus'] is invalid attribute for sort_keys",
    );
    neutronError(
      await n.get('/v2.0/networks?limit=x'),
      400,
      'BadRequest',
      "Bad limit request: Limit must be an integer 0 or greater and not 'x'.",
    );
    neutronError(await n.get('/v2.0/nothing-here'), 404, 'HTTPNotFound');
  });

  it('filters networks by attribute and returns only the requested fields', async () => {
    const { net } = await n.network('demo', '10.78.0.0/24');
    await n.put(`/v2.0/networks/${net.id}`, { network: { name: 'filter-me' } }, 'demo');
    const res = await n.get('/v2.0/networks?name=filter-me&fields=id&fields=name', 'demo');
    assert.deepEqual(res.body.networks, [{ id: net.id, name: 'filter-me' }]);
    const ext = await n.get('/v2.0/networks?router:external=true', 'demo');
    assert.deepEqual(
      ext.body.networks.map((x: { name: string }) => x.name),
      ['public'],
    );
    const notExt = await n.get('/v2.0/networks?router%3Aexternal=False&name=filter-me', 'demo');
    assert.equal(notExt.body.networks.length, 1);
  });

  it('refuses to delete a network with ports (NetworkInUse lists them)', async () => {
    const { net } = await n.network('demo', '10.79.0.0/24');
    const p1 = await n.port('demo', { network_id: net.id });
    const p2 = await n.port('demo', { network_id: net.id });
    const ids = [p1.id, p2.id].sort().join(',');
    neutronError(
      await n.del(`/v2.0/networks/${net.id}`, 'demo'),
      409,
      'NetworkInUse',
      `Unable to complete operation on network ${net.id}. There are one or more ports still in use on the network, id for these ports is: ${ids}.`,
    );
    await n.del(`/v2.0/ports/${p1.id}`, 'demo');
    await n.del(`/v2.0/ports/${p2.id}`, 'demo');
    assert.equal((await n.del(`/v2.0/networks/${net.id}`, 'demo')).status, 204);
  });

  it('creates networks in bulk', async () => {
    const res = await n.post('/v2.0/networks', { networks: [{ name: 'b1' }, { name: 'b2' }] }, 'demo');
    assert.equal(res.status, 201);
    assert.deepEqual(
      res.body.networks.map((x: { name: string }) => x.name),
      ['b1', 'b2'],
    );
  });

  it('updates a port through If-Match only at the expected revision', async () => {
    const { net } = await n.network('demo', '10.80.0.0/24');
    const port = await n.port('demo', { network_id: net.id });
    const ok = await n.put(`/v2.0/ports/${port.id}`, { port: { name: 'a' } }, 'demo', {
      'If-Match': `revision_number=${port.revision_number}`,
    });
    assert.equal(ok.status, 200);
    neutronError(
      await n.put(`/v2.0/ports/${port.id}`, { port: { name: 'b' } }, 'demo', {
        'If-Match': `revision_number=${port.revision_number}`,
      }),
      412,
      'RevisionNumberConstraintFailed',
      `Constrained to ${port.revision_number}, but current revision is ${ok.body.port.revision_number}`,
    );
  });
});
