/**
 * What the core knows about each OpenStack service type: the aliases a catalog may use for it
 * (from the service-types-authority), the API version a resource path is relative to, and how its
 * microversion is sent. A service not listed here still works, with no alias, version or microversion.
 */

export interface ServiceTypeInfo {
  /** The official type, e.g. `block-storage`. */
  type: string;
  /** Other catalog types for the same service, most current first. */
  aliases: readonly string[];
  /**
   * The version path segment resource paths are relative to (`v2.0` for Neutron, so a resource
   * module asks for `ports`, not `v2.0/ports`). Appended to the endpoint unless the endpoint URL
   * already carries a version segment (Nova's `…/v2.1`, Cinder's `…/v3/<project>`).
   */
  apiVersion?: string;
  /** The service name in `OpenStack-API-Version: <name> <version>`; absent for services without microversions. */
  microversionName?: string;
  /** A pre-standard microversion header some deployments still read (Nova's `X-OpenStack-Nova-API-Version`). */
  legacyMicroversionHeader?: string;
}

const TYPES: readonly ServiceTypeInfo[] = [
  { type: 'identity', aliases: [], apiVersion: 'v3' },
  {
    type: 'compute',
    aliases: [],
    apiVersion: 'v2.1',
    microversionName: 'compute',
    legacyMicroversionHeader: 'X-OpenStack-Nova-API-Version',
  },
  { type: 'network', aliases: [], apiVersion: 'v2.0' },
  { type: 'load-balancer', aliases: [], apiVersion: 'v2' },
  { type: 'image', aliases: [], apiVersion: 'v2' },
  {
    type: 'block-storage',
    aliases: ['volumev3', 'volumev2', 'volume', 'block-store'],
    apiVersion: 'v3',
    microversionName: 'volume',
  },
  { type: 'placement', aliases: [], microversionName: 'placement' },
];

const BY_TYPE = new Map<string, ServiceTypeInfo>();
for (const t of TYPES) for (const name of [t.type, ...t.aliases]) BY_TYPE.set(name, t);

/** The entry for a type or any of its aliases; unknown types get a bare entry of their own. */
export function serviceTypeInfo(type: string): ServiceTypeInfo {
  return BY_TYPE.get(type) ?? { type, aliases: [] };
}

/** The official type and its aliases, in the order a catalog lookup should try them. */
export function serviceTypeNames(type: string): string[] {
  const info = serviceTypeInfo(type);
  return [info.type, ...info.aliases];
}

/** The microversion headers for `version` on this service type; empty when it has no microversions. */
export function microversionHeaders(type: string, version: string): Record<string, string> {
  const info = serviceTypeInfo(type);
  if (!info.microversionName) return {};
  const headers: Record<string, string> = { 'OpenStack-API-Version': `${info.microversionName} ${version}` };
  if (info.legacyMicroversionHeader) headers[info.legacyMicroversionHeader] = version;
  return headers;
}
