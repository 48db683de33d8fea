import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { neutron, neutronError, type Neutron } from './testing/neutron.ts';

describe('neutron: security groups', () => {
  let t: TestCloud;
  let n: Neutron;
  before(async () => {
    t = await startTestCloud();
    n = neutron(t);
  });
  after(async () => t.close());

  const rule = (sg: string, extra: Record<string, unknown> = {}) => ({
    security_group_rule: {
      security_group_id: sg,
      direction: 'ingress',
      protocol: 'tcp',
      port_range_min: 22,
      port_range_max: 22,
      remote_ip_prefix: '0.0.0.0/0',
      ethertype: 'IPv4',
      ...extra,
    },
  });

  it('creates the default group lazily on first list, with Neutron’s four rules', async () => {
    const res = await n.get('/v2.0/security-groups', 'demo');
    assert.equal(res.status, 200);
    const def = res.body.security_groups.find((g: { name: string }) => g.name === 'default');
    assert.equal(def.description, 'Default security group');
    const rules = def.security_group_rules
      .map((r: any) => `${r.direction} ${r.ethertype} ${r.remote_group_id === def.id ? 'self' : '-'}`)
      .sort();
    assert.deepEqual(rules, ['egress IPv4 -', 'egress IPv6 -', 'ingress IPv4 self', 'ingress IPv6 self']);
    assert.equal(def.security_group_rules[0].description, null);
    assert.equal(typeof def.security_group_rules[0].standard_attr_id, 'number');
    assert.equal(
      (await n.get('/v2.0/security-groups?name=default', 'demo')).body.security_groups.length,
      1,
      'only one default group',
    );
    neutronError(
      await n.post('/v2.0/security-groups', { security_group: { name: 'default' } }, 'demo'),
      409,
      'SecurityGroupDefaultAlreadyExists',
      'Default security group already exists.',
    );
    neutronError(
      await n.del(`/v2.0/security-groups/${def.id}`, 'demo'),
      409,
      'SecurityGroupCannotRemoveDefault',
      'Insufficient rights for removing default security group.',
    );
  });

  it('creates groups with default egress rules and adds rules, refusing duplicates', async () => {
    const sg = (
      await n.post('/v2.0/security-groups', { security_group: { name: 'web', description: 'w' } }, 'demo')
    ).body.security_group;
    assert.equal(sg.revision_number, 1);
    assert.deepEqual(
      sg.security_group_rules
        .map((r: { direction: string; ethertype: string }) => `${r.direction} ${r.ethertype}`)
        .sort(),
      ['egress IPv4', 'egress IPv6'],
    );
    const created = await n.post('/v2.0/security-group-rules', rule(sg.id), 'demo');
    assert.equal(created.status, 201);
    const r = created.body.security_group_rule;
    assert.equal(r.normalized_cidr, '0.0.0.0/0');
    assert.equal(r.description, '');
    assert.equal('tags' in r, false, 'the rule API hides the columns the group view shows');
    neutronError(
      await n.post('/v2.0/security-group-rules', rule(sg.id), 'demo'),
      409,
      'SecurityGroupRuleExists',
      `Security group rule already exists. Rule id is ${r.id}.`,
    );
    const group = await n.get(`/v2.0/security-groups/${sg.id}`, 'demo');
    assert.equal(group.body.security_group.security_group_rules.length, 3);
    assert.equal(group.body.security_group.revision_number, 2);
    const byGroup = await n.get(
      `/v2.0/security-group-rules?security_group_id=${sg.id}&direction=ingress`,
      'demo',
    );
    assert.deepEqual(
      byGroup.body.security_group_rules.map((x: { id: string }) => x.id),
      [r.id],
    );
    assert.equal((await n.del(`/v2.0/security-group-rules/${r.id}`, 'demo')).status, 204);
    neutronError(await n.get(`/v2.0/security-group-rules/${r.id}`, 'demo'), 404, 'SecurityGroupRuleNotFound');
  });

  it('validates rules as Neutron does', async () => {
    const sg = (await n.post('/v2.0/security-groups', { security_group: { name: 'v' } }, 'demo')).body
      .security_group;
    neutronError(
      await n.post(
        '/v2.0/security-group-rules',
        { security_group_rule: { security_group_id: sg.id, direction: 'sideways' } },
        'demo',
      ),
      400,
      'HTTPBadRequest',
      'Invalid input for direction. Reason: sideways is not in valid_values.',
    );
    neutronError(
      await n.post(
        '/v2.0/security-group-rules',
        rule(sg.id, { port_range_min: 30, port_range_max: 20 }),
        'demo',
      ),
      400,
      'SecurityGroupInvalidPortRange',
      'For TCP/UDP protocols, port_range_min must be <= port_range_max',
    );
    neutronError(
      await n.post('/v2.0/security-group-rules', rule(sg.id, { remote_ip_prefix: '::/0' }), 'demo'),
      400,
      'SecurityGroupRuleParameterConflict',
      'Conflicting value ethertype IPv4 for CIDR ::/0',
    );
    neutronError(
      await n.post('/v2.0/security-group-rules', rule(sg.id, { remote_group_id: sg.id }), 'demo'),
      400,
      'SecurityGroupRemoteGroupAndRemoteIpPrefix',
    );
    neutronError(
      await n.post(
        '/v2.0/security-group-rules',
        rule(sg.id, { protocol: 'icmp', port_range_min: 300, port_range_max: null }),
        'demo',
      ),
      400,
      'SecurityGroupInvalidIcmpValue',
      'Invalid value for ICMP type (port_range_min) 300. It must be 0 to 255.',
    );
    neutronError(
      await n.post(
        '/v2.0/security-group-rules',
        { security_group_rule: { security_group_id: sg.id } },
        'demo',
      ),
      400,
      'HTTPBadRequest',
      "Failed to parse request. Required attribute 'direction' not specified",
    );
    const missing = crypto.randomUUID();
    neutronError(
      await n.post('/v2.0/security-group-rules', rule(missing), 'demo'),
      404,
      'SecurityGroupNotFound',
      `Security group ${missing} does not exist.`,
    );
  });

  it('refuses to delete a group that ports use, and hides groups of other projects', async () => {
    const sg = (await n.post('/v2.0/security-groups', { security_group: { name: 'used' } }, 'demo')).body
      .security_group;
    const { net } = await n.network('demo', '10.30.0.0/24');
    const port = await n.port('demo', { network_id: net.id, security_groups: [sg.id] });
    neutronError(
      await n.del(`/v2.0/security-groups/${sg.id}`, 'demo'),
      409,
      'SecurityGroupInUse',
      `Security Group ${sg.id} in use.`,
    );
    neutronError(await n.get(`/v2.0/security-groups/${sg.id}`, 'alt_demo'), 404, 'SecurityGroupNotFound');
    neutronError(
      await n.post(
        '/v2.0/ports',
        { port: { network_id: net.id, security_groups: [crypto.randomUUID()] } },
        'demo',
      ),
      404,
      'SecurityGroupNotFound',
    );
    await n.put(`/v2.0/ports/${port.id}`, { port: { security_groups: [] } }, 'demo');
    assert.equal((await n.del(`/v2.0/security-groups/${sg.id}`, 'demo')).status, 204);
  });
});
