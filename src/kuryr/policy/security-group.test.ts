/**
 * A policy's security group on the OpenStack emulator: created once and adopted after a crash,
 * rules written as planned (Neutron's default egress rules gone), nothing written in the steady
 * state, and released from every port before its delete.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { OpenStackClient } from '../../openstack/client.ts';
import { openClientTargetOn, type ClientTarget } from '../../openstack/core/testing/target.ts';
import { startTestCloud } from '../../sim/openstack/testing/harness.ts';
import { POLICY_RULE_DESCRIPTION, type PolicySgRule } from './rules.ts';
import {
  ensurePolicyGroup,
  findPolicyGroup,
  policyGroupDescription,
  policyGroupName,
  releasePolicyGroup,
  syncPolicyRules,
} from './security-group.ts';

let target: ClientTarget;
let os: OpenStackClient;
const signal = new AbortController().signal;
const TAGS = ['kuryr-np-test'];

before(async () => {
  target = await openClientTargetOn(await startTestCloud({ profile: 'fast' }));
  os = await target.client(target.demo);
});
after(async () => {
  await target.close();
});

const rule = (over: Partial<PolicySgRule>): PolicySgRule => ({
  ethertype: 'IPv4',
  direction: 'ingress',
  description: POLICY_RULE_DESCRIPTION,
  ...over,
});

test('names a group as upstream and tells policies of the same name apart by the description', async () => {
  assert.equal(policyGroupName({ namespace: 'a-b', name: 'c' }), 'sg/a-b-c');
  assert.equal(policyGroupName({ namespace: 'n', name: 'x'.repeat(300) }).length, 255);
  const one = await ensurePolicyGroup(os, { namespace: 'a-b', name: 'c' }, undefined, { tags: TAGS, signal });
  const other = await ensurePolicyGroup(os, { namespace: 'a', name: 'b-c' }, undefined, {
    tags: TAGS,
    signal,
  });
  assert.ok(one.created && other.created);
  assert.notEqual(one.group.id, other.group.id);
  assert.equal(one.group.name, other.group.name);
  assert.equal((await findPolicyGroup(os, { namespace: 'a', name: 'b-c' }, signal))?.id, other.group.id);
});

test('adopts the group a crash left before its id was recorded, and tags it as ours', async () => {
  const ref = { namespace: 'ns', name: 'crashed' };
  const orphan = await os.network.securityGroups.create({
    name: policyGroupName(ref),
    description: policyGroupDescription(ref),
  });
  const { group, created } = await ensurePolicyGroup(os, ref, undefined, { tags: TAGS, signal });
  assert.equal(created, false);
  assert.equal(group.id, orphan.id);
  assert.deepEqual((await os.network.securityGroups.get(orphan.id)).tags, TAGS);
  const byId = await ensurePolicyGroup(os, ref, orphan.id, { tags: TAGS, signal });
  assert.equal(byId.group.id, orphan.id);
  await os.network.securityGroups.delete(orphan.id);
  const again = await ensurePolicyGroup(os, ref, orphan.id, { tags: TAGS, signal });
  assert.ok(again.created, 'a recorded group deleted behind our back is made again');
});

test("writes the policy's rules, drops Neutron's default egress, and writes nothing when they hold", async () => {
  const { group } = await ensurePolicyGroup(os, { namespace: 'ns', name: 'web' }, undefined, {
    tags: TAGS,
    signal,
  });
  assert.equal(group.security_group_rules.filter((r) => r.direction === 'egress').length, 2);
  const desired = [
    rule({ protocol: 'tcp', port_range_min: 80, port_range_max: 80, remote_ip_prefix: '10.128.0.11/32' }),
    rule({ remote_ip_prefix: '172.30.0.0/16' }),
    rule({ direction: 'egress', ethertype: 'IPv6' }),
  ];
  const first = await syncPolicyRules(os, group, desired, signal);
  // Neutron's IPv6 egress rule is the one wanted: kept, not deleted and made again.
  assert.deepEqual({ created: first.created, deleted: first.deleted }, { created: 2, deleted: 1 });
  const held = (await os.network.securityGroupRules.list({ security_group_id: group.id }).all()).map(
    (r) =>
      `${r.direction} ${r.ethertype} ${r.protocol ?? 'any'} ${r.port_range_min ?? ''} ${r.remote_ip_prefix ?? '*'}`,
  );
  assert.deepEqual(held.sort(), [
    'egress IPv6 any  *',
    'ingress IPv4 any  172.30.0.0/16',
    'ingress IPv4 tcp 80 10.128.0.11/32',
  ]);
  assert.equal(first.rules.length, 3);
  const fresh = await os.network.securityGroups.get(group.id);
  const second = await syncPolicyRules(os, fresh, desired, signal);
  assert.deepEqual({ created: second.created, deleted: second.deleted }, { created: 0, deleted: 0 });
  const third = await syncPolicyRules(os, fresh, desired.slice(1), signal);
  assert.deepEqual({ created: third.created, deleted: third.deleted }, { created: 0, deleted: 1 });
});

test('releases a group from every port, giving a port left with none the default groups, then deletes it', async () => {
  const net = await os.network.networks.create({ name: 'np-release' });
  const defaults = await os.network.securityGroups.create({ name: 'pod-default' });
  const other = await os.network.securityGroups.create({ name: 'other-policy' });
  const { group } = await ensurePolicyGroup(os, { namespace: 'ns', name: 'gone' }, undefined, {
    tags: TAGS,
    signal,
  });
  const only = await os.network.ports.create({ network_id: net.id, security_groups: [group.id] });
  const both = await os.network.ports.create({ network_id: net.id, security_groups: [group.id, other.id] });
  const stranger = await os.network.ports.create({ network_id: net.id, security_groups: [other.id] });
  await assert.rejects(os.network.securityGroups.delete(group.id), /in use/);

  const out = await releasePolicyGroup(os, group.id, [defaults.id], signal);
  assert.deepEqual(out, { state: 'gone', detached: 2 });
  assert.deepEqual((await os.network.ports.get(only.id)).security_groups, [defaults.id]);
  assert.deepEqual((await os.network.ports.get(both.id)).security_groups, [other.id]);
  assert.deepEqual((await os.network.ports.get(stranger.id)).security_groups, [other.id]);
  assert.deepEqual(await releasePolicyGroup(os, group.id, [defaults.id], signal), {
    state: 'gone',
    detached: 0,
  });
});
