/** Security groups and rules, with Neutron's lazily created per-project `default` group. */
import { IP_PROTOCOLS, ipProtocolNumber } from '../../../lib/ip-protocols.ts';
import { SimError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import { getRule, getSecurityGroup, requireOwner } from './access.ts';
import { asText, invalidAttr, pyRepr } from './errors.ts';
import { formatCidr, parseCidr } from './ip.ts';
import type { SecurityGroupRecord, SecurityGroupRuleRecord } from './records.ts';
import {
  checkBoolean,
  checkCidr,
  checkString,
  checkUuid,
  checkValues,
  nullable,
  type AttrMap,
  type Body,
  type Check,
} from './schema.ts';
import type { Actor, NeutronState } from './state.ts';

const readOnly = { post: false, put: false };

const SecurityGroupDefaultAlreadyExists = () =>
  new SimError(409, 'Default security group already exists.', { type: 'SecurityGroupDefaultAlreadyExists' });

/** The API refuses `default` as a name: only Neutron creates that group. */
const checkGroupName: Check = (v, attr) => {
  const name = checkString(255)(v, attr) as string;
  if (name.toLowerCase() === 'default') throw SecurityGroupDefaultAlreadyExists();
  return name;
};

export const SECURITY_GROUP_ATTRS: AttrMap = {
  id: readOnly,
  name: { post: true, put: true, check: checkGroupName },
  description: { post: true, put: true, check: checkString(255) },
  stateful: { post: true, put: true, check: checkBoolean },
  shared: readOnly,
  security_group_rules: readOnly,
  tags: readOnly,
  created_at: readOnly,
  updated_at: readOnly,
  revision_number: readOnly,
};

const PORT_PROTOCOLS = new Set([6, 17, 33, 132, 136]);
const IPV6_ONLY = new Set([
  'ipv6-encap',
  'ipv6-frag',
  'ipv6-icmp',
  'icmpv6',
  'ipv6-nonxt',
  'ipv6-opts',
  'ipv6-route',
]);

const checkProtocol: Check = (v) => {
  if (v === null || v === undefined) return null;
  const s = asText(v).toLowerCase();
  if (s === 'any' || s === '') return null;
  if (s in IP_PROTOCOLS) return s;
  if (/^\d+$/.test(s) && Number(s) <= 255) return String(Number(s));
  throw new SimError(
    400,
    `Security group rule protocol ${pyRepr(v)} not supported. Only protocol values [None, ${Object.keys(
      IP_PROTOCOLS,
    )
      .map((p) => `'${p}'`)
      .join(', ')}] and integer representations [0 to 255] are supported.`,
    { type: 'SecurityGroupRuleInvalidProtocol' },
  );
};

const checkPort: Check = (v) => {
  if (v === null || v === undefined) return null;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : Number.NaN;
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new SimError(400, `Invalid value for port ${pyRepr(v)}.`, {
      type: 'SecurityGroupInvalidPortValue',
    });
  }
  return n;
};

const checkEthertype: Check = (v, attr) => {
  if (typeof v === 'string') {
    const lower = v.toLowerCase();
    if (lower === 'ipv4') return 'IPv4';
    if (lower === 'ipv6') return 'IPv6';
  }
  throw invalidAttr(attr, `${pyRepr(v)} is not in valid_values`);
};

export const RULE_ATTRS: AttrMap = {
  id: readOnly,
  security_group_id: { post: true, put: false, required: true, check: checkUuid },
  remote_group_id: { post: true, put: false, check: nullable(checkUuid) },
  remote_address_group_id: { post: true, put: false, check: nullable(checkUuid) },
  direction: { post: true, put: false, required: true, check: checkValues(['ingress', 'egress']) },
  protocol: { post: true, put: false, check: checkProtocol },
  port_range_min: { post: true, put: false, check: checkPort },
  port_range_max: { post: true, put: false, check: checkPort },
  ethertype: { post: true, put: false, check: checkEthertype },
  remote_ip_prefix: { post: true, put: false, check: nullable(checkCidr) },
  description: { post: true, put: false, check: checkString(255) },
  normalized_cidr: readOnly,
  created_at: readOnly,
  updated_at: readOnly,
  revision_number: readOnly,
};

