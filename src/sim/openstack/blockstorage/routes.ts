/** Cinder v3 HTTP handlers, served both with and without `{project_id}` in the path (3.67). */
import { SimError } from '../core/errors.ts';
import type { Handler, Route, SimRequest, SimResponse } from '../core/types.ts';
import { AVAILABILITY_ZONE, volumeTypeView } from './catalog.ts';
import { badRequest, invalidField } from './errors.ts';
import { atLeast, MAX_VERSION, MIN_VERSION, versionString, type Microversions } from './microversion.ts';
import { MAX_LIMIT } from './listing.ts';
import { callerOf, type VolumeRecord, type VolumeStore } from './store.ts';
import { requireObject } from './validation.ts';
import { collectionUrl, volumeDetail, volumeSummary, type ViewContext } from './views.ts';

export function cinderRoutes(store: VolumeStore, mv: Microversions): Route[] {
  const ctx = (req: SimRequest): ViewContext => ({
    req,
    isAdmin: req.auth?.isAdmin ?? false,
    version: mv.of(req),
    typeOf: (v) => store.typeOf(v),
  });
  const id = (req: SimRequest) => req.params.volume_id ?? '';

  const listVolumes =
    (detail: boolean): Handler =>
    (req) => {
      const page = store.list(callerOf(req.auth), req.query);
      const c = ctx(req);
      const body: Record<string, unknown> = {
        volumes: page.volumes.map((v) => (detail ? volumeDetail(c, v, true) : volumeSummary(req, v))),
      };
      const last = page.volumes[page.volumes.length - 1];
      // Cinder links the next page whenever the page is full, even when nothing follows.
      if (last && page.volumes.length >= Math.min(page.limit, MAX_LIMIT)) {
        body.volumes_links = [
          { rel: 'next', href: nextLink(req, detail ? 'volumes/detail' : 'volumes', last.id) },
        ];
      }
      if (atLeast(c.version, 45) && isTrue(req.query.get('with_count'))) body.count = page.count;
      return { status: 200, body };
    };

  const handlers: [string, string, Handler][] = [
    ['GET', '/volumes', listVolumes(false)],
    ['GET', '/volumes/detail', listVolumes(true)],
    [
      'POST',
      '/volumes',
      (req) => {
        const spec = requireObject(req.body, 'volume');
        const v = store.create(callerOf(req.auth), spec);
        return { status: 202, body: { volume: volumeDetail(ctx(req), v, false) } };
      },
    ],
    [
      'GET',
      '/volumes/summary',
      (req) => {
        const c = ctx(req);
        if (!atLeast(c.version, 12)) throw notFound();
        const all = store.matching(callerOf(req.auth), req.query);
        const summary: Record<string, unknown> = {
          total_size: all.reduce((s, v) => s + v.size, 0),
          total_count: all.length,
        };
        if (atLeast(c.version, 36)) {
          const metadata: Record<string, string[]> = {};
          for (const v of all) {
            for (const [k, val] of Object.entries(v.metadata)) {
              const list = (metadata[k] ??= []);
              if (!list.includes(val)) list.push(val);
            }
          }
          summary.metadata = metadata;
        }
        return { status: 200, body: { 'volume-summary': summary } };
      },
    ],
    ['GET', '/volumes/{volume_id}', (req) => show(store.get(callerOf(req.auth), id(req)), req)],
    [
      'PUT',
      '/volumes/{volume_id}',
      (req) => {
        const v = store.update(callerOf(req.auth), id(req), req.body);
        return { status: 200, body: { volume: volumeDetail(ctx(req), v, false) } };
      },
    ],
    [
      'DELETE',
      '/volumes/{volume_id}',
      (req) => {
        store.delete(callerOf(req.auth), id(req));
        return { status: 202 };
      },
    ],
    ['POST', '/volumes/{volume_id}/action', (req) => action(req)],
    [
      'GET',
      '/volumes/{volume_id}/metadata',
      (req) => ({ status: 200, body: { metadata: store.get(callerOf(req.auth), id(req)).metadata } }),
    ],
    [
      'POST',
      '/volumes/{volume_id}/metadata',
      (req) => ({
        status: 200,
        body: {
          metadata: store.setMetadata(
            callerOf(req.auth),
            id(req),
            requireObject(req.body, 'metadata'),
            false,
          ),
        },
      }),
    ],
    [
      'PUT',
      '/volumes/{volume_id}/metadata',
      (req) => ({
        status: 200,
        body: {
          metadata: store.setMetadata(callerOf(req.auth), id(req), requireObject(req.body, 'metadata'), true),
        },
      }),
    ],
    [
      'GET',
      '/volumes/{volume_id}/metadata/{key}',
      (req) => {
        const v = store.get(callerOf(req.auth), id(req));
        const key = req.params.key ?? '';
        if (!Object.hasOwn(v.metadata, key)) {
          throw new SimError(404, `Volume ${v.id} has no metadata with key ${key}.`, {
            type: 'VolumeMetadataNotFound',
          });
        }
        return { status: 200, body: { meta: { [key]: v.metadata[key] } } };
      },
    ],
    [
      'PUT',
      '/volumes/{volume_id}/metadata/{key}',
      (req) => {
        const meta = requireObject(req.body, 'meta');
        const key = req.params.key ?? '';
        if (Object.keys(meta).length !== 1) throw badRequest('Request body contains too many items');
        if (!Object.hasOwn(meta, key)) throw badRequest('Request body and URI mismatch');
        const merged = store.setMetadata(callerOf(req.auth), id(req), meta, false);
        return { status: 200, body: { meta: { [key]: merged[key] } } };
      },
    ],
    [
      'DELETE',
      '/volumes/{volume_id}/metadata/{key}',
      (req) => {
        store.deleteMetadataKey(callerOf(req.auth), id(req), req.params.key ?? '');
        return { status: 200 };
      },
    ],
    [
      'GET',
      '/types',
      (req) => ({
        status: 200,
        body: {
          volume_types: store.types
            .filter((t) => t.is_public)
            .map((t) => volumeTypeView(t, req.auth?.isAdmin ?? false)),
        },
      }),
    ],
    [
      'GET',
      '/types/{type_id}',
      (req) => ({
        status: 200,
        body: {
          volume_type: volumeTypeView(store.getType(req.params.type_id ?? ''), req.auth?.isAdmin ?? false),
        },
      }),
    ],
    [
      'GET',
      '/os-availability-zone',
      () => ({
        status: 200,
        body: { availabilityZoneInfo: [{ zoneName: AVAILABILITY_ZONE, zoneState: { available: true } }] },
      }),
    ],
    [
      'GET',
      '/limits',
      (req) => {
        const used = store.usage(req.auth?.projectId ?? '');
        // Quotas are not enforced by the emulator, so every maximum reads as unlimited.
        return {
          status: 200,
          body: {
            limits: {
              rate: [],
              absolute: {
                totalSnapshotsUsed: 0,
                maxTotalBackups: -1,
                maxTotalVolumeGigabytes: -1,
                maxTotalSnapshots: -1,
                maxTotalBackupGigabytes: -1,
                totalBackupGigabytesUsed: 0,
                maxTotalVolumes: -1,
                totalVolumesUsed: used.volumes,
                totalBackupsUsed: 0,
                totalGigabytesUsed: used.gigabytes,
              },
            },
          },
        };
      },
    ],
  ];

  function show(v: VolumeRecord, req: SimRequest): SimResponse {
    return { status: 200, body: { volume: volumeDetail(ctx(req), v, true) } };
  }

  function action(req: SimRequest): SimResponse {
    const body = req.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw badRequest('Malformed request body');
    }
    const keys = Object.keys(body);
    if (keys.length !== 1) throw badRequest('Malformed request body: too many body keys');
    const name = keys[0]!;
    const arg = (body as Record<string, unknown>)[name];
    const caller = callerOf(req.auth);
    switch (name) {
      case 'os-extend': {
        const spec = arg as Record<string, unknown> | null;
        if (spec === null || typeof spec !== 'object' || !('new_size' in spec)) {
          throw new SimError(400, "'new_size' is a required property", { type: 'ValidationError' });
        }
        store.extend(caller, id(req), spec.new_size, atLeast(mv.of(req), 42));
        return { status: 202 };
      }
      case 'os-set_bootable': {
        const spec = arg as Record<string, unknown> | null;
        if (spec === null || typeof spec !== 'object' || !('bootable' in spec)) {
          throw invalidField('bootable', undefined, "'bootable' is a required property");
        }
        store.setBootable(caller, id(req), spec.bootable);
        return { status: 200 };
      }
      case 'os-reset_status':
        store.resetStatus(caller, id(req), (arg ?? {}) as Record<string, unknown>);
        return { status: 202 };
      case 'os-force_delete':
        store.delete(caller, id(req), true);
        return { status: 202 };
      default:
        throw badRequest(`There is no such action: ${name}`);
    }
  }

  const routes: Route[] = [];
  for (const prefix of ['/v3/{project_id}', '/v3']) {
    for (const [method, path, handler] of handlers)
      routes.push({ method, template: `${prefix}${path}`, handler });
  }
  routes.push(
    {
      method: 'GET',
      template: '',
      public: true,
      handler: (req) => ({ status: 300, body: { versions: [versionDoc(req)] } }),
    },
    {
      method: 'GET',
      template: '/v3',
      public: true,
      handler: (req) => ({ status: 200, body: { versions: [versionDoc(req)] } }),
    },
  );
  return routes;
}

