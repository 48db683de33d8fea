/** Placement HTTP handlers: each checks its microversion range, then the admin-only policy. */
import { SimError } from '../core/errors.ts';
import type { Route, SimRequest, SimResponse } from '../core/types.ts';
import { RESOURCE_CLASSES } from './catalog.ts';
import { badRequest, policyDenied, providerNotFound } from './errors.ts';
import { MAX_VERSION, MIN_VERSION, type Microversions } from './microversion.ts';
import { capacity, type PlacementStore, type ProviderRecord, type Resources } from './store.ts';

interface Op {
  method: string;
  template: string;
  /** Lowest microversion serving the route; below it the route does not exist (404). */
  since: number;
  rule: string;
  handler: (req: SimRequest, minor: number) => SimResponse;
}

export function placementRoutes(store: PlacementStore, mv: Microversions): Route[] {
  const provider = (req: SimRequest): ProviderRecord => {
    const id = req.params.uuid ?? '';
    const rp = store.provider(id);
    if (!rp) throw providerNotFound(id);
    return rp;
  };
  const ok = (body: unknown, lastModified?: number): SimResponse => ({
    status: 200,
    body,
    ...(lastModified !== undefined
      ? { headers: { 'last-modified': new Date(lastModified).toUTCString() } }
      : {}),
  });

  const ops: Op[] = [
    {
      method: 'GET',
      template: '/resource_providers',
      since: 0,
      rule: 'placement:resource_providers:list',
      handler: (req, minor) => {
        const list = listProviders(store, req.query, minor);
        const latest = list.reduce((m, rp) => Math.max(m, rp.updated_at), 0);
        return ok({ resource_providers: list.map((rp) => providerView(rp, minor)) }, latest || Date.now());
      },
    },
    {
      method: 'GET',
      template: '/resource_providers/{uuid}',
      since: 0,
      rule: 'placement:resource_providers:show',
      handler: (req, minor) => {
        const rp = provider(req);
        return ok(providerView(rp, minor), rp.updated_at);
      },
    },
    {
      method: 'GET',
      template: '/resource_providers/{uuid}/inventories',
      since: 0,
      rule: 'placement:resource_providers:inventories:list',
      handler: (req) => {
        const rp = provider(req);
        return ok(
          { resource_provider_generation: rp.generation, inventories: rp.inventories },
          rp.updated_at,
        );
      },
    },
    {
      method: 'GET',
      template: '/resource_providers/{uuid}/inventories/{resource_class}',
      since: 0,
      rule: 'placement:resource_providers:inventories:show',
      handler: (req) => {
        const rp = provider(req);
        const rc = req.params.resource_class ?? '';
        const inv = rp.inventories[rc];
        if (!inv)
          throw new SimError(404, `No inventory of class ${rc} for ${rp.uuid}`, {
            type: 'placement.undefined_code',
          });
        return ok({ resource_provider_generation: rp.generation, ...inv }, rp.updated_at);
      },
    },
    {
      method: 'GET',
      template: '/resource_providers/{uuid}/usages',
      since: 0,
      rule: 'placement:resource_providers:usages',
      handler: (req) => {
        const rp = provider(req);
        return ok({ resource_provider_generation: rp.generation, usages: store.usage(rp) }, rp.updated_at);
      },
    },
    {
      method: 'GET',
      template: '/resource_providers/{uuid}/traits',
      since: 6,
      rule: 'placement:resource_providers:traits:list',
      handler: (req) => {
        const rp = provider(req);
        return ok({ traits: rp.traits, resource_provider_generation: rp.generation }, rp.updated_at);
      },
    },
    {
      method: 'GET',
      template: '/resource_providers/{uuid}/aggregates',
      since: 1,
      rule: 'placement:resource_providers:aggregates:list',
      handler: (req, minor) => {
        const rp = provider(req);
        const body: Record<string, unknown> = { aggregates: rp.aggregates };
        if (minor >= 19) body.resource_provider_generation = rp.generation;
        return ok(body, rp.updated_at);
      },
    },
    {
      method: 'GET',
      template: '/resource_providers/{uuid}/allocations',
      since: 0,
      rule: 'placement:resource_providers:allocations:list',
      handler: (req) => {
        const rp = provider(req);
        const allocations: Record<string, { resources: Resources }> = {};
        for (const c of store.consumers.values()) {
          const res = c.allocations[rp.uuid];
          if (res) allocations[c.uuid] = { resources: res };
        }
        return ok({ resource_provider_generation: rp.generation, allocations }, rp.updated_at);
      },
    },
    {
      method: 'GET',
      template: '/traits',
      since: 6,
      rule: 'placement:traits:list',
      handler: (req) => ok({ traits: filterTraits(store, req.query) }, Date.now()),
    },
    {
      method: 'GET',
      template: '/traits/{name}',
      since: 6,
      rule: 'placement:traits:show',
      handler: (req) => {
        const name = req.params.name ?? '';
        if (!store.hasTrait(name))
          throw new SimError(404, `No such trait(s): ${name}`, { type: 'placement.undefined_code' });
        return { status: 204 };
      },
    },
    {
      method: 'PUT',
      template: '/traits/{name}',
      since: 6,
      rule: 'placement:traits:update',
      handler: (req) => {
        const name = req.params.name ?? '';
        const created = store.createTrait(name);
        return { status: created ? 201 : 204, headers: { location: `/traits/${name}` } };
      },
    },
    {
      method: 'GET',
      template: '/resource_classes',
      since: 2,
      rule: 'placement:resource_classes:list',
      handler: () =>
        ok(
          {
            resource_classes: RESOURCE_CLASSES.map((name) => ({
              name,
              links: [{ rel: 'self', href: `/resource_classes/${name}` }],
            })),
          },
          Date.now(),
        ),
    },
    {
      method: 'GET',
      template: '/usages',
      since: 9,
      rule: 'placement:usages',
      handler: (req) => {
        const project = req.query.get('project_id');
        if (project === null)
          throw badRequest("Invalid query string parameters: 'project_id' is a required property");
        return ok({ usages: store.projectUsage(project, req.query.get('user_id')) }, Date.now());
      },
    },
    {
      method: 'GET',
      template: '/allocation_candidates',
      since: 10,
      rule: 'placement:allocation_candidates:list',
      handler: (req, minor) => ok(allocationCandidates(store, req.query, minor), Date.now()),
    },
    {
      method: 'GET',
      template: '/allocations/{consumer_uuid}',
      since: 0,
      rule: 'placement:allocations:list',
      handler: (req, minor) => {
        const c = store.consumers.get(req.params.consumer_uuid ?? '');
        const allocations: Record<string, { generation: number; resources: Resources }> = {};
        for (const [rpId, resources] of Object.entries(c?.allocations ?? {})) {
          allocations[rpId] = { generation: store.provider(rpId)?.generation ?? 0, resources };
        }
        const body: Record<string, unknown> = { allocations };
        if (c && minor >= 12) {
          body.project_id = c.project_id;
          body.user_id = c.user_id;
        }
        if (c && minor >= 28) body.consumer_generation = c.generation;
        return ok(body, Date.now());
      },
    },
    {
      method: 'PUT',
      template: '/allocations/{consumer_uuid}',
      since: 0,
      rule: 'placement:allocations:update',
      handler: (req, minor) => {
        putAllocations(store, req.params.consumer_uuid ?? '', req.body, minor);
        return { status: 204 };
      },
    },
    {
      method: 'DELETE',
      template: '/allocations/{consumer_uuid}',
      since: 0,
      rule: 'placement:allocations:delete',
      handler: (req) => {
        const id = req.params.consumer_uuid ?? '';
        if (!store.deleteAllocations(id)) {
          throw new SimError(404, `No allocations for consumer '${id}'`, {
            type: 'placement.undefined_code',
          });
        }
        return { status: 204 };
      },
    },
  ];

  const routes: Route[] = ops.map((op) => ({
    method: op.method,
    template: op.template,
    handler: (req: SimRequest) => {
      const minor = mv.minor(req);
      if (minor < op.since)
        throw new SimError(404, 'The resource could not be found.', { type: 'HTTPNotFound' });
      if (!req.auth?.isAdmin) throw policyDenied(op.rule);
      return op.handler(req, minor);
    },
  }));
  routes.push({
    method: 'GET',
    template: '',
    public: true,
    handler: () => ({
      status: 200,
      body: {
        versions: [
          {
            id: 'v1.0',
            max_version: `${MAX_VERSION.major}.${MAX_VERSION.minor}`,
            min_version: `${MIN_VERSION.major}.${MIN_VERSION.minor}`,
            status: 'CURRENT',
            links: [{ rel: 'self', href: '' }],
          },
        ],
      },
    }),
  });
  return routes;
}

