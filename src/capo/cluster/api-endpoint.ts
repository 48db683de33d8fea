/**
 * The control-plane endpoint (CAPO's reconcileControlPlaneEndpoint and the API server load balancer).
 *
 * With `apiServerLoadBalancer.enabled`, the Octavia load balancer `k8s-clusterapi-cluster-<ns>-<name>-kubeapi`
 * goes through the shared load-balancer engine (src/openstack/services/loadbalancer): one TCP
 * listener, pool and health monitor per API port (`apiServerPort`, 6443 by default, then
 * `additionalPorts`), each named `<lb>-<port>`, the VIP on the cluster subnet (or the subnet
 * `apiServerLoadBalancer.network/subnets` names), a floating IP on the VIP unless
 * `disableAPIServerFloatingIP`, and `allowedCIDRs` widened as CAPO widens them (the bastion and the
 * cluster subnets and router may always reach the API).
 *
 * Decision: this controller owns the whole load balancer, members included. The POOL MEMBERS are
 * the control-plane OpenStackMachines' InternalIP addresses (label `cluster.x-k8s.io/control-plane`,
 * not being deleted): the controller watches the cluster's OpenStackMachines and hands the engine
 * the whole member list, so a change costs one batch member PUT per pool and the machine
 * controller never touches the load balancer. (CAPO lets each machine add and remove its own member,
 * which races when machines come and go together.)
 *
 * Without a load balancer the endpoint is, in CAPO's order: a preset `controlPlaneEndpoint`; a
 * floating IP (`apiServerFloatingIP`, or a new one, which the machine controller puts on the first
 * control-plane machine); `apiServerFixedIP`; else an error.
 */
import { isIPv4, parseCidr, parseIp } from '../../lib/cidr.ts';
import { DependencyError } from '../../openstack/services/server/index.ts';
import type { DesiredLoadBalancer, DesiredListener } from '../../openstack/services/loadbalancer/index.ts';
import type { FloatingIp } from '../../openstack/network/v2/floating-ips.ts';
import {
  CONTROL_PLANE_LABEL,
  type OpenStackClusterSpec,
  type OpenStackClusterStatus,
  type OpenStackMachine,
} from '../api/index.ts';
import type { ClusterApi } from './api.ts';
import {
  DEFAULT_API_SERVER_PORT,
  loadBalancerMemberName,
  loadBalancerName,
  loadBalancerPortName,
  resourceDescription,
} from './names.ts';
import { resolveNetwork, resolveSubnet } from './params.ts';
import { subnetStatus, type NetworkStatusWithSubnets } from './network.ts';

const SLOPPY = { sloppy: true };

export type ApiLoadBalancerStatus = NonNullable<OpenStackClusterStatus['apiServerLoadBalancer']>;

export function loadBalancerEnabled(spec: OpenStackClusterSpec): boolean {
  return spec.apiServerLoadBalancer !== undefined && spec.apiServerLoadBalancer.enabled !== false;
}

export function apiServerPort(spec: OpenStackClusterSpec): number {
  return spec.apiServerPort || DEFAULT_API_SERVER_PORT;
}

/** An IP literal to use as an address: host names are not resolved (a controller should not depend on DNS). */
function ipOf(host: string | undefined): string | undefined {
  return host && parseIp(host) ? host : undefined;
}

/**
 * CAPO's getCanonicalAllowedCIDRs: when the user restricts the API, the bastion, the cluster
 * subnets and the router's external addresses are allowed too; addresses become /32; anything
 * else is dropped (returned in `invalid` for an Event); sorted, without repeats. Empty: no restriction.
 */
