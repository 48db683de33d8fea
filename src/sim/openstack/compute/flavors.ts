/** Flavors: the devstack set seeded at start, admin create/delete, extra specs, Nova's list filters and paging. */
import { SimError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import type { Route, SimRequest, SimResponse } from '../core/types.ts';
import type { Microversions } from './microversion.ts';
import {
  auth,
  collectionLinks,
  empty,
  json,
  limitOf,
  links,
  pageAfter,
  projectOf,
  requireAdmin,
  asRecord,
} from './http.ts';
import * as t from './schema.ts';

export interface FlavorRecord {
  id: string;
  name: string;
  ram: number;
  vcpus: number;
  disk: number;
  swap: number;
  ephemeral: number;
  rxtx_factor: number;
  is_public: boolean;
  disabled: boolean;
  description: string | null;
  extra_specs: Record<string, string>;
  /** Projects granted a private flavor (os-flavor-access). */
  access: string[];
  /** Creation order, Nova's internal integer id (a sort key). */
  seq: number;
}

const SEED: readonly [string, string, number, number, number][] = [
  ['1', 'm1.tiny', 1, 512, 1],
  ['2', 'm1.small', 1, 2048, 20],
  ['3', 'm1.medium', 2, 4096, 40],
  ['4', 'm1.large', 4, 8192, 80],
  ['5', 'm1.xlarge', 8, 16384, 160],
];

export class FlavorStore {
  readonly byId = new Map<string, FlavorRecord>();
  private seq = 0;

  seed(): void {
    for (const [id, name, vcpus, ram, disk] of SEED) this.add({ id, name, vcpus, ram, disk });
  }

  add(
    spec: Partial<FlavorRecord> & Pick<FlavorRecord, 'id' | 'name' | 'vcpus' | 'ram' | 'disk'>,
  ): FlavorRecord {
    const rec: FlavorRecord = {
      swap: 0,
      ephemeral: 0,
      rxtx_factor: 1.0,
      is_public: true,
      disabled: false,
      description: null,
      extra_specs: {},
      access: [],
      ...spec,
      seq: ++this.seq,
    };
    this.byId.set(rec.id, rec);
    return rec;
  }

  /** What a project may use: public flavors, and private ones it was granted. Admins see all. */
  visible(f: FlavorRecord, projectId: string, isAdmin: boolean): boolean {
    return isAdmin || f.is_public || f.access.includes(projectId);
  }

  snapshot(): unknown {
    return { seq: this.seq, flavors: [...this.byId.values()] };
  }

  restore(data: unknown): void {
    const d = asRecord(data);
    this.byId.clear();
    for (const f of (d['flavors'] as FlavorRecord[] | undefined) ?? []) this.byId.set(f.id, f);
    this.seq = typeof d['seq'] === 'number' ? d['seq'] : this.byId.size;
  }
}

const SORT_KEYS: Readonly<Record<string, (f: FlavorRecord) => string | number | boolean | null>> = {
  flavorid: (f) => f.id,
  id: (f) => f.seq,
  created_at: (f) => f.seq,
  updated_at: (f) => f.seq,
  name: (f) => f.name,
  memory_mb: (f) => f.ram,
  root_gb: (f) => f.disk,
  ephemeral_gb: (f) => f.ephemeral,
  vcpus: (f) => f.vcpus,
  swap: (f) => f.swap,
  rxtx_factor: (f) => f.rxtx_factor,
  is_public: (f) => f.is_public,
  disabled: (f) => f.disabled,
  description: (f) => f.description,
  vcpu_weight: () => 0,
};

function compareValues(a: string | number | boolean | null, b: string | number | boolean | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}

export function flavorNotFound(id: string): SimError {
  return new SimError(404, `Flavor ${id} could not be found.`);
}

const createSchema = (withDescription: boolean): t.Schema => ({
  type: 'object',
  properties: {
    flavor: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 255 },
        id: {
          type: ['string', 'null'],
          minLength: 1,
          maxLength: 255,
          pattern: '^(?! )[a-zA-Z0-9. _-]+(?<! )$',
        },
        ram: { ...t.positiveInteger, maximum: 2147483647 },
        vcpus: { ...t.positiveInteger, maximum: 2147483647 },
        disk: { ...t.nonNegativeInteger, maximum: 2147483647 },
        'OS-FLV-EXT-DATA:ephemeral': { ...t.nonNegativeInteger, maximum: 2147483647 },
        swap: { ...t.nonNegativeInteger, maximum: 2147483647 },
        rxtx_factor: {
          type: ['number', 'string'],
          pattern: '^[0-9]+(\\.[0-9]+)?$',
          minimum: 0,
          maximum: 3.40282e38,
        },
        'os-flavor-access:is_public': t.booleanLike,
        ...(withDescription ? { description: t.description } : {}),
      },
      required: ['name', 'ram', 'vcpus', 'disk'],
      additionalProperties: false,
    },
  },
  required: ['flavor'],
  additionalProperties: false,
});

