import type { V1Service } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseApiVersion } from '../openstack/core/api-version.ts';
import {
  applyCapabilities,
  canUseHttpMonitor,
  providerProfile,
  supportsFeature,
  type OctaviaCapabilities,
} from './capabilities.ts';
import { LOAD_BALANCER_DEFAULTS } from './config/load-balancer.ts';
import type { LoadBalancerOptions } from './config/types.ts';
import { parseService } from './service-config.ts';
import { Annotation } from './service/annotations.ts';
import type { LoadBalancerSpec } from './service/types.ts';

const caps = (provider: string, version: string | undefined): OctaviaCapabilities => ({
  provider,
  apiVersion: version === undefined ? undefined : parseApiVersion(version),
});

function spec(
  annotations: Record<string, string> = {},
  extra: NonNullable<V1Service['spec']> = {},
  lb: Partial<LoadBalancerOptions> = {},
): LoadBalancerSpec {
  const parsed = parseService(
    {
      metadata: { namespace: 'shop', name: 'web', uid: 'u1', annotations },
      spec: {
        type: 'LoadBalancer',
        ports: [
          { protocol: 'TCP', port: 80, nodePort: 30080 },
          { protocol: 'UDP', port: 53, nodePort: 30053 },
        ],
        ...extra,
      },
    },
    { loadBalancer: { ...LOAD_BALANCER_DEFAULTS, ...lb }, loadBalancerClasses: new Map() },
  );
  assert.ok(parsed.spec, JSON.stringify(parsed.problems));
  return parsed.spec;
}

const reasons = (plan: ReturnType<typeof applyCapabilities>) => plan.degradations.map((d) => d.reason);

