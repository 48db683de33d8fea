/**
 * Octavia's resources share one shape: `POST /v2/lbaas/<plural>` with `{"<key>": {…}}` → 201,
 * `GET|PUT|DELETE /v2/lbaas/<plural>/<id>` (200, 200, 204), lists with `<plural>_links`. Members and
 * L7 rules live under their parent (`lbaas/pools/{pool_id}/members`). `octaviaResource` and
 * `octaviaChildResource` declare one and derive the typed CRUD; the unusual calls (cascade delete,
 * failover, the batch member update) are written by hand next to the declaration.
 *
 * Every write to a load balancer or a child of it returns at once and takes the load balancer
 * through PENDING_* → ACTIVE; a write while it is PENDING_* is a 409 ("immutable"), which no
 * retry in the transport papers over: wait for the load balancer (or requeue), then write.
 * https://docs.openstack.org/api-ref/load-balancer/v2/
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { Pager } from '../../core/pagination.ts';
import { collectionCalls, listQuery, type CollectionNames, type TagFilters } from '../../core/resource.ts';
import type { ServiceClient } from '../../core/service-client.ts';

export type { TagFilters };

/** Paging and sorting parameters of every Octavia list. `limit` is the page size. */
export interface ListParams {
  limit?: number | undefined;
  marker?: string | undefined;
  page_reverse?: boolean | undefined;
  /** `name:asc,created_at:desc` */
  sort?: string | undefined;
  fields?: readonly string[] | undefined;
}

/** Statuses every Octavia object has. */
export type ProvisioningStatus =
  'ACTIVE' | 'DELETED' | 'ERROR' | 'PENDING_CREATE' | 'PENDING_UPDATE' | 'PENDING_DELETE';
export type OperatingStatus = 'ONLINE' | 'DRAINING' | 'OFFLINE' | 'DEGRADED' | 'ERROR' | 'NO_MONITOR';

/** The filters every Octavia object's list takes besides its own fields: paging, tags, id, name, owner, statuses. */
export interface ObjectListQuery extends ListParams, TagFilters {
  id?: string;
  name?: string;
  project_id?: string;
  provisioning_status?: ProvisioningStatus;
  operating_status?: OperatingStatus;
}

/**
 * `key` (`healthmonitor`), `label` (OCCM's: `loadbalancer_healthmonitor`) and `collection`, which is
 * also the path below `lbaas/` (`healthmonitors`).
 */
export type OctaviaResourceSpec = CollectionNames;

export interface OctaviaResource<T, C, U, Q> {
  readonly spec: OctaviaResourceSpec;
  /** Every page followed (`<resource>_list`). */
  list: (sc: ServiceClient, query?: Q, options?: CallOptions) => Pager<T>;
  /** A missing object is an OpenStackHttpError with `isNotFound`; another project's is a 403 (`<resource>_get`). */
  get: (sc: ServiceClient, id: string, options?: CallOptions) => Promise<T>;
  /** 201 with the object in PENDING_CREATE (`<resource>_create`). */
  create: (sc: ServiceClient, opts: C, options?: CallOptions) => Promise<T>;
  /** 200 with the object in PENDING_UPDATE (`<resource>_update`). */
  update: (sc: ServiceClient, id: string, opts: U, options?: CallOptions) => Promise<T>;
  /** 204; the object goes PENDING_DELETE, then 404 (`<resource>_delete`). */
  delete: (sc: ServiceClient, id: string, options?: CallOptions) => Promise<void>;
  bind: (sc: ServiceClient) => BoundOctaviaResource<T, C, U, Q>;
}

export interface BoundOctaviaResource<T, C, U, Q> {
  list: (query?: Q, options?: CallOptions) => Pager<T>;
  get: (id: string, options?: CallOptions) => Promise<T>;
  create: (opts: C, options?: CallOptions) => Promise<T>;
  update: (id: string, opts: U, options?: CallOptions) => Promise<T>;
  delete: (id: string, options?: CallOptions) => Promise<void>;
}

