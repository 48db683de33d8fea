/**
 * L2 member mode (the ovn provider, or `[octavia_defaults] member_mode = L2`): each member goes on
 * the subnet its pod's port is on, as upstream's `_get_pod_subnet` finds it: the subnets driver's
 * subnet of the pod's namespace when it holds the address (`fromPod`, no call with the default
 * driver); else Neutron is asked which port holds the address (a pod not wired by kuryr: host
 * network). Known answers are kept per KuryrLoadBalancer, for the
 * addresses it still has, so a steady state asks nothing and memory stays bounded.
 */
import type { NetworkV2 } from '../../openstack/network/v2/index.ts';
import type { KlbSpec } from './klb.ts';

/** How many Neutron lookups run at once for one KuryrLoadBalancer. */
const CONCURRENCY = 8;

export interface PodRef {
  namespace: string;
  name: string;
}

export type PodSubnetLookup = (
  pod: PodRef,
  address: string,
  signal: AbortSignal,
) => Promise<string | undefined>;

export class MemberSubnets {
  private readonly network: Pick<NetworkV2, 'ports'>;
  private readonly fromPod: PodSubnetLookup | undefined;
  private readonly known = new Map<string, Map<string, string>>();

  constructor(network: Pick<NetworkV2, 'ports'>, fromPod?: PodSubnetLookup) {
    this.network = network;
    this.fromPod = fromPod;
  }

  /** The subnet of every ready endpoint address of `spec` that can be found now. */
  /**
   * `namespace`: the KuryrLoadBalancer's, for an endpoint without a pod reference (the subnets
   * driver answers per namespace).
   */
  async resolve(
    klbKey: string,
    namespace: string,
    spec: KlbSpec,
    signal: AbortSignal,
  ): Promise<Map<string, string>> {
    const before = this.known.get(klbKey) ?? new Map<string, string>();
    const now = new Map<string, string>();
    const missing: { address: string; pod: PodRef }[] = [];
    for (const slice of spec.endpointSlices ?? []) {
      for (const ep of slice.endpoints ?? []) {
        const address = ep.addresses?.[0];
        if (!address || ep.conditions?.ready === false || now.has(address)) continue;
        const subnet = before.get(address);
        if (subnet) now.set(address, subnet);
        else {
          const ref = ep.targetRef;
          missing.push({
            address,
            pod:
              ref?.kind === 'Pod' && ref.namespace
                ? { namespace: ref.namespace, name: ref.name ?? '' }
                : { namespace, name: '' },
          });
        }
      }
    }
    for (let i = 0; i < missing.length; i += CONCURRENCY) {
      const found = await Promise.all(
        missing
          .slice(i, i + CONCURRENCY)
          .map(async (m) => [m.address, await this.lookup(m.address, m.pod, signal)] as const),
      );
      for (const [address, subnet] of found) if (subnet) now.set(address, subnet);
    }
    this.known.set(klbKey, now);
    return now;
  }

  forget(klbKey: string): void {
    this.known.delete(klbKey);
  }

  private async lookup(
    address: string,
    pod: PodRef | undefined,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    if (pod && this.fromPod) {
      const subnet = await this.fromPod(pod, address, signal);
      if (subnet) return subnet;
    }
    const ports = await this.network.ports.list({ fixed_ips: [{ ip_address: address }] }, { signal }).all();
    for (const p of ports) {
      const ip = p.fixed_ips.find((f) => f.ip_address === address);
      if (ip) return ip.subnet_id;
    }
    return undefined;
  }
}