describe('capabilities', () => {
  it('gates features on the Octavia version and the ovn provider as OCCM', () => {
    const zed = caps('amphora', 'v2.26');
    for (const f of [
      'tags',
      'vip-acl',
      'flavors',
      'timeouts',
      'availability-zones',
      'http-monitors-on-udp',
    ] as const) {
      assert.ok(supportsFeature(zed, f), f);
    }
    const old = caps('amphora', '2.11');
    assert.ok(
      supportsFeature(old, 'tags') && supportsFeature(old, 'flavors') && supportsFeature(old, 'timeouts'),
    );
    assert.ok(!supportsFeature(old, 'vip-acl') && !supportsFeature(old, 'availability-zones'));
    const ovn = caps('ovn', 'v2.26');
    assert.ok(supportsFeature(ovn, 'tags'));
    assert.ok(
      !supportsFeature(ovn, 'vip-acl') &&
        !supportsFeature(ovn, 'flavors') &&
        !supportsFeature(ovn, 'timeouts'),
    );
    assert.ok(
      !supportsFeature(caps('amphora', undefined), 'tags'),
      'an unreadable version turns every gate off',
    );
    assert.ok(canUseHttpMonitor(caps('amphora', '2.15'), 'TCP'));
    assert.ok(!canUseHttpMonitor(caps('amphora', '2.15'), 'UDP'));
    assert.ok(canUseHttpMonitor(caps('amphora', '2.16'), 'UDP'));
    assert.ok(!canUseHttpMonitor(ovn, 'TCP'));
    assert.equal(providerProfile('octavia').family, 'amphora');
    assert.equal(providerProfile('f5').family, 'other');
  });

  it('changes nothing on a current amphora Octavia', () => {
    const s = spec(
      {
        [Annotation.FlavorId]: 'f',
        [Annotation.AvailabilityZone]: 'az',
        [Annotation.TimeoutClientData]: '1',
      },
      {
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 32000,
        loadBalancerSourceRanges: ['10.0.0.0/8'],
      },
      { createMonitor: true },
    );
    const plan = applyCapabilities(s, caps('amphora', '2.26'), { manageSecurityGroups: false });
    assert.deepEqual(plan.degradations, []);
    assert.deepEqual(plan.spec, s);
    assert.equal(plan.tags, true);
    assert.equal(plan.timeouts, true);
    assert.deepEqual(plan.allowedCidrs, ['10.0.0.0/8']);
    assert.deepEqual(
      plan.spec.listeners.map((l) => l.monitorType),
      ['HTTP', 'HTTP'],
    );
  });

  it('degrades an ovn load balancer with Events instead of a failed create', () => {
    const s = spec(
      {
        [Annotation.FlavorId]: 'f',
        [Annotation.AvailabilityZone]: 'az',
        [Annotation.TimeoutClientData]: '1',
        [Annotation.ProxyProtocol]: 'true',
      },
      {
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 32000,
        loadBalancerSourceRanges: ['10.0.0.0/8'],
      },
      { createMonitor: true, lbProvider: 'ovn' },
    );
    const plan = applyCapabilities(s, caps('ovn', '2.26'), { manageSecurityGroups: false });
    assert.deepEqual(reasons(plan), [
      'LoadBalancerOptionIgnored', // timeouts
      'LoadBalancerOptionIgnored', // flavor
      'LoadBalancerAvailabilityZonesIgnored',
      'LoadBalancerSourceRangesIgnored',
      'LoadBalancerLbMethodUnknown',
      'LoadBalancerOptionIgnored', // PROXY
      'LoadBalancerHealthMonitorDowngraded',
    ]);
    assert.ok(plan.degradations.every((d) => !d.fatal && d.field && d.message));
    assert.match(plan.degradations[3]!.message, /manage-security-groups = true/);
    assert.equal(plan.timeouts, false);
    assert.equal(plan.allowedCidrs, undefined);
    assert.equal(plan.spec.flavorId, undefined);
    assert.equal(plan.spec.availabilityZone, undefined);
    assert.equal(plan.spec.lbMethod, 'SOURCE_IP_PORT');
    assert.equal(plan.spec.proxyProtocol, undefined);
    assert.deepEqual(
      plan.spec.listeners.map((l) => [l.poolProtocol, l.monitorType]),
      [
        ['TCP', 'TCP'],
        ['UDP', 'UDP-CONNECT'],
      ],
    );
    assert.equal(s.lbMethod, 'ROUND_ROBIN', 'the input spec is left alone');
  });

  it('enforces ovn source ranges through the member security group when SGs are managed', () => {
    const s = spec(
      {},
      { loadBalancerSourceRanges: ['10.0.0.0/8'] },
      { lbProvider: 'ovn', lbMethod: 'SOURCE_IP_PORT' },
    );
    const plan = applyCapabilities(s, caps('ovn', '2.26'), { manageSecurityGroups: true });
    assert.deepEqual(plan.degradations, []);
    assert.deepEqual(plan.securityGroupRanges, ['10.0.0.0/8']);
  });

  it('does not warn about source ranges nobody asked for', () => {
    const s = spec({}, {}, { lbProvider: 'ovn', lbMethod: 'SOURCE_IP_PORT' });
    assert.deepEqual(
      applyCapabilities(s, caps('ovn', '2.26'), { manageSecurityGroups: false }).degradations,
      [],
    );
  });

  it('drops X-Forwarded-For and TLS where the provider has no HTTP listeners', () => {
    const xff = applyCapabilities(
      spec({ [Annotation.XForwardedFor]: 'true' }, {}, { lbProvider: 'ovn', lbMethod: 'SOURCE_IP_PORT' }),
      caps('ovn', '2.26'),
      { manageSecurityGroups: false },
    );
    assert.deepEqual(reasons(xff), ['LoadBalancerOptionIgnored']);
    assert.equal(xff.spec.xForwardedFor, false);
    assert.deepEqual(
      xff.spec.listeners.map((l) => [l.listenerProtocol, l.poolProtocol]),
      [
        ['TCP', 'TCP'],
        ['UDP', 'UDP'],
      ],
    );
  });

  it('keeps the HTTP monitor for TCP but not UDP before Octavia 2.16', () => {
    const s = spec(
      {},
      { externalTrafficPolicy: 'Local', healthCheckNodePort: 32000 },
      { createMonitor: true },
    );
    const plan = applyCapabilities(s, caps('amphora', '2.15'), { manageSecurityGroups: false });
    assert.deepEqual(
      plan.spec.listeners.map((l) => l.monitorType),
      ['HTTP', 'UDP-CONNECT'],
    );
    assert.match(plan.degradations[0]!.message, /UDP port 53/);
  });

  it('raises a UDP-CONNECT monitor delay to the 3 s Octavia requires', () => {
    const s = spec({ [Annotation.HealthMonitorDelay]: '1' }, {}, { createMonitor: true });
    const plan = applyCapabilities(s, caps('amphora', '2.26'), { manageSecurityGroups: false });
    assert.equal(plan.spec.monitor.delay, 3);
    assert.deepEqual(reasons(plan), ['LoadBalancerOptionIgnored']);
  });

  it('gives an SCTP port no monitor on ovn, which has no SCTP monitors', () => {
    const s = parseService(
      {
        metadata: { namespace: 'n', name: 's', uid: 'u' },
        spec: { type: 'LoadBalancer', ports: [{ protocol: 'SCTP', port: 3868, nodePort: 31868 }] },
      },
      {
        loadBalancer: {
          ...LOAD_BALANCER_DEFAULTS,
          lbProvider: 'ovn',
          lbMethod: 'SOURCE_IP_PORT',
          createMonitor: true,
        },
        loadBalancerClasses: new Map(),
      },
    ).spec!;
    const plan = applyCapabilities(s, caps('ovn', '2.26'), { manageSecurityGroups: false });
    assert.equal(plan.spec.listeners[0]!.monitorType, undefined);
    assert.deepEqual(reasons(plan), ['LoadBalancerOptionIgnored']);
  });
});
