/**
 * The KuryrLoadBalancer status in upstream's shape (loadbalancer, listeners, pools, members,
 * service_pub_ip_info) from what the engine found Ready, and the test that tells whether a recorded
 * status still describes the desired load balancer — so a KuryrLoadBalancer whose status matches
 * its spec costs no Octavia call until the periodic check (upstream's CR stores the OpenStack state
 * for the same reason). Pure.
 */
import type { LoadBalancer } from '../../openstack/loadbalancer/v2/loadbalancers.ts';
import type { FloatingIp } from '../../openstack/network/v2/floating-ips.ts';
import type {
  CurrentState,
  DesiredLoadBalancer,
  Ready,
} from '../../openstack/services/loadbalancer/index.ts';
import type { KlbSpec, KlbStatus } from './klb.ts';

export function klbStatus(ready: Ready, state: CurrentState, spec: KlbSpec): KlbStatus {
  const lb = ready.loadBalancer;
  const listenerOf = new Map(state.listeners.map((l) => [l.id, l]));
  const status: KlbStatus = {
    loadbalancer: lbRecord(lb, spec),
    listeners: state.listeners
      .map((l) => ({
        id: l.id,
        loadbalancer_id: lb.id,
        name: l.name,
        port: l.protocol_port,
        project_id: l.project_id,
        protocol: l.protocol,
        ...(spec.timeout_client_data ? { timeout_client_data: l.timeout_client_data } : {}),
        ...(spec.timeout_member_data ? { timeout_member_data: l.timeout_member_data } : {}),
      }))
      .sort(byName),
    pools: state.pools
      .map((p) => ({
        id: p.id,
        listener_id: p.listeners.find((ref) => listenerOf.has(ref.id))?.id ?? '',
        loadbalancer_id: lb.id,
        name: p.name,
        project_id: p.project_id,
        protocol: p.protocol,
      }))
      .sort(byName),
    members: state.pools
      .flatMap((p) =>
        (state.members.get(p.id) ?? []).map((m) => ({
          id: m.id,
          ip: m.address,
          name: m.name,
          pool_id: p.id,
          port: m.protocol_port,
          project_id: m.project_id,
          subnet_id: m.subnet_id ?? '',
        })),
      )
      .sort((a, b) => byName(a, b) || cmp(a.pool_id, b.pool_id)),
  };
  if (ready.floatingIp) status.service_pub_ip_info = pubIpInfo(ready.floatingIp, spec);
  return status;
}

/** status.loadbalancer from Octavia's load balancer (known from the create on: recorded at once). */
export function lbRecord(lb: LoadBalancer, spec: KlbSpec): NonNullable<KlbStatus['loadbalancer']> {
  return {
    id: lb.id,
    ip: lb.vip_address,
    name: lb.name,
    port_id: lb.vip_port_id,
    project_id: lb.project_id,
    provider: lb.provider,
    security_groups: [...(spec.security_groups_ids ?? [])],
    subnet_id: lb.vip_subnet_id,
  };
}

/** Upstream's alloc_method: `user` for the Service's loadBalancerIP, `pool` for one allocated. */
function pubIpInfo(fip: FloatingIp, spec: KlbSpec): NonNullable<KlbStatus['service_pub_ip_info']> {
  return {
    ip_id: fip.id,
    ip_addr: fip.floating_ip_address,
    alloc_method: spec.lb_ip && spec.lb_ip === fip.floating_ip_address ? 'user' : 'pool',
  };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byName = (a: { name: string }, b: { name: string }) => cmp(a.name, b.name);

/**
 * Whether the recorded status is the desired load balancer: the same VIP and provider, the same
 * listeners (protocol, port) each with its pool, the same members (address, port, pool), the floating
 * IP where one is wanted and none where none is. A difference means the engine has work.
 */
export function statusMatches(
  status: KlbStatus | undefined,
  desired: DesiredLoadBalancer,
  wantsFloatingIp: boolean,
): boolean {
  const lb = status?.loadbalancer;
  if (!status || !lb) return false;
  if (desired.vip.address !== undefined && lb.ip !== desired.vip.address) return false;
  if (desired.vip.subnetId !== undefined && lb.subnet_id !== desired.vip.subnetId) return false;
  if (Boolean(status.service_pub_ip_info) !== wantsFloatingIp) return false;
  if (
    wantsFloatingIp &&
    desired.floatingIp?.address &&
    status.service_pub_ip_info?.ip_addr !== desired.floatingIp.address
  )
    return false;
  const listeners = status.listeners ?? [];
  const pools = status.pools ?? [];
  if (listeners.length !== desired.listeners.length || pools.length !== desired.listeners.length)
    return false;
  const members = status.members ?? [];
  let memberCount = 0;
  for (const want of desired.listeners) {
    const l = listeners.find(
      (x) => x.protocol === want.protocol && x.port === want.port && x.name === want.name,
    );
    if (!l) return false;
    if (want.timeouts?.clientData !== undefined && l.timeout_client_data !== want.timeouts.clientData)
      return false;
    if (want.timeouts?.memberData !== undefined && l.timeout_member_data !== want.timeouts.memberData)
      return false;
    const pool = pools.find((p) => p.listener_id === l.id);
    if (!pool || pool.name !== want.pool.name) return false;
    const have = new Set(
      members.filter((m) => m.pool_id === pool.id).map((m) => `${m.ip}|${m.port}|${m.subnet_id}`),
    );
    for (const m of want.pool.members) {
      if (!have.has(`${m.address}|${m.port}|${m.subnetId ?? ''}`)) return false;
    }
    if (have.size !== want.pool.members.length) return false;
    memberCount += have.size;
  }
  return memberCount === members.length;
}
