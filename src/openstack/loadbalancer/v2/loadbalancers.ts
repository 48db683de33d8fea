/**
 * Octavia load balancers: create (alone or fully populated with listeners, pools, members and
 * monitors in one call), read, update, delete (with `cascade` for one that has children), stats,
 * the status tree, failover. https://docs.openstack.org/api-ref/load-balancer/v2/#load-balancers
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import type { IdRef, NestedListenerCreateOpts } from './listeners.ts';
import type { NestedPoolCreateOpts } from './pools.ts';
import {
  octaviaResource,
  type ObjectListQuery,
  type OperatingStatus,
  type ProvisioningStatus,
} from './resource.ts';

export interface AdditionalVip {
  subnet_id: string;
  ip_address?: string;
}

export interface LoadBalancer {
  id: string;
  name: string;
  description: string;
  project_id: string;
  /** PENDING_* while Octavia works on it (every write is a 409 then), ACTIVE, or ERROR. */
  provisioning_status: ProvisioningStatus;
  /** ONLINE needs a health manager: on a cloud without one it stays OFFLINE. Never wait for it. */
  operating_status: OperatingStatus;
  admin_state_up: boolean;
  vip_address: string;
  vip_port_id: string;
  vip_subnet_id: string;
  vip_network_id: string;
  vip_qos_policy_id?: string | null;
  /** API 2.26. */
  additional_vips?: AdditionalVip[];
  /** Ids, except in the answer to a fully populated create, where the objects are whole. */
  listeners: IdRef[];
  pools: IdRef[];
  provider: string;
  /** API 2.6. */
  flavor_id?: string | null;
  /** API 2.14. */
  availability_zone?: string | null;
  /** API 2.5. */
  tags?: string[];
  created_at: string;
  updated_at: string | null;
}

interface LoadBalancerWritable {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  vip_qos_policy_id?: string | null;
  /** API 2.5. */
  tags?: string[];
}

/**
 * Fields not declared here are sent as given (Octavia rejects unknown ones with a 400). One of
 * `vip_subnet_id`, `vip_network_id`, `vip_port_id` is required. With `listeners` (and `pools`) the
 * create is fully populated: one call, one PENDING_CREATE → ACTIVE for everything; every nested pool
 * must be named.
 */
export interface LoadBalancerCreateOpts extends LoadBalancerWritable {
  vip_subnet_id?: string;
  vip_network_id?: string;
  vip_port_id?: string;
  vip_address?: string;
  /** API 2.26. */
  additional_vips?: AdditionalVip[];
  provider?: string;
  /** API 2.6. */
  flavor_id?: string;
  /** API 2.14. */
  availability_zone?: string;
  project_id?: string;
  listeners?: NestedListenerCreateOpts[];
  /** Pools not reached from a listener's `default_pool` (L7 redirect targets). */
  pools?: NestedPoolCreateOpts[];
  [field: string]: unknown;
}

export interface LoadBalancerUpdateOpts extends LoadBalancerWritable {
  [field: string]: unknown;
}

export interface LoadBalancerListQuery extends ObjectListQuery {
  description?: string;
  vip_address?: string;
  vip_port_id?: string;
  vip_subnet_id?: string;
  vip_network_id?: string;
  provider?: string;
  flavor_id?: string;
  availability_zone?: string;
}

export interface LoadBalancerStats {
  bytes_in: number;
  bytes_out: number;
  active_connections: number;
  total_connections: number;
  request_errors: number;
}

interface StatusNode {
  id: string;
  name: string;
  provisioning_status: ProvisioningStatus;
  operating_status: OperatingStatus;
}

/** `GET …/status`: every object of the load balancer with its two statuses. */
export interface LoadBalancerStatusTree extends StatusNode {
  listeners: (StatusNode & {
    pools: (StatusNode & {
      health_monitor?: StatusNode & { type: string };
      members: (StatusNode & { address: string; protocol_port: number })[];
    })[];
  })[];
}

const crud = octaviaResource<
  LoadBalancer,
  LoadBalancerCreateOpts,
  LoadBalancerUpdateOpts,
  LoadBalancerListQuery
>({ collection: 'loadbalancers', key: 'loadbalancer', label: 'loadbalancer' });
const item = (id: string) => `lbaas/loadbalancers/${encodeURIComponent(id)}`;

export const listLoadBalancers = crud.list;
export const getLoadBalancer = crud.get;
export const createLoadBalancer = crud.create;
export const updateLoadBalancer = crud.update;

/**
 * `DELETE …/loadbalancers/{id}` → 204, then PENDING_DELETE, then 404. Without `cascade`, a load
 * balancer with listeners or pools is a 400 ("it has children"); with it, everything goes at once.
 */
export async function deleteLoadBalancer(
  sc: ServiceClient,
  id: string,
  options: CallOptions & { cascade?: boolean | undefined } = {},
): Promise<void> {
  await sc.request({
    method: 'DELETE',
    path: item(id),
    query: options.cascade ? { cascade: true } : undefined,
    label: 'loadbalancer_delete',
    signal: options.signal,
    expect: [204],
  });
}

/** `GET …/stats`: traffic counters (zero on a provider that does not report them). */
export async function getLoadBalancerStats(
  sc: ServiceClient,
  id: string,
  options: CallOptions = {},
): Promise<LoadBalancerStats> {
  const res = await sc.request<{ stats: LoadBalancerStats }>({
    method: 'GET',
    path: `${item(id)}/stats`,
    label: 'loadbalancer_stats_get',
    signal: options.signal,
  });
  return res.body.stats;
}

/** `GET …/status`: the tree of listeners, pools, monitors and members with their statuses, in one call. */
export async function getLoadBalancerStatusTree(
  sc: ServiceClient,
  id: string,
  options: CallOptions = {},
): Promise<LoadBalancerStatusTree> {
  const res = await sc.request<{ statuses: { loadbalancer: LoadBalancerStatusTree } }>({
    method: 'GET',
    path: `${item(id)}/status`,
    label: 'loadbalancer_status_get',
    signal: options.signal,
  });
  return res.body.statuses.loadbalancer;
}

/** `PUT …/failover` → 202: Octavia rebuilds the amphorae; the load balancer goes PENDING_UPDATE. Admin only by default policy. */
export async function failoverLoadBalancer(
  sc: ServiceClient,
  id: string,
  options: CallOptions = {},
): Promise<void> {
  await sc.request({
    method: 'PUT',
    path: `${item(id)}/failover`,
    label: 'loadbalancer_failover',
    signal: options.signal,
    expect: [202],
    responseType: 'bytes',
  });
}
