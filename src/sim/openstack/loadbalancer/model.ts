/**
 * Octavia's objects as the emulator stores them: wire field names (snake_case) plus the links
 * between parent and children, and a few internal fields prefixed with `_`.
 */
import { uuid } from '../core/ids.ts';

export type ProvisioningStatus =
  'ACTIVE' | 'PENDING_CREATE' | 'PENDING_UPDATE' | 'PENDING_DELETE' | 'ERROR' | 'DELETED';

export type OperatingStatus = 'ONLINE' | 'OFFLINE' | 'DEGRADED' | 'ERROR' | 'DRAINING' | 'NO_MONITOR';

export const OPERATING_STATUSES: readonly OperatingStatus[] = [
  'ONLINE',
  'OFFLINE',
  'DEGRADED',
  'ERROR',
  'DRAINING',
  'NO_MONITOR',
];

export const PROVISIONING_STATUSES: readonly ProvisioningStatus[] = [
  'ACTIVE',
  'PENDING_CREATE',
  'PENDING_UPDATE',
  'PENDING_DELETE',
  'ERROR',
  'DELETED',
];

/** Fields every provisioned Octavia object carries. */
export interface Provisioned {
  id: string;
  name: string;
  project_id: string;
  provisioning_status: ProvisioningStatus;
  admin_state_up: boolean;
  created_at: string;
  updated_at: string | null;
  tags: string[];
  /** Set through the admin API: wins over the derived operating status (a member marked down). */
  _forced_operating_status?: OperatingStatus | undefined;
}

/**
 * What every new object starts as: PENDING_CREATE, never updated, with the asked name, state and
 * tags. A load balancer brings its own id, which its VIP port was named after.
 */
export function newProvisioned(body: Record<string, unknown>, projectId: string, id = uuid()): Provisioned {
  return {
    id,
    name: (body.name as string | null) ?? '',
    project_id: projectId,
    provisioning_status: 'PENDING_CREATE',
    admin_state_up: (body.admin_state_up as boolean | null) ?? true,
    created_at: octaviaTime(),
    updated_at: null,
    tags: (body.tags as string[] | null) ?? [],
  };
}

export interface LoadBalancerRecord extends Provisioned {
  description: string;
  vip_address: string | null;
  vip_port_id: string | null;
  vip_subnet_id: string | null;
  vip_network_id: string | null;
  vip_qos_policy_id: string | null;
  additional_vips: { subnet_id: string; ip_address: string }[];
  provider: string;
  flavor_id: string | null;
  availability_zone: string | null;
  listener_ids: string[];
  pool_ids: string[];
  /** True when Octavia created the VIP port and must delete it with the load balancer. */
  _vip_port_owned: boolean;
  /** Bumped whenever a transition starts or the state is forced, so stale timers do nothing. */
  _epoch: number;
}

export interface ListenerRecord extends Provisioned {
  description: string;
  loadbalancer_id: string;
  protocol: string;
  protocol_port: number;
  connection_limit: number;
  default_tls_container_ref: string | null;
  sni_container_refs: string[];
  default_pool_id: string | null;
  insert_headers: Record<string, string>;
  timeout_client_data: number;
  timeout_member_connect: number;
  timeout_member_data: number;
  timeout_tcp_inspect: number;
  client_ca_tls_container_ref: string | null;
  client_authentication: string;
  client_crl_container_ref: string | null;
  allowed_cidrs: string[] | null;
  tls_ciphers: string | null;
  tls_versions: string[] | null;
  alpn_protocols: string[] | null;
  l7policy_ids: string[];
}

export interface SessionPersistence {
  type: string;
  cookie_name: string | null;
  persistence_timeout: number | null;
  persistence_granularity: string | null;
}

export interface PoolRecord extends Provisioned {
  description: string;
  loadbalancer_id: string;
  protocol: string;
  lb_algorithm: string;
  session_persistence: SessionPersistence | null;
  /** Listeners using the pool as default pool (L7 redirects are found through the policies). */
  listener_ids: string[];
  healthmonitor_id: string | null;
  tls_container_ref: string | null;
  ca_tls_container_ref: string | null;
  crl_container_ref: string | null;
  tls_enabled: boolean;
  tls_ciphers: string | null;
  tls_versions: string[] | null;
  alpn_protocols: string[] | null;
}

export interface MemberRecord extends Provisioned {
  pool_id: string;
  address: string;
  protocol_port: number;
  weight: number;
  backup: boolean;
  subnet_id: string | null;
  monitor_address: string | null;
  monitor_port: number | null;
}

export interface HealthMonitorRecord extends Provisioned {
  pool_id: string;
  type: string;
  delay: number;
  timeout: number;
  max_retries: number;
  max_retries_down: number;
  http_method: string | null;
  url_path: string | null;
  expected_codes: string | null;
  http_version: number | null;
  domain_name: string | null;
}

