/** /servers/{id} and its small subresources: show, update, delete, metadata, tags and ips. */
import { SimError } from '../core/errors.ts';
import { isoSeconds } from '../core/ids.ts';
import type { Route, SimRequest, SimResponse } from '../core/types.ts';
import type { Nova } from './context.ts';
import { asRecord, auth, empty, json, projectOf } from './http.ts';
import { createServers } from './server-create.ts';
import type { Lifecycle } from './server-lifecycle.ts';
import { listServers } from './server-list.ts';
import { addressesOf } from './server-networking.ts';
import type { ServerRecord } from './server-store.ts';
import { serverView } from './server-view.ts';
import { sanitizeHostname } from './server-create.ts';
import { checkState } from './states.ts';
import * as t from './schema.ts';

const MAX_METADATA_ITEMS = 128;
const MAX_TAGS = 50;

export const instanceNotFound = (id: string) => new SimError(404, `Instance ${id} could not be found.`);

/** The server if the caller may see it: its own project's, or any for admins (404 otherwise, as Nova). */
export function findServer(nova: Nova, req: SimRequest, id = req.params['server_id']!): ServerRecord {
  const s = nova.servers.byId.get(id);
  if (!s || (s.project_id !== projectOf(req) && !auth(req).isAdmin)) throw instanceNotFound(id);
  return s;
}

/** check_instance_lock: a locked server refuses changes from anyone but admins. */
export function checkLock(req: SimRequest, s: ServerRecord): void {
  if (s.locked_by !== null && !auth(req).isAdmin) throw new SimError(409, `Instance ${s.id} is locked`);
}

const METADATA_STATES = ['active', 'paused', 'suspended', 'stopped'] as const;

