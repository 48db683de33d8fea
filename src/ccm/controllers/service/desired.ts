/**
 * A parsed Service (after the provider's capabilities are applied) and its eligible Nodes, turned
 * into the engine's `DesiredLoadBalancer` with OCCM's names, descriptions and member rules. Pure:
 * every cloud lookup (VIP subnet autodetection, Octavia version) happens before, in the controller.
 */
import type { V1Node } from '@kubernetes/client-node';
import type { HealthMonitorType } from '../../../openstack/loadbalancer/v2/healthmonitors.ts';
import type { ListenerProtocol } from '../../../openstack/loadbalancer/v2/listeners.ts';
import type { PoolProtocol } from '../../../openstack/loadbalancer/v2/pools.ts';
import type { Subnet } from '../../../openstack/network/v2/subnets.ts';
import type {
  DesiredHealthMonitor,
  DesiredListener,
  DesiredLoadBalancer,
  DesiredMember,
  FloatingIpIntent,
  FloatingSubnetChoice,
} from '../../../openstack/services/loadbalancer/index.ts';
import type { LoadBalancerPlan } from '../../capabilities.ts';
import { defined } from '../../defined.ts';
import { memberAddress } from '../../members.ts';
import {
  FLOATING_IP_MARKER,
  floatingIpDescription,
  isLegacyLoadBalancerName,
  legacyLoadBalancerName,
  listenerName,
  loadBalancerDescription,
  loadBalancerName,
  memberName,
  monitorName,
  poolName,
  SERVICE_PREFIX,
  serialMemberName,
} from '../../naming.ts';
import type { FloatingSubnetSpec } from '../../service/floating-subnet.ts';
import { matchesSubnetName } from '../../service/floating-subnet.ts';
import type { ListenerSpec, LoadBalancerSpec } from '../../service/types.ts';

export interface DesiredInputs {
  plan: LoadBalancerPlan;
  clusterName: string;
  /** The eligible Nodes (eligibleNodes), in a stable order. */
  nodes: readonly V1Node[];
  /** The VIP subnet when neither the Service nor cloud.conf names one (autodetected from a node). */
  detectedSubnetId?: string | undefined;
  maxSharedLb: number;
  serialApiCalls: boolean;
}

export interface MemberNode {
  name: string;
  address: string;
}

export interface MemberNodes {
  members: readonly MemberNode[];
  skipped: readonly string[];
}

/**
 * The last answer of memberNodes per address family. Cached Nodes are frozen and replaced on every
 * change, so the same Node objects in the same order are the same members: every Service reconciled
 * between two Node changes shares one answer, and the arrays built from it below, instead of sorting
 * and mapping thousands of Nodes per reconcile.
 */
const lastMemberNodes = new Map<string, { nodes: readonly V1Node[]; out: MemberNodes }>();

