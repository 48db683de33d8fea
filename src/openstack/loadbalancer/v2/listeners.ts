/** Octavia listeners. https://docs.openstack.org/api-ref/load-balancer/v2/#listeners */
import type { NestedL7PolicyCreateOpts } from './l7policies.ts';
import type { NestedPoolCreateOpts } from './pools.ts';
import {
  octaviaResource,
  type ObjectListQuery,
  type OperatingStatus,
  type ProvisioningStatus,
} from './resource.ts';

export type ListenerProtocol = 'HTTP' | 'HTTPS' | 'TCP' | 'TERMINATED_HTTPS' | 'UDP' | 'SCTP' | 'PROMETHEUS';

export interface IdRef {
  id: string;
}

export interface Listener {
  id: string;
  name: string;
  description: string;
  project_id: string;
  provisioning_status: ProvisioningStatus;
  operating_status: OperatingStatus;
  admin_state_up: boolean;
  protocol: ListenerProtocol;
  protocol_port: number;
  /** -1: unlimited. */
  connection_limit: number;
  default_pool_id: string | null;
  loadbalancers: IdRef[];
  l7policies: IdRef[];
  insert_headers: Record<string, string>;
  /** Milliseconds (API 2.1). */
  timeout_client_data?: number;
  timeout_member_connect?: number;
  timeout_member_data?: number;
  timeout_tcp_inspect?: number;
  /** API 2.12; null when every source may connect. */
  allowed_cidrs?: string[] | null;
  default_tls_container_ref: string | null;
  sni_container_refs: string[];
  client_authentication?: 'NONE' | 'OPTIONAL' | 'MANDATORY';
  tls_ciphers?: string | null;
  tls_versions?: string[] | null;
  alpn_protocols?: string[] | null;
  /** API 2.5. */
  tags?: string[];
  created_at: string;
  updated_at: string | null;
}

interface ListenerWritable {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  connection_limit?: number;
  default_pool_id?: string | null;
  insert_headers?: Record<string, string>;
  timeout_client_data?: number;
  timeout_member_connect?: number;
  timeout_member_data?: number;
  timeout_tcp_inspect?: number;
  /** API 2.12; the OVN provider does not support it. */
  allowed_cidrs?: string[] | null;
  default_tls_container_ref?: string | null;
  sni_container_refs?: string[];
  client_authentication?: 'NONE' | 'OPTIONAL' | 'MANDATORY';
  tls_ciphers?: string;
  tls_versions?: string[];
  alpn_protocols?: string[];
  /** API 2.5. */
  tags?: string[];
}

/** A listener inside a fully populated load balancer create: no `loadbalancer_id`, an optional nested default pool. */
export interface NestedListenerCreateOpts extends ListenerWritable {
  protocol: ListenerProtocol;
  protocol_port: number;
  default_pool?: NestedPoolCreateOpts;
  l7policies?: NestedL7PolicyCreateOpts[];
  [field: string]: unknown;
}

/** Fields not declared here are sent as given (Octavia rejects unknown ones with a 400). */
export interface ListenerCreateOpts extends ListenerWritable {
  loadbalancer_id: string;
  protocol: ListenerProtocol;
  protocol_port: number;
  project_id?: string;
  [field: string]: unknown;
}

export interface ListenerUpdateOpts extends ListenerWritable {
  [field: string]: unknown;
}

export interface ListenerListQuery extends ObjectListQuery {
  loadbalancer_id?: string;
  protocol?: ListenerProtocol;
  protocol_port?: number;
  default_pool_id?: string;
  description?: string;
}

export const listeners = octaviaResource<Listener, ListenerCreateOpts, ListenerUpdateOpts, ListenerListQuery>(
  {
    collection: 'listeners',
    key: 'listener',
    label: 'loadbalancer_listener',
  },
);
