/**
 * Nova servers: create, read, list (detail, with filters), update, delete, and the power actions.
 * Every call negotiates the client's microversion first (once per client, see microversion.ts).
 * https://docs.openstack.org/api-ref/compute/#servers-servers
 */
import type { CallOptions } from '../../core/call-options.ts';
import { NegotiatingPager } from '../../core/microversion.ts';
import type { Pager } from '../../core/pagination.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import type { Query, QueryValue } from '../../core/url.ts';
import { computeMicroversion, requireMicroversion } from './microversion.ts';

export type ServerStatus =
  | 'ACTIVE'
  | 'BUILD'
  | 'DELETED'
  | 'ERROR'
  | 'HARD_REBOOT'
  | 'MIGRATING'
  | 'PASSWORD'
  | 'PAUSED'
  | 'REBOOT'
  | 'REBUILD'
  | 'RESCUE'
  | 'RESIZE'
  | 'REVERT_RESIZE'
  | 'SHELVED'
  | 'SHELVED_OFFLOADED'
  | 'SHUTOFF'
  | 'SOFT_DELETED'
  | 'SUSPENDED'
  | 'UNKNOWN'
  | 'VERIFY_RESIZE';

export interface Link {
  rel: string;
  href: string;
}

export interface ServerAddress {
  version: 4 | 6;
  addr: string;
  'OS-EXT-IPS:type'?: 'fixed' | 'floating';
  'OS-EXT-IPS-MAC:mac_addr'?: string;
}

/** The flavor as a server shows it from 2.47: a copy of its properties, not a reference. */
export interface EmbeddedFlavor {
  vcpus: number;
  ram: number;
  disk: number;
  ephemeral: number;
  swap: number;
  original_name: string;
  extra_specs?: Record<string, string>;
}

export interface ServerFault {
  code: number;
  message: string;
  created: string;
  /** Admins only (a stack trace). */
  details?: string;
}

export interface Server {
  id: string;
  name: string;
  status: ServerStatus;
  tenant_id: string;
  user_id: string;
  metadata: Record<string, string>;
  hostId: string;
  /** `""` for a server booted from a volume. */
  image: { id: string; links?: Link[] } | '';
  /** @microversion 2.47 the embedded copy; a `{id, links}` reference before. */
  flavor: EmbeddedFlavor | { id: string; links: Link[] };
  created: string;
  updated: string;
  /** Addresses by network name. */
  addresses: Record<string, ServerAddress[]>;
  accessIPv4: string;
  accessIPv6: string;
  links: Link[];
  key_name: string | null;
  config_drive: string;
  security_groups?: { name: string }[];
  'OS-DCF:diskConfig'?: 'AUTO' | 'MANUAL';
  'OS-EXT-AZ:availability_zone'?: string;
  'OS-EXT-STS:task_state'?: string | null;
  'OS-EXT-STS:vm_state'?: string;
  'OS-EXT-STS:power_state'?: number;
  'OS-SRV-USG:launched_at'?: string | null;
  'OS-SRV-USG:terminated_at'?: string | null;
  'os-extended-volumes:volumes_attached'?: { id: string; delete_on_termination?: boolean }[];
  /** Admins only. */
  'OS-EXT-SRV-ATTR:host'?: string | null;
  'OS-EXT-SRV-ATTR:hypervisor_hostname'?: string | null;
  'OS-EXT-SRV-ATTR:instance_name'?: string;
  /** Why the server is in ERROR (or was, while building). */
  fault?: ServerFault;
  progress?: number;
  /** @microversion 2.9 */
  locked?: boolean;
  /** @microversion 2.73 */
  locked_reason?: string | null;
  /** @microversion 2.19 */
  description?: string | null;
  /** @microversion 2.26 */
  tags?: string[];
  /** @microversion 2.71 */
  server_groups?: string[];
  /** @microversion 2.16 */
  host_status?: string;
}

/** The 202 answer of a create: only the id and a few fields; read the server for the rest. */
export interface CreatedServer {
  id: string;
  links: Link[];
  security_groups?: { name: string }[];
  'OS-DCF:diskConfig'?: 'AUTO' | 'MANUAL';
  /** Absent when the cloud does not generate passwords. */
  adminPass?: string;
}

/** A network to attach at boot: a pre-created port, or a network (Nova creates the port), optionally a fixed IP. */
export interface ServerNetworkRequest {
  uuid?: string;
  port?: string;
  fixed_ip?: string;
  /** @microversion 2.42 */
  tag?: string;
}

