/**
 * Glance v2 images: list, get, find by name, create, upload, download, update (JSON patch), delete,
 * tags. Glance's bodies are not wrapped (`{"id": …}`, not `{"image": …}`), its list pages with a
 * relative `next`, and an image is `queued` until its data is uploaded, then `active`.
 * https://docs.openstack.org/api-ref/image/v2/
 */
import type { CallOptions } from '../../core/call-options.ts';
import { MultipleResultsError } from '../../core/errors.ts';
import { Pager } from '../../core/pagination.ts';
import type { RawBody, ServiceClient } from '../../core/service-client.ts';
import { objectTags } from '../../core/tags.ts';

export type ImageStatus =
  | 'queued'
  | 'saving'
  | 'uploading'
  | 'importing'
  | 'active'
  | 'killed'
  | 'deleted'
  | 'pending_delete'
  | 'deactivated';

export type DiskFormat =
  'ami' | 'ari' | 'aki' | 'vhd' | 'vhdx' | 'vmdk' | 'raw' | 'qcow2' | 'vdi' | 'ploop' | 'iso';
export type ContainerFormat = 'ami' | 'ari' | 'aki' | 'bare' | 'ovf' | 'ova' | 'docker' | 'compressed';
export type Visibility = 'public' | 'private' | 'shared' | 'community';

export interface Image {
  id: string;
  name: string | null;
  status: ImageStatus;
  visibility: Visibility;
  owner: string | null;
  disk_format: DiskFormat | null;
  container_format: ContainerFormat | null;
  /** Bytes; null until uploaded. */
  size: number | null;
  virtual_size: number | null;
  checksum: string | null;
  os_hash_algo: string | null;
  os_hash_value: string | null;
  min_disk: number;
  min_ram: number;
  protected: boolean;
  os_hidden: boolean;
  tags: string[];
  created_at: string;
  updated_at: string;
  /** Paths, relative to the endpoint: `/v2/images/{id}`. */
  self: string;
  file: string;
  schema: string;
  /**
   * Custom properties (`os_distro`, `hw_disk_bus`, …) are top-level fields of the image: read them
   * as `image['os_distro']`.
   */
  [property: string]: unknown;
}

/** Custom properties are further string fields (`os_distro: 'ubuntu'`); Glance keeps them as given. */
export interface ImageCreateOpts {
  name?: string;
  disk_format?: DiskFormat;
  container_format?: ContainerFormat;
  visibility?: Visibility;
  tags?: string[];
  min_disk?: number;
  min_ram?: number;
  protected?: boolean;
  os_hidden?: boolean;
  /** A chosen id; taken already is a 409. */
  id?: string;
  [property: string]: unknown;
}

/** One RFC 6902 operation of Glance's JSON patch (`/name`, `/tags`, `/<custom property>`). */
export type ImagePatchOp =
  { op: 'add' | 'replace'; path: `/${string}`; value: unknown } | { op: 'remove'; path: `/${string}` };

export interface ImageListQuery {
  name?: string;
  /** Repeated: images having every one of these tags. */
  tag?: string | readonly string[];
  status?: ImageStatus;
  visibility?: Visibility | 'all';
  owner?: string;
  member_status?: 'accepted' | 'pending' | 'rejected' | 'all';
  disk_format?: DiskFormat;
  container_format?: ContainerFormat;
  os_hidden?: boolean;
  protected?: boolean;
  /** `in:a,b` and the comparison operators of the api-ref are accepted as text. */
  id?: string;
  size_min?: number;
  size_max?: number;
  limit?: number;
  marker?: string;
  /** `name:asc,created_at:desc` */
  sort?: string;
  sort_key?: string;
  sort_dir?: 'asc' | 'desc';
}

/** What upload accepts: bytes (retried on 503) or a stream (sent once; a failure needs a new upload). */
export type ImageData = Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

const item = (id: string) => `images/${encodeURIComponent(id)}`;

/** `GET /v2/images` with filters, every page (Glance's relative `next` links). */
export function listImages(
  sc: ServiceClient,
  query: ImageListQuery = {},
  options: CallOptions = {},
): Pager<Image> {
  return new Pager<Image>({
    client: sc,
    path: 'images',
    query: { ...query },
    collection: 'images',
    strategy: 'next',
    label: 'image_list',
    signal: options.signal,
  });
}