export function canonicalAllowedCIDRs(
  spec: OpenStackClusterSpec,
  status: Pick<OpenStackClusterStatus, 'bastion' | 'network' | 'router'>,
): { cidrs: string[]; invalid: string[] } {
  const given = spec.apiServerLoadBalancer?.allowedCIDRs ?? [];
  if (given.length === 0) return { cidrs: [], invalid: [] };
  const all = [...given];
  if (status.bastion?.floatingIP) all.push(status.bastion.floatingIP);
  if (status.bastion?.ip) all.push(status.bastion.ip);
  for (const s of status.network?.subnets ?? []) if (s.cidr) all.push(s.cidr);
  all.push(...(status.router?.ips ?? []));
  const cidrs: string[] = [];
  const invalid: string[] = [];
  // k8s.io/utils/net's IsIPv4String and IsIPv4CIDRString: sloppy, and the text is kept as written.
  for (const v of all) {
    if (isIPv4(v, SLOPPY)) cidrs.push(`${v}/32`);
    else if (parseCidr(v, SLOPPY)?.family === 4) cidrs.push(v);
    else invalid.push(v);
  }
  return { cidrs: [...new Set(cidrs)].sort(), invalid };
}

export interface Member {
  /** The OpenStackMachine. */
  machine: string;
  address: string;
}

/** The pool members: control-plane machines with an InternalIP that are not being deleted. */
export function controlPlaneMembers(machines: readonly OpenStackMachine[]): Member[] {
  const out: Member[] = [];
  for (const m of machines) {
    if (m.metadata?.deletionTimestamp) continue;
    if (m.metadata?.labels?.[CONTROL_PLANE_LABEL] === undefined) continue;
    const address = m.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
    if (address) out.push({ machine: m.metadata?.name ?? '', address });
  }
  return out.sort((a, b) => a.machine.localeCompare(b.machine));
}

/** The VIP's network and subnet: the ones `apiServerLoadBalancer` names, else the cluster's first subnet. */
export async function loadBalancerNetwork(
  api: ClusterApi,
  spec: OpenStackClusterSpec,
  clusterNetwork: NetworkStatusWithSubnets | undefined,
  signal: AbortSignal,
): Promise<NetworkStatusWithSubnets> {
  const lb = spec.apiServerLoadBalancer;
  const o = { signal };
  if (lb?.network) {
    const network = await resolveNetwork(api, lb.network, o);
    const subnets = [];
    for (const s of lb.subnets ?? []) subnets.push(await resolveSubnet(api, s, network.id, o));
    if (subnets.length === 0)
      subnets.push(...(await api.network.subnets.list({ network_id: network.id }, o).all()));
    if (subnets.length === 0)
      throw new DependencyError(
        'subnet',
        'NotFound',
        `load balancer network ${network.name || network.id} has no subnet`,
      );
    return {
      id: network.id,
      name: network.name,
      ...(network.tags?.length ? { tags: [...network.tags] } : {}),
      subnets: subnets.map(subnetStatus),
    };
  }
  if (!clusterNetwork?.subnets?.length)
    throw new DependencyError(
      'network',
      'NotFound',
      'the API load balancer needs a subnet: the cluster has no network (set managedSubnets, network, or apiServerLoadBalancer.network)',
    );
  return clusterNetwork;
}

export interface DesiredInput {
  spec: OpenStackClusterSpec;
  status: Pick<OpenStackClusterStatus, 'apiServerLoadBalancer'>;
  resourceName: string;
  vipSubnetID: string;
  members: readonly Member[];
  externalNetworkID: string | undefined;
  /** Resolved allowed_cidrs; undefined when the provider cannot filter (OVN, Octavia < 2.12). */
  allowedCIDRs: readonly string[] | undefined;
  /** The provider to ask for (undefined: Octavia's default). */
  provider: string | undefined;
  flavorID: string | undefined;
}

export class EndpointError extends Error {
  override readonly name = 'EndpointError';
  static is(this: void, err: unknown): err is EndpointError {
    return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'EndpointError';
  }
}

