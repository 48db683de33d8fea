/** The shared rule plan: identity as Neutron's duplicate check sees it, descriptions by choice. No cloud. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SecurityGroupRule } from '../../network/v2/security-group-rules.ts';
import { ruleCreateBody } from './apply.ts';
import { planRules, ruleIdentity, type DesiredRule } from './rules.ts';

const held = (id: string, over: Partial<SecurityGroupRule> = {}): SecurityGroupRule => ({
  id,
  project_id: 'p',
  security_group_id: 'g',
  direction: 'ingress',
  ethertype: 'IPv4',
  protocol: 'tcp',
  port_range_min: 22,
  port_range_max: 22,
  remote_ip_prefix: null,
  remote_group_id: null,
  description: 'SSH',
  revision_number: 1,
  ...over,
});

const ssh: DesiredRule = {
  direction: 'ingress',
  ethertype: 'IPv4',
  protocol: 'tcp',
  port_range_min: 22,
  port_range_max: 22,
  description: 'SSH',
};

const same = (a: DesiredRule, b: DesiredRule, description = false) =>
  ruleIdentity(a, { description }) === ruleIdentity(b, { description });

describe('security group rule identity', () => {
  it('is the traffic, as Neutron compares rules for a duplicate', () => {
    assert.ok(same(ssh, { ...ssh, protocol: '6' }), 'a protocol name and its number');
    assert.ok(same(ssh, { ...ssh, protocol: 6 }));
    assert.ok(same(ssh, { ...ssh, protocol: 'TCP' }));
    assert.ok(same(ssh, { ...ssh, remote_ip_prefix: '0.0.0.0/0' }), 'no prefix is the whole space');
    assert.ok(same({ ...ssh, ethertype: 'IPv6' }, { ...ssh, ethertype: 'IPv6', remote_ip_prefix: '::/0' }));
    assert.ok(same({ ...ssh, remote_ip_prefix: '10.0.0.5/8' }, { ...ssh, remote_ip_prefix: '10.0.0.0/8' }));
    assert.ok(same({ ...ssh, protocol: null }, { ...ssh, protocol: 'any' }));
    assert.ok(same({ ...ssh, remote_group_id: '' }, { ...ssh, remote_group_id: null }));
    assert.ok(!same(ssh, { ...ssh, ethertype: 'IPv6' }));
    assert.ok(!same(ssh, { ...ssh, protocol: 'udp' }));
    assert.ok(!same(ssh, { ...ssh, port_range_max: 23 }));
    assert.ok(!same(ssh, { ...ssh, remote_ip_prefix: '10.0.0.0/8' }));
    assert.ok(!same(ssh, { ...ssh, remote_group_id: 'g2' }));
  });

  it('holds the description only when asked', () => {
    assert.ok(same(ssh, { ...ssh, description: 'other' }));
    assert.ok(!same(ssh, { ...ssh, description: 'other' }, true));
    assert.ok(same({ ...ssh, description: '' }, { ...ssh, description: null }, true));
  });
});

describe('rule plan', () => {
  it('deletes what nobody wants and second copies, creates what is missing once', () => {
    const http: DesiredRule = { ...ssh, port_range_min: 80, port_range_max: 80, description: 'HTTP' };
    const plan = planRules(
      [ssh, http, { ...http }],
      [
        held('keep', { protocol: '6' }),
        held('twin'),
        held('stale', { port_range_min: 2222, port_range_max: 2222 }),
      ],
      { description: true },
    );
    assert.deepEqual(plan.create, [http]);
    assert.deepEqual(plan.delete.map((r) => r.id).sort(), ['stale', 'twin']);
  });

  it('replaces a rule whose description changed when descriptions count, keeps it otherwise', () => {
    const renamed = [held('old', { description: 'ssh from anywhere' })];
    const strict = planRules([ssh], renamed, { description: true });
    assert.deepEqual(
      strict.delete.map((r) => r.id),
      ['old'],
    );
    assert.deepEqual(strict.create, [ssh]);
    assert.deepEqual(planRules([ssh], renamed, { description: false }), { delete: [], create: [] });
  });

  it('leaves the other direction alone when it manages one', () => {
    const egress = held('egress', {
      direction: 'egress',
      protocol: null,
      port_range_min: null,
      port_range_max: null,
    });
    assert.deepEqual(planRules([ssh], [held('ssh'), egress], { description: true, direction: 'ingress' }), {
      delete: [],
      create: [],
    });
    assert.deepEqual(planRules([ssh], [held('ssh'), egress], { description: true }).delete, [egress]);
  });

  it('plans nothing in the steady state', () => {
    const rules = [held('a'), held('b', { ethertype: 'IPv6', remote_ip_prefix: '::/0' })];
    const desired: DesiredRule[] = [ssh, { ...ssh, ethertype: 'IPv6' }];
    assert.deepEqual(planRules(desired, rules, { description: true }), { delete: [], create: [] });
  });

  it('asks Neutron for "any" by leaving the field out', () => {
    assert.deepEqual(
      ruleCreateBody('g', {
        direction: 'egress',
        ethertype: 'IPv6',
        protocol: null,
        port_range_min: null,
        remote_ip_prefix: null,
        description: '',
      }),
      { security_group_id: 'g', direction: 'egress', ethertype: 'IPv6' },
    );
    assert.deepEqual(ruleCreateBody('g', { ...ssh, remote_group_id: 'g2' }), {
      security_group_id: 'g',
      direction: 'ingress',
      ethertype: 'IPv4',
      description: 'SSH',
      protocol: 'tcp',
      port_range_min: 22,
      port_range_max: 22,
      remote_group_id: 'g2',
    });
  });
});
