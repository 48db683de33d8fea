/** Octavia health monitors, one per pool. https://docs.openstack.org/api-ref/load-balancer/v2/#health-monitors */
import type { IdRef } from './listeners.ts';
import {
  octaviaResource,
  type ObjectListQuery,
  type OperatingStatus,
  type ProvisioningStatus,
} from './resource.ts';

export type HealthMonitorType = 'HTTP' | 'HTTPS' | 'PING' | 'TCP' | 'TLS-HELLO' | 'UDP-CONNECT' | 'SCTP';

export interface HealthMonitor {
  id: string;
  name: string;
  project_id: string;
  type: HealthMonitorType;
  /** Seconds between checks. */
  delay: number;
  timeout: number;
  max_retries: number;
  max_retries_down: number;
  http_method: string | null;
  url_path: string | null;
  expected_codes: string | null;
  http_version?: number | null;
  domain_name?: string | null;
  admin_state_up: boolean;
  pools: IdRef[];
  provisioning_status: ProvisioningStatus;
  operating_status: OperatingStatus;
  /** API 2.5. */
  tags?: string[];
  created_at: string;
  updated_at: string | null;
}

interface HealthMonitorWritable {
  name?: string;
  delay?: number;
  timeout?: number;
  max_retries?: number;
  max_retries_down?: number;
  http_method?: string;
  url_path?: string;
  expected_codes?: string;
  http_version?: number;
  domain_name?: string;
  admin_state_up?: boolean;
  /** API 2.5. */
  tags?: string[];
}

/** A monitor inside a fully populated create (its pool is the enclosing one). */
export interface NestedHealthMonitorCreateOpts extends HealthMonitorWritable {
  type: HealthMonitorType;
  delay: number;
  timeout: number;
  max_retries: number;
  [field: string]: unknown;
}

/** Fields not declared here are sent as given. A second monitor on a pool is a 409. */
export interface HealthMonitorCreateOpts extends NestedHealthMonitorCreateOpts {
  pool_id: string;
  project_id?: string;
}

export interface HealthMonitorUpdateOpts extends HealthMonitorWritable {
  [field: string]: unknown;
}

export interface HealthMonitorListQuery extends ObjectListQuery {
  pool_id?: string;
  type?: HealthMonitorType;
}

export const healthMonitors = octaviaResource<
  HealthMonitor,
  HealthMonitorCreateOpts,
  HealthMonitorUpdateOpts,
  HealthMonitorListQuery
>({
  collection: 'healthmonitors',
  key: 'healthmonitor',
  label: 'loadbalancer_healthmonitor',
});
