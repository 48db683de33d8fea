/**
 * Node `spec.providerID` as OCCM writes and reads it (`pkg/openstack/instances.go`):
 * `openstack:///<server-id>`, or `openstack://<region>/<server-id>` with OS_CCM_REGIONAL=true.
 * Parsing accepts what OCCM accepts: both forms, and a value without the scheme (kubernetes issue
 * #85731) such as `/<id>` or `<region>/<id>`. A bare id without any slash is refused, as upstream.
 * Shared: the CCM writes and reads it, Kuryr finds a Node's server (and so its trunk) by it.
 */

export const PROVIDER_NAME = 'openstack';

/** OCCM's providerIDRegexp, applied after the missing scheme is added back. */
const PROVIDER_ID = /^openstack:\/\/([^/]*)\/([^/]+)$/;

export function providerId(serverId: string, region?: string): string {
  return `${PROVIDER_NAME}://${region ?? ''}/${serverId}`;
}

export interface ParsedProviderId {
  serverId: string;
  /** Empty for the plain form. */
  region: string;
}

export class ProviderIdError extends Error {
  override readonly name = 'ProviderIdError';
  readonly providerId: string;

  constructor(providerId: string, message: string) {
    super(message);
    this.providerId = providerId;
  }
}

/** Throws a ProviderIdError with OCCM's wording when the value is not an OpenStack providerID. */
export function parseProviderId(value: string): ParsedProviderId {
  const full = value !== '' && !value.includes('://') ? `${PROVIDER_NAME}://${value}` : value;
  const m = PROVIDER_ID.exec(full);
  if (!m) {
    throw new ProviderIdError(
      value,
      `ProviderID "${full}" didn't match expected format "openstack://region/InstanceID"`,
    );
  }
  return { region: m[1]!, serverId: m[2]! };
}

/**
 * The server id of a Node's providerID for this CCM: a regional providerID must name our region
 * (OCCM's getInstance check), a plain one matches any.
 */
export function serverIdForRegion(value: string, region: string | undefined): string {
  const parsed = parseProviderId(value);
  if (parsed.region !== '' && parsed.region !== (region ?? '')) {
    throw new ProviderIdError(value, `ProviderID "${value}" didn't match supported region "${region ?? ''}"`);
  }
  return parsed.serverId;
}

/** OS_CCM_REGIONAL, compared as OCCM does: only the exact text `true` turns it on. */
export function regionalProviderIdFromEnv(env: Readonly<Record<string, string | undefined>>): boolean {
  return env.OS_CCM_REGIONAL === 'true';
}
