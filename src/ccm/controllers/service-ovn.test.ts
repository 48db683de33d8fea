/**
 * With `lb-provider = ovn`, a Service asking for what the ovn provider cannot do still gets its load
 * balancer: each unsupported part is left out of what Octavia is sent (the emulated ovn driver
 * refuses them as ovn-octavia-provider does, so sending one would fail the create) and named in a
 * Warning Event on the Service with OCCM's reason, or ours where OCCM stays silent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event, V1Service } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import type { OpenStackClient } from '../../openstack/client.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { ShiftstackReason, UpstreamReason } from '../events.ts';
import { Annotation } from '../service/annotations.ts';
import { startCcmEnv, type CcmEnv } from '../testing/env.ts';

const WAIT = { timeoutMs: 20_000, intervalMs: 25 };
const TIMEOUT_CLIENT_DATA = 123_000;

describe('service controller with lb-provider = ovn: unsupported features degrade with Events', () => {
  let env: CcmEnv;
  let admin: OpenStackClient;
  let subnetId: string;
  let publicId: string;

  before(async () => {
    env = await startCcmEnv();
    admin = await env.target.client(env.target.admin!);
    const { subnet, publicNetwork: pub } = await env.routedSubnet('10.40.0.0/16');
    subnetId = subnet.id;
    publicId = pub.id;
    for (let i = 1; i <= 2; i++) {
      await env.api.create(kinds.Node, {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: `node-${i}` },
        status: { addresses: [{ type: 'InternalIP', address: `10.40.0.${10 + i}` }] },
      });
    }
  });
  after(async () => {
    await env?.close();
  });

  async function events(name: string): Promise<EventsV1Event[]> {
    const list = await env.api.list(kinds.EventsV1Event, { namespace: 'default' });
    return list.items.filter((e) => e.regarding?.name === name);
  }

  it('the emulated Octavia offers the ovn provider and refuses what ovn-octavia-provider refuses', async () => {
    const providers = await admin.loadBalancer.providers.list().all();
    assert.ok(providers.some((p) => p.name === 'ovn'));
    type Listener = Parameters<OpenStackClient['loadBalancer']['loadBalancers']['create']>[0]['listeners'];
    /** The message of a fully populated ovn create with this one listener, which must fail. */
    const refusal = (listener: NonNullable<Listener>[number]) =>
      env.os.loadBalancer.loadBalancers
        .create({ name: 'ovn-probe', vip_subnet_id: subnetId, provider: 'ovn', listeners: [listener] })
        .then(
          () => assert.fail(`accepted: ${JSON.stringify(listener)}`),
          (err: unknown) => String(err),
        );
    const pool = { name: 'p', protocol: 'TCP' as const, lb_algorithm: 'SOURCE_IP_PORT' as const };
    assert.match(
      await refusal({ protocol: 'TCP', protocol_port: 80, allowed_cidrs: ['10.0.0.0/8'] }),
      /OVN provider does not support allowed_cidrs option/,
    );
    assert.match(
      await refusal({
        protocol: 'TCP',
        protocol_port: 80,
        default_pool: { ...pool, lb_algorithm: 'ROUND_ROBIN' },
      }),
      /OVN provider does not support ROUND_ROBIN algorithm/,
    );
    assert.match(
      await refusal({ protocol: 'TCP', protocol_port: 80, default_pool: { ...pool, protocol: 'PROXY' } }),
      /OVN provider does not support PROXY protocol/,
    );
    assert.match(
      await refusal({
        protocol: 'TCP',
        protocol_port: 80,
        default_pool: {
          ...pool,
          healthmonitor: { type: 'HTTP', delay: 5, timeout: 3, max_retries: 1, url_path: '/healthz' },
        },
      }),
      /OVN provider does not support HTTP health monitor type/,
    );
    assert.match(
      await refusal({
        protocol: 'TCP',
        protocol_port: 80,
        default_pool: {
          ...pool,
          members: [
            { address: '10.40.0.11', protocol_port: 30080, subnet_id: subnetId, monitor_port: 31000 },
          ],
        },
      }),
      /OVN Load Balancer does not support different member monitor address or port/,
    );
    assert.deepEqual(
      (await admin.loadBalancer.loadBalancers.list({ name: 'ovn-probe' }).all()).length,
      0,
      'nothing was created',
    );
  });

  it('creates the load balancer on ovn without the unsupported parts, with an Event for each', async () => {
    const ccm = await env.startCcm({
      controllers: ['service'],
      cloudConfig: await env.cloudConf(
        '[LoadBalancer]\nlb-provider = ovn\nlb-method = SOURCE_IP_PORT\nmanage-security-groups = false\n' +
          `subnet-id = ${subnetId}\nfloating-network-id = ${publicId}\n`,
      ),
    });
    await env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'web',
        namespace: 'default',
        annotations: {
          [Annotation.TimeoutClientData]: String(TIMEOUT_CLIENT_DATA),
          [Annotation.TimeoutMemberData]: String(TIMEOUT_CLIENT_DATA),
          [Annotation.FlavorId]: '5f3e8d52-8c3a-4d5e-9f59-0a4d6a5b1c11',
          [Annotation.AvailabilityZone]: 'az-1',
          [Annotation.ProxyProtocol]: 'true',
          [Annotation.LbMethod]: 'ROUND_ROBIN',
          [Annotation.EnableHealthMonitor]: 'true',
        },
      },
      spec: {
        type: 'LoadBalancer',
        selector: { app: 'web' },
        externalTrafficPolicy: 'Local',
        loadBalancerSourceRanges: ['10.0.0.0/8'],
        ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
      },
    });

    const svc = (await eventually(
      async () => {
        const s = await env.api.get(kinds.Service, { namespace: 'default', name: 'web' });
        return s.status?.loadBalancer?.ingress?.[0]?.ip ? s : undefined;
      },
      { ...WAIT, what: 'web has an external address' },
    )) as V1Service;

    const lb = await admin.loadBalancer.loadBalancers.get(
      svc.metadata!.annotations![Annotation.LoadBalancerId]!,
    );
    assert.equal(lb.provider, 'ovn');
    assert.equal(lb.provisioning_status, 'ACTIVE');
    assert.equal(lb.flavor_id ?? null, null, 'no flavor sent');
    assert.equal(lb.availability_zone ?? null, null, 'no availability zone sent');
    const [fip] = await admin.network.floatingIps.list({ port_id: lb.vip_port_id }).all();
    assert.equal(svc.status!.loadBalancer!.ingress![0]!.ip, fip?.floating_ip_address);

    const [listener, ...more] = await admin.loadBalancer.listeners.list({ loadbalancer_id: lb.id }).all();
    assert.equal(more.length, 0);
    assert.equal(listener!.protocol, 'TCP');
    assert.notEqual(listener!.timeout_client_data, TIMEOUT_CLIENT_DATA, 'no timeouts sent');
    assert.notEqual(listener!.timeout_member_data, TIMEOUT_CLIENT_DATA, 'no timeouts sent');
    assert.deepEqual(listener!.allowed_cidrs ?? [], [], 'no allowed_cidrs sent');
    const [pool] = await admin.loadBalancer.pools.list({ loadbalancer_id: lb.id }).all();
    assert.equal(pool!.protocol, 'TCP', 'no PROXY pool');
    assert.equal(pool!.lb_algorithm, 'SOURCE_IP_PORT');
    const monitor = await admin.loadBalancer.healthMonitors.get(pool!.healthmonitor_id!);
    assert.equal(monitor.type, 'TCP', 'a TCP monitor instead of HTTP on the health check node port');
    const members = await admin.loadBalancer.members.list(pool!.id).all();
    assert.equal(members.length, 2);
    for (const m of members) assert.equal(m.monitor_port ?? null, null, 'no member monitor port');

    const warnings = await eventually(
      async () => {
        const all = (await events('web')).filter((e) => e.type === 'Warning');
        return all.some((e) => e.reason === UpstreamReason.SourceRangesIgnored) ? all : undefined;
      },
      { ...WAIT, what: 'the Warning Events' },
    );
    const notes = (reason: string) => warnings!.filter((e) => e.reason === reason).map((e) => e.note ?? '');
    const expect = (reason: string, pattern: RegExp) =>
      assert.ok(
        notes(reason).some((n) => pattern.test(n)),
        `${reason} ${pattern}: ${JSON.stringify(warnings!.map((e) => [e.reason, e.note]))}`,
      );
    expect(UpstreamReason.SourceRangesIgnored, /LoadBalancerSourceRanges are ignored.*ovn/);
    expect(UpstreamReason.AvailabilityZonesIgnored, /availability zone az-1 is not used/);
    expect(
      UpstreamReason.LbMethodUnknown,
      /does not support the ROUND_ROBIN algorithm; SOURCE_IP_PORT is used/,
    );
    expect(
      ShiftstackReason.OptionIgnored,
      /listener timeouts are not set: the ovn provider does not support it/,
    );
    expect(ShiftstackReason.OptionIgnored, /flavor 5f3e8d52-8c3a-4d5e-9f59-0a4d6a5b1c11 is not used/);
    expect(ShiftstackReason.OptionIgnored, /does not support PROXY pools/);
    expect(ShiftstackReason.HealthMonitorDowngraded, /ovn provider has no HTTP monitors/);
    await ccm.stop();
  });
});
