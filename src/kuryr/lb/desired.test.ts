import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { desiredLoadBalancer, type DesiredInputs } from './desired.ts';
import type { KlbSpec, KlbStatus } from './klb.ts';
import { providerChanged } from './provider.ts';
import { statusMatches } from './status.ts';

const spec = (extra: Partial<KlbSpec> = {}): KlbSpec => ({
  ip: '172.30.0.10',
  subnet_id: 'svc-subnet',
  project_id: 'p',
  type: 'ClusterIP',
  ports: [
    { name: 'http', port: 80, protocol: 'TCP', targetPort: 'http' },
    { name: 'dns', port: 53, protocol: 'UDP', targetPort: '5353' },
  ],
  endpointSlices: [
    {
      ports: [
        { name: 'http', port: 8080, protocol: 'TCP' },
        { name: 'dns', port: 5353, protocol: 'UDP' },
      ],
      endpoints: [
        {
          addresses: ['10.128.0.5'],
          conditions: { ready: true },
          targetRef: { kind: 'Pod', namespace: 'shop', name: 'web-b' },
        },
        { addresses: ['10.128.0.4'], targetRef: { kind: 'Pod', namespace: 'shop', name: 'web-a' } },
        {
          addresses: ['10.128.0.6'],
          conditions: { ready: false },
          targetRef: { kind: 'Pod', namespace: 'shop', name: 'web-c' },
        },
      ],
    },
  ],
  ...extra,
});

const input = (extra: Partial<DesiredInputs> = {}): DesiredInputs => ({
  namespace: 'shop',
  name: 'web',
  spec: spec(),
  tags: ['kuryr-cluster-a'],
  memberMode: 'L3',
  lbAlgorithm: 'ROUND_ROBIN',
  ...extra,
});

describe('desiredLoadBalancer (KLB spec → engine)', () => {
  it('VIP = clusterIP on the service subnet; a listener and pool per port; a member per ready address', () => {
    const { desired, pending, unsupported } = desiredLoadBalancer(input());
    assert.deepEqual(pending, []);
    assert.deepEqual(unsupported, []);
    assert.equal(desired.identity.name, 'shop/web');
    assert.deepEqual(desired.identity.tags, ['kuryr-cluster-a']);
    assert.deepEqual(desired.vip, { subnetId: 'svc-subnet', address: '172.30.0.10' });
    assert.equal(desired.provider, undefined);
    assert.equal(desired.floatingIp, undefined, 'a ClusterIP Service never touches floating IPs');
    assert.deepEqual(
      desired.listeners.map((l) => [l.name, l.protocol, l.port, l.pool.name, l.pool.algorithm]),
      [
        ['shop/web:TCP:80', 'TCP', 80, 'shop/web:TCP:80', 'ROUND_ROBIN'],
        ['shop/web:UDP:53', 'UDP', 53, 'shop/web:UDP:53', 'ROUND_ROBIN'],
      ],
    );
    assert.deepEqual(desired.listeners[0]!.pool.members, [
      { name: 'shop/web-a:8080', address: '10.128.0.4', port: 8080, subnetId: 'svc-subnet' },
      { name: 'shop/web-b:8080', address: '10.128.0.5', port: 8080, subnetId: 'svc-subnet' },
    ]);
    assert.deepEqual(
      desired.listeners[1]!.pool.members.map((m) => [m.address, m.port]),
      [
        ['10.128.0.4', 5353],
        ['10.128.0.5', 5353],
      ],
    );
  });

  it('L2 member mode: each member on its pod subnet; one not known yet is pending, not guessed', () => {
    const { desired, pending } = desiredLoadBalancer(
      input({ memberMode: 'L2', memberSubnets: new Map([['10.128.0.4', 'ns-subnet']]) }),
    );
    assert.deepEqual(pending, ['10.128.0.5']);
    assert.deepEqual(
      desired.listeners[0]!.pool.members.map((m) => [m.address, m.subnetId]),
      [['10.128.0.4', 'ns-subnet']],
    );
  });

  it('ovn: SOURCE_IP_PORT pools and no listener timeouts; amphora gets the timeouts', () => {
    const timeouts = { timeout_client_data: 70_000, timeout_member_data: 75_000 };
    const ovn = desiredLoadBalancer(input({ spec: spec({ provider: 'ovn', ...timeouts }) })).desired;
    assert.equal(ovn.provider, 'ovn');
    assert.deepEqual(
      ovn.listeners.map((l) => [l.pool.algorithm, l.timeouts]),
      [
        ['SOURCE_IP_PORT', undefined],
        ['SOURCE_IP_PORT', undefined],
      ],
    );
    const amphora = desiredLoadBalancer(input({ spec: spec(timeouts) })).desired;
    assert.deepEqual(amphora.listeners[0]!.timeouts, { clientData: 70_000, memberData: 75_000 });
  });

  it('LoadBalancer: a floating IP, loadBalancerIP adopted; released once the Service is ClusterIP again', () => {
    const lb = desiredLoadBalancer(
      input({ spec: spec({ type: 'LoadBalancer', lb_ip: '172.24.4.50' }), publicNetworkId: 'public' }),
    ).desired;
    assert.equal(lb.floatingIp?.external, true);
    assert.equal(lb.floatingIp?.address, '172.24.4.50');
    assert.equal(lb.floatingIp?.networkId, 'public');
    assert.ok(lb.floatingIp?.description.includes(lb.floatingIp.ownedMarker));
    assert.doesNotMatch(lb.floatingIp.ownedMarker, /Kubernetes external service/, "never the ccm's marker");

    const back = desiredLoadBalancer(
      input({
        status: { service_pub_ip_info: { ip_id: 'f', ip_addr: '172.24.4.50', alloc_method: 'user' } },
      }),
    ).desired;
    assert.equal(back.floatingIp?.external, false);
  });

  it('the recorded load balancer id is looked up first; unknown protocols are reported, not sent', () => {
    const { desired, unsupported } = desiredLoadBalancer(
      input({
        spec: spec({ ports: [{ name: 'x', port: 1, protocol: 'HTTP3', targetPort: '1' }] }),
        status: {
          loadbalancer: {
            id: 'lb-1',
            ip: '172.30.0.10',
            name: 'shop/web',
            port_id: 'vip',
            project_id: 'p',
            provider: 'amphora',
            security_groups: [],
            subnet_id: 'svc-subnet',
          },
        },
      }),
    );
    assert.equal(desired.identity.id, 'lb-1');
    assert.deepEqual(desired.listeners, []);
    assert.deepEqual(unsupported, ['x HTTP3/1']);
  });
});

