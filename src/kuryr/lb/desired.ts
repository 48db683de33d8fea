/**
 * A KuryrLoadBalancer's spec → the engine's `DesiredLoadBalancer`, as upstream's
 * KuryrLoadBalancerHandler builds it one object at a time (controller/handlers/loadbalancer.py):
 *
 * - VIP: `spec.ip` (the clusterIP) on `spec.subnet_id` (the service subnet);
 * - one listener per `spec.ports` entry (protocol, port), `<lb>:<protocol>:<port>`, with the
 *   Service's listener timeouts; one pool per listener, named as it;
 * - one member per ready endpoint address and port of `spec.endpointSlices` (the slice port of the
 *   same name as the spec port: the resolved targetPort), named `<ns>/<pod>:<port>`; its subnet is
 *   the VIP's in L3 member mode (routed from the VIP) and the pod's own in L2 mode, which the ovn
 *   provider needs (the caller looks those up: `memberSubnets`);
 * - a floating IP for a LoadBalancer Service (`lb_ip` = loadBalancerIP adopted), released once the
 *   Service is no longer one.
 *
 * Pure: every lookup happens before, in the controller. The engine then makes the whole load
 * balancer in one fully populated create, and turns a burst of endpoint changes into one batch
 * member update per pool.
 */
import type { ListenerProtocol } from '../../openstack/loadbalancer/v2/listeners.ts';
import type { LbAlgorithm, PoolProtocol } from '../../openstack/loadbalancer/v2/pools.ts';
import type {
  DesiredListener,
  DesiredLoadBalancer,
  DesiredMember,
  FloatingIpIntent,
} from '../../openstack/services/loadbalancer/index.ts';
import type { KlbSpec, KlbStatus } from './klb.ts';
import {
  FLOATING_IP_MARKER,
  floatingIpDescription,
  listenerName,
  loadBalancerDescription,
  loadBalancerName,
  memberName,
} from './names.ts';
import { isOvn } from './provider.ts';

/** `[octavia_defaults] member_mode`: L3 routes from the VIP's subnet, L2 plugs into the pod's. */
export type MemberMode = 'L2' | 'L3';

const PROTOCOLS: ReadonlySet<string> = new Set(['TCP', 'UDP', 'SCTP']);

export interface DesiredInputs {
  /** The KuryrLoadBalancer's namespace and name: the Service's. */
  namespace: string;
  name: string;
  spec: KlbSpec;
  status?: KlbStatus | undefined;
  /** `[neutron_defaults] resource_tags` (ownerTags): on the load balancer, listeners and pools. */
  tags: readonly string[];
  memberMode: MemberMode;
  /** `[octavia_defaults] lb_algorithm` (ROUND_ROBIN); the ovn provider only has SOURCE_IP_PORT. */
  lbAlgorithm: LbAlgorithm;
  /** L2 mode: the subnet of each member address; an address without one is not a member yet. */
  memberSubnets?: ReadonlyMap<string, string> | undefined;
  /** `[neutron_defaults] external_svc_net` / `external_svc_subnet`: where floating IPs come from. */
  publicNetworkId?: string | undefined;
  publicSubnetId?: string | undefined;
}

export interface DesiredOutcome {
  desired: DesiredLoadBalancer;
  /** Ready endpoint addresses left out (L2 mode, subnet unknown yet): the caller looks again later. */
  pending: string[];
  /** Spec ports the engine cannot serve (an unknown protocol): one Event each. */
  unsupported: string[];
}

