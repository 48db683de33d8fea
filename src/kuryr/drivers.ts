/**
 * The seams between kuryr's areas, as upstream's driver interfaces (KURYR `controller/drivers/
 * base.py`): which subnet a pod's port goes on, and which security groups it gets. The port and pool
 * code asks through these and never knows whether namespace networks or network policies are on.
 *
 * A driver never waits: an answer that is not there yet (the namespace's subnet being made) is a
 * `Pending`, which the caller turns into a requeue.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { KuryrOptions } from './options.ts';

/** Not there yet: look again after `retryAfterMs`; `reason` says what is awaited (for logs and Events). */
export interface Pending {
  pending: true;
  reason: string;
  retryAfterMs: number;
}

export function pending(reason: string, retryAfterMs: number): Pending {
  return { pending: true, reason, retryAfterMs };
}

export function isPending(value: unknown): value is Pending {
  return typeof value === 'object' && value !== null && (value as Pending).pending === true;
}

/** A subnet a pod's port is made on, and what the VIF needs of it. */
export interface PodSubnet {
  networkId: string;
  subnetId: string;
  /** e.g. `10.128.4.0/23`. */
  cidr: string;
  gateway?: string | undefined;
  /** The network's MTU, when known. */
  mtu?: number | undefined;
}

/** The default driver reads `[neutron_defaults] pod_subnet`; the namespace driver a KuryrNetwork. */
export interface SubnetsDriver {
  readonly name: 'default' | 'namespace';
  forPod(pod: V1Pod, signal: AbortSignal): Promise<PodSubnet | Pending>;
  /** The subnet of a namespace's pods (a Service's L3 members, a policy's namespace rules). */
  forNamespace(namespace: string, signal: AbortSignal): Promise<PodSubnet | Pending>;
}

/** The default driver: `[neutron_defaults] pod_security_groups`; the policy driver adds the policies' groups. */
export interface SecurityGroupsDriver {
  readonly name: 'default' | 'policy';
  /** The groups a pod's port must carry, sorted (a pool key). */
  forPod(pod: V1Pod, signal: AbortSignal): Promise<string[] | Pending>;
}

/** `[neutron_defaults] pod_security_groups`, whatever the pod. */
export function defaultSecurityGroups(options: KuryrOptions): SecurityGroupsDriver {
  const groups = [...options.neutronDefaults.podSecurityGroups].sort();
  return {
    name: 'default',
    forPod: () => Promise.resolve([...groups]),
  };
}

/** What the default subnets driver needs of the client. */
export interface SubnetReader {
  network: {
    subnets: {
      get(
        id: string,
        o?: { signal?: AbortSignal },
      ): Promise<{ id: string; network_id: string; cidr: string; gateway_ip?: string | null }>;
    };
    networks: { get(id: string, o?: { signal?: AbortSignal }): Promise<{ id: string; mtu?: number | null }> };
  };
}

/**
 * `[neutron_defaults] pod_subnet` for every pod and namespace: read from Neutron once, then kept
 * (a subnet's network, CIDR and gateway never change).
 */
export function defaultSubnets(os: SubnetReader, options: KuryrOptions): SubnetsDriver {
  let known: Promise<PodSubnet> | undefined;
  const read = async (signal: AbortSignal): Promise<PodSubnet> => {
    const id = options.neutronDefaults.podSubnet;
    if (!id)
      throw new Error('[neutron_defaults] pod_subnet is not set: the default pod subnets driver needs it');
    const subnet = await os.network.subnets.get(id, { signal });
    const network = await os.network.networks.get(subnet.network_id, { signal });
    return {
      networkId: subnet.network_id,
      subnetId: subnet.id,
      cidr: subnet.cidr,
      ...(subnet.gateway_ip ? { gateway: subnet.gateway_ip } : {}),
      ...(typeof network.mtu === 'number' ? { mtu: network.mtu } : {}),
    };
  };
  const get = (signal: AbortSignal): Promise<PodSubnet> => {
    known ??= read(signal).catch((err: unknown) => {
      known = undefined;
      throw err;
    });
    return known;
  };
  return {
    name: 'default',
    forPod: (_pod, signal) => get(signal),
    forNamespace: (_ns, signal) => get(signal),
  };
}
