/**
 * Neutron's resources all share one shape: `POST /v2.0/<plural>` with `{"<key>": {…}}` (or
 * `{"<plural>": […]}` for a bulk create), `GET|PUT|DELETE /v2.0/<plural>/<id>`, lists with
 * `<plural>_links` pagination, filters as query parameters, and `If-Match: revision_number=N` on
 * writes. `neutronResource` declares one resource and derives its typed CRUD from that; the unusual
 * actions (trunk subports, router interfaces) are written by hand next to the declaration.
 * https://docs.openstack.org/api-ref/network/v2/
 */
import type { CallOptions } from '../../core/call-options.ts';
import { Pager } from '../../core/pagination.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import type { Query, QueryValue } from '../../core/url.ts';

/** Options of a write that Neutron can make conditional on the object's revision (the `revision-if-match` extension). */
export interface RevisionOptions extends CallOptions {
  /**
   * Sent as `If-Match: revision_number=N`: the write applies only if the object is still at revision
   * N, else Neutron answers 412 (`isPreconditionFailed`), so two writers never overwrite each other blindly.
   */
  ifRevision?: number | undefined;
}

/** The tag filters every taggable Neutron (and Octavia) resource accepts; a list is sent comma-separated. */
export interface TagFilters {
  /** Objects having all of these tags. */
  tags?: readonly string[] | undefined;
  /** Objects having any of these tags. */
  'tags-any'?: readonly string[] | undefined;
  /** Objects not having all of these tags. */
  'not-tags'?: readonly string[] | undefined;
  /** Objects having none of these tags. */
  'not-tags-any'?: readonly string[] | undefined;
}

/** Paging and sorting parameters of every Neutron list. `limit` is the page size, not a cap on the result. */
export interface ListParams {
  limit?: number | undefined;
  marker?: string | undefined;
  sort_key?: string | readonly string[] | undefined;
  sort_dir?: 'asc' | 'desc' | readonly ('asc' | 'desc')[] | undefined;
  /** Return only these fields (the id is always wise to include). */
  fields?: readonly string[] | undefined;
}

const TAG_FILTERS = new Set(['tags', 'tags-any', 'not-tags', 'not-tags-any']);

/**
 * A list query as Neutron reads it: tag filters comma-separated, other lists repeated
 * (`?id=a&id=b` matches either id), undefined left out.
 */
export function neutronQuery(query: object): Query {
  const out: Record<string, QueryValue> = {};
  for (const [key, value] of Object.entries(query) as [string, unknown][]) {
    if (value === undefined) continue;
    if (TAG_FILTERS.has(key) && Array.isArray(value)) out[key] = value.join(',');
    else out[key] = value as QueryValue;
  }
  return out;
}

export function revisionHeaders(options: RevisionOptions): Record<string, string> | undefined {
  return options.ifRevision === undefined
    ? undefined
    : { 'If-Match': `revision_number=${options.ifRevision}` };
}

export interface NeutronResourceSpec<Q> {
  /** The collection path below `/v2.0`: `ports`, `security-group-rules`. */
  path: string;
  /** The body key of one object: `port`, `security_group_rule`. */
  key: string;
  /** The body key of a list: `ports`, `security_group_rules`. */
  collection: string;
  /** The metrics resource name, OCCM's where OCCM has one: `port`, `floating_ip`. */
  label: string;
  /** Turns the typed query into query parameters; `neutronQuery` by default. */
  query?: ((query: Q) => Query) | undefined;
}

