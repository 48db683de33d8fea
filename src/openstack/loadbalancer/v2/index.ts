/**
 * Octavia v2 as a namespace bound to one ServiceClient:
 * `client.loadBalancer.loadBalancers.create({ name, vip_subnet_id }, { signal })`. The declarations
 * and functions are exported too, for code that holds a ServiceClient.
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { apiVersions, listAvailabilityZones, listFlavors, listProviders } from './catalog.ts';
import { healthMonitors } from './healthmonitors.ts';
import { l7Policies, l7Rules } from './l7policies.ts';
import { listeners } from './listeners.ts';
import {
  createLoadBalancer,
  deleteLoadBalancer,
  failoverLoadBalancer,
  getLoadBalancer,
  getLoadBalancerStats,
  getLoadBalancerStatusTree,
  listLoadBalancers,
  updateLoadBalancer,
  type LoadBalancerCreateOpts,
  type LoadBalancerListQuery,
  type LoadBalancerUpdateOpts,
} from './loadbalancers.ts';
import { members, replaceMembers, type MemberCreateOpts } from './members.ts';
import { pools } from './pools.ts';
import { waitForLoadBalancerActive, waitForLoadBalancerDeleted, type WaiterOptions } from './waiters.ts';

export * from './catalog.ts';
export * from './healthmonitors.ts';
export * from './l7policies.ts';
export * from './listeners.ts';
export * from './loadbalancers.ts';
export * from './members.ts';
export * from './pools.ts';
export * from './resource.ts';
export * from './waiters.ts';

export function loadBalancerV2(sc: ServiceClient) {
  return {
    client: sc,
    loadBalancers: {
      list: (query?: LoadBalancerListQuery, o?: CallOptions) => listLoadBalancers(sc, query, o),
      get: (id: string, o?: CallOptions) => getLoadBalancer(sc, id, o),
      /** Alone, or fully populated with `listeners` (and `pools`). */
      create: (opts: LoadBalancerCreateOpts, o?: CallOptions) => createLoadBalancer(sc, opts, o),
      update: (id: string, opts: LoadBalancerUpdateOpts, o?: CallOptions) =>
        updateLoadBalancer(sc, id, opts, o),
      /** `cascade: true` deletes listeners, pools, members and monitors with it. */
      delete: (id: string, o?: CallOptions & { cascade?: boolean | undefined }) =>
        deleteLoadBalancer(sc, id, o),
      stats: (id: string, o?: CallOptions) => getLoadBalancerStats(sc, id, o),
      statusTree: (id: string, o?: CallOptions) => getLoadBalancerStatusTree(sc, id, o),
      failover: (id: string, o?: CallOptions) => failoverLoadBalancer(sc, id, o),
      /** For scripts, tests and the CLI; controllers requeue instead (see waiters.ts). */
      waitForActive: (id: string, o?: WaiterOptions) => waitForLoadBalancerActive(sc, id, o),
      /** For scripts, tests and the CLI; controllers requeue instead (see waiters.ts). */
      waitForDeleted: (id: string, o?: WaiterOptions) => waitForLoadBalancerDeleted(sc, id, o),
    },
    listeners: listeners.bind(sc),
    pools: pools.bind(sc),
    members: {
      ...members.bind(sc),
      /** The batch update: the pool ends with exactly `desired` (202, `loadbalancer_members_update`). */
      replace: (poolId: string, desired: readonly MemberCreateOpts[], o?: CallOptions) =>
        replaceMembers(sc, poolId, desired, o),
    },
    healthMonitors: healthMonitors.bind(sc),
    l7Policies: l7Policies.bind(sc),
    l7Rules: l7Rules.bind(sc),
    providers: { list: (o?: CallOptions) => listProviders(sc, o) },
    availabilityZones: {
      list: (query?: { name?: string; enabled?: boolean }, o?: CallOptions) =>
        listAvailabilityZones(sc, query, o),
    },
    flavors: {
      list: (query?: { name?: string; enabled?: boolean }, o?: CallOptions) => listFlavors(sc, query, o),
    },
    /** The API versions of the endpoint, read once: `(await versions()).supports('2.5')`. */
    versions: (o?: CallOptions) => apiVersions(sc, o),
    /** Whether the endpoint lists API version `version` (`'2.5'`: tags, `'2.14'`: availability zones). */
    supports: async (version: string, o?: CallOptions) => (await apiVersions(sc, o)).supports(version),
  };
}

export type LoadBalancerV2 = ReturnType<typeof loadBalancerV2>;
