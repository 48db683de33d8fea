import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestCloud } from '../testing/harness.ts';
import {
  activeLb,
  demoCalls,
  forceState,
  getLb,
  gone,
  type Net,
  startSlowCloudWithSubnet,
} from './testing/testkit.ts';

describe('octavia providers', () => {
  let t: TestCloud;
  let net: Net;
  before(async () => ({ t, net } = await startSlowCloudWithSubnet()));
  after(async () => t.close());
  const { call, write } = demoCalls(() => t);

  const ovnRefusal = (res: { status: number; body: { faultstring: string } }, message: string) => {
    assert.equal(res.status, 501);
    assert.equal(res.body.faultstring, `Provider 'ovn' does not support a requested option: ${message}`);
  };

  it('lists the enabled providers, and empty flavor and availability zone catalogs', async () => {
    const res = await call('GET', '/v2/lbaas/providers');
    assert.deepEqual(
      res.body.providers.map((p: { name: string }) => p.name),
      ['amphora', 'octavia', 'ovn', 'noop_driver'],
    );
    assert.deepEqual((await call('GET', '/v2/lbaas/flavors')).body, { flavors: [], flavors_links: [] });
    assert.equal((await call('GET', '/v2/lbaas/flavorprofiles')).status, 403);
    assert.deepEqual((await call('GET', '/v2/lbaas/availabilityzones')).body, {
      availability_zones: [],
      availability_zones_links: [],
    });
    const flavor = await call('POST', '/v2/lbaas/loadbalancers', {
      loadbalancer: { vip_subnet_id: net.subnetId, flavor_id: '11111111-2222-3333-4444-555555555555' },
    });
    assert.equal(flavor.body.faultstring, 'Validation failure: Invalid flavor_id.');
  });

  it('serves flavors: admin-made profiles and flavors, a flavor deciding the provider of a load balancer', async () => {
    const admin = (method: string, path: string, body?: unknown) =>
      t.request('octavia', method, path, { user: 'admin', ...(body ? { body } : {}) });
    const refused = await call('POST', '/v2/lbaas/flavorprofiles', {
      flavorprofile: { name: 'p', provider_name: 'amphora', flavor_data: '{}' },
    });
    assert.equal(refused.status, 403);
    const profile = await admin('POST', '/v2/lbaas/flavorprofiles', {
      flavorprofile: {
        name: 'single',
        provider_name: 'amphora',
        flavor_data: '{"loadbalancer_topology": "SINGLE"}',
      },
    });
    assert.equal(profile.status, 201);
    const made = await admin('POST', '/v2/lbaas/flavors', {
      flavor: { name: 'small', description: 'one amphora', flavor_profile_id: profile.body.flavorprofile.id },
    });
    assert.equal(made.status, 201);
    const flavor = made.body.flavor;
    assert.equal(flavor.enabled, true);
    // A user sees the flavor, never its profile.
    const listed = await call('GET', '/v2/lbaas/flavors');
    assert.deepEqual(listed.body.flavors, [
      { id: flavor.id, name: 'small', description: 'one amphora', enabled: true },
    ]);

    const lb = await activeLb(t, net.subnetId, { flavor_id: flavor.id });
    assert.equal(lb.flavor_id, flavor.id);
    assert.equal(lb.provider, 'amphora');
    const mismatch = await call('POST', '/v2/lbaas/loadbalancers', {
      loadbalancer: { vip_subnet_id: net.subnetId, flavor_id: flavor.id, provider: 'ovn' },
    });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.body.faultstring, `Flavor '${flavor.id}' is not compatible with provider 'ovn'`);
    assert.equal((await admin('DELETE', `/v2/lbaas/flavors/${flavor.id}`)).status, 409);

    await admin('PUT', `/v2/lbaas/flavors/${flavor.id}`, { flavor: { enabled: false } });
    const disabled = await call('POST', '/v2/lbaas/loadbalancers', {
      loadbalancer: { vip_subnet_id: net.subnetId, flavor_id: flavor.id },
    });
    assert.equal(disabled.status, 400);
    assert.equal(
      disabled.body.faultstring,
      `The selected flavor is not allowed in this deployment: ${flavor.id}`,
    );
    assert.equal(
      (await admin('DELETE', `/v2/lbaas/flavorprofiles/${profile.body.flavorprofile.id}`)).status,
      409,
      'a profile in use stays',
    );
    assert.equal((await call('DELETE', `/v2/lbaas/loadbalancers/${lb.id}?cascade=true`)).status, 204);
    await gone(t, lb.id);
    assert.equal((await admin('DELETE', `/v2/lbaas/flavors/${flavor.id}`)).status, 204);
    assert.equal((await call('GET', `/v2/lbaas/flavors/${flavor.id}`)).status, 404);
  });

  it('refuses with amphora what amphora cannot do (SOURCE_IP_PORT)', async () => {
    const lb = await activeLb(t, net.subnetId);
    const res = await call('POST', '/v2/lbaas/pools', {
      pool: { loadbalancer_id: lb.id, protocol: 'TCP', lb_algorithm: 'SOURCE_IP_PORT' },
    });
    assert.equal(res.status, 501);
    assert.equal(
      res.body.faultstring,
      "Provider 'amphora' does not support a requested option: Amphora provider does not support SOURCE_IP_PORT algorithm.",
    );
  });

  it('creates ovn load balancers with an ovn-lb-vip port, and refuses what the ovn provider does not support', async () => {
    const lb = await activeLb(t, net.subnetId, { provider: 'ovn' });
    assert.equal(lb.provider, 'ovn');
    const port = await t.request('neutron', 'GET', `/v2.0/ports/${lb.vip_port_id}`, { user: 'demo' });
    assert.equal(port.body.port.name, `ovn-lb-vip-${lb.id}`);

    ovnRefusal(
      await call('POST', '/v2/lbaas/listeners', {
        listener: { loadbalancer_id: lb.id, protocol: 'HTTP', protocol_port: 80 },
      }),
      'OVN provider does not support HTTP protocol',
    );
    ovnRefusal(
      await call('POST', '/v2/lbaas/listeners', {
        listener: {
          loadbalancer_id: lb.id,
          protocol: 'TCP',
          protocol_port: 80,
          allowed_cidrs: ['10.0.0.0/8'],
        },
      }),
      'OVN provider does not support allowed_cidrs option',
    );
    assert.equal(
      (await getLb(t, lb.id)).body.loadbalancer.provisioning_status,
      'ACTIVE',
      'a refusal changes nothing',
    );
    const tcp = (
      await write(lb, 'POST', '/v2/lbaas/listeners', {
        listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80, timeout_client_data: 1000 },
      })
    ).body.listener;
    ovnRefusal(
      await call('POST', '/v2/lbaas/pools', {
        pool: { listener_id: tcp.id, protocol: 'TCP', lb_algorithm: 'ROUND_ROBIN' },
      }),
      'OVN provider does not support ROUND_ROBIN algorithm',
    );
    ovnRefusal(
      await call('POST', '/v2/lbaas/pools', {
        pool: { listener_id: tcp.id, protocol: 'PROXY', lb_algorithm: 'SOURCE_IP_PORT' },
      }),
      'OVN provider does not support PROXY protocol',
    );
    ovnRefusal(
      await call('POST', '/v2/lbaas/pools', {
        pool: {
          loadbalancer_id: lb.id,
          protocol: 'TCP',
          lb_algorithm: 'SOURCE_IP_PORT',
          session_persistence: { type: 'APP_COOKIE', cookie_name: 'sid' },
        },
      }),
      'OVN provider does not support APP_COOKIE session persistence. Only SOURCE_IP type is supported.',
    );
    const pool = (
      await write(lb, 'POST', '/v2/lbaas/pools', {
        pool: { listener_id: tcp.id, protocol: 'TCP', lb_algorithm: 'SOURCE_IP_PORT' },
      })
    ).body.pool;
    ovnRefusal(
      await call('POST', '/v2/lbaas/healthmonitors', {
        healthmonitor: { pool_id: pool.id, type: 'HTTP', delay: 5, timeout: 3, max_retries: 3 },
      }),
      'OVN provider does not support HTTP health monitor type. Supported types: UDP-CONNECT, TCP',
    );
    ovnRefusal(
      await call('POST', `/v2/lbaas/pools/${pool.id}/members`, {
        member: { address: '10.20.0.9', protocol_port: 80, monitor_port: 81 },
      }),
      'OVN Load Balancer does not support different member monitor address or port.',
    );
    await write(lb, 'POST', '/v2/lbaas/healthmonitors', {
      healthmonitor: { pool_id: pool.id, type: 'TCP', delay: 5, timeout: 3, max_retries: 3 },
    });
    const failover = await t.request('octavia', 'PUT', `/v2/lbaas/loadbalancers/${lb.id}/failover`, {
      user: 'admin',
    });
    ovnRefusal(failover, 'OVN provider does not support loadbalancer failover');

    const graph = await call('POST', '/v2/lbaas/loadbalancers', {
      loadbalancer: {
        vip_subnet_id: net.subnetId,
        provider: 'ovn',
        listeners: [{ protocol: 'HTTPS', protocol_port: 443 }],
      },
    });
    ovnRefusal(graph, 'OVN provider does not support HTTPS protocol');

    assert.equal((await call('DELETE', `/v2/lbaas/loadbalancers/${lb.id}?cascade=true`)).status, 204);
    await gone(t, lb.id);
    const port2 = await t.request('neutron', 'GET', `/v2.0/ports/${lb.vip_port_id}`, { user: 'demo' });
    assert.equal(port2.status, 404);
  });

  it('refuses L7 policies on ovn as an unimplemented action', async () => {
    const lb = await activeLb(t, net.subnetId, { provider: 'ovn' });
    const l = (
      await write(lb, 'POST', '/v2/lbaas/listeners', {
        listener: { loadbalancer_id: lb.id, protocol: 'TCP', protocol_port: 80 },
      })
    ).body.listener;
    const res = await call('POST', '/v2/lbaas/l7policies', {
      l7policy: { listener_id: l.id, action: 'REJECT' },
    });
    assert.equal(res.status, 501);
    assert.equal(
      res.body.faultstring,
      "Provider 'ovn' does not support a requested action: This provider does not support creating l7policies.",
    );
  });

  it('leaves noop_driver load balancers PENDING_CREATE, immutable even to DELETE until forced to ERROR', async () => {
    const res = await call('POST', '/v2/lbaas/loadbalancers', {
      loadbalancer: { name: 'noop', vip_subnet_id: net.subnetId, provider: 'noop_driver' },
    });
    assert.equal(res.status, 201);
    const lb = res.body.loadbalancer;
    assert.equal(lb.provider, 'noop_driver');
    assert.equal(lb.vip_address, '198.0.2.5');
    t.cloud.scheduler.settleAll();
    assert.equal((await getLb(t, lb.id)).body.loadbalancer.provisioning_status, 'PENDING_CREATE');
    const del = await call('DELETE', `/v2/lbaas/loadbalancers/${lb.id}?cascade=true`);
    assert.equal(del.status, 409);
    assert.equal(del.body.faultstring, `Invalid state PENDING_CREATE of loadbalancer resource ${lb.id}`);
    await forceState(t, 'loadbalancer', lb.id, { provisioning_status: 'ERROR' });
    const retry = await call('DELETE', `/v2/lbaas/loadbalancers/${lb.id}?cascade=true`);
    assert.equal(retry.status, 204);
    assert.equal((await getLb(t, lb.id)).body.loadbalancer.provisioning_status, 'PENDING_DELETE');
  });
});