/** https://docs.openstack.org/nova/latest/user/block-device-mapping.html */
export interface BlockDeviceMapping {
  source_type: 'image' | 'volume' | 'snapshot' | 'blank';
  destination_type?: 'volume' | 'local';
  uuid?: string;
  /** 0 for the root disk; null or absent for others. */
  boot_index?: number | null;
  /** GiB. */
  volume_size?: number;
  delete_on_termination?: boolean;
  device_name?: string;
  device_type?: 'cdrom' | 'disk' | 'floppy' | 'fs' | 'lun';
  disk_bus?: string;
  guest_format?: string;
  /** @microversion 2.67 */
  volume_type?: string;
  /** @microversion 2.42 */
  tag?: string;
}

/** Hints for the scheduler, sent beside the server as `os:scheduler_hints`. */
export interface SchedulerHints {
  /** A server group id: its policy (affinity, anti-affinity, …) applies. */
  group?: string;
  different_host?: string[];
  same_host?: string[];
  [hint: string]: unknown;
}

/** Fields not declared here are sent as given (Nova rejects unknown ones with a 400). */
export interface ServerCreateOpts {
  name: string;
  flavorRef: string;
  /** Absent when booting from a volume (`block_device_mapping_v2`). */
  imageRef?: string;
  /**
   * Required from 2.37: the networks or ports, `'auto'` (Nova picks or makes one) or `'none'`.
   * @microversion 2.37 for `'auto'` and `'none'`
   */
  networks?: ServerNetworkRequest[] | 'auto' | 'none';
  block_device_mapping_v2?: BlockDeviceMapping[];
  /**
   * The user data itself (cloud-init text or bytes), not encoded: the client sends it base64-encoded
   * as Nova wants. Nova's limit is 64 KiB after encoding.
   */
  user_data?: string | Uint8Array;
  metadata?: Record<string, string>;
  /** @microversion 2.52 */
  tags?: string[];
  availability_zone?: string;
  key_name?: string;
  /** Names or ids; the project's `default` group when absent. */
  security_groups?: { name: string }[];
  config_drive?: boolean;
  /** @microversion 2.19 */
  description?: string;
  /** @microversion 2.90 */
  hostname?: string;
  min_count?: number;
  max_count?: number;
  [field: string]: unknown;
}

export interface ServerUpdateOpts {
  name?: string;
  /** @microversion 2.19 */
  description?: string | null;
  accessIPv4?: string;
  accessIPv6?: string;
  /** @microversion 2.90 */
  hostname?: string;
  [field: string]: unknown;
}

/** Filters of `GET /servers/detail`. Unknown filters are ignored by Nova for non-admins, so check spelling. */
export interface ServerListQuery {
  /** A regular expression (Python `re.search`): `^name$` for an exact match. */
  name?: string;
  status?: ServerStatus;
  /** @microversion 2.26 (all four tag filters) */
  tags?: readonly string[];
  'tags-any'?: readonly string[];
  'not-tags'?: readonly string[];
  'not-tags-any'?: readonly string[];
  /** Admins: every project's servers. */
  all_tenants?: boolean;
  /** With `all_tenants`. */
  project_id?: string;
  user_id?: string;
  /** Admins. */
  host?: string;
  flavor?: string;
  image?: string;
  /** A regular expression on IPv4 addresses. */
  ip?: string;
  ip6?: string;
  availability_zone?: string;
  key_name?: string;
  reservation_id?: string;
  'changes-since'?: string;
  /** @microversion 2.66 */
  'changes-before'?: string;
  /** @microversion 2.73 */
  locked?: boolean;
  limit?: number;
  marker?: string;
  sort_key?: string | readonly string[];
  sort_dir?: 'asc' | 'desc' | readonly ('asc' | 'desc')[];
}

const TAG_FILTERS = new Set(['tags', 'tags-any', 'not-tags', 'not-tags-any']);
const item = (id: string) => `servers/${encodeURIComponent(id)}`;

/** Tag filters comma-separated, the rest as given. */
export function serverQuery(query: ServerListQuery): Query {
  const out: Record<string, QueryValue> = {};
  for (const [key, value] of Object.entries(query) as [string, QueryValue][]) {
    if (value === undefined) continue;
    out[key] = TAG_FILTERS.has(key) && Array.isArray(value) ? value.join(',') : value;
  }
  return out;
}

/** Base64 of the UTF-8 text (or of the bytes). */
export function encodeUserData(data: string | Uint8Array): string {
  return Buffer.from(typeof data === 'string' ? new TextEncoder().encode(data) : data).toString('base64');
}

/**
 * `POST /servers` → 202 and the new id; the server is BUILD until it goes ACTIVE or ERROR (wait, or
 * requeue and read it). `schedulerHints` go beside the server as `os:scheduler_hints`.
 */
