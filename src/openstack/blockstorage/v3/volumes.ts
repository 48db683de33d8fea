/**
 * Cinder v3 volumes. The catalog URL carries the project id (`…/v3/<project_id>`): paths here are
 * relative to it. https://docs.openstack.org/api-ref/block-storage/v3/#volumes-volumes
 */
import type { CallOptions } from '../../core/call-options.ts';
import { NegotiatingPager } from '../../core/microversion.ts';
import type { Pager } from '../../core/pagination.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { blockStorageMicroversion } from './microversion.ts';

export type VolumeStatus =
  | 'creating'
  | 'available'
  | 'reserved'
  | 'attaching'
  | 'detaching'
  | 'in-use'
  | 'maintenance'
  | 'deleting'
  | 'awaiting-transfer'
  | 'error'
  | 'error_deleting'
  | 'backing-up'
  | 'restoring-backup'
  | 'error_backing-up'
  | 'error_restoring'
  | 'error_extending'
  | 'downloading'
  | 'uploading'
  | 'retyping'
  | 'extending';

export interface VolumeAttachment {
  id: string;
  attachment_id: string;
  volume_id: string;
  server_id: string;
  host_name: string | null;
  device: string;
  attached_at: string;
}

export interface Volume {
  id: string;
  name: string | null;
  description: string | null;
  status: VolumeStatus;
  /** GiB. */
  size: number;
  availability_zone: string;
  /** The type's name. */
  volume_type: string | null;
  /** A string: `"true"` or `"false"`. */
  bootable: 'true' | 'false';
  encrypted: boolean;
  multiattach: boolean;
  attachments: VolumeAttachment[];
  metadata: Record<string, string>;
  snapshot_id: string | null;
  source_volid: string | null;
  user_id: string;
  'os-vol-tenant-attr:tenant_id'?: string;
  /** Admins only. */
  'os-vol-host-attr:host'?: string | null;
  volume_image_metadata?: Record<string, string>;
  replication_status?: string | null;
  /** @microversion 3.13 */
  group_id?: string | null;
  created_at: string;
  updated_at: string | null;
  links?: { rel: string; href: string }[];
}

/** Fields not declared here are sent as given (Cinder rejects unknown ones with a 400). */
export interface VolumeCreateOpts {
  /** GiB; may be omitted with a snapshot or source volume (their size is used). */
  size?: number;
  name?: string;
  description?: string;
  /** A type name or id; the cloud's default type when absent. */
  volume_type?: string;
  availability_zone?: string;
  /** An image to copy into the volume (a bootable volume). */
  imageRef?: string;
  snapshot_id?: string;
  source_volid?: string;
  metadata?: Record<string, string>;
  multiattach?: boolean;
  [field: string]: unknown;
}

export interface VolumeUpdateOpts {
  name?: string;
  description?: string;
  metadata?: Record<string, string>;
  [field: string]: unknown;
}

export interface VolumeListQuery {
  name?: string;
  status?: VolumeStatus;
  availability_zone?: string;
  bootable?: boolean;
  /** Admins: every project's volumes. */
  all_tenants?: boolean;
  project_id?: string;
  limit?: number;
  marker?: string;
  /** `name:asc,created_at:desc` */
  sort?: string;
}

const item = (id: string) => `volumes/${encodeURIComponent(id)}`;

/** `POST /volumes` → 202 and the volume, `creating` until `available` (or `error`). */
export async function createVolume(
  sc: ServiceClient,
  volume: VolumeCreateOpts,
  options: CallOptions = {},
): Promise<Volume> {
  await blockStorageMicroversion(sc, options.signal);
  const res = await sc.request<{ volume: Volume }>({
    method: 'POST',
    path: 'volumes',
    body: { volume },
    label: 'volume_create',
    signal: options.signal,
    expect: [202],
  });
  return res.body.volume;
}

/** `GET /volumes/{id}`. */
export async function getVolume(sc: ServiceClient, id: string, options: CallOptions = {}): Promise<Volume> {
  await blockStorageMicroversion(sc, options.signal);
  const res = await sc.request<{ volume: Volume }>({
    method: 'GET',
    path: item(id),
    label: 'volume_get',
    signal: options.signal,
  });
  return res.body.volume;
}

/** `GET /volumes/detail` with filters, every page. */
export function listVolumes(
  sc: ServiceClient,
  query: VolumeListQuery = {},
  options: CallOptions = {},
): Pager<Volume> {
  return new NegotiatingPager<Volume>({
    client: sc,
    negotiate: blockStorageMicroversion,
    path: 'volumes/detail',
    query: { ...query },
    collection: 'volumes',
    strategy: 'links',
    label: 'volume_list',
    signal: options.signal,
  });
}

/** `PUT /volumes/{id}` → the volume as updated. Metadata given here replaces the volume's. */
export async function updateVolume(
  sc: ServiceClient,
  id: string,
  update: VolumeUpdateOpts,
  options: CallOptions = {},
): Promise<Volume> {
  await blockStorageMicroversion(sc, options.signal);
  const res = await sc.request<{ volume: Volume }>({
    method: 'PUT',
    path: item(id),
    body: { volume: update },
    label: 'volume_update',
    signal: options.signal,
  });
  return res.body.volume;
}

/**
 * `DELETE /volumes/{id}` → 202; `deleting`, then 404. An attached volume is a 400; one with snapshots
 * needs `cascade`.
 */
export async function deleteVolume(
  sc: ServiceClient,
  id: string,
  options: CallOptions & { cascade?: boolean | undefined } = {},
): Promise<void> {
  await blockStorageMicroversion(sc, options.signal);
  await sc.request({
    method: 'DELETE',
    path: item(id),
    query: options.cascade ? { cascade: true } : undefined,
    label: 'volume_delete',
    signal: options.signal,
    expect: [202],
    responseType: 'bytes',
  });
}

/**
 * `os-extend` → 202: the volume grows to `newSize` GiB (`extending`, then back to `available` or
 * `in-use`, or `error_extending`). Shrinking is a 400. An attached volume needs 3.42, which the
 * client negotiates when the cloud has it.
 */
export async function extendVolume(
  sc: ServiceClient,
  id: string,
  newSize: number,
  options: CallOptions = {},
): Promise<void> {
  await blockStorageMicroversion(sc, options.signal);
  await sc.request({
    method: 'POST',
    path: `${item(id)}/action`,
    body: { 'os-extend': { new_size: newSize } },
    label: 'volume_extend',
    signal: options.signal,
    expect: [202],
    responseType: 'bytes',
  });
}