interface RuleSpec {
  direction: string;
  ethertype: string;
  protocol?: string | null;
  port_range_min?: number | null;
  port_range_max?: number | null;
  remote_ip_prefix?: string | null;
  remote_group_id?: string | null;
  description?: string | null;
}

function addRule(
  state: NeutronState,
  group: SecurityGroupRecord,
  project: string,
  spec: RuleSpec,
): SecurityGroupRuleRecord {
  const prefix = spec.remote_ip_prefix ?? null;
  const parsed = prefix ? parseCidr(prefix) : undefined;
  const std = state.standard(uuid(), project);
  const rule: SecurityGroupRuleRecord = {
    id: std.id,
    project_id: project,
    created_at: std.created_at,
    updated_at: std.updated_at,
    revision_number: 0,
    standard_attr_id: std.standard_attr_id,
    description: spec.description === undefined ? null : spec.description,
    security_group_id: group.id,
    ethertype: spec.ethertype,
    direction: spec.direction,
    protocol: spec.protocol ?? null,
    port_range_min: spec.port_range_min ?? null,
    port_range_max: spec.port_range_max ?? null,
    remote_ip_prefix: prefix,
    remote_address_group_id: null,
    normalized_cidr: parsed ? formatCidr(parsed) : null,
    remote_group_id: spec.remote_group_id ?? null,
  };
  state.rules.insert(rule);
  state.rulesByGroup.add(group.id, rule.id);
  return rule;
}

function newGroup(
  state: NeutronState,
  project: string,
  name: string,
  description: string,
  stateful: boolean,
): SecurityGroupRecord {
  const group: SecurityGroupRecord = {
    ...state.standard(uuid(), project, description),
    name,
    stateful,
    shared: false,
  };
  state.securityGroups.insert(group);
  for (const ethertype of ['IPv4', 'IPv6'])
    addRule(state, group, project, { direction: 'egress', ethertype });
  group.revision_number = 1;
  return group;
}

/** Neutron creates a project's `default` group the first time the project needs one. */
export function ensureDefaultGroup(state: NeutronState, projectId: string): string | undefined {
  if (!projectId) return undefined;
  const existing = state.defaultGroups.get(projectId);
  if (existing && state.securityGroups.has(existing)) return existing;
  const group = newGroup(state, projectId, 'default', 'Default security group', true);
  for (const ethertype of ['IPv4', 'IPv6']) {
    addRule(state, group, projectId, { direction: 'ingress', ethertype, remote_group_id: group.id });
  }
  state.defaultGroups.set(projectId, group.id);
  state.changed();
  return group.id;
}

export function rulesOf(state: NeutronState, groupId: string): SecurityGroupRuleRecord[] {
  return [...state.rulesByGroup.get(groupId)].sort().flatMap((id) => state.rules.get(id) ?? []);
}

export function createSecurityGroup(state: NeutronState, actor: Actor, body: Body): SecurityGroupRecord {
  const project = state.ownerFor(actor, body.project_id, 'create_security_group');
  ensureDefaultGroup(state, project);
  state.checkQuota('security_group', project);
  const group = newGroup(
    state,
    project,
    (body.name as string | undefined) ?? '',
    (body.description as string | undefined) ?? '',
    (body.stateful as boolean | undefined) ?? true,
  );
  state.changed();
  return group;
}

export function updateSecurityGroup(
  state: NeutronState,
  actor: Actor,
  id: string,
  body: Body,
  ifMatch?: string,
): SecurityGroupRecord {
  const group = getSecurityGroup(state, actor, id);
  requireOwner(actor, group, 'update_security_group');
  state.checkRevision(group, ifMatch);
  if (body.name !== undefined && group.name === 'default') {
    throw new SimError(409, 'Updating default security group not allowed.', {
      type: 'SecurityGroupCannotUpdateDefault',
    });
  }
  if (
    body.stateful !== undefined &&
    body.stateful !== group.stateful &&
    state.portsByGroup.get(group.id).size > 0
  ) {
    throw new SimError(409, `Security Group ${group.id} in use.`, { type: 'SecurityGroupInUse' });
  }
  if (body.name !== undefined) group.name = body.name as string;
  if (body.description !== undefined) group.description = body.description as string;
  if (body.stateful !== undefined) group.stateful = body.stateful as boolean;
  state.bump(group);
  state.changed();
  return group;
}