function sameNodes(a: readonly V1Node[], b: readonly V1Node[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The Nodes that become members and their address; Nodes without one are skipped, as OCCM does. */
export function memberNodes(nodes: readonly V1Node[], spec: LoadBalancerSpec): MemberNodes {
  const family = spec.ipFamily ?? 'any';
  const last = lastMemberNodes.get(family);
  if (last && sameNodes(last.nodes, nodes)) return last.out;
  const out = findMemberNodes(nodes, spec);
  if (nodes.every((n) => Object.isFrozen(n))) lastMemberNodes.set(family, { nodes: [...nodes], out });
  else lastMemberNodes.delete(family);
  return out;
}

function findMemberNodes(nodes: readonly V1Node[], spec: LoadBalancerSpec): MemberNodes {
  const members: MemberNode[] = [];
  const skipped: string[] = [];
  for (const n of nodes) {
    const name = n.metadata?.name ?? '';
    const address = memberAddress(n, spec.ipFamily);
    if (address === undefined) skipped.push(name);
    else members.push({ name, address });
  }
  members.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { members: Object.freeze(members), skipped: Object.freeze(skipped) };
}

/** A listener's members per member list (memberNodes' shared arrays) and what else shapes them. */
const listenerMembers = new WeakMap<readonly MemberNode[], Map<string, readonly DesiredMember[]>>();

/** The identity alone: enough for remove() when the Service no longer parses. */
export function serviceIdentity(
  service: { namespace: string; name: string; uid: string },
  clusterName: string,
  maxSharedLb: number,
  loadBalancerId?: string,
): DesiredLoadBalancer['identity'] {
  return {
    name: loadBalancerName(clusterName, service.namespace, service.name),
    description: loadBalancerDescription(service.namespace, service.name, clusterName),
    sharedTagPrefix: SERVICE_PREFIX,
    taglessOwner: isLegacyLoadBalancerName,
    maxShared: maxSharedLb,
    ...defined({
      legacyNames: service.uid ? [legacyLoadBalancerName(service.uid)] : undefined,
      id: loadBalancerId,
    }),
  };
}

/** The subnet members are created on: the member-subnet-id, else the VIP subnet (given or autodetected). */
export function memberSubnetOf(
  spec: LoadBalancerSpec,
  detectedSubnetId: string | undefined,
): string | undefined {
  return spec.memberSubnetId ?? spec.vip.subnetId ?? (spec.vip.networkId ? undefined : detectedSubnetId);
}

export function desiredLoadBalancer(input: DesiredInputs): DesiredLoadBalancer {
  const { plan, clusterName } = input;
  const spec = plan.spec;
  const identity = serviceIdentity(spec.service, clusterName, input.maxSharedLb, spec.loadBalancerId);
  const { members } = memberNodes(input.nodes, spec);
  const vipSubnetId = spec.vip.subnetId ?? (spec.vip.networkId ? undefined : input.detectedSubnetId);
  const memberSubnetId = memberSubnetOf(spec, input.detectedSubnetId);
  const listeners = spec.listeners.map((l) =>
    desiredListener(l, plan, identity.name, members, memberSubnetId, input.serialApiCalls),
  );
  return {
    identity,
    listeners,
    serialApiCalls: input.serialApiCalls,
    floatingIp: floatingIpIntent(spec, clusterName),
    vip: defined({
      portId: spec.vip.portId,
      subnetId: spec.vip.portId ? undefined : vipSubnetId,
      networkId: spec.vip.portId ? undefined : spec.vip.networkId,
      address: spec.vip.address,
    }),
    ...defined({
      provider: spec.provider || undefined,
      flavorId: spec.flavorId,
      availabilityZone: spec.availabilityZone,
    }),
  };
}

function desiredListener(
  l: ListenerSpec,
  plan: LoadBalancerPlan,
  lbName: string,
  nodes: readonly MemberNode[],
  subnetId: string | undefined,
  serial: boolean,
): DesiredListener {
  const spec = plan.spec;
  const http = l.monitorType === 'HTTP' && spec.monitor.healthCheckNodePort !== undefined;
  // allocateLoadBalancerNodePorts=false: no NodePort, so nothing to send traffic to.
  const monitorPort = http ? spec.monitor.healthCheckNodePort : undefined;
  const shape = `${l.nodePort}|${subnetId ?? ''}|${monitorPort ?? ''}|${serial}`;
  let known = listenerMembers.get(nodes);
  if (!known) listenerMembers.set(nodes, (known = new Map<string, readonly DesiredMember[]>()));
  let members = known.get(shape);
  if (!members) {
    members = Object.freeze(
      l.nodePort === 0
        ? []
        : nodes.map((n) => ({
            name: serial ? serialMemberName(n.name, n.address, l.nodePort) : memberName(n.name),
            address: n.address,
            port: l.nodePort,
            ...defined({ subnetId, monitorPort }),
          })),
    );
    known.set(shape, members);
  }
  return {
    name: listenerName(l.index, lbName),
    protocol: l.listenerProtocol as ListenerProtocol,
    port: l.port,
    connectionLimit: spec.connectionLimit,
    pool: {
      name: poolName(l.index, lbName),
      protocol: l.poolProtocol as PoolProtocol,
      algorithm: spec.lbMethod,
      sessionPersistence: spec.sessionPersistence ? { type: spec.sessionPersistence } : null,
      members,
      ...defined({
        healthMonitor:
          spec.monitor.enabled && l.monitorType ? healthMonitor(l, spec, lbName, http) : undefined,
      }),
    },
    ...defined({
      // Left undefined (unmanaged) when Octavia cannot enforce them: applyCapabilities said so.
      allowedCidrs: plan.allowedCidrs,
      timeouts: plan.timeouts ? spec.timeouts : undefined,
      insertHeaders: spec.xForwardedFor ? { 'X-Forwarded-For': 'true' } : undefined,
      defaultTlsContainerRef: spec.tlsContainerRef,
    }),
  };
}

/** OCCM's monitor: HTTP GET /healthz → 200 on healthCheckNodePort for ETP=Local, else a connect check. */
function healthMonitor(
  l: ListenerSpec,
  spec: LoadBalancerSpec,
  lbName: string,
  http: boolean,
): DesiredHealthMonitor {
  const m = spec.monitor;
  return {
    name: monitorName(l.index, lbName),
    type: l.monitorType as HealthMonitorType,
    delay: m.delay,
    timeout: m.timeout,
    maxRetries: m.maxRetries,
    maxRetriesDown: m.maxRetriesDown,
    ...(http ? { httpMethod: 'GET', urlPath: '/healthz', expectedCodes: '200' } : {}),
  };
}

function floatingIpIntent(spec: LoadBalancerSpec, clusterName: string): FloatingIpIntent {
  const { namespace, name } = spec.service;
  const base = {
    description: floatingIpDescription(namespace, name, clusterName),
    ownedMarker: FLOATING_IP_MARKER,
    keep: spec.keepFloatingIp,
  };
  // OCCM never gives an IPv6 VIP a floating IP (the controller says so with an Event).
  if (spec.internal || !spec.floatingIp || spec.ipFamily === 'IPv6') return { external: false, ...base };
  return {
    external: true,
    ...base,
    ...defined({
      networkId: spec.floatingIp.networkId,
      subnet: spec.floatingIp.subnet ? floatingSubnetChoice(spec.floatingIp.subnet) : undefined,
      address: spec.floatingIp.address,
    }),
  };
}

/** OCCM's floating-subnet / floating-subnet-tags matching, as a filter over the floating network's subnets. */
export function floatingSubnetChoice(s: FloatingSubnetSpec): FloatingSubnetChoice {
  if (s.kind === 'id') return { id: s.subnetId };
  return {
    match: (subnet: Subnet) => {
      if (s.name && !matchesSubnetName(s.name, subnet.name)) return false;
      if (s.tags) {
        const tags = subnet.tags ?? [];
        const hit = s.tags.all
          ? s.tags.tags.every((t) => tags.includes(t))
          : s.tags.tags.some((t) => tags.includes(t));
        if (hit === s.tags.negate) return false;
      }
      return true;
    },
  };
}