export async function createServer(
  sc: ServiceClient,
  server: ServerCreateOpts,
  options: CallOptions & { schedulerHints?: SchedulerHints | undefined } = {},
): Promise<CreatedServer> {
  const { signal } = options;
  const mv = await computeMicroversion(sc, signal);
  if (server.tags !== undefined) await requireMicroversion(sc, mv, '2.52', 'tags at server create', signal);
  if (server.description !== undefined)
    await requireMicroversion(sc, mv, '2.19', 'a server description', signal);
  if (server.hostname !== undefined) await requireMicroversion(sc, mv, '2.90', 'a server hostname', signal);
  if (server.networks === 'auto' || server.networks === 'none')
    await requireMicroversion(sc, mv, '2.37', `networks "${server.networks}"`, signal);
  const body: Record<string, unknown> = {
    server: {
      ...server,
      ...(server.user_data !== undefined ? { user_data: encodeUserData(server.user_data) } : {}),
    },
  };
  if (options.schedulerHints !== undefined) body['os:scheduler_hints'] = options.schedulerHints;
  const res = await sc.request<{ server: CreatedServer }>({
    method: 'POST',
    path: 'servers',
    body,
    label: 'server_create',
    signal,
    expect: [202],
  });
  return res.body.server;
}

/** `GET /servers/{id}`; a deleted or unknown server is an OpenStackHttpError with `isNotFound`. */
export async function getServer(sc: ServiceClient, id: string, options: CallOptions = {}): Promise<Server> {
  await computeMicroversion(sc, options.signal);
  const res = await sc.request<{ server: Server }>({
    method: 'GET',
    path: item(id),
    label: 'server_get',
    signal: options.signal,
  });
  return res.body.server;
}

/**
 * `GET /servers/detail` with filters, every page followed. The microversion is negotiated on the
 * first page read (a Pager sends nothing until iterated).
 */
export function listServers(
  sc: ServiceClient,
  query: ServerListQuery = {},
  options: CallOptions = {},
): Pager<Server> {
  return new NegotiatingPager<Server>({
    client: sc,
    negotiate: computeMicroversion,
    path: 'servers/detail',
    query: serverQuery(query),
    collection: 'servers',
    strategy: 'links',
    label: 'server_list',
    signal: options.signal,
  });
}

/** `PUT /servers/{id}` → the server as updated. */
export async function updateServer(
  sc: ServiceClient,
  id: string,
  update: ServerUpdateOpts,
  options: CallOptions = {},
): Promise<Server> {
  const mv = await computeMicroversion(sc, options.signal);
  if (update.description !== undefined)
    await requireMicroversion(sc, mv, '2.19', 'a server description', options.signal);
  if (update.hostname !== undefined)
    await requireMicroversion(sc, mv, '2.90', 'a server hostname', options.signal);
  const res = await sc.request<{ server: Server }>({
    method: 'PUT',
    path: item(id),
    body: { server: update },
    label: 'server_update',
    signal: options.signal,
  });
  return res.body.server;
}

/** `DELETE /servers/{id}` → 204; the server is gone (404) shortly after. Ports Nova created go with it; pre-created ports stay, unbound. */
export async function deleteServer(sc: ServiceClient, id: string, options: CallOptions = {}): Promise<void> {
  await computeMicroversion(sc, options.signal);
  await sc.request({
    method: 'DELETE',
    path: item(id),
    label: 'server_delete',
    signal: options.signal,
    expect: [204],
  });
}

async function action(
  sc: ServiceClient,
  id: string,
  body: Record<string, unknown>,
  label: string,
  options: CallOptions,
): Promise<void> {
  await computeMicroversion(sc, options.signal);
  await sc.request({
    method: 'POST',
    path: `${item(id)}/action`,
    body,
    label,
    signal: options.signal,
    expect: [202],
    responseType: 'bytes',
  });
}

/** `os-start` → 202; SHUTOFF → ACTIVE. Starting a server that is not SHUTOFF is a 409. */
export function startServer(sc: ServiceClient, id: string, options: CallOptions = {}): Promise<void> {
  return action(sc, id, { 'os-start': null }, 'server_start', options);
}

/** `os-stop` → 202; ACTIVE → SHUTOFF. A stop while one is in progress is a 409 (task_state powering-off). */
export function stopServer(sc: ServiceClient, id: string, options: CallOptions = {}): Promise<void> {
  return action(sc, id, { 'os-stop': null }, 'server_stop', options);
}

/** `reboot` → 202; SOFT asks the guest, HARD power-cycles. */
export function rebootServer(
  sc: ServiceClient,
  id: string,
  options: CallOptions & { type?: 'SOFT' | 'HARD' | undefined } = {},
): Promise<void> {
  return action(sc, id, { reboot: { type: options.type ?? 'SOFT' } }, 'server_reboot', options);
}
