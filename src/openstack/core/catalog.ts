/** Picking a service endpoint from the Keystone catalog by type (and its aliases), interface and region. */
import { EndpointNotFoundError } from './errors.ts';
import type { CatalogEndpoint, CatalogService } from './keystone.ts';
import { serviceTypeNames } from './service-types.ts';

export interface EndpointQuery {
  /** Service type; its aliases are tried after it (`block-storage`, then `volumev3`, …). */
  type: string;
  /** `public`, `internal` or `admin` (`publicURL` and the like are accepted too). */
  interface: string;
  /** Region name; without one, the catalog must hold the service in one region only. */
  region?: string | undefined;
}

export interface SelectedEndpoint {
  url: string;
  /** The catalog type that matched (an alias, perhaps). */
  type: string;
  region: string | undefined;
  interface: string;
}

const normalize = (iface: string) => iface.replace(/URL$/, '').toLowerCase();
const regionOf = (e: CatalogEndpoint) => e.region_id ?? e.region ?? undefined;

export function selectEndpoint(catalog: readonly CatalogService[], query: EndpointQuery): SelectedEndpoint {
  const iface = normalize(query.interface);
  for (const type of serviceTypeNames(query.type)) {
    const services = catalog.filter((s) => s.type === type);
    if (services.length === 0) continue;
    const candidates = services.flatMap((s) => s.endpoints).filter((e) => normalize(e.interface) === iface);
    const inRegion = query.region ? candidates.filter((e) => regionOf(e) === query.region) : candidates;
    if (inRegion.length === 0) continue;
    const regions = [...new Set(inRegion.map(regionOf))];
    if (!query.region && regions.length > 1) {
      throw new EndpointNotFoundError({
        serviceType: query.type,
        interface: iface,
        available: describeCatalog(catalog),
        reason: `it is in several regions (${regions.join(', ')}); set the region (clouds.yaml region_name, cloud.conf region or OS_REGION_NAME)`,
      });
    }
    const chosen = inRegion[0] as CatalogEndpoint;
    return { url: chosen.url, type, region: regionOf(chosen), interface: iface };
  }
  throw new EndpointNotFoundError({
    serviceType: query.type,
    interface: iface,
    region: query.region,
    available: describeCatalog(catalog),
  });
}

/** One line per service: `network (public RegionOne, internal RegionOne, admin RegionOne)`. */
export function describeCatalog(catalog: readonly CatalogService[]): string[] {
  return catalog.map((s) => {
    const eps = s.endpoints.map((e) => `${normalize(e.interface)}${regionOf(e) ? ` ${regionOf(e)}` : ''}`);
    return `${s.type} (${eps.join(', ') || 'no endpoints'})`;
  });
}
