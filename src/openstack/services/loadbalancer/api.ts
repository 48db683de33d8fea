/**
 * The part of the OpenStack client the load-balancer path uses. `OpenStackClient` satisfies it;
 * naming the narrow shape lets a test put a recorder or a "kill after k writes" wrapper in between.
 */
import type { LoadBalancerV2 } from '../../loadbalancer/v2/index.ts';
import type { NetworkV2 } from '../../network/v2/index.ts';

export interface LoadBalancerApi {
  readonly loadBalancer: LoadBalancerV2;
  readonly network: NetworkV2;
}
