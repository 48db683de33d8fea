import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestCloud } from '../testing/harness.ts';
import {
  activeLb,
  demoCalls,
  forceState,
  getLb,
  type Net,
  settled,
  sim,
  startSlowCloudWithSubnet,
} from './testing/testkit.ts';

describe('octavia listeners, pools, members and health monitors', () => {
  let t: TestCloud;
  let net: Net;
  before(async () => ({ t, net } = await startSlowCloudWithSubnet()));
  after(async () => t.close());
  const { call, write } = demoCalls(() => t);

  it('creates listeners: PENDING_CREATE under a PENDING_UPDATE load balancer, then ACTIVE/ONLINE', async () => {
    const lb = await activeLb(t, net.subnetId);
    const res = await call('POST', '/v2/lbaas/listeners', {
      listener: { name: 'tcp80', loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80 },
    });
    assert.equal(res.status, 201);
    const l = res.body.listener;
    assert.equal(l.provisioning_status, 'PENDING_CREATE');
    assert.equal(l.connection_limit, -1);
    assert.equal(l.timeout_client_data, 50000);
    assert.equal(l.allowed_cidrs, null);
    assert.deepEqual(l.loadbalancers, [{ id: lb.id }]);
    assert.equal((await getLb(t, lb.id)).body.loadbalancer.provisioning_status, 'PENDING_UPDATE');
    await settled(t, lb.id);
    const got = await call('GET', `/v2/lbaas/listeners/${l.id}`);
    assert.equal(got.body.listener.provisioning_status, 'ACTIVE');
    assert.equal(got.body.listener.operating_status, 'ONLINE');

    const dup = await call('POST', '/v2/lbaas/listeners', {
      listener: { loadbalancer_id: lb.id, protocol: 'HTTP', protocol_port: 80 },
    });
    assert.equal(dup.status, 409);
    assert.equal(
      dup.body.faultstring,
      'Another Listener on this Load Balancer is already using protocol HTTP and protocol_port 80',
    );
    await write(lb, 'POST', '/v2/lbaas/listeners', {
      listener: { loadbalancer_id: lb.id, protocol: 'UDP', protocol_port: 80 },
    });
    const bogus = await call('POST', '/v2/lbaas/listeners', {
      listener: { loadbalancer_id: lb.id, protocol: 'BOGUS', protocol_port: 81 },
    });
    assert.equal(
      bogus.body.faultstring,
      "Invalid input for field/attribute protocol. Value: 'BOGUS'. Value should be one of: HTTP, TERMINATED_HTTPS, SCTP, UDP, PROMETHEUS, TCP, HTTPS",
    );
    const tls = await call('POST', '/v2/lbaas/listeners', {
      listener: { loadbalancer_id: lb.id, protocol: 'TERMINATED_HTTPS', protocol_port: 443 },
    });
    assert.equal(tls.status, 400);
    assert.match(tls.body.faultstring, /certificate container reference must be provided/);
    const headers = await call('POST', '/v2/lbaas/listeners', {
      listener: {
        loadbalancer_id: lb.id,
        protocol: 'TCP',
        protocol_port: 82,
        insert_headers: { 'X-Forwarded-For': 'true' },
      },
    });
    assert.equal(headers.status, 400);
    await write(lb, 'POST', '/v2/lbaas/listeners', {
      listener: {
        loadbalancer_id: lb.id,
        protocol: 'TERMINATED_HTTPS',
        protocol_port: 443,
        default_tls_container_ref: 'http://barbican/v1/containers/1',
        allowed_cidrs: ['192.0.2.0/24'],
        timeout_client_data: 1000,
        insert_headers: { 'X-Forwarded-For': 'true' },
      },
    });

    const upd = await call('PUT', `/v2/lbaas/listeners/${l.id}`, {
      listener: { description: 'x', connection_limit: 10 },
    });
    assert.equal(upd.status, 200);
    assert.equal(upd.body.listener.provisioning_status, 'PENDING_UPDATE');
    assert.ok(upd.body.listener.updated_at);
    const again = await call('PUT', `/v2/lbaas/listeners/${l.id}`, { listener: { description: 'y' } });
    assert.equal(again.status, 409);
    assert.equal(again.body.faultstring, `Load Balancer ${lb.id} is immutable and cannot be updated.`);
    await settled(t, lb.id);
    const reset = await write(lb, 'PUT', `/v2/lbaas/listeners/${l.id}`, {
      listener: { connection_limit: null },
    });
    assert.equal(reset.body.listener.connection_limit, -1);

    await write(lb, 'DELETE', `/v2/lbaas/listeners/${l.id}`);
    assert.equal((await call('GET', `/v2/lbaas/listeners/${l.id}`)).status, 404);
    const stats = await call('GET', `/v2/lbaas/listeners/${l.id}/stats`);
    assert.equal(stats.status, 404);
  });

  it('creates pools with protocol rules and one default pool per listener', async () => {
    const lb = await activeLb(t, net.subnetId);
    const udp = (
      await write(lb, 'POST', '/v2/lbaas/listeners', {
        listener: { loadbalancer_id: lb.id, protocol: 'UDP', protocol_port: 53 },
      })
    ).body.listener;
    const tcp = (
      await write(lb, 'POST', '/v2/lbaas/listeners', {
        listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80 },
      })
    ).body.listener;
    const mismatch = await call('POST', '/v2/lbaas/pools', {
      pool: { listener_id: udp.id, protocol: 'HTTP', lb_algorithm: 'ROUND_ROBIN' },
    });
    assert.equal(mismatch.status, 400);
    assert.equal(
      mismatch.body.faultstring,
      "Validation failure: The pool protocol 'HTTP' is invalid while the listener protocol is 'UDP'.",
    );
    const res = await write(lb, 'POST', '/v2/lbaas/pools', {
      pool: {
        name: 'p',
        listener_id: tcp.id,
        protocol: 'PROXY',
        lb_algorithm: 'SOURCE_IP',
        session_persistence: { type: 'SOURCE_IP' },
      },
    });
    const pool = res.body.pool;
    assert.equal(pool.provisioning_status, 'PENDING_CREATE');
    assert.deepEqual(pool.listeners, [{ id: tcp.id }]);
    assert.ok(!('healthmonitor_id' in pool));
    assert.equal(pool.session_persistence.type, 'SOURCE_IP');
    const listener = await call('GET', `/v2/lbaas/listeners/${tcp.id}`);
    assert.equal(listener.body.listener.default_pool_id, pool.id);
    const second = await call('POST', '/v2/lbaas/pools', {
      pool: { listener_id: tcp.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
    });
    assert.equal(second.status, 409);
    assert.equal(second.body.faultstring, 'This listener already has a default pool');
    const appCookie = await call('POST', '/v2/lbaas/pools', {
      pool: {
        loadbalancer_id: lb.id,
        protocol: 'HTTP',
        lb_algorithm: 'ROUND_ROBIN',
        session_persistence: { type: 'APP_COOKIE' },
      },
    });
    assert.equal(appCookie.status, 400);
    const none = await call('POST', '/v2/lbaas/pools', {
      pool: { protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
    });
    assert.equal(
      none.body.faultstring,
      'Validation failure: Must provide at least one of: loadbalancer_id, listener_id',
    );
    const orphan = await write(lb, 'POST', '/v2/lbaas/pools', {
      pool: { loadbalancer_id: lb.id, protocol: 'TCP', lb_algorithm: 'LEAST_CONNECTIONS' },
    });
    assert.equal(
      (await call('GET', `/v2/lbaas/pools/${orphan.body.pool.id}`)).body.pool.operating_status,
      'OFFLINE',
    );
    const upd = await write(lb, 'PUT', `/v2/lbaas/pools/${pool.id}`, {
      pool: { lb_algorithm: 'ROUND_ROBIN', name: 'q' },
    });
    assert.equal(upd.body.pool.provisioning_status, 'PENDING_UPDATE');
    await write(lb, 'DELETE', `/v2/lbaas/pools/${pool.id}`);
    const after = await call('GET', `/v2/lbaas/listeners/${tcp.id}`);
    assert.equal(after.body.listener.default_pool_id, null);
  });

  it('adds members, refuses duplicates, and replaces the list with the batch PUT', async () => {
    const lb = await activeLb(t, net.subnetId);
    const pool = (
      await write(lb, 'POST', '/v2/lbaas/pools', {
        pool: { loadbalancer_id: lb.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
      })
    ).body.pool;
    const members = `/v2/lbaas/pools/${pool.id}/members`;
    const m1 = (
      await write(lb, 'POST', members, {
        member: { address: '10.20.0.11', protocol_port: 8080, subnet_id: net.subnetId },
      })
    ).body.member;
    assert.equal(m1.provisioning_status, 'PENDING_CREATE');
    assert.equal(m1.operating_status, 'NO_MONITOR');
    const m2 = (await write(lb, 'POST', members, { member: { address: '10.20.0.12', protocol_port: 8080 } }))
      .body.member;
    const dup = await call('POST', members, { member: { address: '10.20.0.11', protocol_port: 8080 } });
    assert.equal(dup.status, 409);
    assert.equal(
      dup.body.faultstring,
      'Another member on this pool is already using ip 10.20.0.11 on protocol_port 8080',
    );
    const badSubnet = await call('POST', members, {
      member: {
        address: '10.20.0.13',
        protocol_port: 8080,
        subnet_id: '11111111-2222-3333-4444-555555555555',
      },
    });
    assert.equal(badSubnet.status, 400);

    const batch = await call('PUT', members, {
      members: [
        { address: '10.20.0.11', protocol_port: 8080, weight: 5 },
        { address: '10.20.0.13', protocol_port: 8080, name: 'm3' },
      ],
    });
    assert.equal(batch.status, 202);
    assert.equal(batch.body, undefined);
    const pending = await call('GET', members);
    const states = Object.fromEntries(
      pending.body.members.map((m: { address: string; provisioning_status: string }) => [
        m.address,
        m.provisioning_status,
      ]),
    );
    assert.deepEqual(states, {
      '10.20.0.11': 'PENDING_UPDATE',
      '10.20.0.12': 'PENDING_DELETE',
      '10.20.0.13': 'PENDING_CREATE',
    });
    await settled(t, lb.id);
    const after = new Map<string, any>(
      (await call('GET', members)).body.members.map((m: { address: string }) => [m.address, m]),
    );
    assert.deepEqual([...after.keys()].sort(), ['10.20.0.11', '10.20.0.13']);
    const kept = after.get('10.20.0.11');
    assert.equal(kept.id, m1.id, 'a member matched by address and port keeps its id');
    assert.equal(kept.weight, 5);
    assert.equal(kept.subnet_id, net.subnetId);
    assert.equal(after.get('10.20.0.13').name, 'm3');
    assert.equal((await call('GET', `${members}/${m2.id}`)).status, 404);

    await call('PUT', `${members}?additive_only=true`, {
      members: [{ address: '10.20.0.14', protocol_port: 8080 }],
    });
    await settled(t, lb.id);
    assert.equal((await call('GET', members)).body.members.length, 3);

    const page = await call('GET', `${members}?limit=1`);
    assert.equal(page.body.members.length, 1);
    assert.equal(page.body.members_links[0].rel, 'next');
    const upd = await write(lb, 'PUT', `${members}/${m1.id}`, {
      member: { weight: 7, admin_state_up: false },
    });
    assert.equal(upd.body.member.weight, 7);
    assert.equal((await call('GET', `${members}/${m1.id}`)).body.member.operating_status, 'OFFLINE');
    await write(lb, 'DELETE', `${members}/${m1.id}`);
    assert.equal((await call('GET', `${members}/${m1.id}`)).status, 404);
  });

  it('keeps a member only in its pool: rarely set fields set and cleared, the pool in the URL, a stuck fault and the admin API by id', async () => {
    const lb = await activeLb(t, net.subnetId);
    const listener = (
      await write(lb, 'POST', '/v2/lbaas/listeners', {
        listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80 },
      })
    ).body.listener;
    // Pool a receives the listener's traffic (it has an operating status of its own to show).
    const newPool = async (to: Record<string, string>) =>
      (
        await write(lb, 'POST', '/v2/lbaas/pools', {
          pool: { ...to, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
        })
      ).body.pool as { id: string };
    const a = await newPool({ listener_id: listener.id });
    const b = await newPool({ loadbalancer_id: lb.id });
    const inA = `/v2/lbaas/pools/${a.id}/members`;
    const inB = `/v2/lbaas/pools/${b.id}/members`;
    const plain = (await write(lb, 'POST', inA, { member: { address: '10.20.0.21', protocol_port: 80 } }))
      .body.member;
    const rare = { weight: 3, backup: true, monitor_address: '10.20.0.99', monitor_port: 9000, tags: ['x'] };
    const full = (
      await write(lb, 'POST', inA, { member: { address: '10.20.0.22', protocol_port: 80, ...rare } })
    ).body.member;
    const pick = (m: Record<string, unknown>) => Object.fromEntries(Object.keys(rare).map((k) => [k, m[k]]));
    assert.deepEqual(pick(full), rare);
    const defaults = { weight: 1, backup: false, monitor_address: null, monitor_port: null, tags: [] };
    assert.deepEqual(pick((await call('GET', `${inA}/${plain.id}`)).body.member), defaults);
    // Setting one on a member leaves the others' alone, and setting them back clears them.
    await write(lb, 'PUT', `${inA}/${plain.id}`, { member: { tags: ['y'] } });
    assert.deepEqual((await call('GET', `${inA}/${plain.id}`)).body.member.tags, ['y']);
    assert.deepEqual(pick((await call('GET', `${inA}/${full.id}`)).body.member), rare);
    await write(lb, 'PUT', `${inA}/${full.id}`, { member: defaults });
    assert.deepEqual(pick((await call('GET', `${inA}/${full.id}`)).body.member), defaults);
    assert.equal((await call('GET', `${inA}/${full.id}`)).body.member.project_id, plain.project_id);

    // A member is found through the pool its URL names, never another's.
    assert.equal((await call('GET', `${inB}/${plain.id}`)).status, 404);
    assert.equal((await call('PUT', `${inB}/${plain.id}`, { member: { weight: 2 } })).status, 404);
    assert.equal((await call('DELETE', `${inB}/${plain.id}`)).status, 404);
    assert.equal((await call('GET', `${inA}/${plain.id}`)).body.member.weight, 1);

    // The admin API and a stuck fault find a member by its id alone.
    await forceState(t, 'member', full.id, { operating_status: 'ERROR' });
    assert.equal((await call('GET', `/v2/lbaas/pools/${a.id}`)).body.pool.operating_status, 'DEGRADED');
    await forceState(t, 'member', full.id, { operating_status: null });
    assert.equal((await call('GET', `/v2/lbaas/pools/${a.id}`)).body.pool.operating_status, 'ONLINE');
    assert.equal(
      await sim(t, 'POST', '/faults', {
        kind: 'stuck',
        service: 'octavia',
        resource: 'member',
        target: full.id,
      }),
      201,
    );
    await write(lb, 'PUT', inA, {
      members: [
        { address: '10.20.0.21', protocol_port: 80 },
        { address: '10.20.0.22', protocol_port: 80 },
      ],
    });
    const states = (await call('GET', inA)).body.members.map(
      (m: { id: string; provisioning_status: string }) => [m.id, m.provisioning_status],
    );
    assert.deepEqual(states, [
      [plain.id, 'ACTIVE'],
      [full.id, 'PENDING_UPDATE'],
    ]);

    // The state file holds members as it always has: every field, the pool's id and project.
    const saved = (t.cloud.snapshot()['octavia'] as { members: Record<string, unknown>[] }).members;
    const mine = JSON.parse(JSON.stringify(saved.find((m) => m.id === plain.id)));
    assert.deepEqual(Object.keys(mine), [
      'id',
      'name',
      'project_id',
      'provisioning_status',
      'admin_state_up',
      'created_at',
      'updated_at',
      'tags',
      'pool_id',
      'address',
      'protocol_port',
      'weight',
      'backup',
      'subnet_id',
      'monitor_address',
      'monitor_port',
    ]);
    assert.equal(mine.pool_id, a.id);
    assert.deepEqual(mine.tags, ['y']);
  });

  it('attaches one health monitor per pool, with the type rules of the pool protocol', async () => {
    const lb = await activeLb(t, net.subnetId);
    const tcp = (
      await write(lb, 'POST', '/v2/lbaas/pools', {
        pool: { loadbalancer_id: lb.id, protocol: 'HTTP', lb_algorithm: 'ROUND_ROBIN' },
      })
    ).body.pool;
    const udp = (
      await write(lb, 'POST', '/v2/lbaas/pools', {
        pool: { loadbalancer_id: lb.id, protocol: 'UDP', lb_algorithm: 'ROUND_ROBIN' },
      })
    ).body.pool;
    const hm = (
      await write(lb, 'POST', '/v2/lbaas/healthmonitors', {
        healthmonitor: { pool_id: tcp.id, type: 'HTTP', delay: 5, timeout: 3, max_retries: 3 },
      })
    ).body.healthmonitor;
    assert.equal(hm.http_method, 'GET');
    assert.equal(hm.url_path, '/');
    assert.equal(hm.expected_codes, '200');
    assert.equal(hm.max_retries_down, 3);
    assert.deepEqual(hm.pools, [{ id: tcp.id }]);
    assert.equal((await call('GET', `/v2/lbaas/pools/${tcp.id}`)).body.pool.healthmonitor_id, hm.id);
    const second = await call('POST', '/v2/lbaas/healthmonitors', {
      healthmonitor: { pool_id: tcp.id, type: 'TCP', delay: 5, timeout: 3, max_retries: 3 },
    });
    assert.equal(second.status, 409);
    assert.equal(second.body.faultstring, 'This pool already has a health monitor');
    const udpHttpPing = await call('POST', '/v2/lbaas/healthmonitors', {
      healthmonitor: { pool_id: udp.id, type: 'PING', delay: 5, timeout: 3, max_retries: 3 },
    });
    assert.equal(udpHttpPing.status, 400);
    assert.match(
      udpHttpPing.body.faultstring,
      /The associated pool protocol is UDP, so only a .*UDP-CONNECT.* health monitor is supported/,
    );
    const udpConnectOnTcp = await call('POST', '/v2/lbaas/healthmonitors', {
      healthmonitor: { pool_id: tcp.id, type: 'UDP-CONNECT', delay: 5, timeout: 3, max_retries: 3 },
    });
    assert.equal(udpConnectOnTcp.status, 400);
    const tcpWithPath = await call('POST', '/v2/lbaas/healthmonitors', {
      healthmonitor: { pool_id: udp.id, type: 'TCP', delay: 5, timeout: 3, max_retries: 3, url_path: '/x' },
    });
    assert.equal(
      tcpWithPath.body.faultstring,
      'url_path is not a valid option for health monitors of type TCP',
    );
    const udpHm = (
      await write(lb, 'POST', '/v2/lbaas/healthmonitors', {
        healthmonitor: { pool_id: udp.id, type: 'UDP-CONNECT', delay: 5, timeout: 3, max_retries: 3 },
      })
    ).body.healthmonitor;
    assert.equal(udpHm.http_method, null);
    const upd = await write(lb, 'PUT', `/v2/lbaas/healthmonitors/${hm.id}`, {
      healthmonitor: { delay: 10, url_path: '/health' },
    });
    assert.equal(upd.body.healthmonitor.url_path, '/health');
    assert.equal(
      (await call('GET', `/v2/lbaas/healthmonitors/${hm.id}`)).body.healthmonitor.operating_status,
      'ONLINE',
    );
    await write(lb, 'DELETE', `/v2/lbaas/healthmonitors/${hm.id}`);
    assert.equal('healthmonitor_id' in (await call('GET', `/v2/lbaas/pools/${tcp.id}`)).body.pool, false);
  });

  it('derives operating status: members down make the pool DEGRADED then ERROR, and the load balancer follows', async () => {
    const res = await call('POST', '/v2/lbaas/loadbalancers', {
      loadbalancer: {
        vip_subnet_id: net.subnetId,
        listeners: [
          {
            name: 'l',
            protocol: 'TCP',
            protocol_port: 80,
            default_pool: {
              name: 'p',
              protocol: 'TCP',
              lb_algorithm: 'ROUND_ROBIN',
              healthmonitor: { type: 'TCP', delay: 5, timeout: 3, max_retries: 3 },
              members: [
                { address: '10.20.0.61', protocol_port: 80 },
                { address: '10.20.0.62', protocol_port: 80 },
              ],
            },
          },
        ],
      },
    });
    const lb = await settled(t, res.body.loadbalancer.id);
    const tree = async () =>
      (await call('GET', `/v2/lbaas/loadbalancers/${lb.id}/status`)).body.statuses.loadbalancer;
    let s = await tree();
    assert.equal(s.operating_status, 'ONLINE');
    assert.equal(s.listeners[0].operating_status, 'ONLINE');
    assert.equal(s.listeners[0].pools[0].operating_status, 'ONLINE');
    assert.equal(s.listeners[0].pools[0].health_monitor.operating_status, 'ONLINE');
    assert.deepEqual(
      s.listeners[0].pools[0].members.map((m: { operating_status: string }) => m.operating_status),
      ['ONLINE', 'ONLINE'],
    );
    const [m1, m2] = s.listeners[0].pools[0].members;
    await forceState(t, 'member', m1.id, { operating_status: 'ERROR' });
    s = await tree();
    assert.equal(s.listeners[0].pools[0].members[0].operating_status, 'ERROR');
    assert.equal(s.listeners[0].pools[0].operating_status, 'DEGRADED');
    assert.equal(s.operating_status, 'DEGRADED');
    await forceState(t, 'member', m2.id, { operating_status: 'ERROR' });
    s = await tree();
    assert.equal(s.listeners[0].pools[0].operating_status, 'ERROR');
    assert.equal(s.operating_status, 'ERROR');
    assert.equal((await getLb(t, lb.id)).body.loadbalancer.operating_status, 'ERROR');
    await forceState(t, 'member', m1.id, { operating_status: null });
    await forceState(t, 'member', m2.id, { operating_status: null });
    assert.equal((await tree()).operating_status, 'ONLINE');
    await write(lb, 'PUT', `/v2/lbaas/loadbalancers/${lb.id}`, { loadbalancer: { admin_state_up: false } });
    assert.equal((await tree()).operating_status, 'OFFLINE');
  });

  it('creates a fully populated load balancer whose children go ACTIVE with it', async () => {
    const res = await call('POST', '/v2/lbaas/loadbalancers', {
      loadbalancer: {
        name: 'full',
        vip_subnet_id: net.subnetId,
        listeners: [
          {
            name: 'l-tcp',
            protocol: 'TCP',
            protocol_port: 443,
            default_pool: {
              name: 'p-tcp',
              protocol: 'TCP',
              lb_algorithm: 'LEAST_CONNECTIONS',
              healthmonitor: { type: 'TCP', delay: 5, timeout: 3, max_retries: 2 },
              members: [{ address: '10.20.0.21', protocol_port: 443 }],
            },
          },
          {
            name: 'l-http',
            protocol: 'HTTP',
            protocol_port: 80,
            default_pool: { name: 'p-web', protocol: 'HTTP', lb_algorithm: 'ROUND_ROBIN' },
            l7policies: [
              {
                action: 'REDIRECT_TO_POOL',
                redirect_pool: { name: 'p-api' },
                rules: [{ type: 'PATH', compare_type: 'STARTS_WITH', value: '/api' }],
              },
            ],
          },
        ],
        pools: [{ name: 'p-api', protocol: 'HTTP', lb_algorithm: 'SOURCE_IP' }],
      },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const full = res.body.loadbalancer;
    assert.equal(full.listeners.length, 2);
    assert.equal(full.pools.length, 3);
    assert.equal(full.listeners[0].provisioning_status, 'PENDING_CREATE');
    assert.ok(!('loadbalancers' in full.listeners[0]));
    const pTcp = full.pools.find((p: { name: string }) => p.name === 'p-tcp');
    assert.equal(pTcp.members.length, 1);
    assert.equal(pTcp.healthmonitor, null, 'Octavia prints no nested monitor in this response');
    assert.equal(full.listeners[1].l7policies[0].rules[0].value, '/api');
    await settled(t, full.id);
    const tree = (await call('GET', `/v2/lbaas/loadbalancers/${full.id}/status`)).body.statuses.loadbalancer;
    for (const l of tree.listeners) {
      assert.equal(l.provisioning_status, 'ACTIVE');
      for (const p of l.pools) {
        assert.equal(p.provisioning_status, 'ACTIVE');
        for (const m of p.members) assert.equal(m.provisioning_status, 'ACTIVE');
      }
    }
    assert.equal(tree.listeners[1].pools.length, 2, 'default pool and L7 redirect pool');
    const policies = await call('GET', '/v2/lbaas/l7policies');
    assert.ok(
      policies.body.l7policies.some((p: { listener_id: string }) => p.listener_id === full.listeners[1].id),
    );

    const unnamed = await call('POST', '/v2/lbaas/loadbalancers', {
      loadbalancer: {
        vip_subnet_id: net.subnetId,
        listeners: [
          {
            protocol: 'TCP',
            protocol_port: 80,
            default_pool: { protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
          },
        ],
      },
    });
    assert.equal(unnamed.status, 400);
    assert.equal(
      unnamed.body.faultstring,
      'Validation failure: Pools must be named when creating a fully populated loadbalancer.',
    );
    const dupPorts = await call('POST', '/v2/lbaas/loadbalancers', {
      loadbalancer: {
        vip_subnet_id: net.subnetId,
        listeners: [
          { protocol: 'TCP', protocol_port: 80 },
          { protocol: 'HTTP', protocol_port: 80 },
        ],
      },
    });
    assert.equal(dupPorts.status, 409);
  });

  it('manages L7 policies and rules on HTTP listeners', async () => {
    const lb = await activeLb(t, net.subnetId);
    const l = (
      await write(lb, 'POST', '/v2/lbaas/listeners', {
        listener: { loadbalancer_id: lb.id, protocol: 'HTTP', protocol_port: 80 },
      })
    ).body.listener;
    const missingUrl = await call('POST', '/v2/lbaas/l7policies', {
      l7policy: { listener_id: l.id, action: 'REDIRECT_TO_URL' },
    });
    assert.equal(missingUrl.body.faultstring, 'Invalid L7 Policy arguments: redirect_url must not be None');
    const p = (
      await write(lb, 'POST', '/v2/lbaas/l7policies', {
        l7policy: { listener_id: l.id, action: 'REDIRECT_TO_URL', redirect_url: 'https://example.com' },
      })
    ).body.l7policy;
    assert.equal(p.redirect_http_code, 302);
    assert.equal(p.position, 1);
    const rule = (
      await write(lb, 'POST', `/v2/lbaas/l7policies/${p.id}/rules`, {
        rule: { type: 'HEADER', compare_type: 'EQUAL_TO', key: 'X-Env', value: 'prod' },
      })
    ).body.rule;
    assert.equal(rule.provisioning_status, 'PENDING_CREATE');
    const noKey = await call('POST', `/v2/lbaas/l7policies/${p.id}/rules`, {
      rule: { type: 'COOKIE', compare_type: 'EQUAL_TO', value: 'x' },
    });
    assert.equal(noKey.status, 400);
    const listener = await call('GET', `/v2/lbaas/listeners/${l.id}`);
    assert.deepEqual(listener.body.listener.l7policies, [{ id: p.id }]);
    await write(lb, 'DELETE', `/v2/lbaas/l7policies/${p.id}`);
    assert.equal((await call('GET', `/v2/lbaas/l7policies/${p.id}/rules/${rule.id}`)).status, 404);
  });

  it('injects ERROR into a child create and keeps the load balancer usable', async () => {
    const lb = await activeLb(t, net.subnetId);
    await sim(t, 'POST', '/faults', {
      kind: 'error-on-create',
      service: 'octavia',
      resource: 'listener',
      times: 1,
    });
    const l = (
      await write(lb, 'POST', '/v2/lbaas/listeners', {
        listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80 },
      })
    ).body.listener;
    const got = await call('GET', `/v2/lbaas/listeners/${l.id}`);
    assert.equal(got.body.listener.provisioning_status, 'ERROR');
    assert.equal((await getLb(t, lb.id)).body.loadbalancer.provisioning_status, 'ACTIVE');
  });

  it('leaves a pool pinned by a stuck fault PENDING_UPDATE under an ACTIVE load balancer, refusing member writes with 409', async () => {
    const lb = await activeLb(t, net.subnetId);
    const listener = (
      await write(lb, 'POST', '/v2/lbaas/listeners', {
        listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80 },
      })
    ).body.listener;
    const pool = (
      await write(lb, 'POST', '/v2/lbaas/pools', {
        pool: { listener_id: listener.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
      })
    ).body.pool;
    const members = `/v2/lbaas/pools/${pool.id}/members`;
    const fault = await fetch(`${t.url}/_sim/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'stuck', service: 'octavia', resource: 'pool', target: pool.id }),
    });
    assert.equal(fault.status, 201);
    const faultId = ((await fault.json()) as { fault: { id: string } }).fault.id;
    await write(lb, 'PUT', members, { members: [{ address: '10.20.0.11', protocol_port: 80 }] });
    assert.equal((await getLb(t, lb.id)).body.loadbalancer.provisioning_status, 'ACTIVE');
    const stuck = (await call('GET', `/v2/lbaas/pools/${pool.id}`)).body.pool;
    assert.equal(stuck.provisioning_status, 'PENDING_UPDATE');
    const [member] = (await call('GET', members)).body.members;
    assert.equal(member.provisioning_status, 'ACTIVE', 'only the pinned pool stays behind');
    const tree = (await call('GET', `/v2/lbaas/loadbalancers/${lb.id}/status`)).body.statuses.loadbalancer;
    assert.equal(tree.provisioning_status, 'ACTIVE');
    assert.equal(tree.listeners[0].pools[0].provisioning_status, 'PENDING_UPDATE');

    const refused = await call('PUT', members, { members: [{ address: '10.20.0.12', protocol_port: 80 }] });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.faultstring, `Pool ${pool.id} is immutable and cannot be updated.`);

    // Removing the fault settles nothing by itself: an operator resets the pool (Octavia's database).
    assert.equal(await sim(t, 'DELETE', `/faults/${faultId}`), 204);
    t.cloud.scheduler.settleAll();
    assert.equal(
      (await call('GET', `/v2/lbaas/pools/${pool.id}`)).body.pool.provisioning_status,
      'PENDING_UPDATE',
    );
    await forceState(t, 'pool', pool.id, { provisioning_status: 'ACTIVE' });
    await write(lb, 'PUT', members, { members: [{ address: '10.20.0.12', protocol_port: 80 }] });
    assert.equal((await call('GET', `/v2/lbaas/pools/${pool.id}`)).body.pool.provisioning_status, 'ACTIVE');
  });
});
