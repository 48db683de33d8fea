/**
 * Who may see and change what, as Neutron's DB scoping and Zed default policies decide it.
 * Objects a caller cannot see are 404 (never 403), as Neutron hides them.
 */
import { notFound, policyNotAuthorized } from './errors.ts';
import type {
  FloatingIpRecord,
  NetworkRecord,
  PortRecord,
  RouterRecord,
  SecurityGroupRecord,
  SecurityGroupRuleRecord,
  SubnetRecord,
  TrunkRecord,
} from './records.ts';
import type { Actor, NeutronState } from './state.ts';

export function canSeeNetwork(a: Actor, n: NetworkRecord): boolean {
  return a.isAdmin || n.project_id === a.projectId || n.shared || n['router:external'];
}

/** Subnets follow their network's sharing; external networks' subnets stay hidden (no RBAC access_as_shared). */
export function canSeeSubnet(state: NeutronState, a: Actor, s: SubnetRecord): boolean {
  if (a.isAdmin || s.project_id === a.projectId) return true;
  const net = state.networks.get(s.network_id);
  return !!net && (net.shared || net.project_id === a.projectId);
}

/** Network owners see every port on their networks. */
export function canSeePort(state: NeutronState, a: Actor, p: PortRecord): boolean {
  if (a.isAdmin || p.project_id === a.projectId) return true;
  return state.networks.get(p.network_id)?.project_id === a.projectId;
}

export function canSeeOwned(a: Actor, rec: { project_id: string }): boolean {
  return a.isAdmin || rec.project_id === a.projectId;
}

export function canSeeRule(state: NeutronState, a: Actor, r: SecurityGroupRuleRecord): boolean {
  if (a.isAdmin || r.project_id === a.projectId) return true;
  return state.securityGroups.get(r.security_group_id)?.project_id === a.projectId;
}

export function getNetwork(state: NeutronState, a: Actor, id: string): NetworkRecord {
  const n = state.networks.get(id);
  if (!n || !canSeeNetwork(a, n)) throw notFound.network(id);
  return n;
}

export function getSubnet(state: NeutronState, a: Actor, id: string): SubnetRecord {
  const s = state.subnets.get(id);
  if (!s || !canSeeSubnet(state, a, s)) throw notFound.subnet(id);
  return s;
}

export function getPort(state: NeutronState, a: Actor, id: string): PortRecord {
  const p = state.ports.get(id);
  if (!p || !canSeePort(state, a, p)) throw notFound.port(id);
  return p;
}

export function getRouter(state: NeutronState, a: Actor, id: string): RouterRecord {
  const r = state.routers.get(id);
  if (!r || !canSeeOwned(a, r)) throw notFound.router(id);
  return r;
}

export function getFloatingIp(state: NeutronState, a: Actor, id: string): FloatingIpRecord {
  const f = state.floatingIps.get(id);
  if (!f || !canSeeOwned(a, f)) throw notFound.floatingip(id);
  return f;
}

export function getSecurityGroup(state: NeutronState, a: Actor, id: string): SecurityGroupRecord {
  const g = state.securityGroups.get(id);
  if (!g || !canSeeOwned(a, g)) throw notFound.securityGroup(id);
  return g;
}

export function getRule(state: NeutronState, a: Actor, id: string): SecurityGroupRuleRecord {
  const r = state.rules.get(id);
  if (!r || !canSeeRule(state, a, r)) throw notFound.securityGroupRule(id);
  return r;
}

export function getTrunk(state: NeutronState, a: Actor, id: string): TrunkRecord {
  const t = state.trunks.get(id);
  if (!t || !canSeeOwned(a, t)) throw notFound.trunk(id);
  return t;
}

/** Write access: the owner or an admin; seeing a shared object does not allow changing it. */
export function requireOwner(a: Actor, rec: { project_id: string }, action: string): void {
  if (!a.isAdmin && rec.project_id !== a.projectId) throw policyNotAuthorized(`rule:${action}`);
}

/**
 * Attribute-level policy: oslo.policy prints the failed check as nested ands,
 * `((rule:create_network and rule:create_network:shared) and rule:create_network:router:external)`.
 */
export function denyAttributes(action: string, attrs: readonly string[]): never {
  let rule = `rule:${action}`;
  for (const attr of attrs) rule = `(${rule} and rule:${action}:${attr})`;
  throw policyNotAuthorized(rule);
}

/** Fails when a caller who is not allowed to set some attributes of `body` sets them. */
export function checkAttributePolicy(
  allowed: boolean,
  action: string,
  body: Record<string, unknown>,
  guarded: readonly string[],
): void {
  if (allowed) return;
  const present = guarded.filter((k) => body[k] !== undefined);
  if (present.length > 0) denyAttributes(action, present);
}