export function deleteSecurityGroup(state: NeutronState, actor: Actor, id: string, ifMatch?: string): void {
  const group = getSecurityGroup(state, actor, id);
  requireOwner(actor, group, 'delete_security_group');
  state.checkRevision(group, ifMatch);
  if (group.name === 'default' && state.defaultGroups.get(group.project_id) === group.id && !actor.isAdmin) {
    throw new SimError(409, 'Insufficient rights for removing default security group.', {
      type: 'SecurityGroupCannotRemoveDefault',
    });
  }
  if (state.portsByGroup.get(group.id).size > 0) {
    throw new SimError(409, `Security Group ${group.id} in use.`, { type: 'SecurityGroupInUse' });
  }
  for (const rid of [...state.rulesByGroup.get(group.id)]) removeRule(state, rid);
  // Rules of other groups that allow this group go with it (foreign key cascade).
  for (const rule of [...state.rules.values()])
    if (rule.remote_group_id === group.id) removeRule(state, rule.id);
  if (state.defaultGroups.get(group.project_id) === group.id) state.defaultGroups.delete(group.project_id);
  state.securityGroups.remove(group.id);
  state.changed();
}

function removeRule(state: NeutronState, id: string): void {
  const rule = state.rules.remove(id);
  if (rule) state.rulesByGroup.delete(rule.security_group_id, id);
}

function protoNumber(p: string | null): number | null {
  return ipProtocolNumber(p) ?? null;
}

function validateRule(r: RuleSpec & { remote_address_group_id?: string | null }): void {
  const min = r.port_range_min ?? null;
  const max = r.port_range_max ?? null;
  if (r.remote_ip_prefix && r.remote_group_id) {
    throw new SimError(400, 'Only remote_ip_prefix or remote_group_id may be provided.', {
      type: 'SecurityGroupRemoteGroupAndRemoteIpPrefix',
    });
  }
  if (r.remote_ip_prefix) {
    const c = parseCidr(r.remote_ip_prefix)!;
    if (`IPv${c.version}` !== r.ethertype) {
      throw new SimError(400, `Conflicting value ethertype ${r.ethertype} for CIDR ${r.remote_ip_prefix}`, {
        type: 'SecurityGroupRuleParameterConflict',
      });
    }
  }
  const proto = protoNumber(r.protocol ?? null);
  if (r.ethertype === 'IPv4' && r.protocol && IPV6_ONLY.has(r.protocol)) {
    throw new SimError(400, `Invalid ethertype ${r.ethertype} for protocol ${String(r.protocol)}.`, {
      type: 'SecurityGroupEthertypeConflictWithProtocol',
    });
  }
  if (min === null && max === null) return;
  if (proto === null) {
    throw new SimError(400, 'Must also specify protocol if port range is given.', {
      type: 'SecurityGroupProtocolRequiredWithPorts',
    });
  }
  if (PORT_PROTOCOLS.has(proto)) {
    if (min === 0 || max === 0)
      throw new SimError(400, 'Invalid value for port 0.', { type: 'SecurityGroupInvalidPortValue' });
    if (min !== null && max !== null && min <= max) return;
    throw new SimError(400, 'For TCP/UDP protocols, port_range_min must be <= port_range_max', {
      type: 'SecurityGroupInvalidPortRange',
    });
  }
  if (proto === 1 || proto === 58) {
    for (const [value, attr, field] of [
      [min, 'port_range_min', 'type'],
      [max, 'port_range_max', 'code'],
    ] as const) {
      if (value !== null && (value < 0 || value > 255)) {
        throw new SimError(400, `Invalid value for ICMP ${field} (${attr}) ${value}. It must be 0 to 255.`, {
          type: 'SecurityGroupInvalidIcmpValue',
        });
      }
    }
    if (min === null && max !== null) {
      throw new SimError(
        400,
        `ICMP code (port-range-max) ${max} is provided but ICMP type (port-range-min) is missing.`,
        {
          type: 'SecurityGroupMissingIcmpType',
        },
      );
    }
    return;
  }
  if (min !== max) {
    throw new SimError(
      400,
      `Invalid protocol ${String(r.protocol)} for port range, only supported for TCP, UDP, UDPLITE, SCTP and DCCP.`,
      {
        type: 'SecurityGroupInvalidProtocolForPort',
      },
    );
  }
}

