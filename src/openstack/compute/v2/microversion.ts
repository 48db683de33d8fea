/**
 * The Nova microversion of a client, negotiated once: the one the client is written for (2.79) or
 * the cloud's maximum if that is lower. Fields and calls that need a later microversion than the
 * negotiated one are refused before anything is sent (ApiVersionError naming both), rather than
 * sent and silently ignored or answered with a 400 that hides the cause.
 */
import {
  compareApiVersions,
  formatApiVersion,
  requireApiVersion,
  type ApiVersion,
} from '../../core/api-version.ts';
import { ApiVersionError } from '../../core/errors.ts';
import { negotiatedMicroversion } from '../../core/microversion.ts';
import type { ServiceClient } from '../../core/service-client.ts';

/**
 * What this module is written against: embedded flavors (2.47), tags (2.26, at create 2.52),
 * `policy` and `rules` on server groups (2.64), `networks` required at create (2.37), server groups
 * in the server view (2.71).
 */
export const COMPUTE_MICROVERSION = '2.79';

/**
 * The microversion calls on `sc` use. A ServiceClient that already has one (set by the caller, by
 * `withMicroversion`, or by an earlier negotiation) keeps it; otherwise the version document is read
 * once (single-flight per ServiceClient, and cached per endpoint by the core) and the default set.
 */
export const computeMicroversion = negotiatedMicroversion(COMPUTE_MICROVERSION);

/** Throws ApiVersionError when `what` needs a later microversion than `have`. */
export async function requireMicroversion(
  sc: ServiceClient,
  have: ApiVersion,
  need: string,
  what: string,
  signal?: AbortSignal,
): Promise<void> {
  if (atLeast(have, need)) return;
  throw new ApiVersionError(
    await sc.endpoint(signal),
    `${what} needs compute microversion ${need}, but calls use ${formatApiVersion(have)} (the cloud's maximum, or the one set on the client)`,
  );
}

export function atLeast(have: ApiVersion, need: string): boolean {
  return compareApiVersions(have, requireApiVersion(need)) >= 0;
}
