/** os-server-groups: affinity policies (2.1 `policies` list, 2.64 `policy` + `rules`) and their members. */
import { SimError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import type { Route, SimRequest, SimResponse } from '../core/types.ts';
import { policyForbidden } from './errors.ts';
import { asRecord, auth, empty, json, projectOf } from './http.ts';
import type { Microversions } from './microversion.ts';
import * as t from './schema.ts';

export type GroupPolicy = 'affinity' | 'anti-affinity' | 'soft-affinity' | 'soft-anti-affinity';

export interface ServerGroupRecord {
  id: string;
  name: string;
  policy: GroupPolicy;
  rules: Record<string, number>;
  project_id: string;
  user_id: string;
  /** Server ids, in the order they joined. */
  members: string[];
}

export class ServerGroupStore {
  readonly byId = new Map<string, ServerGroupRecord>();

  groupOf(serverId: string): ServerGroupRecord | undefined {
    for (const g of this.byId.values()) if (g.members.includes(serverId)) return g;
    return undefined;
  }

  removeMember(serverId: string): void {
    for (const g of this.byId.values()) {
      const i = g.members.indexOf(serverId);
      if (i >= 0) g.members.splice(i, 1);
    }
  }

  snapshot(): unknown {
    return [...this.byId.values()];
  }

  restore(data: unknown): void {
    this.byId.clear();
    for (const g of Array.isArray(data) ? (data as ServerGroupRecord[]) : []) this.byId.set(g.id, g);
  }
}

export const groupNotFound = (id: string) => new SimError(404, `Instance group ${id} could not be found.`);

function createSchema(mv: Microversions, req: SimRequest): t.Schema {
  const policies = mv.atLeast(req, '2.15')
    ? ['anti-affinity', 'affinity', 'soft-anti-affinity', 'soft-affinity']
    : ['anti-affinity', 'affinity'];
  const group: t.Schema = mv.atLeast(req, '2.64')
    ? {
        type: 'object',
        properties: {
          name: t.name,
          policy: { type: 'string', enum: policies },
          rules: {
            type: 'object',
            properties: { max_server_per_host: t.positiveInteger },
            additionalProperties: false,
          },
        },
        required: ['name', 'policy'],
        additionalProperties: false,
      }
    : {
        type: 'object',
        properties: {
          name: t.name,
          policies: {
            type: 'array',
            items: { type: 'string', enum: policies },
            uniqueItems: true,
            minItems: 1,
            maxItems: 1,
          },
        },
        required: ['name', 'policies'],
        additionalProperties: false,
      };
  return {
    type: 'object',
    properties: { server_group: group },
    required: ['server_group'],
    additionalProperties: false,
  };
}

export function serverGroupRoutes(store: ServerGroupStore, mv: Microversions, changed: () => void): Route[] {
  const view = (req: SimRequest, g: ServerGroupRecord) => {
    if (mv.atLeast(req, '2.64')) {
      return {
        id: g.id,
        name: g.name,
        policy: g.policy,
        rules: { ...g.rules },
        members: [...g.members],
        project_id: g.project_id,
        user_id: g.user_id,
      };
    }
    return {
      id: g.id,
      name: g.name,
      policies: [g.policy],
      members: [...g.members],
      metadata: {},
      ...(mv.atLeast(req, '2.13') ? { project_id: g.project_id, user_id: g.user_id } : {}),
    };
  };

  const get = (req: SimRequest, rule: string): ServerGroupRecord => {
    const id = req.params['group_id']!;
    const g = store.byId.get(id);
    if (!g) throw groupNotFound(id);
    if (g.project_id !== projectOf(req) && !auth(req).isAdmin) throw policyForbidden(rule);
    return g;
  };

  const create = (req: SimRequest): SimResponse => {
    t.validateBody(createSchema(mv, req), req.body);
    const spec = asRecord(asRecord(req.body)['server_group']);
    const policy = (
      mv.atLeast(req, '2.64') ? spec['policy'] : (spec['policies'] as string[])[0]
    ) as GroupPolicy;
    const rules = asRecord(spec['rules']);
    if (Object.keys(rules).length > 0 && policy !== 'anti-affinity') {
      throw new SimError(400, 'Only anti-affinity policy supports rules.');
    }
    const a = auth(req);
    const g: ServerGroupRecord = {
      id: uuid(),
      name: String(spec['name']),
      policy,
      rules: Object.fromEntries(Object.entries(rules).map(([k, v]) => [k, Number(v)])),
      project_id: projectOf(req),
      user_id: a.userId,
      members: [],
    };
    store.byId.set(g.id, g);
    changed();
    return json(200, { server_group: view(req, g) });
  };

  const list = (req: SimRequest): SimResponse => {
    const a = auth(req);
    const all = a.isAdmin && t.truthy(req.query.get('all_projects') ?? 'false');
    const project = projectOf(req);
    let items = [...store.byId.values()].filter((g) => all || g.project_id === project);
    const offset = Number(req.query.get('offset') ?? 0) || 0;
    const limitRaw = req.query.get('limit');
    const limit = limitRaw === null ? 1000 : Math.min(Number(limitRaw) || 1000, 1000);
    items = items.slice(offset, offset + limit);
    return json(200, { server_groups: items.map((g) => view(req, g)) });
  };

  return [
    { method: 'GET', template: '/v2.1/os-server-groups', handler: list },
    { method: 'POST', template: '/v2.1/os-server-groups', handler: create },
    {
      method: 'GET',
      template: '/v2.1/os-server-groups/{group_id}',
      handler: (req) =>
        json(200, { server_group: view(req, get(req, 'os_compute_api:os-server-groups:show')) }),
    },
    {
      method: 'DELETE',
      template: '/v2.1/os-server-groups/{group_id}',
      handler: (req) => {
        const g = get(req, 'os_compute_api:os-server-groups:delete');
        store.byId.delete(g.id);
        changed();
        return empty(204);
      },
    },
  ];
}