const extraSpecsSchema: t.Schema = {
  type: 'object',
  properties: {
    extra_specs: {
      type: 'object',
      patternProperties: {
        '^[a-zA-Z0-9-_:. ]{1,255}$': { type: ['string', 'number', 'boolean'], maxLength: 255 },
      },
      additionalProperties: false,
    },
  },
  required: ['extra_specs'],
  additionalProperties: false,
};

export function flavorRoutes(store: FlavorStore, mv: Microversions, changed: () => void): Route[] {
  const get = (req: SimRequest, id: string): FlavorRecord => {
    const f = store.byId.get(id);
    const a = auth(req);
    if (!f || !store.visible(f, projectOf(req), a.isAdmin)) throw flavorNotFound(id);
    return f;
  };

  const brief = (req: SimRequest, f: FlavorRecord) => ({
    id: f.id,
    name: f.name,
    links: links(req, 'flavors', f.id),
    ...(mv.atLeast(req, '2.55') ? { description: f.description } : {}),
  });

  const detail = (req: SimRequest, f: FlavorRecord) => ({
    id: f.id,
    name: f.name,
    ram: f.ram,
    disk: f.disk,
    // Before 2.75 a zero swap is shown as an empty string.
    swap: mv.atLeast(req, '2.75') ? f.swap : f.swap || '',
    'OS-FLV-EXT-DATA:ephemeral': f.ephemeral,
    'OS-FLV-DISABLED:disabled': f.disabled,
    vcpus: f.vcpus,
    'os-flavor-access:is_public': f.is_public,
    rxtx_factor: f.rxtx_factor,
    links: links(req, 'flavors', f.id),
    ...(mv.atLeast(req, '2.55') ? { description: f.description } : {}),
    ...(mv.atLeast(req, '2.61') ? { extra_specs: { ...f.extra_specs } } : {}),
  });

  const list = (req: SimRequest, detailed: boolean): SimResponse => {
    const a = auth(req);
    const project = projectOf(req);
    let isPublic: boolean | undefined = true;
    if (a.isAdmin) {
      const raw = req.query.get('is_public');
      if (raw !== null) {
        const low = raw.toLowerCase();
        if (low === 'none') isPublic = undefined;
        else if (['true', '1', 'on', 'yes', 't', 'y'].includes(low)) isPublic = true;
        else if (['false', '0', 'off', 'no', 'f', 'n'].includes(low)) isPublic = false;
        else throw new SimError(400, `Invalid is_public filter [${raw}]`);
      }
    }
    const minimum = (key: string): number | undefined => {
      const raw = req.query.get(key);
      if (raw === null) return undefined;
      if (!/^\d+$/.test(raw)) throw new SimError(400, `Invalid ${key} filter [${raw}]`);
      return Number(raw);
    };
    const minRam = minimum('minRam');
    const minDisk = minimum('minDisk');
    const sortKey = req.query.get('sort_key') ?? 'flavorid';
    const sortDir = req.query.get('sort_dir') ?? 'asc';
    const keyOf = SORT_KEYS[sortKey];
    if (!keyOf) throw new SimError(400, `Invalid sort key ${sortKey}`);
    if (sortDir !== 'asc' && sortDir !== 'desc') throw new SimError(400, `Invalid sort direction ${sortDir}`);
    const items = [...store.byId.values()].filter((f) => {
      if (a.isAdmin) {
        if (isPublic !== undefined && f.is_public !== isPublic) return false;
      } else if (!(f.is_public || f.access.includes(project)) || f.disabled) {
        return false;
      }
      if (minRam !== undefined && f.ram < minRam) return false;
      if (minDisk !== undefined && f.disk < minDisk) return false;
      return true;
    });
    const sign = sortDir === 'asc' ? 1 : -1;
    items.sort((x, y) => sign * compareValues(keyOf(x), keyOf(y)) || compareValues(x.seq, y.seq));
    const page = pageAfter(items, (f) => f.id, req.query.get('marker'), limitOf(req));
    const out: Record<string, unknown> = {
      flavors: page.map((f) => (detailed ? detail(req, f) : brief(req, f))),
    };
    const next = collectionLinks(req, detailed ? 'flavors/detail' : 'flavors', page.length, page.at(-1)?.id);
    if (next.length > 0) out['flavors_links'] = next;
    return json(200, out);
  };

  const create = (req: SimRequest): SimResponse => {
    requireAdmin(req, 'os_compute_api:os-flavor-manage:create');
    t.validateBody(createSchema(mv.atLeast(req, '2.55')), req.body);
    const spec = asRecord(asRecord(req.body)['flavor']);
    const name = String(spec['name']).trim();
    const id = typeof spec['id'] === 'string' ? spec['id'] : uuid();
    if ([...store.byId.values()].some((f) => f.name === name)) {
      throw new SimError(409, `Flavor with name ${name} already exists.`);
    }
    if (store.byId.has(id)) throw new SimError(409, `Flavor with ID ${id} already exists.`);
    const isPublicRaw = spec['os-flavor-access:is_public'];
    const f = store.add({
      id,
      name,
      ram: Number(spec['ram']),
      vcpus: Number(spec['vcpus']),
      disk: Number(spec['disk']),
      swap: Number(spec['swap'] ?? 0),
      ephemeral: Number(spec['OS-FLV-EXT-DATA:ephemeral'] ?? 0),
      rxtx_factor: Number(spec['rxtx_factor'] ?? 1.0),
      is_public: isPublicRaw === undefined ? true : t.truthy(isPublicRaw),
      description: typeof spec['description'] === 'string' ? spec['description'] : null,
    });
    changed();
    return json(200, { flavor: detail(req, f) });
  };

  const update = (req: SimRequest): SimResponse => {
    if (!mv.atLeast(req, '2.55')) throw new SimError(404, 'The resource could not be found.');
    requireAdmin(req, 'os_compute_api:os-flavor-manage:update');
    t.validateBody(
      {
        type: 'object',
        properties: {
          flavor: {
            type: 'object',
            properties: { description: t.description },
            required: ['description'],
            additionalProperties: false,
          },
        },
        required: ['flavor'],
        additionalProperties: false,
      },
      req.body,
    );
    const f = get(req, req.params['flavor_id']!);
    const d = asRecord(asRecord(req.body)['flavor'])['description'];
    f.description = typeof d === 'string' ? d : null;
    changed();
    return json(200, { flavor: detail(req, f) });
  };

  const remove = (req: SimRequest): SimResponse => {
    requireAdmin(req, 'os_compute_api:os-flavor-manage:delete');
    const id = req.params['flavor_id']!;
    if (!store.byId.delete(id)) throw flavorNotFound(id);
    changed();
    return empty(202);
  };

  const specs = (req: SimRequest): FlavorRecord => get(req, req.params['flavor_id']!);

  const setSpecs = (req: SimRequest): SimResponse => {
    requireAdmin(req, 'os_compute_api:os-flavor-extra-specs:create');
    t.validateBody(extraSpecsSchema, req.body);
    const f = specs(req);
    const given = asRecord(asRecord(req.body)['extra_specs']);
    for (const [k, v] of Object.entries(given)) f.extra_specs[k] = String(v);
    changed();
    return json(200, {
      extra_specs: Object.fromEntries(Object.entries(given).map(([k, v]) => [k, String(v)])),
    });
  };

  const putSpec = (req: SimRequest): SimResponse => {
    requireAdmin(req, 'os_compute_api:os-flavor-extra-specs:update');
    const f = specs(req);
    const key = req.params['key']!;
    const body = asRecord(req.body);
    const keys = Object.keys(body);
    if (!keys.includes(key)) throw new SimError(400, 'Request body and URI mismatch');
    if (keys.length > 1) throw new SimError(400, 'Request body contains too many items');
    f.extra_specs[key] = String(body[key]);
    changed();
    return json(200, { [key]: f.extra_specs[key] });
  };

  const specMissing = (f: FlavorRecord, key: string) =>
    new SimError(404, `Flavor ${f.id} has no extra specs with key ${key}.`);

  return [
    { method: 'GET', template: '/v2.1/flavors', handler: (req) => list(req, false) },
    { method: 'GET', template: '/v2.1/flavors/detail', handler: (req) => list(req, true) },
    { method: 'POST', template: '/v2.1/flavors', handler: create },
    {
      method: 'GET',
      template: '/v2.1/flavors/{flavor_id}',
      handler: (req) => json(200, { flavor: detail(req, get(req, req.params['flavor_id']!)) }),
    },
    { method: 'PUT', template: '/v2.1/flavors/{flavor_id}', handler: update },
    { method: 'DELETE', template: '/v2.1/flavors/{flavor_id}', handler: remove },
    {
      method: 'GET',
      template: '/v2.1/flavors/{flavor_id}/os-extra_specs',
      handler: (req) => json(200, { extra_specs: { ...specs(req).extra_specs } }),
    },
    { method: 'POST', template: '/v2.1/flavors/{flavor_id}/os-extra_specs', handler: setSpecs },
    {
      method: 'GET',
      template: '/v2.1/flavors/{flavor_id}/os-extra_specs/{key}',
      handler: (req) => {
        const f = specs(req);
        const key = req.params['key']!;
        const v = f.extra_specs[key];
        if (v === undefined) throw specMissing(f, key);
        return json(200, { [key]: v });
      },
    },
    { method: 'PUT', template: '/v2.1/flavors/{flavor_id}/os-extra_specs/{key}', handler: putSpec },
    {
      method: 'DELETE',
      template: '/v2.1/flavors/{flavor_id}/os-extra_specs/{key}',
      handler: (req) => {
        requireAdmin(req, 'os_compute_api:os-flavor-extra-specs:delete');
        const f = specs(req);
        const key = req.params['key']!;
        if (!(key in f.extra_specs)) throw specMissing(f, key);
        delete f.extra_specs[key];
        changed();
        return empty(202);
      },
    },
  ];
}
