/**
 * Octavia pool members (`lbaas/pools/{pool_id}/members`): one at a time, or the whole set at once
 * with the batch update. https://docs.openstack.org/api-ref/load-balancer/v2/#members
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import {
  octaviaChildResource,
  type ObjectListQuery,
  type OperatingStatus,
  type ProvisioningStatus,
} from './resource.ts';

export interface Member {
  id: string;
  name: string;
  project_id: string;
  provisioning_status: ProvisioningStatus;
  /** `NO_MONITOR` without a health monitor; nothing updates it on a cloud without a health manager. */
  operating_status: OperatingStatus;
  admin_state_up: boolean;
  address: string;
  protocol_port: number;
  weight: number;
  backup: boolean;
  subnet_id: string | null;
  monitor_address: string | null;
  monitor_port: number | null;
  /** API 2.5. */
  tags?: string[];
  created_at: string;
  updated_at: string | null;
}

interface MemberWritable {
  name?: string;
  admin_state_up?: boolean;
  weight?: number;
  backup?: boolean;
  monitor_address?: string | null;
  monitor_port?: number | null;
  /** API 2.5. */
  tags?: string[];
}

/** Fields not declared here are sent as given. The same address and port twice in a pool is a 409. */
export interface MemberCreateOpts extends MemberWritable {
  address: string;
  protocol_port: number;
  /** The subnet the address is on; the load balancer's VIP subnet when absent. */
  subnet_id?: string;
  project_id?: string;
  [field: string]: unknown;
}

export interface MemberUpdateOpts extends MemberWritable {
  [field: string]: unknown;
}

export interface MemberListQuery extends ObjectListQuery {
  address?: string;
  protocol_port?: number;
  subnet_id?: string;
  weight?: number;
  backup?: boolean;
}

export const members = octaviaChildResource<Member, MemberCreateOpts, MemberUpdateOpts, MemberListQuery>({
  parent: 'pools',
  collection: 'members',
  key: 'member',
  label: 'loadbalancer_member',
});

/**
 * `PUT /v2/lbaas/pools/{pool_id}/members` → 202 with no body: the pool ends up with exactly these
 * members. A member matching an existing one by address and port keeps its id (and takes the new
 * weight, name, …); new ones are created; members not listed are deleted. An empty list removes every
 * member. The load balancer goes PENDING_UPDATE; wait for it (or requeue) before the next write.
 * Counted as OCCM counts it: `loadbalancer_members_update`.
 */
export async function replaceMembers(
  sc: ServiceClient,
  poolId: string,
  desired: readonly MemberCreateOpts[],
  options: CallOptions = {},
): Promise<void> {
  await sc.request({
    method: 'PUT',
    path: `lbaas/pools/${encodeURIComponent(poolId)}/members`,
    body: { members: desired },
    label: 'loadbalancer_members_update',
    signal: options.signal,
    expect: [202],
  });
}
