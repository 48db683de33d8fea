/**
 * Glance's image records and the rules around them: visibility, ownership, the queued → active
 * upload, JSON-patch updates and listing with Glance's filters and keyset pagination.
 */
import { createHash } from 'node:crypto';
import type { ImageApi, ImageView } from '../core/contracts.ts';
import { SimError } from '../core/errors.ts';
import { isoSeconds, uuid } from '../core/ids.ts';
import type { Persistent } from '../core/types.ts';
import { forbidden, imageNotFound } from './errors.ts';
import { comparator, listFilter, parseGlanceLimit, parseSort } from './listing.ts';
import { applyOperation } from './patch.ts';
import { BASE_WRITABLE, checkWritable, unique, type ImageRecord, type Viewer } from './record.ts';
import { validateImage } from './schema.ts';

export type { ImageRecord, Viewer } from './record.ts';
export { viewerOf } from './record.ts';

/** Largest uploaded file the state file keeps; larger data is dropped on save, as it is test filler. */
const PERSISTED_DATA_BYTES = 1024 * 1024;

export class ImageStore implements ImageApi, Persistent {
  private readonly images = new Map<string, ImageRecord>();
  private readonly data = new Map<string, Buffer>();
  /** Glance never reuses the id of a deleted image. */
  private readonly deletedIds = new Set<string>();
  private seq = 0;
  private readonly onChange: () => void;
  private ownerResolver: (() => string | undefined) | undefined;
  private ownerless: ImageRecord[] = [];

  constructor(onChange: () => void) {
    this.onChange = onChange;
  }

  /** Seeded images get their owner (the admin project) once Keystone can be asked, at first use. */
  setOwnerResolver(resolve: () => string | undefined, images: ImageRecord[]): void {
    this.ownerResolver = resolve;
    this.ownerless = images;
  }

  private settleOwners(): void {
    if (this.ownerless.length === 0 || !this.ownerResolver) return;
    const owner = this.ownerResolver();
    if (owner === undefined) return;
    for (const img of this.ownerless) img.owner = owner;
    this.ownerless = [];
  }

  // ---------------------------------------------------------------- ImageApi (for Nova and Cinder)

  getImage(id: string): ImageView | undefined {
    this.settleOwners();
    const img = this.images.get(id);
    if (!img) return undefined;
    return {
      id: img.id,
      name: img.name ?? '',
      status: img.status,
      owner: img.owner ?? '',
      visibility: img.visibility,
      min_disk: img.min_disk,
      min_ram: img.min_ram,
      size: img.size,
    };
  }

  /** The whole record, for Cinder's volume_image_metadata; undefined when `viewer` may not see it. */
  record(id: string, viewer?: Viewer): ImageRecord | undefined {
    this.settleOwners();
    const img = this.images.get(id);
    if (!img || (viewer && !this.canSee(viewer, img))) return undefined;
    return img;
  }

  // ---------------------------------------------------------------- seeding

  seed(spec: {
    name: string;
    disk_format: string;
    container_format: string;
    size: number;
    virtual_size: number;
    min_disk: number;
    owner: string | null;
  }): ImageRecord {
    const now = isoSeconds();
    const img = this.insert({
      id: uuid(),
      name: spec.name,
      disk_format: spec.disk_format,
      container_format: spec.container_format,
      visibility: 'public',
      size: spec.size,
      virtual_size: spec.virtual_size,
      status: 'active',
      checksum: createHash('md5').update(spec.name).digest('hex'),
      protected: false,
      min_ram: 0,
      min_disk: spec.min_disk,
      owner: spec.owner,
      os_hidden: false,
      os_hash_algo: 'sha512',
      os_hash_value: createHash('sha512').update(spec.name).digest('hex'),
      created_at: now,
      updated_at: now,
      tags: [],
      properties: {},
      stored: true,
    });
    return img;
  }

  // ---------------------------------------------------------------- API operations

