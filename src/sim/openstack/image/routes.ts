/** Glance v2 HTTP handlers: they translate requests to ImageStore calls and records to wire shapes. */
import { SimError } from '../core/errors.ts';
import type { Route, SimRequest, SimResponse } from '../core/types.ts';
import { VERBATIM } from './errors.ts';
import { IMAGE_SCHEMA, imagesSchema } from './schema.ts';
import { viewerOf, type ImageRecord, type ImageStore } from './store.ts';

const PATCH_TYPES = [
  'application/openstack-images-v2.0-json-patch',
  'application/openstack-images-v2.1-json-patch',
];

/** Glance Zed lists these; v2.14 is missing on purpose, as in the real answer. */
const VERSION_IDS = [
  'v2.15',
  'v2.13',
  'v2.12',
  'v2.11',
  'v2.10',
  'v2.9',
  'v2.8',
  'v2.7',
  'v2.6',
  'v2.5',
  'v2.4',
  'v2.3',
  'v2.2',
  'v2.1',
  'v2.0',
];

/** webob's default for bodiless answers; clients see it on 204s. */
const EMPTY_HTML = { 'Content-Type': 'text/html; charset=UTF-8' };

export function glanceRoutes(store: ImageStore): Route[] {
  const versions = (req: SimRequest) => ({
    versions: VERSION_IDS.map((id, i) => ({
      id,
      status: i === 0 ? 'CURRENT' : 'SUPPORTED',
      links: [{ rel: 'self', href: `${req.baseUrl}/v2/` }],
    })),
  });

  return [
    { method: 'GET', template: '', public: true, handler: (req) => ({ status: 300, body: versions(req) }) },
    {
      method: 'GET',
      template: '/versions',
      public: true,
      handler: (req) => ({ status: 200, body: versions(req) }),
    },
    { method: 'GET', template: '/v2/schemas/image', handler: () => ({ status: 200, body: IMAGE_SCHEMA }) },
    { method: 'GET', template: '/v2/schemas/images', handler: () => ({ status: 200, body: imagesSchema() }) },
    {
      method: 'GET',
      template: '/v2/images',
      handler: (req) => {
        const page = store.list(viewerOf(req.auth), req.query);
        const params = lastValues(req.query);
        params.delete('marker');
        const first = encodePy(params);
        const body: Record<string, unknown> = {
          images: page.images.map(toWire),
          first: first ? `/v2/images?${first}` : '/v2/images',
          schema: '/v2/schemas/images',
        };
        if (page.nextMarker !== undefined) {
          params.set('marker', page.nextMarker);
          body.next = `/v2/images?${encodePy(params)}`;
        }
        return { status: 200, body };
      },
    },
    {
      method: 'POST',
      template: '/v2/images',
      handler: (req) => {
        const img = store.create(viewerOf(req.auth), req.body);
        return {
          status: 201,
          headers: {
            Location: `${req.baseUrl}/v2/images/${img.id}`,
            'OpenStack-image-import-methods': 'glance-direct,web-download,copy-image',
            'OpenStack-image-store-ids': 'file',
          },
          body: toWire(img),
        };
      },
    },
    {
      method: 'GET',
      template: '/v2/images/{image_id}',
      handler: (req) => ({
        status: 200,
        body: toWire(store.get(viewerOf(req.auth), param(req, 'image_id'))),
      }),
    },
    {
      method: 'PATCH',
      template: '/v2/images/{image_id}',
      handler: (req) => {
        const type = contentType(req);
        if (!PATCH_TYPES.includes(type)) {
          throw new SimError(
            415,
            `The request media type ${type || 'None'} is not supported by this server.\n<br /><br />\n`,
            {
              type: 'UnsupportedMediaType',
              detail: VERBATIM,
              headers: { 'Accept-Patch': PATCH_TYPES.join(', ') },
            },
          );
        }
        return {
          status: 200,
          body: toWire(store.patch(viewerOf(req.auth), param(req, 'image_id'), req.body)),
        };
      },
    },
    {
      method: 'DELETE',
      template: '/v2/images/{image_id}',
      handler: (req) => {
        store.delete(viewerOf(req.auth), param(req, 'image_id'));
        return { status: 204, headers: EMPTY_HTML };
      },
    },
    {
      method: 'PUT',
      template: '/v2/images/{image_id}/file',
      handler: (req) => {
        const type = contentType(req);
        if (type !== 'application/octet-stream') {
          throw new SimError(
            415,
            `The request media type ${type || 'None'} is not supported by this server.\n<br /><br />\n`,
            {
              type: 'UnsupportedMediaType',
              detail: VERBATIM,
            },
          );
        }
        store.upload(viewerOf(req.auth), param(req, 'image_id'), req.rawBody);
        return { status: 204, headers: EMPTY_HTML };
      },
    },
    {
      method: 'GET',
      template: '/v2/images/{image_id}/file',
      handler: (req): SimResponse => {
        const { image, bytes } = store.download(viewerOf(req.auth), param(req, 'image_id'));
        if (!bytes) return { status: 204, headers: EMPTY_HTML };
        return {
          status: 200,
          contentType: 'application/octet-stream',
          headers: image.checksum ? { 'Content-MD5': image.checksum } : {},
          body: bytes,
        };
      },
    },
    {
      method: 'PUT',
      template: '/v2/images/{image_id}/tags/{tag}',
      handler: (req) => {
        store.addTag(viewerOf(req.auth), param(req, 'image_id'), param(req, 'tag'));
        return { status: 204, headers: EMPTY_HTML };
      },
    },
    {
      method: 'DELETE',
      template: '/v2/images/{image_id}/tags/{tag}',
      handler: (req) => {
        store.removeTag(viewerOf(req.auth), param(req, 'image_id'), param(req, 'tag'));
        return { status: 204, headers: EMPTY_HTML };
      },
    },
  ];
}

/** The image document in Glance's key order: free-form properties first, `stores` once data exists. */
export function toWire(img: ImageRecord): Record<string, unknown> {
  const out: Record<string, unknown> = { ...img.properties };
  Object.assign(out, {
    name: img.name,
    disk_format: img.disk_format,
    container_format: img.container_format,
    visibility: img.visibility,
    size: img.size,
    virtual_size: img.virtual_size,
    status: img.status,
    checksum: img.checksum,
    protected: img.protected,
    min_ram: img.min_ram,
    min_disk: img.min_disk,
    owner: img.owner,
    os_hidden: img.os_hidden,
    os_hash_algo: img.os_hash_algo,
    os_hash_value: img.os_hash_value,
    id: img.id,
    created_at: img.created_at,
    updated_at: img.updated_at,
    tags: img.tags,
    self: `/v2/images/${img.id}`,
    file: `/v2/images/${img.id}/file`,
    schema: '/v2/schemas/image',
  });
  if (img.stored) out.stores = 'file';
  return out;
}

function param(req: SimRequest, name: string): string {
  return req.params[name] ?? '';
}

function contentType(req: SimRequest): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

/** `dict(request.params)`: one value per key (the last), in first-seen order. */
function lastValues(query: URLSearchParams): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of query) out.set(k, v);
  return out;
}

/** Python's `urllib.parse.urlencode`, whose escaping differs from URLSearchParams on `~`, `*`, `!`, `'`, `(`, `)`. */
function encodePy(params: Map<string, string>): string {
  const q = (s: string) =>
    encodeURIComponent(s)
      .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
      .replace(/%20/g, '+');
  return [...params].map(([k, v]) => `${q(k)}=${q(v)}`).join('&');
}