/** The provider document; links and tree fields grow with the microversion. */
function providerView(rp: ProviderRecord, minor: number): Record<string, unknown> {
  const base = `/resource_providers/${rp.uuid}`;
  const links = [
    { rel: 'self', href: base },
    { rel: 'inventories', href: `${base}/inventories` },
    { rel: 'usages', href: `${base}/usages` },
  ];
  if (minor >= 1) links.push({ rel: 'aggregates', href: `${base}/aggregates` });
  if (minor >= 6) links.push({ rel: 'traits', href: `${base}/traits` });
  if (minor >= 11) links.push({ rel: 'allocations', href: `${base}/allocations` });
  const out: Record<string, unknown> = { uuid: rp.uuid, name: rp.name, generation: rp.generation, links };
  if (minor >= 14) {
    out.parent_provider_uuid = rp.parent_provider_uuid;
    out.root_provider_uuid = rp.root_provider_uuid;
  }
  return out;
}

const PROVIDER_FILTERS: readonly [string, number][] = [
  ['name', 0],
  ['uuid', 0],
  ['member_of', 3],
  ['resources', 4],
  ['in_tree', 14],
  ['required', 18],
];

function listProviders(store: PlacementStore, query: URLSearchParams, minor: number): ProviderRecord[] {
  const allowed = new Set(PROVIDER_FILTERS.filter(([, since]) => minor >= since).map(([k]) => k));
  for (const key of query.keys()) {
    if (!allowed.has(key)) {
      throw badRequest(
        `Invalid query string parameters: Additional properties are not allowed ('${key}' was unexpected)`,
      );
    }
  }
  const name = query.get('name');
  const id = query.get('uuid');
  const inTree = query.get('in_tree');
  const resources = query.has('resources') ? parseResources(store, query.get('resources') ?? '') : undefined;
  const { required, forbidden } = parseTraits(query.getAll('required'));
  return [...store.providers.values()].filter((rp) => {
    if (name !== null && rp.name !== name) return false;
    if (id !== null && rp.uuid !== id) return false;
    if (inTree !== null && rp.root_provider_uuid !== (store.provider(inTree)?.root_provider_uuid ?? inTree))
      return false;
    if (query.has('member_of')) return false;
    if (!required.every((t) => rp.traits.includes(t)) || forbidden.some((t) => rp.traits.includes(t)))
      return false;
    return resources === undefined || store.fits(rp, resources);
  });
}

