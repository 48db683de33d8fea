/**
 * The CIDRs the default rules and `namespaceSelector: {}` name, from the subnets kuryr.conf names
 * by id: `[neutron_defaults] service_subnet`, `[pod_vif_nested] worker_nodes_subnets` and
 * `[neutron_defaults] pod_subnet`. A subnet's CIDR never changes, so each is asked of Neutron once
 * per process; a failed read is not remembered, so the next reconcile asks again.
 */
import type { NetworkV2 } from '../../openstack/network/v2/index.ts';
import type { PolicyNetworks } from './rules.ts';

export interface PolicySubnetIds {
  serviceSubnet?: string | undefined;
  workerSubnets: readonly string[];
  /** The one pod subnet of the `default` subnets driver, if set. */
  podSubnet?: string | undefined;
}

export class SubnetCidrs {
  private readonly network: NetworkV2;
  private readonly known = new Map<string, Promise<string>>();

  constructor(network: NetworkV2) {
    this.network = network;
  }

  cidr(id: string, signal: AbortSignal): Promise<string> {
    let p = this.known.get(id);
    if (!p) {
      p = this.network.subnets.get(id, { signal }).then((s) => s.cidr);
      this.known.set(id, p);
      p.catch(() => this.known.delete(id));
    }
    return p;
  }

  /**
   * The networks of a policy: `namespaceCidrs` (the KuryrNetworks' subnets) join the pod subnet as
   * the cluster's pod addresses, so `namespaceSelector: {}` covers every namespace network without
   * reading the subnet pool.
   */
  async networks(
    ids: PolicySubnetIds,
    namespaceCidrs: readonly string[],
    signal: AbortSignal,
  ): Promise<PolicyNetworks> {
    const [serviceSubnet, podSubnet, ...workerSubnets] = await Promise.all([
      ids.serviceSubnet ? this.cidr(ids.serviceSubnet, signal) : undefined,
      ids.podSubnet ? this.cidr(ids.podSubnet, signal) : undefined,
      ...ids.workerSubnets.map((id) => this.cidr(id, signal)),
    ]);
    const podCidrs = [...(podSubnet ? [podSubnet] : []), ...namespaceCidrs.filter((c) => c !== podSubnet)];
    return {
      serviceSubnet,
      workerSubnets: workerSubnets.filter((c): c is string => c !== undefined),
      podCidrs: [...new Set(podCidrs)].sort(),
    };
  }
}