describe('providerChanged (upstream amphora ↔ ovn rule)', () => {
  it('remakes only across the default/other divide', () => {
    assert.equal(providerChanged('amphora', 'ovn'), true);
    assert.equal(providerChanged('ovn', undefined), true);
    assert.equal(providerChanged('ovn', 'amphora'), true);
    assert.equal(providerChanged('amphora', undefined), false);
    assert.equal(providerChanged('octavia', 'amphora'), false);
    assert.equal(providerChanged(undefined, 'ovn'), false);
  });
});

describe('statusMatches (a recorded status that describes the desired load balancer costs no Octavia call)', () => {
  const { desired } = desiredLoadBalancer(input());
  const recorded = (): KlbStatus => ({
    loadbalancer: {
      id: 'lb',
      ip: '172.30.0.10',
      name: 'shop/web',
      port_id: 'vip',
      project_id: 'p',
      provider: 'amphora',
      security_groups: [],
      subnet_id: 'svc-subnet',
    },
    listeners: [
      {
        id: 'l1',
        loadbalancer_id: 'lb',
        name: 'shop/web:TCP:80',
        port: 80,
        project_id: 'p',
        protocol: 'TCP',
      },
      {
        id: 'l2',
        loadbalancer_id: 'lb',
        name: 'shop/web:UDP:53',
        port: 53,
        project_id: 'p',
        protocol: 'UDP',
      },
    ],
    pools: [
      {
        id: 'p1',
        listener_id: 'l1',
        loadbalancer_id: 'lb',
        name: 'shop/web:TCP:80',
        project_id: 'p',
        protocol: 'TCP',
      },
      {
        id: 'p2',
        listener_id: 'l2',
        loadbalancer_id: 'lb',
        name: 'shop/web:UDP:53',
        project_id: 'p',
        protocol: 'UDP',
      },
    ],
    members: [
      ['p1', '10.128.0.4', 8080],
      ['p1', '10.128.0.5', 8080],
      ['p2', '10.128.0.4', 5353],
      ['p2', '10.128.0.5', 5353],
    ].map(([pool, ip, port], i) => ({
      id: `m${i}`,
      ip: ip as string,
      name: '',
      pool_id: pool as string,
      port: port as number,
      project_id: 'p',
      subnet_id: 'svc-subnet',
    })),
  });

  it('matches the status it describes; a member, listener or floating IP more or less does not', () => {
    assert.equal(statusMatches(recorded(), desired, false), true);
    const fewer = recorded();
    fewer.members = fewer.members!.slice(1);
    assert.equal(statusMatches(fewer, desired, false), false);
    const moved = recorded();
    moved.members![0]!.port = 8081;
    assert.equal(statusMatches(moved, desired, false), false);
    assert.equal(statusMatches(recorded(), desired, true), false, 'a floating IP is wanted');
    const noListener = recorded();
    noListener.listeners = noListener.listeners!.slice(0, 1);
    assert.equal(statusMatches(noListener, desired, false), false);
    assert.equal(statusMatches({}, desired, false), false);
  });
});