/** The CRUD of one Neutron resource, each function taking the ServiceClient first. */
export interface NeutronResource<T, C, U, Q> {
  readonly spec: NeutronResourceSpec<Q>;
  /** `GET /v2.0/<plural>` with filters, every page followed (`<resource>_list`). */
  list: (sc: ServiceClient, query?: Q, options?: CallOptions) => Pager<T>;
  /** `GET /v2.0/<plural>/<id>`; a missing object is an OpenStackHttpError with `isNotFound` (`<resource>_get`). */
  get: (sc: ServiceClient, id: string, options?: CallOptions) => Promise<T>;
  /** `POST /v2.0/<plural>` → 201 (`<resource>_create`). */
  create: (sc: ServiceClient, opts: C, options?: CallOptions) => Promise<T>;
  /**
   * `POST /v2.0/<plural>` with a list → 201 and the objects in request order (`<resource>_bulk_create`).
   * All or nothing: if one item fails (a 409 on an address), Neutron rolls the whole batch back.
   */
  createBulk: (sc: ServiceClient, opts: readonly C[], options?: CallOptions) => Promise<T[]>;
  /** `PUT /v2.0/<plural>/<id>` → 200 and the object as updated (`<resource>_update`). */
  update: (sc: ServiceClient, id: string, opts: U, options?: RevisionOptions) => Promise<T>;
  /** `DELETE /v2.0/<plural>/<id>` → 204 (`<resource>_delete`). */
  delete: (sc: ServiceClient, id: string, options?: RevisionOptions) => Promise<void>;
  /** The same operations bound to one ServiceClient, as the `client.network` namespace holds them. */
  bind: (sc: ServiceClient) => BoundNeutronResource<T, C, U, Q>;
}

export interface BoundNeutronResource<T, C, U, Q> {
  list: (query?: Q, options?: CallOptions) => Pager<T>;
  get: (id: string, options?: CallOptions) => Promise<T>;
  create: (opts: C, options?: CallOptions) => Promise<T>;
  createBulk: (opts: readonly C[], options?: CallOptions) => Promise<T[]>;
  update: (id: string, opts: U, options?: RevisionOptions) => Promise<T>;
  delete: (id: string, options?: RevisionOptions) => Promise<void>;
}

export function neutronResource<T, C, U, Q extends object>(
  spec: NeutronResourceSpec<Q>,
): NeutronResource<T, C, U, Q> {
  const { path, key, collection, label } = spec;
  const toQuery = spec.query ?? neutronQuery;
  const item = (id: string) => `${path}/${encodeURIComponent(id)}`;
  const resource: NeutronResource<T, C, U, Q> = {
    spec,
    list: (sc, query, options = {}) =>
      new Pager<T>({
        client: sc,
        path,
        query: query ? toQuery(query) : undefined,
        collection,
        strategy: 'links',
        label: `${label}_list`,
        signal: options.signal,
      }),
    async get(sc, id, options = {}) {
      const res = await sc.request<Record<string, T>>({
        method: 'GET',
        path: item(id),
        label: `${label}_get`,
        signal: options.signal,
      });
      return unwrap(res.body, key);
    },
    async create(sc, opts, options = {}) {
      const res = await sc.request<Record<string, T>>({
        method: 'POST',
        path,
        body: { [key]: opts },
        label: `${label}_create`,
        signal: options.signal,
        expect: [201],
      });
      return unwrap(res.body, key);
    },
    async createBulk(sc, opts, options = {}) {
      if (opts.length === 0) return [];
      const res = await sc.request<Record<string, T[]>>({
        method: 'POST',
        path,
        body: { [collection]: opts },
        label: `${label}_bulk_create`,
        signal: options.signal,
        expect: [201],
      });
      return unwrap(res.body, collection);
    },
    async update(sc, id, opts, options = {}) {
      const res = await sc.request<Record<string, T>>({
        method: 'PUT',
        path: item(id),
        body: { [key]: opts },
        headers: revisionHeaders(options),
        label: `${label}_update`,
        signal: options.signal,
      });
      return unwrap(res.body, key);
    },
    async delete(sc, id, options = {}) {
      await sc.request({
        method: 'DELETE',
        path: item(id),
        headers: revisionHeaders(options),
        label: `${label}_delete`,
        signal: options.signal,
        expect: [204],
      });
    },
    bind: (sc) => ({
      list: (query, options) => resource.list(sc, query, options),
      get: (id, options) => resource.get(sc, id, options),
      create: (opts, options) => resource.create(sc, opts, options),
      createBulk: (opts, options) => resource.createBulk(sc, opts, options),
      update: (id, opts, options) => resource.update(sc, id, opts, options),
      delete: (id, options) => resource.delete(sc, id, options),
    }),
  };
  return resource;
}

/** The object under `key`; a 2xx body without it is a broken server, said plainly rather than returned as undefined. */
export function unwrap<T>(body: Record<string, T> | undefined, key: string): T {
  const value = body?.[key];
  if (value === undefined) {
    throw new TypeError(
      `the answer has no "${key}" (keys: ${body ? Object.keys(body).join(', ') : 'none, empty body'})`,
    );
  }
  return value;
}
