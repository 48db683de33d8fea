import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { neutron, neutronError, type Neutron } from './testing/neutron.ts';

describe('neutron: subnet pools', () => {
  let t: TestCloud;
  let n: Neutron;
  before(async () => {
    t = await startTestCloud();
    n = neutron(t);
  });
  after(async () => t.close());

  const pool = async (body: Record<string, unknown>, user: 'admin' | 'demo' = 'demo') => {
    const r = await n.post('/v2.0/subnetpools', { subnetpool: body }, user);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.subnetpool;
  };
  const net = async (user: 'admin' | 'demo' = 'demo') => {
    const r = await n.post('/v2.0/networks', { network: { name: 'pool-net' } }, user);
    assert.equal(r.status, 201);
    return r.body.network.id as string;
  };
  const subnet = (body: Record<string, unknown>, user: 'admin' | 'demo' = 'demo') =>
    n.post('/v2.0/subnets', { subnet: { ip_version: 4, ...body } }, user);

  it('creates a pool with compacted prefixes, inferred family and defaulted bounds', async () => {
    const p = await pool({ name: 'p', prefixes: ['10.70.1.0/24', '10.70.0.0/24', '10.70.0.5/30'] });
    assert.deepEqual(p.prefixes, ['10.70.0.0/23']);
    assert.equal(p.ip_version, 4);
    // Strings, as Zed sends them on create, show and list.
    assert.equal(p.min_prefixlen, '8');
    assert.equal(p.max_prefixlen, '32');
    assert.equal(p.default_prefixlen, '8', 'the default prefix length defaults to the minimum');
    assert.equal(p.is_default, false);
    assert.equal(p.shared, false);
    assert.equal(p.default_quota, null);
    assert.equal(p.address_scope_id, null);
    assert.deepEqual(p.tags, []);
    const v6 = await pool({ prefixes: ['fd00:70::/48'], default_prefixlen: 64 });
    assert.equal(v6.ip_version, 6);
    assert.equal(v6.min_prefixlen, '64');
    assert.equal(v6.max_prefixlen, '128');
    const shown = await n.get(`/v2.0/subnetpools/${p.id}`, 'demo');
    assert.deepEqual(shown.body.subnetpool, p);
    const listed = await n.get('/v2.0/subnetpools?ip_version=6', 'demo');
    assert.deepEqual(
      listed.body.subnetpools.map((x: { id: string }) => x.id),
      [v6.id],
    );
    // Another project sees neither.
    neutronError(await n.get(`/v2.0/subnetpools/${p.id}`, 'alt_demo'), 404, 'SubnetPoolNotFound');
  });

  it('refuses bad pools as neutron-lib words it', async () => {
    const post = (body: Record<string, unknown>, user: 'admin' | 'demo' = 'demo') =>
      n.post('/v2.0/subnetpools', { subnetpool: body }, user);
    neutronError(
      await post({ prefixes: [] }),
      400,
      'EmptySubnetPoolPrefixList',
      'Empty subnet pool prefix list.',
    );
    neutronError(
      await post({ prefixes: ['10.0.0.0/8', 'fd00::/8'] }),
      400,
      'PrefixVersionMismatch',
      'Cannot mix IPv4 and IPv6 prefixes in a subnet pool.',
    );
    neutronError(
      await post({ prefixes: ['10.0.0.0/8'], min_prefixlen: 24, max_prefixlen: 16 }),
      400,
      'IllegalSubnetPoolPrefixBounds',
      'Illegal prefix bounds: min_prefixlen=24, max_prefixlen=16.',
    );
    neutronError(
      await post({ prefixes: ['10.0.0.0/8'], min_prefixlen: 16, default_prefixlen: 12 }),
      400,
      'IllegalSubnetPoolPrefixBounds',
      'Illegal prefix bounds: default_prefixlen=12, min_prefixlen=16.',
    );
    neutronError(
      await post({ prefixes: ['10.0.0.0/8'], max_prefixlen: 33 }),
      400,
      'IllegalSubnetPoolPrefixBounds',
      'Illegal prefix bounds: max_prefixlen=33, ip_version_max=32.',
    );
    neutronError(await post({ prefixes: ['nope'] }), 400, 'HTTPBadRequest', /is not a valid IP subnet/);
    neutronError(
      await post({ prefixes: ['10.0.0.0/8'], is_default: true }),
      403,
      'PolicyNotAuthorized',
      '(rule:create_subnetpool and rule:create_subnetpool:is_default) is disallowed by policy',
    );
  });

  it('allocates the next free prefix of the requested or default length, smallest free block first', async () => {
    const p = await pool({ prefixes: ['10.80.0.0/16'], default_prefixlen: 24, max_prefixlen: 28 });
    const a = await subnet({ network_id: await net(), subnetpool_id: p.id });
    assert.equal(a.status, 201, JSON.stringify(a.body));
    assert.equal(a.body.subnet.cidr, '10.80.0.0/24');
    assert.equal(a.body.subnet.subnetpool_id, p.id);
    assert.equal(a.body.subnet.gateway_ip, '10.80.0.1');
    assert.deepEqual(a.body.subnet.allocation_pools, [{ start: '10.80.0.2', end: '10.80.0.254' }]);
    const b = await subnet({ network_id: await net(), subnetpool_id: p.id });
    assert.equal(b.body.subnet.cidr, '10.80.1.0/24');
    const small = await subnet({ network_id: await net(), subnetpool_id: p.id, prefixlen: 26 });
    assert.equal(small.body.subnet.cidr, '10.80.2.0/26');
    const small2 = await subnet({ network_id: await net(), subnetpool_id: p.id, prefixlen: 26 });
    assert.equal(small2.body.subnet.cidr, '10.80.2.64/26', 'the /26 comes from the smallest free block');
    // A freed block is handed out again.
    assert.equal((await n.del(`/v2.0/subnets/${a.body.subnet.id}`, 'demo')).status, 204);
    const again = await subnet({ network_id: await net(), subnetpool_id: p.id });
    assert.equal(again.body.subnet.cidr, '10.80.0.0/24');
    // A specific request inside free space is honoured, one over an allocation is refused.
    const specific = await subnet({ network_id: await net(), subnetpool_id: p.id, cidr: '10.80.9.0/24' });
    assert.equal(specific.body.subnet.cidr, '10.80.9.0/24');
    neutronError(
      await subnet({ network_id: await net(), subnetpool_id: p.id, cidr: '10.80.1.0/25' }),
      500,
      'SubnetAllocationError',
      'Failed to allocate subnet: Cannot allocate requested subnet from the available set of prefixes.',
    );
    neutronError(
      await subnet({ network_id: await net(), subnetpool_id: p.id, prefixlen: 30 }),
      400,
      'MaxPrefixSubnetAllocationError',
      'Unable to allocate subnet with prefix length 30, maximum allowed prefix is 28.',
    );
    neutronError(
      await subnet({ network_id: await net(), subnetpool_id: p.id, prefixlen: 4 }),
      400,
      'MinPrefixSubnetAllocationError',
      'Unable to allocate subnet with prefix length 4, minimum allowed prefix is 8.',
    );
    neutronError(
      await subnet({ network_id: await net(), subnetpool_id: p.id, cidr: '10.80.20.0/24', prefixlen: 24 }),
      400,
      'BadRequest',
      'Bad subnets request: cidr and prefixlen must not be supplied together.',
    );
    neutronError(
      await subnet({ network_id: await net(), subnetpool_id: p.id, ip_version: 6 }),
      400,
      'BadRequest',
      'Bad subnets request: Cannot allocate IPv6 subnet from IPv4 subnet pool.',
    );
    neutronError(
      await subnet({ network_id: await net(), subnetpool_id: crypto.randomUUID() }),
      404,
      'SubnetPoolNotFound',
    );
    // Subnets of one family on one network come from one pool.
    const shared = await net();
    assert.equal((await subnet({ network_id: shared, cidr: '192.168.77.0/24' })).status, 201);
    neutronError(
      await subnet({ network_id: shared, subnetpool_id: p.id }),
      400,
      'NetworkSubnetPoolAffinityError',
      'Subnets hosted on the same network must be allocated from the same subnet pool.',
    );
  });

  it('runs out of prefix space with Neutron’s 500 and counts the per-project quota', async () => {
    const p = await pool({ prefixes: ['10.90.0.0/23'], default_prefixlen: 24 });
    for (const cidr of ['10.90.0.0/24', '10.90.1.0/24']) {
      const r = await subnet({ network_id: await net(), subnetpool_id: p.id });
      assert.equal(r.body.subnet.cidr, cidr);
    }
    neutronError(
      await subnet({ network_id: await net(), subnetpool_id: p.id }),
      500,
      'SubnetAllocationError',
      'Failed to allocate subnet: Insufficient prefix space to allocate subnet size /24.',
    );
    const q = await pool({ prefixes: ['10.91.0.0/16'], default_prefixlen: 24, default_quota: 300 });
    assert.equal((await subnet({ network_id: await net(), subnetpool_id: q.id })).status, 201);
    neutronError(
      await subnet({ network_id: await net(), subnetpool_id: q.id }),
      409,
      'SubnetPoolQuotaExceeded',
      'Per-tenant subnet pool prefix quota exceeded.',
    );
  });

  it('finds the default pool, refuses a second default and a delete with allocations', async () => {
    const d = await pool(
      { prefixes: ['10.100.0.0/16'], default_prefixlen: 26, is_default: true, shared: true },
      'admin',
    );
    neutronError(
      await n.post(
        '/v2.0/subnetpools',
        { subnetpool: { prefixes: ['10.101.0.0/16'], is_default: true } },
        'admin',
      ),
      400,
      'InvalidInput',
      'Invalid input for operation: A default subnetpool for this IP family has already been set. Only one default may exist per IP family.',
    );
    const s = await subnet({ network_id: await net(), use_default_subnetpool: true });
    assert.equal(s.status, 201, JSON.stringify(s.body));
    assert.equal(s.body.subnet.subnetpool_id, d.id);
    assert.equal(s.body.subnet.cidr, '10.100.0.0/26');
    neutronError(
      await subnet({ network_id: await net(), use_default_subnetpool: true, ip_version: 6 }),
      400,
      'BadRequest',
      'Bad subnets request: No default subnetpool found for IPv6.',
    );
    neutronError(
      await n.del(`/v2.0/subnetpools/${d.id}`, 'admin'),
      400,
      'SubnetPoolDeleteError',
      'Unable to delete subnet pool: Subnet pool has existing allocations.',
    );
    assert.equal((await n.del(`/v2.0/subnets/${s.body.subnet.id}`, 'demo')).status, 204);
    assert.equal((await n.del(`/v2.0/subnetpools/${d.id}`, 'admin')).status, 204);
    neutronError(await n.get(`/v2.0/subnetpools/${d.id}`, 'admin'), 404, 'SubnetPoolNotFound');
  });

  it('updates prefixes only by growing them, tags pools and filters them by tag', async () => {
    const p = await pool({ prefixes: ['10.110.0.0/24'], default_prefixlen: 26 });
    const grown = await n.put(
      `/v2.0/subnetpools/${p.id}`,
      { subnetpool: { prefixes: ['10.110.0.0/24', '10.110.1.0/24'], name: 'grown' } },
      'demo',
    );
    assert.equal(grown.status, 200, JSON.stringify(grown.body));
    assert.deepEqual(grown.body.subnetpool.prefixes, ['10.110.0.0/23']);
    assert.equal(grown.body.subnetpool.name, 'grown');
    assert.equal(grown.body.subnetpool.revision_number, p.revision_number + 1);
    assert.equal(grown.body.subnetpool.default_prefixlen, 26, 'an update answers numbers, as Zed does');
    neutronError(
      await n.put(`/v2.0/subnetpools/${p.id}`, { subnetpool: { prefixes: ['10.110.1.0/24'] } }, 'demo'),
      400,
      'IllegalSubnetPoolPrefixUpdate',
      'Illegal update to prefixes: Existing prefixes must be a subset of the new prefixes.',
    );
    assert.equal((await n.put(`/v2.0/subnetpools/${p.id}/tags/kuryr`, undefined, 'demo')).status, 201);
    const tagged = await n.get('/v2.0/subnetpools?tags=kuryr', 'demo');
    assert.deepEqual(
      tagged.body.subnetpools.map((x: { id: string }) => x.id),
      [p.id],
    );
    const quota = await n.get(`/v2.0/quotas/${p.project_id}/details`, 'demo');
    assert.ok(quota.body.quota.subnetpool.used >= 1, JSON.stringify(quota.body.quota.subnetpool));
  });
});
