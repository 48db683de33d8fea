import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestCloud } from '../testing/harness.ts';
import {
  activeLb,
  forceState,
  getLb,
  gone,
  makeSubnet,
  type Net,
  settled,
  sim,
  startSlowCloud,
  startSlowCloudWithSubnet,
} from './testing/testkit.ts';

const LB_KEYS = [
  'id',
  'name',
  'description',
  'provisioning_status',
  'operating_status',
  'admin_state_up',
  'project_id',
  'created_at',
  'updated_at',
  'vip_address',
  'vip_port_id',
  'vip_subnet_id',
  'vip_network_id',
  'additional_vips',
  'listeners',
  'pools',
  'provider',
  'flavor_id',
  'vip_qos_policy_id',
  'tags',
  'availability_zone',
  'tenant_id',
].sort();

const getLbStatus = (res: { status: number }) => res.status;

describe('octavia load balancers', () => {
  let t: TestCloud;
  let net: Net;
  before(async () => ({ t, net } = await startSlowCloudWithSubnet()));
  after(async () => t.close());

  it('serves the version list at the root without a token, and "v2.0" at /v2', async () => {
    const root = await t.request('octavia', 'GET', '', { token: null });
    assert.equal(root.status, 200);
    const ids = root.body.versions.map((v: { id: string }) => v.id);
    assert.equal(ids[0], 'v2.0');
    assert.equal(ids.at(-1), 'v2.26');
    assert.equal(root.body.versions.at(-1).status, 'CURRENT');
    assert.equal(root.body.versions[0].links[0].href, `${t.cloud.serviceUrl('octavia')}/v2`);
    const v2 = await t.request('octavia', 'GET', '/v2', { token: null });
    assert.equal(v2.body, 'v2.0');
    const noToken = await t.request('octavia', 'GET', '/v2/lbaas/loadbalancers', { token: null });
    assert.equal(noToken.status, 401);
    assert.equal(noToken.body.error.code, 401);
  });

  it('creates a load balancer PENDING_CREATE, then ACTIVE/ONLINE, with a real VIP port in Neutron', async () => {
    const res = await t.request('octavia', 'POST', '/v2/lbaas/loadbalancers', {
      user: 'demo',
      body: { loadbalancer: { name: 'web', vip_subnet_id: net.subnetId, description: 'd', tags: ['a'] } },
    });
    assert.equal(res.status, 201);
    const created = res.body.loadbalancer;
    assert.deepEqual(Object.keys(created).sort(), LB_KEYS);
    assert.equal(created.provisioning_status, 'PENDING_CREATE');
    assert.equal(created.operating_status, 'OFFLINE');
    assert.equal(created.updated_at, null);
    assert.match(created.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
    assert.equal(created.vip_network_id, net.networkId);
    assert.equal(created.provider, 'amphora');
    assert.equal(created.tenant_id, created.project_id);

    const lb = await settled(t, created.id);
    assert.equal(lb.operating_status, 'ONLINE');
    assert.ok(lb.updated_at);

    const port = await t.request('neutron', 'GET', `/v2.0/ports/${lb.vip_port_id}`, { user: 'demo' });
    assert.equal(port.status, 200);
    assert.equal(port.body.port.name, `octavia-lb-${lb.id}`);
    assert.equal(port.body.port.device_owner, 'Octavia');
    assert.equal(port.body.port.project_id, lb.project_id);
    assert.equal(port.body.port.fixed_ips[0].ip_address, lb.vip_address);
    assert.equal(port.body.port.fixed_ips[0].subnet_id, net.subnetId);
  });

  it('uses a given vip_address, or an existing port given as vip_port_id (which it then does not delete)', async () => {
    const fixed = await activeLb(t, net.subnetId, { vip_address: '10.20.0.200' });
    assert.equal(fixed.vip_address, '10.20.0.200');

    const port = await t.request('neutron', 'POST', '/v2.0/ports', {
      user: 'demo',
      body: { port: { network_id: net.networkId, name: 'my-vip' } },
    });
    assert.equal(port.status, 201);
    const adopted = await activeLb(t, '', { vip_subnet_id: undefined, vip_port_id: port.body.port.id });
    assert.equal(adopted.vip_port_id, port.body.port.id);
    assert.equal(adopted.vip_address, port.body.port.fixed_ips[0].ip_address);
    assert.equal(adopted.vip_subnet_id, net.subnetId);
    await t.request('octavia', 'DELETE', `/v2/lbaas/loadbalancers/${adopted.id}`, { user: 'demo' });
    await gone(t, adopted.id);
    const still = await t.request('neutron', 'GET', `/v2.0/ports/${port.body.port.id}`, { user: 'demo' });
    assert.equal(still.status, 200, 'a port the user brought survives the load balancer');
  });

  it('validates the VIP: one of the VIP fields, and subnets, networks and ports that exist', async () => {
    const post = (loadbalancer: unknown) =>
      t.request('octavia', 'POST', '/v2/lbaas/loadbalancers', { user: 'demo', body: { loadbalancer } });
    const none = await post({ name: 'x' });
    assert.equal(none.status, 400);
    assert.equal(
      none.body.faultstring,
      'Validation failure: VIP must contain one of: vip_port_id, vip_network_id, vip_subnet_id.',
    );
    assert.equal(none.body.faultcode, 'Client');
    assert.equal(none.body.debuginfo, null);
    const missing = '11111111-2222-3333-4444-555555555555';
    assert.equal((await post({ vip_subnet_id: missing })).body.faultstring, `Subnet ${missing} not found.`);
    assert.equal((await post({ vip_network_id: missing })).body.faultstring, `Network ${missing} not found.`);
    assert.equal((await post({ vip_port_id: missing })).body.faultstring, `Port ${missing} not found.`);
    const badProvider = await post({ vip_subnet_id: net.subnetId, provider: 'nope' });
    assert.equal(badProvider.status, 400);
    assert.equal(badProvider.body.faultstring, "Provider 'nope' is not enabled.");
    const badField = await post({ vip_subnet_id: net.subnetId, bogus: 1 });
    assert.equal(badField.status, 400);
    const malformed = await t.request('octavia', 'POST', '/v2/lbaas/loadbalancers', {
      user: 'demo',
      raw: '{nope',
    });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.faultstring, 'Request is not in valid JSON format');
  });

  it('picks the subnet of a VIP network', async () => {
    const lb = await activeLb(t, '', { vip_subnet_id: undefined, vip_network_id: net.networkId });
    assert.equal(lb.vip_subnet_id, net.subnetId);
    assert.equal(lb.vip_network_id, net.networkId);
  });

  it('refuses writes while PENDING_CREATE with Octavia messages', async () => {
    assert.equal(
      await sim(t, 'POST', '/faults', { kind: 'stuck', service: 'octavia', resource: 'loadbalancer' }),
      201,
    );
    const res = await t.request('octavia', 'POST', '/v2/lbaas/loadbalancers', {
      user: 'demo',
      body: { loadbalancer: { vip_subnet_id: net.subnetId } },
    });
    const id: string = res.body.loadbalancer.id;
    const listener = await t.request('octavia', 'POST', '/v2/lbaas/listeners', {
      user: 'demo',
      body: { listener: { loadbalancer_id: id, protocol: 'TCP', protocol_port: 80 } },
    });
    assert.equal(listener.status, 409);
    assert.equal(listener.body.faultstring, `Load Balancer ${id} is immutable and cannot be updated.`);
    const put = await t.request('octavia', 'PUT', `/v2/lbaas/loadbalancers/${id}`, {
      user: 'demo',
      body: { loadbalancer: { description: 'x' } },
    });
    assert.equal(put.status, 409);
    assert.equal(put.body.faultstring, `Invalid state PENDING_CREATE of loadbalancer resource ${id}`);
    const del = await t.request('octavia', 'DELETE', `/v2/lbaas/loadbalancers/${id}`, { user: 'demo' });
    assert.equal(del.status, 409);
    assert.equal(del.body.faultstring, `Invalid state PENDING_CREATE of loadbalancer resource ${id}`);
    assert.equal((await getLb(t, id)).body.loadbalancer.provisioning_status, 'PENDING_CREATE');
    await sim(t, 'DELETE', '/faults');
    await forceState(t, 'loadbalancer', id, { provisioning_status: 'ACTIVE' });
    assert.equal((await getLb(t, id)).body.loadbalancer.provisioning_status, 'ACTIVE');
  });

  it('updates a load balancer through PENDING_UPDATE back to ACTIVE', async () => {
    const lb = await activeLb(t, net.subnetId);
    const res = await t.request('octavia', 'PUT', `/v2/lbaas/loadbalancers/${lb.id}`, {
      user: 'demo',
      body: { loadbalancer: { name: 'renamed', description: 'new', tags: ['x', 'y'] } },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.loadbalancer.provisioning_status, 'PENDING_UPDATE');
    assert.equal(res.body.loadbalancer.name, 'renamed');
    const done = await settled(t, lb.id);
    assert.deepEqual(done.tags, ['x', 'y']);
    const vip = await t.request('octavia', 'PUT', `/v2/lbaas/loadbalancers/${lb.id}`, {
      user: 'demo',
      body: { loadbalancer: { vip_subnet_id: net.subnetId } },
    });
    assert.equal(vip.status, 400, 'the VIP cannot change');
  });

  it('journals when its worker settles a load balancer (GET /_sim/statuses), for a bench to time reactions', async () => {
    const journal = async (since: number) =>
      (await (await fetch(`${t.url}/_sim/statuses?since=${since}&service=octavia`)).json()) as {
        statuses: { seq: number; at: number; resource: string; id: string; status: string }[];
        last: number;
      };
    const { last } = await journal(0);
    const lb = await activeLb(t, net.subnetId);
    await t.request('octavia', 'PUT', `/v2/lbaas/loadbalancers/${lb.id}`, {
      user: 'demo',
      body: { loadbalancer: { description: 'touched' } },
    });
    await settled(t, lb.id);
    const deletion = await t.request('octavia', 'DELETE', `/v2/lbaas/loadbalancers/${lb.id}`, {
      user: 'demo',
    });
    assert.equal(deletion.status, 204);
    await gone(t, lb.id);
    const seen = (await journal(last)).statuses.filter((r) => r.id === lb.id);
    assert.deepEqual(
      seen.map((r) => [r.resource, r.status]),
      [
        ['loadbalancer', 'ACTIVE'],
        ['loadbalancer', 'ACTIVE'],
        ['loadbalancer', 'DELETED'],
      ],
    );
    assert.ok(seen.every((r, i) => i === 0 || (r.seq > seen[i - 1]!.seq && r.at >= seen[i - 1]!.at)));
    assert.equal((await fetch(`${t.url}/_sim/statuses?since=x`)).status, 400);
  });

  it('cascade-deletes a load balancer and everything below it, and releases the VIP port', async () => {
    const res = await t.request('octavia', 'POST', '/v2/lbaas/loadbalancers', {
      user: 'demo',
      body: {
        loadbalancer: {
          vip_subnet_id: net.subnetId,
          listeners: [
            {
              protocol: 'HTTP',
              protocol_port: 80,
              default_pool: {
                name: 'web',
                protocol: 'HTTP',
                lb_algorithm: 'ROUND_ROBIN',
                members: [{ address: '10.20.0.50', protocol_port: 8080 }],
                healthmonitor: { type: 'HTTP', delay: 5, timeout: 3, max_retries: 3 },
              },
            },
          ],
        },
      },
    });
    assert.equal(res.status, 201);
    const lb = await settled(t, res.body.loadbalancer.id);
    const plain = await t.request('octavia', 'DELETE', `/v2/lbaas/loadbalancers/${lb.id}`, { user: 'demo' });
    assert.equal(plain.status, 400);
    assert.equal(
      plain.body.faultstring,
      `Validation failure: Cannot delete Load Balancer ${lb.id} - it has children`,
    );
    const cascade = await t.request('octavia', 'DELETE', `/v2/lbaas/loadbalancers/${lb.id}?cascade=true`, {
      user: 'demo',
    });
    assert.equal(cascade.status, 204);
    assert.equal(cascade.body, undefined);
    const during = await getLb(t, lb.id);
    if (during.status === 200) assert.equal(during.body.loadbalancer.provisioning_status, 'PENDING_DELETE');
    await gone(t, lb.id);
    const after404 = await getLb(t, lb.id);
    assert.equal(after404.body.faultstring, `Load Balancer ${lb.id} not found.`);
    const pools = await t.request('octavia', 'GET', '/v2/lbaas/pools', { user: 'demo' });
    assert.ok(
      !pools.body.pools.some((p: { loadbalancers: { id: string }[] }) => p.loadbalancers[0]!.id === lb.id),
    );
    const port = await t.request('neutron', 'GET', `/v2.0/ports/${lb.vip_port_id}`, { user: 'demo' });
    assert.equal(port.status, 404, 'the VIP port is deleted with the load balancer');
  });

  it('isolates projects: 403 on another project, admin sees all, lists only show your own', async () => {
    const lb = await activeLb(t, net.subnetId);
    const other = await getLb(t, lb.id, 'alt_demo');
    assert.equal(other.status, 403);
    assert.equal(other.body.faultstring, 'Policy does not allow this request to be performed.');
    const otherPut = await t.request('octavia', 'PUT', `/v2/lbaas/loadbalancers/${lb.id}`, {
      user: 'alt_demo',
      body: { loadbalancer: { name: 'x' } },
    });
    assert.equal(otherPut.status, 403);
    const missing = await getLb(t, '11111111-2222-3333-4444-555555555555');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.faultstring, 'Load Balancer 11111111-2222-3333-4444-555555555555 not found.');
    assert.equal((await getLb(t, lb.id, 'admin')).status, 200);
    const altList = await t.request('octavia', 'GET', '/v2/lbaas/loadbalancers', { user: 'alt_demo' });
    assert.ok(!altList.body.loadbalancers.some((l: { id: string }) => l.id === lb.id));
    const adminList = await t.request('octavia', 'GET', '/v2/lbaas/loadbalancers', { user: 'admin' });
    assert.ok(adminList.body.loadbalancers.some((l: { id: string }) => l.id === lb.id));
    const asked = await t.request('octavia', 'GET', `/v2/lbaas/loadbalancers?project_id=${lb.project_id}`, {
      user: 'alt_demo',
    });
    assert.equal(asked.status, 403);
  });

  it('paginates with limit/marker and loadbalancers_links, filters by attribute and tags, and selects fields', async () => {
    const sub = await makeSubnet(t, '10.30.0.0/24', 'alt_demo');
    const a = await activeLb(t, sub.subnetId, { name: 'pg-a', tags: ['blue', 'prod'] }, 'alt_demo');
    const b = await activeLb(t, sub.subnetId, { name: 'pg-b', tags: ['red'] }, 'alt_demo');
    const c = await activeLb(t, sub.subnetId, { name: 'pg-c', tags: ['blue'] }, 'alt_demo');
    const list = (q: string) =>
      t.request('octavia', 'GET', `/v2/lbaas/loadbalancers${q}`, { user: 'alt_demo' }).then((r) => r.body);
    // Octavia's default order is created_at; objects the emulator makes within one second keep their
    // creation order, as a real cloud's (seconds apart) would.
    const order = [a, b, c].map((l) => l.id);
    const all = await list('');
    assert.deepEqual(
      all.loadbalancers.map((l: { id: string }) => l.id),
      order,
    );
    assert.deepEqual(all.loadbalancers_links, []);
    const page1 = await list('?limit=2');
    assert.deepEqual(
      page1.loadbalancers.map((l: { id: string }) => l.id),
      order.slice(0, 2),
    );
    const base = `${t.cloud.serviceUrl('octavia')}/v2/lbaas/loadbalancers`;
    assert.deepEqual(page1.loadbalancers_links, [
      { href: `${base}?limit=2&marker=${order[1]}`, rel: 'next' },
    ]);
    const page2 = await list(`?limit=2&marker=${order[1]}`);
    assert.deepEqual(
      page2.loadbalancers.map((l: { id: string }) => l.id),
      order.slice(2),
    );
    assert.deepEqual(page2.loadbalancers_links, [
      { href: `${base}?limit=2&marker=${order[2]}&page_reverse=True`, rel: 'previous' },
    ]);
    assert.deepEqual(
      (await list('?name=pg-b')).loadbalancers.map((l: { id: string }) => l.id),
      [b.id],
    );
    assert.deepEqual(
      (await list('?tags=blue')).loadbalancers.map((l: { id: string }) => l.id),
      order.filter((id) => id !== b.id),
    );
    assert.deepEqual(
      (await list('?tags=blue,prod')).loadbalancers.map((l: { id: string }) => l.id),
      [a.id],
    );
    assert.deepEqual(
      (await list('?not-tags=blue')).loadbalancers.map((l: { id: string }) => l.id),
      [b.id],
    );
    assert.deepEqual(
      (await list('?sort=name:desc')).loadbalancers.map((l: { name: string }) => l.name),
      ['pg-c', 'pg-b', 'pg-a'],
    );
    const fields = await list('?fields=id&fields=provisioning_status');
    assert.deepEqual(Object.keys(fields.loadbalancers[0]).sort(), ['id', 'provisioning_status']);
    const one = await t.request('octavia', 'GET', `/v2/lbaas/loadbalancers/${a.id}?fields=name`, {
      user: 'alt_demo',
    });
    assert.deepEqual(one.body.loadbalancer, { name: 'pg-a' });
    const badFilter = await t.request('octavia', 'GET', '/v2/lbaas/loadbalancers?bogus=1', {
      user: 'alt_demo',
    });
    assert.equal(badFilter.status, 400);
    const badMarker = await t.request('octavia', 'GET', '/v2/lbaas/loadbalancers?marker=nope', {
      user: 'alt_demo',
    });
    assert.equal(badMarker.body.faultstring, "Supplied pagination marker 'nope' is not valid.");
  });

  it('reports zero stats', async () => {
    const lb = await activeLb(t, net.subnetId);
    const res = await t.request('octavia', 'GET', `/v2/lbaas/loadbalancers/${lb.id}/stats`, { user: 'demo' });
    assert.deepEqual(res.body, {
      stats: { bytes_in: 0, bytes_out: 0, active_connections: 0, total_connections: 0, request_errors: 0 },
    });
  });

  it('fails over for admins only: PENDING_UPDATE, then ACTIVE', async () => {
    const lb = await activeLb(t, net.subnetId);
    const demo = await t.request('octavia', 'PUT', `/v2/lbaas/loadbalancers/${lb.id}/failover`, {
      user: 'demo',
    });
    assert.equal(demo.status, 403);
    const res = await t.request('octavia', 'PUT', `/v2/lbaas/loadbalancers/${lb.id}/failover`, {
      user: 'admin',
    });
    assert.equal(res.status, 202);
    assert.equal(res.body, undefined);
    assert.equal((await getLb(t, lb.id)).body.loadbalancer.provisioning_status, 'PENDING_UPDATE');
    await settled(t, lb.id);
  });

  it('injects ERROR on create, and lets an ERROR load balancer be deleted but not updated', async () => {
    await sim(t, 'POST', '/faults', {
      kind: 'error-on-create',
      service: 'octavia',
      resource: 'loadbalancer',
      times: 1,
    });
    const res = await t.request('octavia', 'POST', '/v2/lbaas/loadbalancers', {
      user: 'demo',
      body: { loadbalancer: { vip_subnet_id: net.subnetId } },
    });
    const lb = await settled(t, res.body.loadbalancer.id, 'ERROR');
    assert.equal(lb.operating_status, 'OFFLINE');
    const put = await t.request('octavia', 'PUT', `/v2/lbaas/loadbalancers/${lb.id}`, {
      user: 'demo',
      body: { loadbalancer: { name: 'x' } },
    });
    assert.equal(put.body.faultstring, `Invalid state ERROR of loadbalancer resource ${lb.id}`);
    const del = await t.request('octavia', 'DELETE', `/v2/lbaas/loadbalancers/${lb.id}`, { user: 'demo' });
    assert.equal(del.status, 204);
    await gone(t, lb.id);
  });

  it('keeps its objects across a state-file snapshot and restore', async () => {
    const lb = await activeLb(t, net.subnetId, { name: 'persisted' });
    const listener = await t.request('octavia', 'POST', '/v2/lbaas/listeners', {
      user: 'demo',
      body: { listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80 } },
    });
    await settled(t, lb.id);
    const pool = await t.request<{ pool: { id: string } }>('octavia', 'POST', '/v2/lbaas/pools', {
      user: 'demo',
      body: {
        pool: { listener_id: listener.body.listener.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
      },
    });
    await settled(t, lb.id);
    const poolId = pool.body.pool.id;
    const batch = await t.request('octavia', 'PUT', `/v2/lbaas/pools/${poolId}/members`, {
      user: 'demo',
      body: {
        members: [
          { address: '10.20.0.71', protocol_port: 80 },
          { address: '10.20.0.72', protocol_port: 80 },
        ],
      },
    });
    assert.equal(batch.status, 202);
    await settled(t, lb.id);
    type Members = { members: { id: string; address: string; operating_status: string }[] };
    const before = await t.request<Members>('octavia', 'GET', `/v2/lbaas/pools/${poolId}/members`, {
      user: 'demo',
    });
    await forceState(t, 'member', before.body.members[0]!.id, { operating_status: 'ERROR' });
    const snapshot = JSON.parse(JSON.stringify(t.cloud.snapshot())) as Record<string, unknown>;
    const t2 = await startSlowCloud();
    try {
      t2.cloud.restore(snapshot);
      const again = await getLb(t2, lb.id);
      assert.equal(again.status, 200);
      assert.equal(again.body.loadbalancer.name, 'persisted');
      assert.deepEqual(again.body.loadbalancer.listeners, [{ id: listener.body.listener.id }]);
      // The pool's members come back in their order, and the one forced down still degrades it.
      const members = await t2.request<Members>('octavia', 'GET', `/v2/lbaas/pools/${poolId}/members`, {
        user: 'demo',
      });
      assert.deepEqual(
        members.body.members,
        before.body.members.map((m, i) => ({
          ...m,
          operating_status: i === 0 ? 'ERROR' : m.operating_status,
        })),
      );
      const restoredPool = await t2.request<{
        pool: { members: { id: string }[]; operating_status: string };
      }>('octavia', 'GET', `/v2/lbaas/pools/${poolId}`, { user: 'demo' });
      assert.deepEqual(
        restoredPool.body.pool.members,
        before.body.members.map((m) => ({ id: m.id })),
      );
      assert.equal(restoredPool.body.pool.operating_status, 'DEGRADED');
      const del = await t2.request('octavia', 'DELETE', `/v2/lbaas/loadbalancers/${lb.id}?cascade=true`, {
        user: 'demo',
      });
      assert.equal(del.status, 204);
      await gone(t2, lb.id);
      assert.equal(getLbStatus(await getLb(t, lb.id)), 200, 'the first cloud is untouched');
    } finally {
      await t2.close();
    }
  });

  it('forces states through the admin API and keeps a targeted stuck load balancer pending', async () => {
    const lb = await activeLb(t, net.subnetId);
    await forceState(t, 'loadbalancer', lb.id, { provisioning_status: 'ERROR' });
    assert.equal((await getLb(t, lb.id)).body.loadbalancer.provisioning_status, 'ERROR');
    await forceState(t, 'loadbalancers', lb.id, { provisioning_status: 'ACTIVE' });
    await sim(t, 'POST', '/faults', {
      kind: 'stuck',
      service: 'octavia',
      resource: 'loadbalancer',
      target: lb.id,
    });
    const put = await t.request('octavia', 'PUT', `/v2/lbaas/loadbalancers/${lb.id}`, {
      user: 'demo',
      body: { loadbalancer: { name: 'stuck' } },
    });
    assert.equal(put.status, 200);
    t.cloud.scheduler.settleAll();
    assert.equal((await getLb(t, lb.id)).body.loadbalancer.provisioning_status, 'PENDING_UPDATE');
    await sim(t, 'DELETE', '/faults');
    assert.equal(
      await sim(t, 'POST', '/state/octavia/loadbalancer/nope', { provisioning_status: 'ACTIVE' }),
      404,
    );
  });
});
