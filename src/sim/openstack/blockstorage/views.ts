/** Cinder's volume views: summary, and the detail whose fields depend on microversion and role. */
import type { SimRequest } from '../core/types.ts';
import type { VolumeType } from './catalog.ts';
import { atLeast, type ApiVersion } from './microversion.ts';
import type { VolumeRecord } from './store.ts';

export interface ViewContext {
  req: SimRequest;
  isAdmin: boolean;
  version: ApiVersion;
  typeOf(v: VolumeRecord): VolumeType | undefined;
}

/** Cinder puts the project in links only when the request URL carried it (3.67 made it optional). */
function projectSegment(req: SimRequest): string {
  const p = req.params.project_id;
  return p ? `${p}/` : '';
}

export function volumeLinks(req: SimRequest, id: string): { href: string; rel: string }[] {
  const p = projectSegment(req);
  return [
    { href: `${req.baseUrl}/v3/${p}volumes/${id}`, rel: 'self' },
    { href: `${req.baseUrl}/${p}volumes/${id}`, rel: 'bookmark' },
  ];
}

export function collectionUrl(req: SimRequest, collection: string): string {
  return `${req.baseUrl}/v3/${projectSegment(req)}${collection}`;
}

export function volumeSummary(req: SimRequest, v: VolumeRecord): Record<string, unknown> {
  return { id: v.id, name: v.name, links: volumeLinks(req, v.id) };
}

/**
 * The detail view. `extended` adds what cinder's API extensions add to show and detail (not to
 * create and update answers): tenant, host and migration attributes, and the image metadata.
 */
export function volumeDetail(ctx: ViewContext, v: VolumeRecord, extended: boolean): Record<string, unknown> {
  const { req, isAdmin, version } = ctx;
  const type = ctx.typeOf(v);
  const out: Record<string, unknown> = {
    id: v.id,
    status: v.status,
    size: v.size,
    availability_zone: v.availability_zone,
    created_at: v.created_at,
    updated_at: v.updated_at,
    name: v.name,
    description: v.description,
    volume_type: atLeast(version, 63) ? (type?.name ?? null) : (type?.name ?? v.volume_type_id),
    snapshot_id: v.snapshot_id,
    source_volid: v.source_volid,
    metadata: v.metadata,
    links: volumeLinks(req, v.id),
    user_id: v.user_id,
    bootable: String(v.bootable),
    encrypted: false,
    replication_status: v.replication_status,
    consistencygroup_id: null,
    multiattach: v.multiattach,
    attachments: v.attachments.map((a) => ({
      id: v.id,
      attachment_id: a.id,
      volume_id: v.id,
      server_id: a.server_id,
      host_name: isAdmin ? a.host_name : null,
      device: a.device,
      attached_at: a.attached_at,
    })),
  };
  if (isAdmin) out.migration_status = v.migration_status;
  if (atLeast(version, 13)) out.group_id = null;
  if (isAdmin && atLeast(version, 21)) out.provider_id = null;
  if (atLeast(version, 48)) {
    // LVM targets are not shared; before 3.69 an unknown value read as true.
    out.shared_targets = false;
    out.service_uuid = v.host === null ? null : SERVICE_UUID;
  }
  if (isAdmin && atLeast(version, 61)) out.cluster_name = null;
  if (atLeast(version, 63)) out.volume_type_id = v.volume_type_id;
  if (atLeast(version, 65)) out.consumes_quota = true;
  if (extended) {
    out['os-vol-tenant-attr:tenant_id'] = v.project_id;
    if (isAdmin) {
      out['os-vol-host-attr:host'] = v.host;
      out['os-vol-mig-status-attr:migstat'] = v.migration_status;
      out['os-vol-mig-status-attr:name_id'] = null;
    }
    if (v.image_metadata) out.volume_image_metadata = v.image_metadata;
  }
  return out;
}

/** The one cinder-volume service of the emulated cloud. */
const SERVICE_UUID = '9c8d5a4e-7f3b-4d2a-9a61-2b7e5d0c4f18';
