/**
 * Neutron's resources all share one shape: `POST /v2.0/<plural>` with `{"<key>": {…}}` (or
 * `{"<plural>": […]}` for a bulk create), `GET|PUT|DELETE /v2.0/<plural>/<id>`, lists with
 * `<plural>_links` pagination, filters as query parameters, and `If-Match: revision_number=N` on
 * writes. `neutronResource` declares one resource and derives its typed CRUD from that; the unusual
 * actions (trunk subports, router interfaces) are written by hand next to the declaration.
 * https://docs.openstack.org/api-ref/network/v2/
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { Pager } from '../../core/pagination.ts';
import { collectionCalls, listQuery, unwrap, type CollectionNames } from '../../core/resource.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import type { Query } from '../../core/url.ts';

export type { TagFilters } from '../../core/resource.ts';

/** Options of a write that Neutron can make conditional on the object's revision (the `revision-if-match` extension). */
export interface RevisionOptions extends CallOptions {
  /**
   * Sent as `If-Match: revision_number=N`: the write applies only if the object is still at revision
   * N, else Neutron answers 412 (`isPreconditionFailed`), so two writers never overwrite each other blindly.
   */
  ifRevision?: number | undefined;
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

export function revisionHeaders(options: RevisionOptions): Record<string, string> | undefined {
  return options.ifRevision === undefined
    ? undefined
    : { 'If-Match': `revision_number=${options.ifRevision}` };
}

/** `key` (`security_group_rule`), `collection` (`security_group_rules`), `label` (`floating_ip`) and where it lives. */
export interface NeutronResourceSpec<Q> extends CollectionNames {
  /** The collection path below `/v2.0`: `ports`, `security-group-rules`. */
  path: string;
  /** Turns the typed query into query parameters; `listQuery` by default. */
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
  const { path, collection, label } = spec;
  const calls = collectionCalls<T, C, U, Q>(spec, spec.query ?? listQuery);
  const resource: NeutronResource<T, C, U, Q> = {
    spec,
    list: (sc, query, options) => calls.list(sc, path, query, options),
    get: (sc, id, options) => calls.get(sc, path, id, options),
    create: (sc, opts, options) => calls.create(sc, path, opts, options),
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
      const items = unwrap(res.body, collection);
      return spec.read ? items.map((item) => spec.read?.(item) as T) : items;
    },
    update: (sc, id, opts, options = {}) =>
      calls.update(sc, path, id, opts, options, revisionHeaders(options)),
    delete: (sc, id, options = {}) => calls.delete(sc, path, id, options, revisionHeaders(options)),
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