function versionDoc(req: SimRequest): Record<string, unknown> {
  return {
    id: 'v3.0',
    status: 'CURRENT',
    version: versionString(MAX_VERSION),
    min_version: versionString(MIN_VERSION),
    updated: '2018-07-17T00:00:00Z',
    links: [
      { href: 'https://docs.openstack.org/', type: 'text/html', rel: 'describedby' },
      { href: `${req.baseUrl}/v3/`, rel: 'self' },
    ],
    'media-types': [{ base: 'application/json', type: 'application/vnd.openstack.volume+json;version=3' }],
  };
}

/** The request's parameters with `marker` replaced, Python-urlencoded as cinder's _get_next_link does. */
function nextLink(req: SimRequest, collection: string, marker: string): string {
  const q = (s: string) =>
    encodeURIComponent(s)
      .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
      .replace(/%20/g, '+');
  const pairs = [...req.query].filter(([k]) => k !== 'marker');
  pairs.push(['marker', marker]);
  return `${collectionUrl(req, collection)}?${pairs.map(([k, v]) => `${q(k)}=${q(v)}`).join('&')}`;
}

function isTrue(value: string | null): boolean {
  return value !== null && ['1', 't', 'true', 'on', 'y', 'yes'].includes(value.toLowerCase());
}

function notFound(): SimError {
  return new SimError(404, 'The resource could not be found.', { type: 'HTTPNotFound' });
}