/** `name=startswith:PREFIX` or `name=in:A,B`, and `associated=true|false`. */
function filterTraits(store: PlacementStore, query: URLSearchParams): string[] {
  let traits = [...store.traits];
  const name = query.get('name');
  if (name !== null) {
    if (name.startsWith('startswith:')) {
      const prefix = name.slice('startswith:'.length);
      traits = traits.filter((t) => t.startsWith(prefix));
    } else if (name.startsWith('in:')) {
      const wanted = new Set(name.slice(3).split(','));
      traits = traits.filter((t) => wanted.has(t));
    } else {
      throw badRequest(
        `Badly formatted name parameter. Expected name query string parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. Got: "${name}"`,
      );
    }
  }
  const associated = query.get('associated');
  if (associated !== null) {
    const used = new Set([...store.providers.values()].flatMap((rp) => rp.traits));
    const want = associated.toLowerCase() === 'true';
    traits = traits.filter((t) => used.has(t) === want);
  }
  return traits;
}

function parseResources(store: PlacementStore, text: string): Resources {
  const out: Resources = {};
  const malformed = () =>
    badRequest(
      `Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: ${text}.`,
    );
  for (const part of text.split(',')) {
    const [rc, amount, ...rest] = part.split(':');
    if (!rc || amount === undefined || rest.length > 0 || !/^\d+$/.test(amount)) throw malformed();
    if (!store.isResourceClass(rc)) {
      throw badRequest(`Invalid resource class in resources parameter: No such resource class ${rc}.`);
    }
    const n = Number(amount);
    if (n < 1) {
      throw badRequest(`Requested resource ${rc} expected positive integer amount. Got: ${amount}.`);
    }
    out[rc] = n;
  }
  return out;
}