/** Two rules are the same rule when they allow the same traffic; `0.0.0.0/0` equals no prefix. */
function sameTraffic(a: SecurityGroupRuleRecord, b: RuleSpec, normalized: string | null): boolean {
  const anyNet = (c: string | null) => (c === '0.0.0.0/0' || c === '::/0' ? null : c);
  return (
    a.direction === b.direction &&
    a.ethertype === b.ethertype &&
    protoNumber(a.protocol) === protoNumber(b.protocol ?? null) &&
    a.port_range_min === (b.port_range_min ?? null) &&
    a.port_range_max === (b.port_range_max ?? null) &&
    anyNet(a.normalized_cidr) === anyNet(normalized) &&
    a.remote_group_id === (b.remote_group_id ?? null)
  );
}

export function createRule(state: NeutronState, actor: Actor, body: Body): SecurityGroupRuleRecord {
  const spec: RuleSpec & { remote_address_group_id?: string | null } = {
    direction: body.direction as string,
    ethertype: (body.ethertype as string | undefined) ?? 'IPv4',
    protocol: body.protocol as string | null | undefined,
    port_range_min: body.port_range_min as number | null | undefined,
    port_range_max: body.port_range_max as number | null | undefined,
    remote_ip_prefix: body.remote_ip_prefix as string | null | undefined,
    remote_group_id: body.remote_group_id as string | null | undefined,
    description: (body.description as string | undefined) ?? '',
  };
  validateRule(spec);
  const group = getSecurityGroup(state, actor, body.security_group_id as string);
  requireOwner(actor, group, 'create_security_group_rule');
  if (body.remote_address_group_id) {
    throw new SimError(404, `Address group ${pyRepr(body.remote_address_group_id)} could not be found.`, {
      type: 'AddressGroupNotFound',
    });
  }
  if (spec.remote_group_id) getSecurityGroup(state, actor, spec.remote_group_id);
  const project = state.ownerFor(actor, body.project_id ?? group.project_id, 'create_security_group_rule');
  const parsed = spec.remote_ip_prefix ? parseCidr(spec.remote_ip_prefix) : undefined;
  const normalized = parsed ? formatCidr(parsed) : null;
  for (const rid of state.rulesByGroup.get(group.id)) {
    const existing = state.rules.get(rid);
    if (existing && sameTraffic(existing, spec, normalized)) {
      throw new SimError(409, `Security group rule already exists. Rule id is ${existing.id}.`, {
        type: 'SecurityGroupRuleExists',
      });
    }
  }
  state.checkQuota('security_group_rule', project);
  const rule = addRule(state, group, project, spec);
  state.bump(group);
  state.changed();
  return rule;
}

export function deleteRuleById(state: NeutronState, actor: Actor, id: string): void {
  const rule = getRule(state, actor, id);
  const group = state.securityGroups.get(rule.security_group_id);
  if (!actor.isAdmin && rule.project_id !== actor.projectId && group?.project_id !== actor.projectId) {
    throw new SimError(403, 'rule:delete_security_group_rule is disallowed by policy', {
      type: 'PolicyNotAuthorized',
    });
  }
  removeRule(state, id);
  if (group) state.bump(group);
  state.changed();
}

/** Restores a rule from a snapshot. */
export function indexRule(state: NeutronState, rule: SecurityGroupRuleRecord): void {
  state.rules.insert(rule);
  state.rulesByGroup.add(rule.security_group_id, rule.id);
}
