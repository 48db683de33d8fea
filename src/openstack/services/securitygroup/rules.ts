/**
 * Security group rules compared as Neutron compares them, and the plan that takes a group from the
 * rules it holds to the rules a controller wants. Pure: the caller reads the group, apply.ts writes.
 *
 * Neutron refuses a rule that duplicates another (409 SecurityGroupRuleExists) by the traffic it
 * allows: a protocol name and its number are one protocol (`tcp` = `6`), no prefix and the
 * ethertype's whole space are one remote (`null` = `0.0.0.0/0` = `::/0`), and a prefix is its
 * network. The identity here is that, so a rule Neutron holds in another spelling is kept rather
 * than deleted and created again each pass; and, when the caller says descriptions matter (CAPO
 * names its rules), the description too.
 *
 * Users: the CCM's member groups (src/ccm/controllers/service/security-group.ts), CAPO's managed
 * groups (src/capo/cluster/security-groups.ts), and Kuryr's network policies to come.
 */
import { formatCidr, parseCidr } from '../../../lib/cidr.ts';
import { ipProtocolNumber } from '../../../lib/ip-protocols.ts';
import type { Direction, EtherType, SecurityGroupRule } from '../../network/v2/security-group-rules.ts';

/** A rule as a controller wants it, in Neutron's fields; null or absent is "any". */
export interface DesiredRule {
  direction: Direction;
  ethertype: EtherType;
  /** A name (`tcp`) or a number; null for any. */
  protocol?: string | number | null | undefined;
  port_range_min?: number | null | undefined;
  port_range_max?: number | null | undefined;
  remote_ip_prefix?: string | null | undefined;
  remote_group_id?: string | null | undefined;
  description?: string | null | undefined;
}

export interface RuleIdentityOptions {
  /** Whether rules that differ only in their description are different rules (CAPO) or not (OCCM). */
  description: boolean;
}

/** A rule's fields as Neutron compares them. */
export interface NormalizedRule {
  direction: Direction;
  ethertype: EtherType;
  /** The protocol's number as text, an unknown name in lower case, or `any`. */
  protocol: string;
  portRangeMin: number | null;
  portRangeMax: number | null;
  /** The remote network (`10.0.0.0/8`), `any` for the ethertype's whole space, or the text Neutron holds when it is no CIDR. */
  remoteIpPrefix: string;
  remoteGroupId: string | null;
  description: string;
}

export function normalizeRule(rule: DesiredRule): NormalizedRule {
  return {
    direction: rule.direction,
    ethertype: rule.ethertype,
    protocol: protocolIdentity(rule.protocol),
    portRangeMin: rule.port_range_min ?? null,
    portRangeMax: rule.port_range_max ?? null,
    remoteIpPrefix: prefixIdentity(rule.remote_ip_prefix),
    remoteGroupId: rule.remote_group_id || null,
    description: rule.description ?? '',
  };
}

/** One string per rule Neutron would call the same. */
export function ruleIdentity(rule: DesiredRule, opts: RuleIdentityOptions): string {
  const n = normalizeRule(rule);
  return [
    n.direction,
    n.ethertype,
    n.protocol,
    n.portRangeMin ?? '',
    n.portRangeMax ?? '',
    n.remoteIpPrefix,
    n.remoteGroupId ?? '',
    // JSON keeps a description with spaces apart from the fields before it.
    opts.description ? JSON.stringify(n.description) : '',
  ].join(' ');
}

function protocolIdentity(protocol: DesiredRule['protocol']): string {
  if (protocol === null || protocol === undefined) return 'any';
  const text = String(protocol).toLowerCase();
  if (text === '' || text === 'any') return 'any';
  const n = ipProtocolNumber(text);
  return n === undefined ? text : String(n);
}

function prefixIdentity(prefix: string | null | undefined): string {
  if (!prefix) return 'any';
  const cidr = parseCidr(prefix, { sloppy: true });
  if (!cidr) return prefix;
  return cidr.prefix === 0 ? 'any' : formatCidr(cidr);
}

export interface RulePlanOptions extends RuleIdentityOptions {
  /** Only rules of this direction are managed; the group's others are left alone (OCCM: ingress). */
  direction?: Direction | undefined;
}

export interface RulePlan<R extends DesiredRule = DesiredRule> {
  /** Rules to delete: unwanted, or a second copy of a wanted one (a cloud without duplicate checks). */
  delete: SecurityGroupRule[];
  /** Wanted rules the group does not hold, each once. */
  create: R[];
}

export function planRules<R extends DesiredRule>(
  desired: readonly R[],
  actual: readonly SecurityGroupRule[],
  opts: RulePlanOptions,
): RulePlan<R> {
  const held = new Map<string, SecurityGroupRule>();
  const remove: SecurityGroupRule[] = [];
  for (const r of actual) {
    if (opts.direction !== undefined && r.direction !== opts.direction) continue;
    const key = ruleIdentity(r, opts);
    if (held.has(key)) remove.push(r);
    else held.set(key, r);
  }
  const wanted = new Map<string, R>();
  for (const d of desired) {
    const key = ruleIdentity(d, opts);
    if (!wanted.has(key)) wanted.set(key, d);
  }
  for (const [key, r] of held) if (!wanted.has(key)) remove.push(r);
  return { delete: remove, create: [...wanted].filter(([key]) => !held.has(key)).map(([, d]) => d) };
}