  create(viewer: Viewer, body: unknown): ImageRecord {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new SimError(400, 'Body expected in request.', { type: 'BadRequest' });
    }
    const doc = body as Record<string, unknown>;
    for (const key of Object.keys(doc)) checkWritable(key);
    validateImage(doc);
    const id = typeof doc.id === 'string' ? doc.id : uuid();
    if (this.images.has(id) || this.deletedIds.has(id)) {
      throw new SimError(409, `Image ID ${id} already exists!`, { type: 'Duplicate' });
    }
    const visibility = (doc.visibility as string | undefined) ?? 'shared';
    if (visibility === 'public' && !viewer.isAdmin) {
      throw forbidden('You are not authorized to complete publicize_image action.');
    }
    const owner = (doc.owner as string | null | undefined) ?? viewer.projectId ?? null;
    if (!viewer.isAdmin && owner !== viewer.projectId) {
      throw forbidden(`You are not permitted to create images owned by '${owner ?? ''}'.`);
    }
    const properties: Record<string, string> = {};
    for (const [k, v] of Object.entries(doc)) if (!BASE_WRITABLE.has(k)) properties[k] = v as string;
    const now = isoSeconds();
    const img = this.insert({
      id,
      name: (doc.name as string | null | undefined) ?? null,
      disk_format: (doc.disk_format as string | null | undefined) ?? null,
      container_format: (doc.container_format as string | null | undefined) ?? null,
      visibility,
      size: null,
      virtual_size: null,
      status: 'queued',
      checksum: null,
      protected: (doc.protected as boolean | undefined) ?? false,
      min_ram: (doc.min_ram as number | undefined) ?? 0,
      min_disk: (doc.min_disk as number | undefined) ?? 0,
      owner,
      os_hidden: (doc.os_hidden as boolean | undefined) ?? false,
      os_hash_algo: null,
      os_hash_value: null,
      created_at: now,
      updated_at: now,
      tags: unique((doc.tags as string[] | undefined) ?? []),
      properties,
      stored: false,
    });
    this.onChange();
    return img;
  }

  get(viewer: Viewer, id: string): ImageRecord {
    this.settleOwners();
    const img = this.images.get(id);
    if (!img || !this.canSee(viewer, img)) throw imageNotFound(id);
    return img;
  }

  list(viewer: Viewer, query: URLSearchParams): { images: ImageRecord[]; nextMarker: string | undefined } {
    this.settleOwners();
    const limit = parseGlanceLimit(query.get('limit'));
    const sort = parseSort(query);
    const filter = listFilter(viewer, query, (v, img) => this.canSee(v, img));
    const compare = comparator(sort);
    let after: ImageRecord | undefined;
    const marker = query.get('marker');
    if (marker !== null) {
      after = this.images.get(marker);
      if (!after || !this.canSee(viewer, after)) {
        throw new SimError(400, `No image found with ID ${marker}`, { type: 'InvalidMarker' });
      }
    }
    const isDefaultSort = sort.length === 2 && sort[0]?.key === 'created_at' && sort[0].dir === 'desc';
    let candidates: ImageRecord[] = [];
    // Newest first is creation order reversed: no sort needed for the common case.
    if (isDefaultSort) {
      const all = [...this.images.values()];
      for (let i = all.length - 1; i >= 0; i--) {
        const img = all[i]!;
        if (filter(img)) candidates.push(img);
      }
    } else {
      candidates = [...this.images.values()].filter(filter).sort(compare);
    }
    if (after) {
      const ref = after;
      candidates = candidates.filter((img) => compare(img, ref) > 0);
    }
    const images = candidates.slice(0, limit);
    const last = images[images.length - 1];
    // Glance offers `next` whenever the page is full, even when nothing follows.
    return { images, nextMarker: images.length > 0 && images.length === limit && last ? last.id : undefined };
  }

  patch(viewer: Viewer, id: string, ops: unknown): ImageRecord {
    const img = this.get(viewer, id);
    if (!Array.isArray(ops)) {
      throw new SimError(400, 'Request body must be a JSON array of operation objects.', {
        type: 'BadRequest',
      });
    }
    this.checkMutable(viewer, img);
    // Apply to a copy, so a failing operation leaves the image untouched.
    const next: ImageRecord = { ...img, tags: [...img.tags], properties: { ...img.properties } };
    for (const raw of ops) applyOperation(viewer, next, raw);
    next.updated_at = isoSeconds();
    Object.assign(img, next);
    this.onChange();
    return img;
  }

  delete(viewer: Viewer, id: string): void {
    this.settleOwners();
    const img = this.images.get(id);
    if (!img || !this.canSee(viewer, img)) {
      throw new SimError(404, `Failed to find image ${id} to delete`, { type: 'ImageNotFound' });
    }
    this.checkMutable(viewer, img);
    if (img.protected) throw forbidden(`Image ${id} is protected and cannot be deleted.`);
    this.images.delete(id);
    this.data.delete(id);
    this.deletedIds.add(id);
    this.onChange();
  }

  upload(viewer: Viewer, id: string, bytes: Buffer): void {
    const img = this.get(viewer, id);
    this.checkMutable(viewer, img);
    if (img.status !== 'queued') {
      throw new SimError(409, `Image status transition from ${img.status} to saving is not allowed`, {
        type: 'InvalidImageStatusTransition',
      });
    }
    const missing = ['disk_format', 'container_format'].filter((k) => img[k as 'disk_format'] === null);
    if (missing.length > 0) {
      throw new SimError(400, `Properties ${missing.join(', ')} must be set prior to saving data.`, {
        type: 'BadRequest',
      });
    }
    img.size = bytes.length;
    img.virtual_size = virtualSize(img.disk_format, bytes);
    img.checksum = createHash('md5').update(bytes).digest('hex');
    img.os_hash_algo = 'sha512';
    img.os_hash_value = createHash('sha512').update(bytes).digest('hex');
    img.status = 'active';
    img.stored = true;
    img.updated_at = isoSeconds();
    this.data.set(id, bytes);
    this.onChange();
  }

  /** The image's bytes; undefined when there is no data (queued, or seeded without a file). */
  download(viewer: Viewer, id: string): { image: ImageRecord; bytes: Buffer | undefined } {
    const img = this.get(viewer, id);
    if (img.status === 'deactivated' && !viewer.isAdmin) {
      throw forbidden('The requested image has been deactivated. Image data download is forbidden.');
    }
    return { image: img, bytes: this.data.get(id) };
  }

  addTag(viewer: Viewer, id: string, tag: string): void {
    const img = this.get(viewer, id);
    this.checkMutable(viewer, img);
    validateImage({ tags: [tag] });
    if (!img.tags.includes(tag)) img.tags.push(tag);
    img.updated_at = isoSeconds();
    this.onChange();
  }

  removeTag(viewer: Viewer, id: string, tag: string): void {
    const img = this.get(viewer, id);
    this.checkMutable(viewer, img);
    const idx = img.tags.indexOf(tag);
    if (idx < 0) throw new SimError(404, `Tag ${tag} not found`, { type: 'NotFound' });
    img.tags.splice(idx, 1);
    img.updated_at = isoSeconds();
    this.onChange();
  }

  /** Admin API: force fields such as `status`. */
  force(id: string, fields: Record<string, unknown>): boolean {
    const img = this.images.get(id);
    if (!img) return false;
    for (const [k, v] of Object.entries(fields)) {
      if (k in img && k !== 'id' && k !== 'seq') (img as unknown as Record<string, unknown>)[k] = v;
      else if (typeof v === 'string') img.properties[k] = v;
    }
    img.updated_at = isoSeconds();
    this.onChange();
    return true;
  }

  // ---------------------------------------------------------------- persistence

  snapshot(): unknown {
    this.settleOwners();
    const data: Record<string, string> = {};
    for (const [id, bytes] of this.data)
      if (bytes.length <= PERSISTED_DATA_BYTES) data[id] = bytes.toString('base64');
    return { images: [...this.images.values()], data, deleted: [...this.deletedIds] };
  }

  restore(raw: unknown): void {
    const snap = raw as { images?: ImageRecord[]; data?: Record<string, string>; deleted?: string[] };
    this.images.clear();
    this.data.clear();
    this.deletedIds.clear();
    this.ownerless = [];
    const images = [...(snap.images ?? [])].sort((a, b) => a.seq - b.seq);
    for (const img of images) this.images.set(img.id, img);
    this.seq = images.reduce((m, i) => Math.max(m, i.seq), 0);
    for (const [id, b64] of Object.entries(snap.data ?? {})) this.data.set(id, Buffer.from(b64, 'base64'));
    for (const id of snap.deleted ?? []) this.deletedIds.add(id);
  }

  // ---------------------------------------------------------------- rules

  private insert(fields: Omit<ImageRecord, 'seq'>): ImageRecord {
    const img: ImageRecord = { ...fields, seq: ++this.seq };
    this.images.set(img.id, img);
    return img;
  }

  canSee(viewer: Viewer, img: ImageRecord): boolean {
    if (viewer.isAdmin) return true;
    if (img.visibility === 'public' || img.visibility === 'community') return true;
    return img.owner !== null && img.owner === viewer.projectId;
  }

  /** Glance's check_is_image_mutable: only admins and the owner change an image. */
  private checkMutable(viewer: Viewer, img: ImageRecord): void {
    if (viewer.isAdmin) return;
    if (img.owner === null || viewer.projectId === undefined || img.owner !== viewer.projectId) {
      throw forbidden('You do not own this image');
    }
  }
}

/** qcow2 keeps the virtual size in its header; raw images are their own size; others are unknown. */
function virtualSize(diskFormat: string | null, bytes: Buffer): number | null {
  if (diskFormat === 'raw' || diskFormat === 'iso') return bytes.length;
  if (diskFormat === 'qcow2' && bytes.length >= 32 && bytes.readUInt32BE(0) === 0x514649fb) {
    return Number(bytes.readBigUInt64BE(24));
  }
  return null;
}