export function desiredLoadBalancer(input: DesiredInputs): DesiredOutcome {
  const { spec, namespace, name } = input;
  const lbName = loadBalancerName(namespace, name);
  const ovn = isOvn(spec.provider);
  const algorithm: LbAlgorithm = ovn ? 'SOURCE_IP_PORT' : input.lbAlgorithm;
  const pending = new Set<string>();
  const unsupported: string[] = [];
  const listeners: DesiredListener[] = [];
  const seen = new Set<string>();
  for (const port of spec.ports ?? []) {
    const protocol = (port.protocol ?? 'TCP').toUpperCase();
    if (!PROTOCOLS.has(protocol)) {
      unsupported.push(`${port.name ?? ''} ${protocol}/${port.port}`.trim());
      continue;
    }
    const key = `${protocol}/${port.port}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const lname = listenerName(lbName, protocol, port.port);
    const members = membersFor(input, port.name ?? '', protocol, pending);
    listeners.push({
      name: lname,
      protocol: protocol as ListenerProtocol,
      port: port.port,
      ...(ovn ? {} : timeoutsOf(spec)),
      pool: { name: lname, protocol: protocol as PoolProtocol, algorithm, members },
    });
  }
  const statusId = input.status?.loadbalancer?.id;
  const desired: DesiredLoadBalancer = {
    identity: {
      name: lbName,
      description: loadBalancerDescription(namespace, name),
      tags: input.tags,
      ...(statusId ? { id: statusId } : {}),
    },
    vip: {
      ...(spec.subnet_id ? { subnetId: spec.subnet_id } : {}),
      ...(spec.ip ? { address: spec.ip } : {}),
    },
    ...(spec.provider ? { provider: spec.provider } : {}),
    listeners,
    ...floatingIp(input),
  };
  return { desired, pending: [...pending].sort(), unsupported };
}

function timeoutsOf(spec: KlbSpec): Pick<DesiredListener, 'timeouts'> {
  const clientData = positive(spec.timeout_client_data);
  const memberData = positive(spec.timeout_member_data);
  if (clientData === undefined && memberData === undefined) return {};
  return {
    timeouts: {
      ...(clientData !== undefined ? { clientData } : {}),
      ...(memberData !== undefined ? { memberData } : {}),
    },
  };
}

const positive = (n: number | undefined) => (n !== undefined && n > 0 ? n : undefined);

function membersFor(
  input: DesiredInputs,
  portName: string,
  protocol: string,
  pending: Set<string>,
): DesiredMember[] {
  const out = new Map<string, DesiredMember>();
  for (const slice of input.spec.endpointSlices ?? []) {
    const slicePorts = (slice.ports ?? []).filter(
      (p) => (p.name ?? '') === portName && (p.protocol ?? 'TCP').toUpperCase() === protocol,
    );
    if (slicePorts.length === 0) continue;
    for (const ep of slice.endpoints ?? []) {
      // An endpoint without conditions.ready is ready (discovery.k8s.io/v1: nil means unknown, serve it).
      if (ep.conditions?.ready === false) continue;
      const address = ep.addresses?.[0];
      if (!address) continue;
      const subnetId = input.memberMode === 'L2' ? input.memberSubnets?.get(address) : input.spec.subnet_id;
      if (subnetId === undefined) {
        pending.add(address);
        continue;
      }
      for (const { port } of slicePorts) {
        if (port === undefined) continue;
        const ns = ep.targetRef?.namespace ?? input.namespace;
        const pod = ep.targetRef?.name ?? input.name;
        out.set(`${address}|${port}`, { name: memberName(ns, pod, port), address, port, subnetId });
      }
    }
  }
  return [...out.values()].sort((a, b) => cmp(a.address, b.address) || a.port - b.port);
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A LoadBalancer Service's floating IP; for any other, none — and one recorded earlier is released
 * (ours deleted, a user's `lb_ip` only detached). Undefined leaves floating IPs alone: a ClusterIP
 * Service that never had one costs no Neutron call.
 */
function floatingIp(input: DesiredInputs): Pick<DesiredLoadBalancer, 'floatingIp'> {
  const { spec, namespace, name } = input;
  const wanted = spec.type === 'LoadBalancer';
  if (!wanted && !input.status?.service_pub_ip_info) return {};
  const intent: FloatingIpIntent = {
    external: wanted,
    description: floatingIpDescription(namespace, name),
    ownedMarker: FLOATING_IP_MARKER,
    ...(input.publicNetworkId ? { networkId: input.publicNetworkId } : {}),
    ...(input.publicSubnetId ? { subnet: { id: input.publicSubnetId } } : {}),
    ...(spec.lb_ip ? { address: spec.lb_ip } : {}),
  };
  return { floatingIp: intent };
}