/** The engine's view of the API load balancer. */
export function desiredApiLoadBalancer(input: DesiredInput): DesiredLoadBalancer {
  const { spec, resourceName } = input;
  const lb = spec.apiServerLoadBalancer ?? { enabled: true };
  const monitor = lb.monitor ?? {};
  const ports = [apiServerPort(spec), ...(lb.additionalPorts ?? [])].filter(
    (p, i, all) => all.indexOf(p) === i,
  );
  const description = resourceDescription(resourceName);
  const ovn = input.provider === 'ovn';
  const listeners: DesiredListener[] = ports.map((port) => {
    const name = loadBalancerPortName(resourceName, port);
    return {
      name,
      protocol: 'TCP',
      port,
      ...(input.allowedCIDRs !== undefined ? { allowedCidrs: [...input.allowedCIDRs] } : {}),
      pool: {
        name,
        protocol: 'TCP',
        algorithm: ovn ? 'SOURCE_IP_PORT' : 'ROUND_ROBIN',
        members: input.members.map((m) => ({
          name: loadBalancerMemberName(resourceName, port, m.machine),
          address: m.address,
          port,
        })),
        healthMonitor: {
          name,
          type: 'TCP',
          delay: monitor.delay || 10,
          timeout: monitor.timeout || 5,
          maxRetries: monitor.maxRetries || 5,
          maxRetriesDown: monitor.maxRetriesDown || 3,
        },
      },
    };
  });
  const fixed =
    spec.apiServerFixedIP ||
    (spec.disableAPIServerFloatingIP ? ipOf(spec.controlPlaneEndpoint?.host) : undefined);
  let floatingIp: DesiredLoadBalancer['floatingIp'];
  if (!spec.disableAPIServerFloatingIP) {
    if (!input.externalNetworkID)
      throw new EndpointError(
        'the API floating IP needs an external network, and the cluster has none; set disableAPIServerFloatingIP, or name spec.externalNetwork',
      );
    const address =
      input.status.apiServerLoadBalancer?.ip ||
      spec.apiServerFloatingIP ||
      ipOf(spec.controlPlaneEndpoint?.host);
    floatingIp = {
      external: true,
      networkId: input.externalNetworkID,
      ...(address ? { address } : {}),
      description,
      ownedMarker: description,
      // CAPO never deletes a floating IP the user named.
      keep: Boolean(spec.apiServerFloatingIP),
    };
  }
  return {
    identity: {
      name: loadBalancerName(resourceName),
      description,
      ...(spec.tags?.length ? { tags: [...spec.tags] } : {}),
      ...(input.status.apiServerLoadBalancer?.id ? { id: input.status.apiServerLoadBalancer.id } : {}),
    },
    vip: { subnetId: input.vipSubnetID, ...(fixed ? { address: fixed } : {}) },
    ...(input.provider ? { provider: input.provider } : {}),
    ...(input.flavorID ? { flavorId: input.flavorID } : {}),
    ...(lb.availabilityZone ? { availabilityZone: lb.availabilityZone } : {}),
    listeners,
    floatingIp,
  };
}

/**
 * The API floating IP of a cluster without load balancer: the one `apiServerFloatingIP` (or a preset
 * endpoint host) names — created with that address if it does not exist — else ours left from an
 * earlier run (unattached, our description: a crash between create and recording the endpoint
 * must not cost a second address), else a new one.
 */
export async function ensureApiFloatingIP(
  api: ClusterApi,
  spec: OpenStackClusterSpec,
  resourceName: string,
  externalNetworkID: string | undefined,
  signal: AbortSignal,
): Promise<{ fip: FloatingIp; created: boolean }> {
  const o = { signal };
  if (!externalNetworkID)
    throw new EndpointError(
      'the API floating IP needs an external network, and the cluster has none; set disableAPIServerFloatingIP and apiServerFixedIP, or name spec.externalNetwork',
    );
  const description = resourceDescription(resourceName);
  const address = spec.apiServerFloatingIP || ipOf(spec.controlPlaneEndpoint?.host);
  if (address) {
    const [existing] = await api.network.floatingIps.list({ floating_ip_address: address }, o).all();
    if (existing) return { fip: existing, created: false };
    const fip = await api.network.floatingIps.create(
      { floating_network_id: externalNetworkID, floating_ip_address: address, description },
      o,
    );
    return { fip, created: true };
  }
  const ours = (await api.network.floatingIps.list({ description }, o).all()).filter(
    (f) => !f.port_id && f.floating_network_id === externalNetworkID,
  );
  if (ours[0]) return { fip: ours[0], created: false };
  const fip = await api.network.floatingIps.create(
    { floating_network_id: externalNetworkID, description },
    o,
  );
  return { fip, created: true };
}
