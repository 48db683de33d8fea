/**
 * The part of the OpenStack client the cluster controller uses. `OpenStackClient` satisfies it;
 * the narrow shape lets a test put a "kill after k writes" wrapper in between, and it is what the
 * load-balancer engine takes as well.
 */
import type { ComputeV2 } from '../../openstack/compute/v2/index.ts';
import type { LoadBalancerV2 } from '../../openstack/loadbalancer/v2/index.ts';
import type { NetworkV2 } from '../../openstack/network/v2/index.ts';

export interface ClusterApi {
  readonly network: NetworkV2;
  readonly loadBalancer: LoadBalancerV2;
  readonly compute: ComputeV2;
}
