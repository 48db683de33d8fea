/**
 * What an Octavia deployment offers: providers, availability zones, flavors, and its API versions
 * (the feature gates: tags need 2.5, flavors 2.6, allowed_cidrs 2.12, availability zones 2.14).
 * https://docs.openstack.org/api-ref/load-balancer/v2/#providers
 */
import type { ApiVersions } from '../../core/api-version.ts';
import type { CallOptions } from '../../core/call-options.ts';
import { Pager } from '../../core/pagination.ts';
import type { ServiceClient } from '../../core/service-client.ts';

export interface Provider {
  name: string;
  description: string;
}

export interface OctaviaAvailabilityZone {
  name: string;
  description: string;
  enabled: boolean;
  /** Admin only. */
  availability_zone_profile_id?: string;
}

export interface OctaviaFlavor {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
  /** Admin only. */
  flavor_profile_id?: string;
}

/** `GET /v2/lbaas/providers`: the enabled provider drivers (`amphora`, `ovn`, …). */
export function listProviders(sc: ServiceClient, options: CallOptions = {}): Pager<Provider> {
  return new Pager<Provider>({
    client: sc,
    path: 'lbaas/providers',
    collection: 'providers',
    strategy: 'links',
    label: 'loadbalancer_provider_list',
    signal: options.signal,
  });
}

/** `GET /v2/lbaas/availabilityzones` (API 2.14). */
export function listAvailabilityZones(
  sc: ServiceClient,
  query: { name?: string; enabled?: boolean } = {},
  options: CallOptions = {},
): Pager<OctaviaAvailabilityZone> {
  return new Pager<OctaviaAvailabilityZone>({
    client: sc,
    path: 'lbaas/availabilityzones',
    query: { ...query },
    collection: 'availability_zones',
    strategy: 'links',
    label: 'loadbalancer_availability_zone_list',
    signal: options.signal,
  });
}

/** `GET /v2/lbaas/flavors` (API 2.6). */
export function listFlavors(
  sc: ServiceClient,
  query: { name?: string; enabled?: boolean } = {},
  options: CallOptions = {},
): Pager<OctaviaFlavor> {
  return new Pager<OctaviaFlavor>({
    client: sc,
    path: 'lbaas/flavors',
    query: { ...query },
    collection: 'flavors',
    strategy: 'links',
    label: 'loadbalancer_flavor_list',
    signal: options.signal,
  });
}

/**
 * The API versions the endpoint lists (`GET /`), read once per endpoint and cached for the process
 * by the core's discovery: `(await apiVersions(sc)).supports('2.5')`.
 */
export function apiVersions(sc: ServiceClient, options: CallOptions = {}): Promise<ApiVersions> {
  return sc.discover(options.signal);
}
