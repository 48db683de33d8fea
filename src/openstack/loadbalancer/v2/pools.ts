/** Octavia pools. https://docs.openstack.org/api-ref/load-balancer/v2/#pools */
import type { NestedHealthMonitorCreateOpts } from './healthmonitors.ts';
import type { IdRef } from './listeners.ts';
import type { MemberCreateOpts } from './members.ts';
import {
  octaviaResource,
  type ObjectListQuery,
  type OperatingStatus,
  type ProvisioningStatus,
} from './resource.ts';

export type PoolProtocol = 'HTTP' | 'HTTPS' | 'PROXY' | 'PROXYV2' | 'TCP' | 'UDP' | 'SCTP';
export type LbAlgorithm = 'ROUND_ROBIN' | 'LEAST_CONNECTIONS' | 'SOURCE_IP' | 'SOURCE_IP_PORT';

export interface SessionPersistence {
  type: 'SOURCE_IP' | 'HTTP_COOKIE' | 'APP_COOKIE';
  cookie_name?: string | null;
  persistence_timeout?: number | null;
  persistence_granularity?: string | null;
}

export interface Pool {
  id: string;
  name: string;
  description: string;
  project_id: string;
  provisioning_status: ProvisioningStatus;
  operating_status: OperatingStatus;
  admin_state_up: boolean;
  protocol: PoolProtocol;
  lb_algorithm: LbAlgorithm;
  session_persistence: SessionPersistence | null;
  loadbalancers: IdRef[];
  listeners: IdRef[];
  members: IdRef[];
  healthmonitor_id?: string | null;
  tls_enabled?: boolean;
  tls_container_ref?: string | null;
  ca_tls_container_ref?: string | null;
  /** API 2.5. */
  tags?: string[];
  created_at: string;
  updated_at: string | null;
}

interface PoolWritable {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  lb_algorithm?: LbAlgorithm;
  session_persistence?: SessionPersistence | null;
  tls_enabled?: boolean;
  tls_container_ref?: string | null;
  ca_tls_container_ref?: string | null;
  /** API 2.5. */
  tags?: string[];
}

/** A pool inside a fully populated create. Octavia insists on a `name` there (400 otherwise). */
export interface NestedPoolCreateOpts extends PoolWritable {
  name: string;
  protocol: PoolProtocol;
  lb_algorithm: LbAlgorithm;
  members?: MemberCreateOpts[];
  healthmonitor?: NestedHealthMonitorCreateOpts;
  [field: string]: unknown;
}

/** Fields not declared here are sent as given. Give `listener_id` (it becomes its default pool) or `loadbalancer_id`. */
export interface PoolCreateOpts extends PoolWritable {
  protocol: PoolProtocol;
  lb_algorithm: LbAlgorithm;
  listener_id?: string;
  loadbalancer_id?: string;
  project_id?: string;
  [field: string]: unknown;
}

export interface PoolUpdateOpts extends PoolWritable {
  [field: string]: unknown;
}

export interface PoolListQuery extends ObjectListQuery {
  loadbalancer_id?: string;
  protocol?: PoolProtocol;
  lb_algorithm?: LbAlgorithm;
  healthmonitor_id?: string;
  description?: string;
}

export const pools = octaviaResource<Pool, PoolCreateOpts, PoolUpdateOpts, PoolListQuery>({
  collection: 'pools',
  key: 'pool',
  label: 'loadbalancer_pool',
});