/** A top-level Octavia resource: `lbaas/<collection>`. */
export function octaviaResource<T, C, U, Q extends object>(
  spec: OctaviaResourceSpec,
): OctaviaResource<T, C, U, Q> {
  const calls = collectionCalls<T, C, U, Q>(spec, listQuery);
  const path = `lbaas/${spec.collection}`;
  const resource: OctaviaResource<T, C, U, Q> = {
    spec,
    list: (sc, query, options) => calls.list(sc, path, query, options),
    get: (sc, id, options) => calls.get(sc, path, id, options),
    create: (sc, opts, options) => calls.create(sc, path, opts, options),
    update: (sc, id, opts, options) => calls.update(sc, path, id, opts, options),
    delete: (sc, id, options) => calls.delete(sc, path, id, options),
    bind: (sc) => ({
      list: (query, options) => resource.list(sc, query, options),
      get: (id, options) => resource.get(sc, id, options),
      create: (opts, options) => resource.create(sc, opts, options),
      update: (id, opts, options) => resource.update(sc, id, opts, options),
      delete: (id, options) => resource.delete(sc, id, options),
    }),
  };
  return resource;
}

export interface OctaviaChildResource<T, C, U, Q> {
  readonly spec: OctaviaResourceSpec & { parent: string };
  list: (sc: ServiceClient, parentId: string, query?: Q, options?: CallOptions) => Pager<T>;
  get: (sc: ServiceClient, parentId: string, id: string, options?: CallOptions) => Promise<T>;
  create: (sc: ServiceClient, parentId: string, opts: C, options?: CallOptions) => Promise<T>;
  update: (sc: ServiceClient, parentId: string, id: string, opts: U, options?: CallOptions) => Promise<T>;
  delete: (sc: ServiceClient, parentId: string, id: string, options?: CallOptions) => Promise<void>;
  bind: (sc: ServiceClient) => BoundOctaviaChildResource<T, C, U, Q>;
}

export interface BoundOctaviaChildResource<T, C, U, Q> {
  list: (parentId: string, query?: Q, options?: CallOptions) => Pager<T>;
  get: (parentId: string, id: string, options?: CallOptions) => Promise<T>;
  create: (parentId: string, opts: C, options?: CallOptions) => Promise<T>;
  update: (parentId: string, id: string, opts: U, options?: CallOptions) => Promise<T>;
  delete: (parentId: string, id: string, options?: CallOptions) => Promise<void>;
}

/** A resource below a parent object: `lbaas/<parent>/{parent_id}/<collection>` (members of a pool, rules of a policy). */
export function octaviaChildResource<T, C, U, Q extends object>(
  spec: OctaviaResourceSpec & { parent: string },
): OctaviaChildResource<T, C, U, Q> {
  const calls = collectionCalls<T, C, U, Q>(spec, listQuery);
  const path = (parentId: string) =>
    `lbaas/${spec.parent}/${encodeURIComponent(parentId)}/${spec.collection}`;
  const resource: OctaviaChildResource<T, C, U, Q> = {
    spec,
    list: (sc, parentId, query, options) => calls.list(sc, path(parentId), query, options),
    get: (sc, parentId, id, options) => calls.get(sc, path(parentId), id, options),
    create: (sc, parentId, opts, options) => calls.create(sc, path(parentId), opts, options),
    update: (sc, parentId, id, opts, options) => calls.update(sc, path(parentId), id, opts, options),
    delete: (sc, parentId, id, options) => calls.delete(sc, path(parentId), id, options),
    bind: (sc) => ({
      list: (parentId, query, options) => resource.list(sc, parentId, query, options),
      get: (parentId, id, options) => resource.get(sc, parentId, id, options),
      create: (parentId, opts, options) => resource.create(sc, parentId, opts, options),
      update: (parentId, id, opts, options) => resource.update(sc, parentId, id, opts, options),
      delete: (parentId, id, options) => resource.delete(sc, parentId, id, options),
    }),
  };
  return resource;
}
