/**
 * Desired objects → Octavia request bodies. One spelling for the fully populated create, the
 * step-by-step creates and the updates, so the objects a serial create makes are the ones a
 * fully populated create would have made, and the diff in plan.ts compares like with like.
 */
import type { NestedHealthMonitorCreateOpts } from '../../loadbalancer/v2/healthmonitors.ts';
import type { NestedListenerCreateOpts } from '../../loadbalancer/v2/listeners.ts';
import type { LoadBalancerCreateOpts } from '../../loadbalancer/v2/loadbalancers.ts';
import type { MemberCreateOpts } from '../../loadbalancer/v2/members.ts';
import type { NestedPoolCreateOpts } from '../../loadbalancer/v2/pools.ts';
import type {
  DesiredHealthMonitor,
  DesiredListener,
  DesiredLoadBalancer,
  DesiredMember,
  DesiredPool,
  LoadBalancerIdentity,
} from './types.ts';

/** The identity's tags: its name first (the ownership tag), then the caller's, without repeats. */
export function identityTags(identity: LoadBalancerIdentity): string[] {
  return [...new Set([identity.name, ...(identity.tags ?? [])])];
}

/** What a create needs beyond the desired object: whether the cloud takes tags (API 2.5). */
export interface BuildContext {
  tags: boolean;
}

/** allowed_cidrs as Octavia stores "every source": null. */
export function cidrsField(cidrs: readonly string[] | null): string[] | null {
  return cidrs && cidrs.length > 0 ? [...cidrs] : null;
}

/** The listener's own fields (no protocol, port or pool): those a create sends and an update compares. */
export function listenerFields(l: DesiredListener): Record<string, unknown> {
  const f: Record<string, unknown> = { name: l.name };
  if (l.connectionLimit !== undefined) f.connection_limit = l.connectionLimit;
  if (l.allowedCidrs !== undefined) f.allowed_cidrs = cidrsField(l.allowedCidrs);
  const t = l.timeouts;
  if (t?.clientData !== undefined) f.timeout_client_data = t.clientData;
  if (t?.memberConnect !== undefined) f.timeout_member_connect = t.memberConnect;
  if (t?.memberData !== undefined) f.timeout_member_data = t.memberData;
  if (t?.tcpInspect !== undefined) f.timeout_tcp_inspect = t.tcpInspect;
  if (l.insertHeaders !== undefined) f.insert_headers = { ...l.insertHeaders };
  if (l.defaultTlsContainerRef !== undefined) f.default_tls_container_ref = l.defaultTlsContainerRef;
  return f;
}

export function poolFields(p: DesiredPool): Record<string, unknown> {
  const f: Record<string, unknown> = { name: p.name, lb_algorithm: p.algorithm };
  if (p.sessionPersistence !== undefined) f.session_persistence = p.sessionPersistence;
  return f;
}

/** A member as the batch update and a create send it: every field, since the batch reapplies defaults. */
export function memberBody(m: DesiredMember): MemberCreateOpts {
  const body: MemberCreateOpts = { address: m.address, protocol_port: m.port };
  if (m.name !== undefined) body.name = m.name;
  if (m.subnetId !== undefined) body.subnet_id = m.subnetId;
  if (m.weight !== undefined) body.weight = m.weight;
  if (m.monitorPort !== undefined) body.monitor_port = m.monitorPort;
  if (m.monitorAddress !== undefined) body.monitor_address = m.monitorAddress;
  if (m.backup !== undefined) body.backup = m.backup;
  return body;
}

export function monitorBody(hm: DesiredHealthMonitor): NestedHealthMonitorCreateOpts {
  const body: NestedHealthMonitorCreateOpts = {
    name: hm.name,
    type: hm.type,
    delay: hm.delay,
    timeout: hm.timeout,
    max_retries: hm.maxRetries,
  };
  if (hm.maxRetriesDown !== undefined) body.max_retries_down = hm.maxRetriesDown;
  if (isHttp(hm.type)) {
    if (hm.httpMethod !== undefined) body.http_method = hm.httpMethod;
    if (hm.urlPath !== undefined) body.url_path = hm.urlPath;
    if (hm.expectedCodes !== undefined) body.expected_codes = hm.expectedCodes;
  }
  return body;
}

export const isHttp = (type: string): boolean => type === 'HTTP' || type === 'HTTPS';

/** Members keyed as Octavia's batch update matches them: address and port. Later duplicates win. */
export function memberKey(address: string, port: number): string {
  return `${address}|${port}`;
}

export function uniqueMembers(members: readonly DesiredMember[]): DesiredMember[] {
  return [...new Map(members.map((m) => [memberKey(m.address, m.port), m])).values()];
}

/**
 * The load balancer alone (serial mode), or fully populated: every listener with its default pool,
 * members and monitor in ONE request, whatever the number of members — Octavia's cost, and ours,
 * does not grow with N.
 */
export function createBody(
  desired: DesiredLoadBalancer,
  ctx: BuildContext & { serial: boolean },
): LoadBalancerCreateOpts {
  const { identity, vip } = desired;
  const tags = ctx.tags ? identityTags(identity) : undefined;
  const body: LoadBalancerCreateOpts = { name: identity.name, description: identity.description };
  if (tags) body.tags = tags;
  if (vip.portId !== undefined) body.vip_port_id = vip.portId;
  if (vip.subnetId !== undefined) body.vip_subnet_id = vip.subnetId;
  if (vip.networkId !== undefined) body.vip_network_id = vip.networkId;
  if (vip.address !== undefined) body.vip_address = vip.address;
  if (desired.provider !== undefined) body.provider = desired.provider;
  if (desired.flavorId !== undefined) body.flavor_id = desired.flavorId;
  if (desired.availabilityZone !== undefined) body.availability_zone = desired.availabilityZone;
  if (ctx.serial) return body;
  body.listeners = desired.listeners.map((l): NestedListenerCreateOpts => {
    const pool: NestedPoolCreateOpts = {
      ...poolFields(l.pool),
      name: l.pool.name,
      protocol: l.pool.protocol,
      lb_algorithm: l.pool.algorithm,
      members: uniqueMembers(l.pool.members).map(memberBody),
    };
    if (tags) pool.tags = tags;
    if (l.pool.healthMonitor) pool.healthmonitor = monitorBody(l.pool.healthMonitor);
    const listener: NestedListenerCreateOpts = {
      ...listenerFields(l),
      protocol: l.protocol,
      protocol_port: l.port,
      default_pool: pool,
    };
    if (tags) listener.tags = tags;
    return listener;
  });
  return body;
}
