/**
 * What mapo needs of an OpenStack scope cache: a client per identityRef, leased for one reconcile.
 * capo's ScopeCache (src/capo/identity.ts) has this shape; the CLI passes it in, so a process that
 * runs both parts keeps one client, and one Keystone token, per identity. mapo imports none of
 * capo's code (the dependency rule): this is the structural contract.
 */
import type { OpenStackClient } from '../openstack/client.ts';

export interface MapoIdentityRef {
  type?: 'Secret' | 'ClusterIdentity' | undefined;
  name: string;
  cloudName: string;
  region?: string | undefined;
}

export interface MapoScope {
  client: OpenStackClient;
  /** The region of clouds.yaml (the Machine's region label). */
  region: string | undefined;
  /** `Secret ns/name` (for messages). */
  source: string;
  release(): void;
}

export interface MapoScopes {
  /**
   * A lease on the identity's client once Keystone accepted it; rejects with an identity error
   * (`isIdentityError`) when the user must fix the Secret or the credentials.
   */
  authenticatedScopeFor(req: {
    namespace: string;
    identityRef: MapoIdentityRef;
    signal?: AbortSignal | undefined;
  }): Promise<MapoScope>;
}

/** An error the scope cache throws for a user's fix (capo's IdentityError), by shape. */
export interface IdentityProblem extends Error {
  reason: string;
  fix: string;
}

export function isIdentityError(err: unknown): err is IdentityProblem {
  return (
    err instanceof Error &&
    err.name === 'IdentityError' &&
    typeof (err as IdentityProblem).fix === 'string' &&
    typeof (err as IdentityProblem).reason === 'string'
  );
}
