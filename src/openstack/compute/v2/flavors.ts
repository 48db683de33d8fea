/**
 * Nova flavors: list, get, find by name; create and delete for admins.
 * https://docs.openstack.org/api-ref/compute/#flavors
 */
import type { CallOptions } from '../../core/call-options.ts';
import { NegotiatingPager } from '../../core/microversion.ts';
import type { Pager } from '../../core/pagination.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { computeMicroversion } from './microversion.ts';
import type { Link } from './servers.ts';

export interface Flavor {
  id: string;
  name: string;
  vcpus: number;
  /** MiB. */
  ram: number;
  /** GiB; 0 means the image's size (boot from volume flavors). */
  disk: number;
  /** MiB, or "" for none. */
  swap: number | '';
  'OS-FLV-EXT-DATA:ephemeral': number;
  'os-flavor-access:is_public': boolean;
  'OS-FLV-DISABLED:disabled'?: boolean;
  rxtx_factor?: number;
  /** @microversion 2.55 */
  description?: string | null;
  /** @microversion 2.61 */
  extra_specs?: Record<string, string>;
  links: Link[];
}

export interface FlavorListQuery {
  /** `true` (default for non-admins), `false`, or `'None'` for both (admins). */
  is_public?: boolean | 'None';
  minDisk?: number;
  minRam?: number;
  limit?: number;
  marker?: string;
  sort_key?: string;
  sort_dir?: 'asc' | 'desc';
}

export interface FlavorCreateOpts {
  name: string;
  vcpus: number;
  ram: number;
  disk: number;
  /** Generated when absent. */
  id?: string;
  swap?: number;
  'OS-FLV-EXT-DATA:ephemeral'?: number;
  'os-flavor-access:is_public'?: boolean;
  rxtx_factor?: number;
  /** @microversion 2.55 */
  description?: string;
  [field: string]: unknown;
}

const item = (id: string) => `flavors/${encodeURIComponent(id)}`;

/** `GET /flavors/detail`, every page. */
export function listFlavors(
  sc: ServiceClient,
  query: FlavorListQuery = {},
  options: CallOptions = {},
): Pager<Flavor> {
  return new NegotiatingPager<Flavor>({
    client: sc,
    negotiate: computeMicroversion,
    path: 'flavors/detail',
    query: { ...query },
    collection: 'flavors',
    strategy: 'links',
    label: 'flavor_list',
    signal: options.signal,
  });
}

/** `GET /flavors/{id}`. */
export async function getFlavor(sc: ServiceClient, id: string, options: CallOptions = {}): Promise<Flavor> {
  await computeMicroversion(sc, options.signal);
  const res = await sc.request<{ flavor: Flavor }>({
    method: 'GET',
    path: item(id),
    label: 'flavor_get',
    signal: options.signal,
  });
  return res.body.flavor;
}

/**
 * The flavor with exactly this name, or undefined. Nova keeps flavor names unique, so there is at
 * most one. Nova has no name filter: this reads the list (the flavors the caller may use).
 */
export async function findFlavorByName(
  sc: ServiceClient,
  name: string,
  options: CallOptions = {},
): Promise<Flavor | undefined> {
  for await (const page of listFlavors(sc, {}, options).pages()) {
    const found = page.items.find((f) => f.name === name);
    if (found) return found;
  }
  return undefined;
}

/** `POST /flavors` (admin) → the flavor. */
export async function createFlavor(
  sc: ServiceClient,
  flavor: FlavorCreateOpts,
  options: CallOptions = {},
): Promise<Flavor> {
  await computeMicroversion(sc, options.signal);
  const res = await sc.request<{ flavor: Flavor }>({
    method: 'POST',
    path: 'flavors',
    body: { flavor },
    label: 'flavor_create',
    signal: options.signal,
  });
  return res.body.flavor;
}

/** `DELETE /flavors/{id}` (admin) → 202. Servers using it keep their embedded copy. */
export async function deleteFlavor(sc: ServiceClient, id: string, options: CallOptions = {}): Promise<void> {
  await computeMicroversion(sc, options.signal);
  await sc.request({
    method: 'DELETE',
    path: item(id),
    label: 'flavor_delete',
    signal: options.signal,
    expect: [202],
    responseType: 'bytes',
  });
}