function parseTraits(values: string[]): { required: string[]; forbidden: string[] } {
  const required: string[] = [];
  const forbidden: string[] = [];
  for (const v of values.flatMap((x) => x.split(','))) {
    if (v === '') continue;
    if (v.startsWith('!')) forbidden.push(v.slice(1));
    else required.push(v);
  }
  return { required, forbidden };
}

/** One provider per candidate: the emulated cloud has no nested or shared providers. */
function allocationCandidates(store: PlacementStore, query: URLSearchParams, minor: number): unknown {
  const text = query.get('resources');
  if (text === null) {
    throw badRequest("Invalid query string parameters: 'resources' is a required property");
  }
  const resources = parseResources(store, text);
  const { required, forbidden } = parseTraits(minor >= 17 ? query.getAll('required') : []);
  let found = store.candidates(resources, required, forbidden);
  const limit = minor >= 16 ? query.get('limit') : null;
  if (limit !== null) found = found.slice(0, Math.max(0, Number(limit)));
  const allocationRequests = found.map((rp) => {
    if (minor < 12) {
      return { allocations: [{ resource_provider: { uuid: rp.uuid }, resources }] };
    }
    const request: Record<string, unknown> = { allocations: { [rp.uuid]: { resources } } };
    if (minor >= 34) request.mappings = { '': [rp.uuid] };
    return request;
  });
  const summaries: Record<string, unknown> = {};
  for (const rp of found) {
    const used = store.usage(rp);
    const classes = minor >= 27 ? Object.keys(rp.inventories) : Object.keys(resources);
    const summary: Record<string, unknown> = {
      resources: Object.fromEntries(
        classes.map((rc) => [rc, { capacity: capacity(rp.inventories[rc]!), used: used[rc] ?? 0 }]),
      ),
    };
    if (minor >= 17) summary.traits = rp.traits;
    if (minor >= 29) {
      summary.parent_provider_uuid = rp.parent_provider_uuid;
      summary.root_provider_uuid = rp.root_provider_uuid;
    }
    summaries[rp.uuid] = summary;
  }
  return { allocation_requests: allocationRequests, provider_summaries: summaries };
}

/** PUT /allocations/{consumer}: the list format before 1.12, the dict format after. */
function putAllocations(store: PlacementStore, consumer: string, body: unknown, minor: number): void {
  const doc = body as Record<string, unknown> | undefined;
  if (doc === undefined || doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    throw badRequest('Malformed JSON in request body.');
  }
  const allocations: Record<string, Resources> = {};
  if (minor < 12) {
    if (!Array.isArray(doc.allocations))
      throw badRequest("JSON does not validate: 'allocations' is a required property");
    for (const item of doc.allocations as {
      resource_provider?: { uuid?: string };
      resources?: Resources;
    }[]) {
      const id = item.resource_provider?.uuid;
      if (!id || !item.resources) throw badRequest('JSON does not validate: malformed allocation');
      allocations[id] = { ...allocations[id], ...item.resources };
    }
  } else {
    const raw = doc.allocations;
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      throw badRequest("JSON does not validate: 'allocations' is a required property");
    }
    for (const [id, entry] of Object.entries(raw as Record<string, { resources?: Resources }>)) {
      if (!entry?.resources) throw badRequest("JSON does not validate: 'resources' is a required property");
      allocations[id] = entry.resources;
    }
    for (const key of ['project_id', 'user_id']) {
      if (typeof doc[key] !== 'string')
        throw badRequest(`JSON does not validate: '${key}' is a required property`);
    }
  }
  for (const res of Object.values(allocations)) {
    for (const [rc, n] of Object.entries(res)) {
      if (!Number.isInteger(n) || n < 1)
        throw badRequest(`JSON does not validate: ${String(n)} is less than the minimum of 1`);
      if (!store.isResourceClass(rc)) throw badRequest(`Unable to find resource class ${rc}`);
    }
  }
  let expected: number | null | undefined;
  if (minor >= 28) {
    if (!('consumer_generation' in doc)) {
      throw badRequest("JSON does not validate: 'consumer_generation' is a required property");
    }
    expected = doc.consumer_generation as number | null;
  }
  store.setAllocations(
    consumer,
    {
      project_id: typeof doc.project_id === 'string' ? doc.project_id : '',
      user_id: typeof doc.user_id === 'string' ? doc.user_id : '',
      allocations,
    },
    expected,
  );
}
