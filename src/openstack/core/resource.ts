/**
 * What Neutron's and Octavia's resources have in common: an object sent and answered wrapped in
 * its singular key (`{"port": {…}}`), a list under its plural with `<plural>_links`, tag filters
 * written comma-separated, and the same five calls on a collection path. `network/v2/resource.ts`
 * and `loadbalancer/v2/resource.ts` build their resource declarations on these, so a fix to one
 * call reaches both services.
 */
import type { CallOptions } from './call-options.ts';
import { Pager } from './pagination.ts';
import type { ServiceClient } from './service-client.ts';
import type { Query, QueryValue } from './url.ts';

/** The tag filters of every taggable Neutron and Octavia (API 2.5+) resource; a list is sent comma-separated. */
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

const TAG_FILTERS = new Set(['tags', 'tags-any', 'not-tags', 'not-tags-any']);

/**
 * A list query as Neutron and Octavia read it: tag filters comma-separated, other lists repeated
 * (`?id=a&id=b` matches either id), undefined left out.
 */
export function listQuery(query: object): Query {
  const out: Record<string, QueryValue> = {};
  for (const [key, value] of Object.entries(query) as [string, unknown][]) {
    if (value === undefined) continue;
    if (TAG_FILTERS.has(key) && Array.isArray(value)) out[key] = value.join(',');
    else out[key] = value as QueryValue;
  }
  return out;
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

/** How one resource is named on the wire and in metrics. */
export interface CollectionNames {
  /** The body key of one object: `port`, `listener`. */
  key: string;
  /** The body key of a list: `ports`, `listeners`. */
  collection: string;
  /** The metrics resource name, OCCM's where OCCM has one; each call adds `_list`, `_get`, …. */
  label: string;
  /**
   * Turns an object as the service sent it into `T`, where the wire differs from the type: real
   * Neutron sends a subnet pool's prefix lengths as strings. Applied to every object a call returns.
   */
  read?: ((wire: unknown) => unknown) | undefined;
}

/**
 * The five calls of one resource, each taking the collection path, so that a service can root it
 * where it lives (`ports`, `lbaas/listeners`, `lbaas/pools/{id}/members`). `headers` on a write
 * carries a service's conditions (Neutron's `If-Match: revision_number=N`).
 */
export function collectionCalls<T, C, U, Q>(names: CollectionNames, toQuery: (query: Q) => Query) {
  const { key, collection, label } = names;
  const read = (value: T): T => (names.read ? (names.read(value) as T) : value);
  const item = (path: string, id: string) => `${path}/${encodeURIComponent(id)}`;
  return {
    /** `GET <path>`, every page followed (`<label>_list`). */
    list: (sc: ServiceClient, path: string, query: Q | undefined, options: CallOptions = {}) =>
      new Pager<T>({
        client: sc,
        path,
        query: query ? toQuery(query) : undefined,
        collection,
        strategy: 'links',
        label: `${label}_list`,
        signal: options.signal,
        read: names.read,
      }),
    /** `GET <path>/<id>` (`<label>_get`). */
    async get(sc: ServiceClient, path: string, id: string, options: CallOptions = {}): Promise<T> {
      const res = await sc.request<Record<string, T>>({
        method: 'GET',
        path: item(path, id),
        label: `${label}_get`,
        signal: options.signal,
      });
      return read(unwrap(res.body, key));
    },
    /** `POST <path>` → 201 (`<label>_create`). */
    async create(sc: ServiceClient, path: string, opts: C, options: CallOptions = {}): Promise<T> {
      const res = await sc.request<Record<string, T>>({
        method: 'POST',
        path,
        body: { [key]: opts },
        label: `${label}_create`,
        signal: options.signal,
        expect: [201],
      });
      return read(unwrap(res.body, key));
    },
    /** `PUT <path>/<id>` → 200 and the object as updated (`<label>_update`). */
    async update(
      sc: ServiceClient,
      path: string,
      id: string,
      opts: U,
      options: CallOptions = {},
      headers?: Record<string, string>,
    ): Promise<T> {
      const res = await sc.request<Record<string, T>>({
        method: 'PUT',
        path: item(path, id),
        body: { [key]: opts },
        headers,
        label: `${label}_update`,
        signal: options.signal,
      });
      return read(unwrap(res.body, key));
    },
    /** `DELETE <path>/<id>` → 204 (`<label>_delete`). */
    async delete(
      sc: ServiceClient,
      path: string,
      id: string,
      options: CallOptions = {},
      headers?: Record<string, string>,
    ): Promise<void> {
      await sc.request({
        method: 'DELETE',
        path: item(path, id),
        headers,
        label: `${label}_delete`,
        signal: options.signal,
        expect: [204],
      });
    },
  };
}