export function serverRoutes(nova: Nova, lifecycle: Lifecycle): Route[] {
  const { mv } = nova;
  const changed = (s: ServerRecord) => {
    s.updated_at = isoSeconds();
    nova.cloud.changed();
  };

  const show = (req: SimRequest): SimResponse =>
    json(200, { server: serverView(nova, req, findServer(nova, req), { serverGroups: true }) });

  const update = (req: SimRequest): SimResponse => {
    t.validateBody(
      {
        type: 'object',
        properties: {
          server: {
            type: 'object',
            properties: {
              name: t.name,
              ...(mv.atLeast(req, '2.19') ? { description: t.description } : {}),
              accessIPv4: { type: 'string', format: 'ipv4' },
              accessIPv6: { type: 'string', format: 'ipv6' },
              'OS-DCF:diskConfig': { type: 'string', enum: ['AUTO', 'MANUAL'] },
              ...(mv.atLeast(req, '2.90')
                ? { hostname: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[a-zA-Z0-9-._]*$' } }
                : {}),
            },
            additionalProperties: false,
          },
        },
        required: ['server'],
        additionalProperties: false,
      },
      req.body,
    );
    const s = findServer(nova, req);
    const spec = asRecord(asRecord(req.body)['server']);
    if (typeof spec['name'] === 'string') s.name = spec['name'];
    if ('description' in spec)
      s.description = typeof spec['description'] === 'string' ? spec['description'] : null;
    if (typeof spec['accessIPv4'] === 'string') s.access_ip_v4 = spec['accessIPv4'];
    if (typeof spec['accessIPv6'] === 'string') s.access_ip_v6 = spec['accessIPv6'];
    if (spec['OS-DCF:diskConfig'] === 'AUTO' || spec['OS-DCF:diskConfig'] === 'MANUAL')
      s.disk_config = spec['OS-DCF:diskConfig'];
    if (typeof spec['hostname'] === 'string')
      s.hostname = sanitizeHostname(spec['hostname'], `Server-${s.id}`);
    changed(s);
    const full = mv.atLeast(req, '2.75');
    return json(200, { server: serverView(nova, req, s, { serverGroups: full, minimal: !full }) });
  };

  const remove = (req: SimRequest): SimResponse => {
    const s = findServer(nova, req);
    checkLock(req, s);
    lifecycle.delete(s);
    return empty(204);
  };

  // Metadata.
  const metadataWritable = (req: SimRequest, action: string): ServerRecord => {
    const s = findServer(nova, req);
    checkState(s, action, { vm: METADATA_STATES, task: 'any' });
    checkLock(req, s);
    return s;
  };
  const limitMetadata = (count: number) => {
    if (count > MAX_METADATA_ITEMS)
      throw new SimError(403, `Maximum number of metadata items exceeds ${MAX_METADATA_ITEMS}`);
  };
  const metadataBody = (req: SimRequest, key: 'metadata' | 'meta'): Record<string, string> => {
    t.validateBody(
      {
        type: 'object',
        properties: {
          [key]: key === 'meta' ? { ...t.metadata, minProperties: 1, maxProperties: 1 } : t.metadata,
        },
        required: [key],
        additionalProperties: false,
      },
      req.body,
    );
    return Object.fromEntries(
      Object.entries(asRecord(asRecord(req.body)[key])).map(([k, v]) => [k, String(v)]),
    );
  };
  const metaItem = (s: ServerRecord, key: string): string => {
    const v = s.metadata[key];
    if (v === undefined) throw new SimError(404, 'Metadata item was not found');
    return v;
  };

  // Tags (2.26+): writable only in the states server_tags.py allows.
  const requireTags = (req: SimRequest) => {
    if (!mv.atLeast(req, '2.26')) throw new SimError(404, 'The resource could not be found.');
  };
  const taggable = (req: SimRequest, action: string): ServerRecord => {
    requireTags(req);
    const s = findServer(nova, req);
    checkState(s, action, { vm: METADATA_STATES, task: 'any', mustHaveLaunched: false });
    return s;
  };
  const tagNotFound = (s: ServerRecord, tag: string) =>
    new SimError(404, `Instance ${s.id} has no tag '${tag}'`);

  return [
    { method: 'GET', template: '/v2.1/servers', handler: (req) => listServers(nova, req, false) },
    { method: 'GET', template: '/v2.1/servers/detail', handler: (req) => listServers(nova, req, true) },
    { method: 'POST', template: '/v2.1/servers', handler: (req) => createServers(nova, lifecycle, req) },
    { method: 'GET', template: '/v2.1/servers/{server_id}', handler: show },
    { method: 'PUT', template: '/v2.1/servers/{server_id}', handler: update },
    { method: 'DELETE', template: '/v2.1/servers/{server_id}', handler: remove },

    {
      method: 'GET',
      template: '/v2.1/servers/{server_id}/metadata',
      handler: (req) => json(200, { metadata: { ...findServer(nova, req).metadata } }),
    },
    {
      method: 'POST',
      template: '/v2.1/servers/{server_id}/metadata',
      handler: (req) => {
        const given = metadataBody(req, 'metadata');
        const s = metadataWritable(req, 'update metadata');
        limitMetadata(Object.keys({ ...s.metadata, ...given }).length);
        Object.assign(s.metadata, given);
        changed(s);
        return json(200, { metadata: { ...s.metadata } });
      },
    },
    {
      method: 'PUT',
      template: '/v2.1/servers/{server_id}/metadata',
      handler: (req) => {
        const given = metadataBody(req, 'metadata');
        const s = metadataWritable(req, 'update metadata');
        limitMetadata(Object.keys(given).length);
        s.metadata = given;
        changed(s);
        return json(200, { metadata: { ...s.metadata } });
      },
    },
    {
      method: 'GET',
      template: '/v2.1/servers/{server_id}/metadata/{key}',
      handler: (req) => {
        const key = req.params['key']!;
        return json(200, { meta: { [key]: metaItem(findServer(nova, req), key) } });
      },
    },
    {
      method: 'PUT',
      template: '/v2.1/servers/{server_id}/metadata/{key}',
      handler: (req) => {
        const key = req.params['key']!;
        const given = metadataBody(req, 'meta');
        if (!(key in given)) throw new SimError(400, 'Request body and URI mismatch');
        const s = metadataWritable(req, 'update metadata');
        limitMetadata(Object.keys({ ...s.metadata, ...given }).length);
        s.metadata[key] = given[key]!;
        changed(s);
        return json(200, { meta: { [key]: s.metadata[key] } });
      },
    },
    {
      method: 'DELETE',
      template: '/v2.1/servers/{server_id}/metadata/{key}',
      handler: (req) => {
        const key = req.params['key']!;
        const s = findServer(nova, req);
        metaItem(s, key);
        metadataWritable(req, 'delete metadata');
        delete s.metadata[key];
        changed(s);
        return empty(204);
      },
    },

    {
      method: 'GET',
      template: '/v2.1/servers/{server_id}/tags',
      handler: (req) => {
        requireTags(req);
        return json(200, { tags: [...findServer(nova, req).tags] });
      },
    },
    {
      method: 'PUT',
      template: '/v2.1/servers/{server_id}/tags',
      handler: (req) => {
        requireTags(req);
        t.validateBody(
          {
            type: 'object',
            properties: { tags: { type: 'array', items: t.tag, maxItems: MAX_TAGS } },
            required: ['tags'],
            additionalProperties: false,
          },
          req.body,
        );
        const s = taggable(req, 'update tags');
        s.tags = [...new Set(asRecord(req.body)['tags'] as string[])];
        changed(s);
        return json(200, { tags: [...s.tags] });
      },
    },
    {
      method: 'DELETE',
      template: '/v2.1/servers/{server_id}/tags',
      handler: (req) => {
        const s = taggable(req, 'delete tags');
        s.tags = [];
        changed(s);
        return empty(204);
      },
    },
    {
      method: 'GET',
      template: '/v2.1/servers/{server_id}/tags/{tag}',
      handler: (req) => {
        requireTags(req);
        const s = findServer(nova, req);
        const tag = req.params['tag']!;
        if (!s.tags.includes(tag)) throw new SimError(404, `Server ${s.id} has no tag '${tag}'`);
        return empty(204);
      },
    },
    {
      method: 'PUT',
      template: '/v2.1/servers/{server_id}/tags/{tag}',
      handler: (req) => {
        const tag = req.params['tag']!;
        const s = taggable(req, 'update tag');
        const invalid = t.firstError(t.tag, tag);
        if (invalid !== undefined) {
          throw new SimError(
            400,
            `Tag '${tag}' is invalid. It must be a non empty string without characters '/' and ','. Validation error message: ${invalid}`,
          );
        }
        if (s.tags.length >= MAX_TAGS) {
          throw new SimError(400, `The number of tags exceeded the per-server limit ${MAX_TAGS}`);
        }
        if (s.tags.includes(tag)) return empty(204);
        s.tags.push(tag);
        changed(s);
        return {
          status: 201,
          headers: { Location: `${req.baseUrl}/v2.1/servers/${s.id}/tags/${encodeURIComponent(tag)}` },
        };
      },
    },
    {
      method: 'DELETE',
      template: '/v2.1/servers/{server_id}/tags/{tag}',
      handler: (req) => {
        const s = taggable(req, 'delete tag');
        const tag = req.params['tag']!;
        const i = s.tags.indexOf(tag);
        if (i < 0) throw tagNotFound(s, tag);
        s.tags.splice(i, 1);
        changed(s);
        return empty(204);
      },
    },

    {
      method: 'GET',
      template: '/v2.1/servers/{server_id}/ips',
      handler: (req) =>
        json(200, { addresses: addressesOf(nova.cloud.network, findServer(nova, req), false) }),
    },
    {
      method: 'GET',
      template: '/v2.1/servers/{server_id}/ips/{network_label}',
      handler: (req) => {
        const label = req.params['network_label']!;
        const list = addressesOf(nova.cloud.network, findServer(nova, req), false)[label];
        if (!list) throw new SimError(404, 'Instance is not a member of specified network');
        return json(200, { [label]: list });
      },
    },
  ];
}