/** `GET /v2/images/{id}`; unknown (or not visible) is an OpenStackHttpError with `isNotFound`. */
export async function getImage(sc: ServiceClient, id: string, options: CallOptions = {}): Promise<Image> {
  const res = await sc.request<Image>({
    method: 'GET',
    path: item(id),
    label: 'image_get',
    signal: options.signal,
  });
  return res.body;
}

/**
 * The image named exactly `name` among those the caller sees, or undefined. Glance does not keep
 * names unique: several is a MultipleResultsError (a silent pick would boot the wrong image one
 * day). `query` narrows the search (`{ status: 'active' }`).
 */
export async function findImageByName(
  sc: ServiceClient,
  name: string,
  options: CallOptions & { query?: ImageListQuery | undefined } = {},
): Promise<Image | undefined> {
  const found = await listImages(sc, { ...options.query, name }, options).all();
  if (found.length > 1)
    throw new MultipleResultsError(
      'image',
      name,
      found.map((i) => i.id),
    );
  return found[0];
}

/** `POST /v2/images` → 201 and the image, `queued` until its data is uploaded. */
export async function createImage(
  sc: ServiceClient,
  image: ImageCreateOpts,
  options: CallOptions = {},
): Promise<Image> {
  const res = await sc.request<Image>({
    method: 'POST',
    path: 'images',
    body: image,
    label: 'image_create',
    signal: options.signal,
    expect: [201],
  });
  return res.body;
}

/**
 * `PUT /v2/images/{id}/file` → 204: the image data, after which the image is `active` (Glance may
 * pass through `saving`). Uploading to an image that has data is a 409.
 */
export async function uploadImage(
  sc: ServiceClient,
  id: string,
  data: ImageData,
  options: CallOptions = {},
): Promise<void> {
  const raw: RawBody = { data, contentType: 'application/octet-stream' };
  await sc.request({
    method: 'PUT',
    path: `${item(id)}/file`,
    raw,
    label: 'image_upload',
    signal: options.signal,
    expect: [204],
    responseType: 'bytes',
  });
}

/**
 * `GET /v2/images/{id}/file`: the data as a stream, unread (the request timeout covers the headers
 * only). 204 for an image without data is returned as an empty stream.
 */
export async function downloadImage(
  sc: ServiceClient,
  id: string,
  options: CallOptions = {},
): Promise<ReadableStream<Uint8Array>> {
  const res = await sc.request<ReadableStream<Uint8Array> | undefined>({
    method: 'GET',
    path: `${item(id)}/file`,
    label: 'image_download',
    signal: options.signal,
    expect: [200, 204],
    responseType: 'stream',
  });
  return res.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
}

/** `PATCH /v2/images/{id}` with a JSON patch (Glance's own media type) → the image as updated. */
export async function updateImage(
  sc: ServiceClient,
  id: string,
  ops: readonly ImagePatchOp[],
  options: CallOptions = {},
): Promise<Image> {
  const res = await sc.request<Image>({
    method: 'PATCH',
    path: item(id),
    body: ops,
    headers: { 'Content-Type': 'application/openstack-images-v2.1-json-patch' },
    label: 'image_update',
    signal: options.signal,
  });
  return res.body;
}

/** `DELETE /v2/images/{id}` → 204. A protected image is a 403; another project's a 403 or 404. */
export async function deleteImage(sc: ServiceClient, id: string, options: CallOptions = {}): Promise<void> {
  await sc.request({
    method: 'DELETE',
    path: item(id),
    label: 'image_delete',
    signal: options.signal,
    expect: [204],
  });
}

/**
 * `PUT /v2/images/{id}/tags/{tag}` → 204; adding a tag already there is no error. Written out rather
 * than `objectTags.add`, which also takes the guideline's 201: Glance answers 204 and nothing else.
 */
export async function addImageTag(
  sc: ServiceClient,
  id: string,
  tag: string,
  options: CallOptions = {},
): Promise<void> {
  await sc.request({
    method: 'PUT',
    path: `${item(id)}/tags/${encodeURIComponent(tag)}`,
    label: 'image_tag_add',
    signal: options.signal,
    expect: [204],
    responseType: 'bytes',
  });
}

/** `DELETE /v2/images/{id}/tags/{tag}` → 204; a tag the image does not have is a 404. */
export async function removeImageTag(
  sc: ServiceClient,
  id: string,
  tag: string,
  options: CallOptions = {},
): Promise<void> {
  await objectTags.remove(sc, { collection: 'images', id, label: 'image' }, tag, options);
}
