/**
 * Cinder's volumes: the creating → available → in-use → deleting life, project isolation, the
 * VolumeApi Nova boots and attaches with, and listing with Cinder's filters and marker paging.
 */
import type { EmulatedCloud } from '../core/cloud.ts';
import type { VolumeApi, VolumeView } from '../core/contracts.ts';
import { SimError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import type { AuthContext, Persistent } from '../core/types.ts';
import {
  AVAILABILITY_ZONE,
  DEFAULT_TYPE_NAME,
  seedVolumeTypes,
  VOLUME_HOST,
  type VolumeType,
} from './catalog.ts';
import { badRequest, invalidField, invalidInput, invalidVolume, pyish, volumeNotFound } from './errors.ts';
import {
  comparator,
  DEFAULT_SORT,
  isTrue,
  listFilter,
  parseLimit,
  parseSort,
  type SortSpec,
} from './listing.ts';
import { optionalString, parseMetadata, parseSize, requireObject } from './validation.ts';

export interface AttachmentRecord {
  id: string;
  server_id: string;
  device: string;
  attached_at: string;
  host_name: string | null;
}

export interface VolumeRecord {
  id: string;
  name: string | null;
  description: string | null;
  project_id: string;
  user_id: string;
  size: number;
  status: string;
  availability_zone: string;
  bootable: boolean;
  multiattach: boolean;
  volume_type_id: string;
  snapshot_id: string | null;
  source_volid: string | null;
  metadata: Record<string, string>;
  /** `volume_image_metadata`, for volumes created from an image. */
  image_metadata: Record<string, string> | null;
  attachments: AttachmentRecord[];
  migration_status: string | null;
  replication_status: string | null;
  host: string | null;
  created_at: string;
  updated_at: string | null;
  /** Creation order: the tie-break of the newest-first default listing. */
  seq: number;
}

export interface Caller {
  projectId: string;
  userId: string;
  isAdmin: boolean;
}

export const callerOf = (auth: AuthContext | undefined): Caller => ({
  projectId: auth?.projectId ?? '',
  userId: auth?.userId ?? '',
  isAdmin: auth?.isAdmin ?? false,
});

/** States from which Cinder deletes a volume (volume/api.py `delete`). */
const DELETABLE = new Set(['available', 'error', 'error_restoring', 'error_extending', 'error_managing']);
const DELETE_REFUSED =
  'Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.';

const GB = 1024 ** 3;

/** Cinder prints naive UTC datetimes with microseconds. */
export function cinderTime(date: Date = new Date()): string {
  return date.toISOString().replace(/Z$/, '000');
}

interface ImageDetails {
  checksum?: string | null;
  disk_format?: string | null;
  container_format?: string | null;
  properties?: Record<string, string>;
}

export interface CreateSpec {
  size?: unknown;
  name?: unknown;
  description?: unknown;
  availability_zone?: unknown;
  metadata?: unknown;
  volume_type?: unknown;
  imageRef?: unknown;
  multiattach?: unknown;
  snapshot_id?: unknown;
  source_volid?: unknown;
}

export class VolumeStore implements VolumeApi, Persistent {
  private readonly volumes = new Map<string, VolumeRecord>();
  readonly types: VolumeType[] = seedVolumeTypes();
  /** Volumes a `stuck` fault pinned at create: they stay `creating`. */
  private readonly stuck = new Set<string>();
  private seq = 0;
  private readonly cloud: EmulatedCloud;

  constructor(cloud: EmulatedCloud) {
    this.cloud = cloud;
  }

  // ---------------------------------------------------------------- VolumeApi (for Nova)

  getVolume(id: string): VolumeView | undefined {
    const v = this.volumes.get(id);
    return v ? view(v) : undefined;
  }

  createVolume(spec: {
    project_id: string;
    size: number;
    name?: string;
    imageRef?: string;
    volume_type?: string;
  }): VolumeView {
    const caller: Caller = { projectId: spec.project_id, userId: '', isAdmin: false };
    return view(this.create(caller, spec));
  }

  attach(volumeId: string, serverId: string, device: string): void {
    const v = this.volumes.get(volumeId);
    if (!v) throw volumeNotFound(volumeId);
    if (v.attachments.some((a) => a.server_id === serverId)) return;
    const shareable = v.status === 'in-use' && v.multiattach;
    if (v.status !== 'available' && !shareable) {
      throw invalidVolume(
        `Volume ${v.id} status must be available to reserve, but the current status is ${v.status}.`,
      );
    }
    v.attachments.push({
      id: uuid(),
      server_id: serverId,
      device,
      attached_at: cinderTime(),
      host_name: 'compute-0',
    });
    this.setStatus(v, 'in-use');
  }

  detach(volumeId: string, serverId: string): void {
    const v = this.volumes.get(volumeId);
    if (!v) throw volumeNotFound(volumeId);
    const before = v.attachments.length;
    v.attachments = v.attachments.filter((a) => a.server_id !== serverId);
    if (v.attachments.length === before) return;
    if (v.attachments.length === 0 && v.status === 'in-use') this.setStatus(v, 'available');
    else this.touch(v);
  }

  /** Nova's delete_on_termination: detached first, then deleted; a missing volume is already gone. */
  deleteVolume(id: string): void {
    const v = this.volumes.get(id);
    if (!v || v.status === 'deleting') return;
    v.attachments = [];
    this.startDelete(v);
  }

  // ---------------------------------------------------------------- API operations

  create(caller: Caller, spec: CreateSpec): VolumeRecord {
    const size = parseSize(spec.size);
    const name = optionalString(spec.name, 'name');
    const description = optionalString(spec.description, 'description');
    const metadata = parseMetadata(spec.metadata);
    const az = spec.availability_zone ?? AVAILABILITY_ZONE;
    if (az !== AVAILABILITY_ZONE) throw invalidInput(`Availability zone '${pyish(az)}' is invalid.`);
    if (spec.snapshot_id !== undefined && spec.snapshot_id !== null) {
      throw new SimError(404, `Snapshot ${pyish(spec.snapshot_id)} could not be found.`, {
        type: 'SnapshotNotFound',
      });
    }
    let source: VolumeRecord | undefined;
    if (spec.source_volid !== undefined && spec.source_volid !== null) {
      source = this.get(caller, pyish(spec.source_volid));
    }
    const type =
      spec.volume_type === undefined || spec.volume_type === null
        ? this.defaultType()
        : this.findType(pyish(spec.volume_type));
    const finalSize = size ?? source?.size;
    if (finalSize === undefined)
      throw invalidInput(`Volume size '${pyish(spec.size)}' must be an integer and greater than 0`);
    if (source && finalSize < source.size) {
      throw invalidInput(
        `Volume size ${finalSize}GB cannot be smaller than original volume size ${source.size}GB. They must be >= original volume size.`,
      );
    }
    let imageMetadata: Record<string, string> | null = null;
    if (spec.imageRef !== undefined && spec.imageRef !== null && spec.imageRef !== '') {
      imageMetadata = this.imageMetadata(caller, pyish(spec.imageRef), finalSize);
    }
    const multiattach = spec.multiattach === true;
    const v: VolumeRecord = {
      id: uuid(),
      name,
      description,
      project_id: caller.projectId,
      user_id: caller.userId,
      size: finalSize,
      status: 'creating',
      availability_zone: AVAILABILITY_ZONE,
      bootable: imageMetadata !== null || (source?.bootable ?? false),
      multiattach,
      volume_type_id: type.id,
      snapshot_id: null,
      source_volid: source?.id ?? null,
      metadata,
      image_metadata: imageMetadata ?? source?.image_metadata ?? null,
      attachments: [],
      migration_status: null,
      replication_status: null,
      host: null,
      created_at: cinderTime(),
      updated_at: null,
      seq: ++this.seq,
    };
    this.volumes.set(v.id, v);
    this.cloud.statuses.record('cinder', 'volume', v.id, v.status);
    const faults = this.cloud.faults;
    const fails = faults.take('error-on-create', 'cinder', 'volume', v.id);
    if (faults.take('stuck', 'cinder', 'volume', v.id)) this.stuck.add(v.id);
    this.cloud.scheduler.schedule(this.cloud.timing.transition('cinder.volume.create'), () => {
      const current = this.volumes.get(v.id);
      if (current !== v || v.status !== 'creating') return;
      if (this.stuck.has(v.id) || faults.isStuck('cinder', 'volume', v.id)) return;
      v.host = VOLUME_HOST;
      this.setStatus(v, fails ? 'error' : 'available');
    });
    this.cloud.changed();
    return v;
  }

  get(caller: Caller, id: string): VolumeRecord {
    const v = this.volumes.get(id);
    if (!v || (!caller.isAdmin && v.project_id !== caller.projectId)) throw volumeNotFound(id);
    return v;
  }

  list(caller: Caller, query: URLSearchParams): { volumes: VolumeRecord[]; limit: number; count: number } {
    const limit = parseLimit(query.get('limit'));
    const sort = parseSort(query);
    let items = this.matching(caller, query, sort);
    const count = items.length;
    const marker = query.get('marker');
    if (marker !== null) {
      const idx = items.findIndex((v) => v.id === marker);
      if (idx < 0) {
        const known = this.volumes.get(marker);
        if (!known || (!caller.isAdmin && known.project_id !== caller.projectId)) {
          throw new SimError(404, `Marker ${marker} could not be found.`, { type: 'MarkerNotFound' });
        }
        const cmp = comparator(sort.length === 0 ? DEFAULT_SORT : sort);
        items = items.filter((v) => cmp(v, known) > 0);
      } else {
        items = items.slice(idx + 1);
      }
    }
    return { volumes: items.slice(0, limit), limit, count };
  }

  /** Every volume the caller may list that matches the query's filters, in the requested order. */
  matching(caller: Caller, query: URLSearchParams, sort: SortSpec[] = parseSort(query)): VolumeRecord[] {
    const allTenants = caller.isAdmin && isTrue(query.get('all_tenants') ?? query.get('all_projects'));
    const filter = listFilter(caller, query, allTenants);
    if (sort.length > 0) return [...this.volumes.values()].filter(filter).sort(comparator(sort));
    // Newest first is creation order reversed: no sort for the common case.
    const items: VolumeRecord[] = [];
    const all = [...this.volumes.values()];
    for (let i = all.length - 1; i >= 0; i--) if (filter(all[i]!)) items.push(all[i]!);
    return items;
  }

  update(caller: Caller, id: string, body: unknown): VolumeRecord {
    const v = this.get(caller, id);
    const doc = requireObject(body, 'volume');
    const name = doc.name ?? doc.display_name;
    const description = doc.description ?? doc.display_description;
    if (name !== undefined) v.name = optionalString(name, 'name');
    if (description !== undefined) v.description = optionalString(description, 'description');
    if (doc.metadata !== undefined) v.metadata = parseMetadata(doc.metadata);
    this.touch(v);
    return v;
  }

  delete(caller: Caller, id: string, force = false): void {
    const v = this.get(caller, id);
    if (force) {
      if (!caller.isAdmin) throw policyForbidden('volume:force_delete');
      v.attachments = [];
    } else if (!DELETABLE.has(v.status) || v.attachments.length > 0 || v.migration_status !== null) {
      throw invalidVolume(DELETE_REFUSED);
    }
    this.startDelete(v);
  }

  extend(caller: Caller, id: string, newSize: unknown, allowInUse: boolean): void {
    const v = this.get(caller, id);
    const allowed = allowInUse ? ['available', 'in-use'] : ['available'];
    if (!allowed.includes(v.status)) {
      throw invalidVolume(
        `Volume ${v.id} status must be ${allowed.join(' or ')} to extend, but current status is: ${v.status}.`,
      );
    }
    const size = parseSize(newSize, 'new_size');
    if (size === undefined || size <= v.size) {
      throw invalidInput(
        `New size for extend must be greater than current size. (current: ${v.size}, extended: ${String(newSize)}).`,
      );
    }
    const back = v.status;
    this.setStatus(v, 'extending');
    this.cloud.scheduler.schedule(this.cloud.timing.transition('cinder.volume.attach'), () => {
      if (this.volumes.get(v.id) !== v || v.status !== 'extending') return;
      v.size = size;
      this.setStatus(v, back);
    });
  }

  setBootable(caller: Caller, id: string, bootable: unknown): void {
    const v = this.get(caller, id);
    const b = typeof bootable === 'string' ? isTrue(bootable) : bootable;
    if (typeof b !== 'boolean')
      throw invalidField('bootable', bootable, `${String(bootable)} is not of type 'boolean', 'string'`);
    v.bootable = b;
    this.touch(v);
  }

  resetStatus(caller: Caller, id: string, fields: Record<string, unknown>): void {
    if (!caller.isAdmin) throw policyForbidden('volume_extension:volume_admin_actions:reset_status');
    const v = this.get(caller, id);
    if (typeof fields.status === 'string') v.status = fields.status;
    if (fields.attach_status === 'detached') v.attachments = [];
    if (typeof fields.migration_status === 'string') v.migration_status = fields.migration_status;
    this.touch(v);
  }

  setMetadata(caller: Caller, id: string, metadata: unknown, replace: boolean): Record<string, string> {
    const v = this.get(caller, id);
    const parsed = parseMetadata(metadata);
    v.metadata = replace ? parsed : { ...v.metadata, ...parsed };
    this.touch(v);
    return v.metadata;
  }

  deleteMetadataKey(caller: Caller, id: string, key: string): void {
    const v = this.get(caller, id);
    if (!Object.hasOwn(v.metadata, key)) {
      throw new SimError(404, `Volume ${id} has no metadata with key ${key}.`, {
        type: 'VolumeMetadataNotFound',
      });
    }
    delete v.metadata[key];
    this.touch(v);
  }

  findType(idOrName: string): VolumeType {
    const t = this.types.find((x) => x.id === idOrName) ?? this.types.find((x) => x.name === idOrName);
    if (!t) {
      throw new SimError(404, `Volume type with name ${idOrName} could not be found.`, {
        type: 'VolumeTypeNotFoundByName',
      });
    }
    return t;
  }

  getType(id: string): VolumeType {
    if (id === 'default') return this.defaultType();
    const t = this.types.find((x) => x.id === id);
    if (!t) throw new SimError(404, `Volume type ${id} could not be found.`, { type: 'VolumeTypeNotFound' });
    return t;
  }

  typeOf(v: VolumeRecord): VolumeType | undefined {
    return this.types.find((t) => t.id === v.volume_type_id);
  }

  usage(projectId: string): { volumes: number; gigabytes: number } {
    let volumes = 0;
    let gigabytes = 0;
    for (const v of this.volumes.values()) {
      if (v.project_id !== projectId) continue;
      volumes += 1;
      gigabytes += v.size;
    }
    return { volumes, gigabytes };
  }

  /** Admin API: force fields, e.g. `{"status": "error"}`. */
  force(id: string, fields: Record<string, unknown>): boolean {
    const v = this.volumes.get(id);
    if (!v) return false;
    for (const [k, val] of Object.entries(fields)) {
      if (k in v && k !== 'id' && k !== 'seq') (v as unknown as Record<string, unknown>)[k] = val;
    }
    this.touch(v);
    return true;
  }

  // ---------------------------------------------------------------- persistence

  snapshot(): unknown {
    return { volumes: [...this.volumes.values()], types: this.types, stuck: [...this.stuck] };
  }

  restore(raw: unknown): void {
    const snap = raw as { volumes?: VolumeRecord[]; types?: VolumeType[]; stuck?: string[] };
    this.volumes.clear();
    this.stuck.clear();
    const volumes = [...(snap.volumes ?? [])].sort((a, b) => a.seq - b.seq);
    for (const v of volumes) {
      this.volumes.set(v.id, v);
      // A state file saved mid-transition must not leave volumes where nothing moves them on.
      if (v.status === 'creating') v.status = 'available';
      if (v.status === 'extending') v.status = v.attachments.length > 0 ? 'in-use' : 'available';
    }
    for (const v of [...this.volumes.values()]) if (v.status === 'deleting') this.volumes.delete(v.id);
    this.seq = volumes.reduce((m, v) => Math.max(m, v.seq), 0);
    if (snap.types && snap.types.length > 0) this.types.splice(0, this.types.length, ...snap.types);
    for (const id of snap.stuck ?? []) this.stuck.add(id);
  }

  // ---------------------------------------------------------------- internals

  private startDelete(v: VolumeRecord): void {
    this.setStatus(v, 'deleting');
    this.cloud.scheduler.schedule(this.cloud.timing.transition('cinder.volume.delete'), () => {
      if (this.volumes.get(v.id) !== v || v.status !== 'deleting') return;
      if (this.cloud.faults.isStuck('cinder', 'volume', v.id)) return;
      this.volumes.delete(v.id);
      this.stuck.delete(v.id);
      this.cloud.changed();
    });
  }

  private setStatus(v: VolumeRecord, status: string): void {
    v.status = status;
    this.cloud.statuses.record('cinder', 'volume', v.id, status);
    this.touch(v);
  }

  private touch(v: VolumeRecord): void {
    v.updated_at = cinderTime();
    this.cloud.changed();
  }

  private defaultType(): VolumeType {
    return this.types.find((t) => t.name === DEFAULT_TYPE_NAME) ?? this.types[0]!;
  }

  /** The checks of Cinder's create flow against the image, and the metadata it copies from it. */
  private imageMetadata(caller: Caller, imageRef: string, size: number): Record<string, string> {
    const id = imageRef.split('/').pop() ?? imageRef;
    const image = this.cloud.image.getImage(id);
    const visible =
      image !== undefined &&
      (caller.isAdmin ||
        image.visibility === 'public' ||
        image.visibility === 'community' ||
        image.owner === caller.projectId);
    if (!image || !visible) throw badRequest('Invalid image identifier or unable to access requested image.');
    if (image.status !== 'active') throw invalidInput(`Image ${id} is not active.`);
    const imageGb = Math.ceil((image.size ?? 0) / GB);
    if (imageGb > size)
      throw invalidInput(`Size of specified image ${imageGb}GB is larger than volume size ${size}GB.`);
    if (image.min_disk > size) {
      throw invalidInput(
        `Volume size ${size}GB cannot be smaller than the image minDisk size ${image.min_disk}GB.`,
      );
    }
    // Glance's own store carries more than the ImageApi view: copy it when there.
    const details = (this.cloud.image as Partial<{ record(id: string): ImageDetails | undefined }>).record?.(
      id,
    );
    const meta: Record<string, string> = {
      ...(details?.properties ?? {}),
      image_id: image.id,
      image_name: image.name,
      min_disk: String(image.min_disk),
      min_ram: String(image.min_ram),
      size: String(image.size ?? 0),
    };
    if (details?.checksum) meta.checksum = details.checksum;
    if (details?.disk_format) meta.disk_format = details.disk_format;
    if (details?.container_format) meta.container_format = details.container_format;
    return meta;
  }
}

export function view(v: VolumeRecord): VolumeView {
  return { id: v.id, name: v.name ?? '', project_id: v.project_id, status: v.status, size: v.size };
}

export function policyForbidden(action: string): SimError {
  return new SimError(403, `Policy doesn't allow ${action} to be performed.`, {
    type: 'PolicyNotAuthorized',
  });
}
