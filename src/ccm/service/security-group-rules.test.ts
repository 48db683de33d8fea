import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SecurityGroupRule } from '../../openstack/network/v2/security-group-rules.ts';
import { planRules } from '../../openstack/services/securitygroup/index.ts';
import { desiredRule, MEMBER_RULES, memberRules, type MemberRule } from './security-group-rules.ts';

const ports = [
  { protocol: 'TCP', nodePort: 30080 },
  { protocol: 'UDP', nodePort: 30053 },
];

/** The diff of OCCM's rules against what the group holds, with OCCM's options. */
const diffRules = (desired: readonly MemberRule[], existing: readonly SecurityGroupRule[]) => {
  const plan = planRules(desired.map(desiredRule), existing, MEMBER_RULES);
  return { create: plan.create, remove: plan.delete };
};

function existing(id: string, over: Partial<SecurityGroupRule>): SecurityGroupRule {
  return {
    id,
    project_id: 'p',
    security_group_id: 'g',
    description: null,
    revision_number: 1,
    direction: 'ingress',
    ethertype: 'IPv4',
    protocol: 'tcp',
    port_range_min: 30080,
    port_range_max: 30080,
    remote_ip_prefix: '10.20.0.0/16',
    remote_group_id: null,
    ...over,
  };
}

describe('member security group rules', () => {
  it('opens each NodePort from the member subnet, and the health check port for ETP=Local', () => {
    const rules = memberRules({ ports, subnetCidr: '10.20.0.0/16', healthCheckNodePort: 31000 });
    assert.deepEqual(rules, [
      { ethertype: 'IPv4', protocol: 'tcp', port: 30080, remoteIpPrefix: '10.20.0.0/16' },
      { ethertype: 'IPv4', protocol: 'udp', port: 30053, remoteIpPrefix: '10.20.0.0/16' },
      { ethertype: 'IPv4', protocol: 'tcp', port: 31000, remoteIpPrefix: '10.20.0.0/16' },
    ]);
  });

  it('opens NodePorts to the source ranges (ovn) but the health check port to the subnet only', () => {
    const rules = memberRules({
      ports: [{ protocol: 'TCP', nodePort: 30080 }],
      subnetCidr: '10.20.0.0/16',
      sourceRanges: ['192.0.2.0/24', '2001:db8::/32'],
      healthCheckNodePort: 31000,
    });
    assert.deepEqual(
      rules.map((r) => `${r.ethertype} ${r.protocol}/${r.port} ${r.remoteIpPrefix}`),
      ['IPv4 tcp/30080 192.0.2.0/24', 'IPv6 tcp/30080 2001:db8::/32', 'IPv4 tcp/31000 10.20.0.0/16'],
    );
  });

  it('gives a port without a NodePort no rule, and the same rule only once', () => {
    const rules = memberRules({
      ports: [
        { protocol: 'TCP', nodePort: 0 },
        { protocol: 'TCP', nodePort: 30080 },
      ],
      subnetCidr: '10.20.0.1/16',
      sourceRanges: ['10.0.0.0/8', '10.0.0.1/8'],
    });
    assert.deepEqual(rules, [
      { ethertype: 'IPv4', protocol: 'tcp', port: 30080, remoteIpPrefix: '10.0.0.0/8' },
    ]);
  });

  it('creates what is missing and deletes extra ingress rules, leaving egress alone', () => {
    const desired = memberRules({ ports, subnetCidr: '10.20.0.0/16' });
    const diff = diffRules(desired, [
      existing('keep', { protocol: '6' }),
      existing('stale-port', { port_range_min: 30999, port_range_max: 30999 }),
      existing('range', { port_range_min: 30000, port_range_max: 32767 }),
      existing('group', { remote_ip_prefix: null, remote_group_id: 'g' }),
      existing('egress', { direction: 'egress', protocol: null, port_range_min: null, port_range_max: null }),
      existing('dup', {}),
    ]);
    assert.deepEqual(diff.create, [
      desiredRule({ ethertype: 'IPv4', protocol: 'udp', port: 30053, remoteIpPrefix: '10.20.0.0/16' }),
    ]);
    assert.deepEqual(diff.remove.map((r) => r.id).sort(), ['dup', 'group', 'range', 'stale-port']);
  });

  it('matches an allow-all rule Neutron holds with no prefix', () => {
    const desired = memberRules({ ports, subnetCidr: '10.20.0.0/16', sourceRanges: ['0.0.0.0/0'] });
    const diff = diffRules(desired, [
      existing('any', { remote_ip_prefix: null }),
      existing('udp', {
        protocol: 'UDP',
        port_range_min: 30053,
        port_range_max: 30053,
        remote_ip_prefix: '0.0.0.0/0',
      }),
    ]);
    assert.deepEqual(diff, { create: [], remove: [] });
  });
});