export interface L7PolicyRecord extends Provisioned {
  description: string;
  listener_id: string;
  action: string;
  position: number;
  redirect_pool_id: string | null;
  redirect_url: string | null;
  redirect_prefix: string | null;
  redirect_http_code: number | null;
  rule_ids: string[];
}

export interface L7RuleRecord extends Provisioned {
  l7policy_id: string;
  type: string;
  compare_type: string;
  key: string | null;
  value: string;
  invert: boolean;
}

export const LISTENER_PROTOCOLS = [
  'HTTP',
  'TERMINATED_HTTPS',
  'SCTP',
  'UDP',
  'PROMETHEUS',
  'TCP',
  'HTTPS',
] as const;
export const POOL_PROTOCOLS = ['HTTP', 'HTTPS', 'PROXY', 'PROXYV2', 'TCP', 'UDP', 'SCTP'] as const;
export const LB_ALGORITHMS = ['ROUND_ROBIN', 'LEAST_CONNECTIONS', 'SOURCE_IP', 'SOURCE_IP_PORT'] as const;
export const SESSION_PERSISTENCE_TYPES = ['SOURCE_IP', 'HTTP_COOKIE', 'APP_COOKIE'] as const;
export const HEALTH_MONITOR_TYPES = [
  'HTTP',
  'HTTPS',
  'PING',
  'TCP',
  'TLS-HELLO',
  'UDP-CONNECT',
  'SCTP',
] as const;
export const HTTP_METHODS = [
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'TRACE',
] as const;
export const L7POLICY_ACTIONS = ['REDIRECT_TO_POOL', 'REDIRECT_TO_URL', 'REDIRECT_PREFIX', 'REJECT'] as const;
export const L7RULE_TYPES = [
  'HOST_NAME',
  'PATH',
  'FILE_TYPE',
  'HEADER',
  'COOKIE',
  'SSL_CONN_HAS_CERT',
  'SSL_VERIFY_RESULT',
  'SSL_DN_FIELD',
] as const;
export const L7RULE_COMPARE_TYPES = ['REGEX', 'STARTS_WITH', 'ENDS_WITH', 'CONTAINS', 'EQUAL_TO'] as const;
export const CLIENT_AUTHENTICATION = ['NONE', 'OPTIONAL', 'MANDATORY'] as const;

/** Pool protocols a listener of each protocol may send to (Octavia's VALID_LISTENER_POOL_PROTOCOL_MAP). */
export const LISTENER_POOL_PROTOCOLS: Readonly<Record<string, readonly string[]>> = {
  TCP: ['HTTP', 'HTTPS', 'PROXY', 'PROXYV2', 'TCP'],
  HTTP: ['HTTP', 'PROXY', 'PROXYV2'],
  HTTPS: ['HTTPS', 'PROXY', 'PROXYV2', 'TCP'],
  TERMINATED_HTTPS: ['HTTP', 'PROXY', 'PROXYV2'],
  UDP: ['UDP'],
  SCTP: ['SCTP'],
  PROMETHEUS: [],
};

/** Listener protocols sharing one transport port space: TCP and UDP listeners may use the same port. */
export function transportOf(protocol: string): string {
  if (protocol === 'UDP' || protocol === 'SCTP') return protocol;
  return 'TCP';
}

export const SUPPORTED_HTTP_HEADERS = ['X-Forwarded-For', 'X-Forwarded-Port', 'X-Forwarded-Proto'];
export const SUPPORTED_SSL_HEADERS = [
  'X-SSL-Client-Verify',
  'X-SSL-Client-Has-Cert',
  'X-SSL-Client-DN',
  'X-SSL-Client-CN',
  'X-SSL-Issuer',
  'X-SSL-Client-SHA1',
  'X-SSL-Client-Not-Before',
  'X-SSL-Client-Not-After',
];

export const DEFAULT_TIMEOUT_CLIENT_DATA = 50_000;
export const DEFAULT_TIMEOUT_MEMBER_CONNECT = 5_000;
export const DEFAULT_TIMEOUT_MEMBER_DATA = 50_000;
export const DEFAULT_TIMEOUT_TCP_INSPECT = 0;
/** Octavia caps every listener timeout at 24 hours, in milliseconds. */
export const MAX_TIMEOUT = 86_400_000;
/** octavia.conf [api_settings] udp_connect_min_interval_health_monitor default. */
export const UDP_CONNECT_MIN_DELAY = 3;

/** Octavia prints timestamps without fractional seconds and without a zone designator. */
export function octaviaTime(date: Date = new Date()): string {
  // One string per second, shared by everything stamped in it (millions of members otherwise hold
  // as many copies).
  const second = Math.floor(date.getTime() / 1000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastTime = date.toISOString().replace(/\.\d{3}Z$/, '');
  }
  return lastTime;
}
let lastSecond = Number.NaN;
let lastTime = '';
