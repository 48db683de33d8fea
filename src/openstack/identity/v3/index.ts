/**
 * Keystone v3 as a namespace bound to one ServiceClient: `client.identity.projects.get(id, { signal })`.
 * The functions are exported too, for code that holds a ServiceClient (`getProject(sc, id)`).
 * This is the pattern for the other services: wire types in `types.ts`, one file per resource with
 * `fn(sc, …args, options)` functions, and a factory that binds them.
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import {
  createApplicationCredential,
  deleteApplicationCredential,
  getApplicationCredential,
  listApplicationCredentials,
} from './application-credentials.ts';
import { getCatalog } from './catalog.ts';
import { getProject, listAuthProjects, listProjects } from './projects.ts';
import { checkToken, issueToken, revokeToken, validateToken } from './tokens.ts';
import type {
  ApplicationCredentialCreateOpts,
  ApplicationCredentialListQuery,
  ProjectListQuery,
} from './types.ts';

export * from './application-credentials.ts';
export * from './catalog.ts';
export * from './projects.ts';
export * from './tokens.ts';
export type * from './types.ts';

export function identityV3(sc: ServiceClient) {
  return {
    client: sc,
    tokens: {
      issue: (body: { auth: Record<string, unknown> }, o?: CallOptions & { noCatalog?: boolean }) =>
        issueToken(sc, body, o),
      validate: (token: string, o?: CallOptions & { allowExpired?: boolean; noCatalog?: boolean }) =>
        validateToken(sc, token, o),
      check: (token: string, o?: CallOptions) => checkToken(sc, token, o),
      revoke: (token: string, o?: CallOptions) => revokeToken(sc, token, o),
    },
    projects: {
      list: (query?: ProjectListQuery, o?: CallOptions) => listProjects(sc, query, o),
      /** The projects the token's user may scope to (no admin role needed). */
      listMine: (o?: CallOptions) => listAuthProjects(sc, o),
      get: (id: string, o?: CallOptions) => getProject(sc, id, o),
    },
    applicationCredentials: {
      create: (userId: string, opts: ApplicationCredentialCreateOpts, o?: CallOptions) =>
        createApplicationCredential(sc, userId, opts, o),
      list: (userId: string, query?: ApplicationCredentialListQuery, o?: CallOptions) =>
        listApplicationCredentials(sc, userId, query, o),
      get: (userId: string, id: string, o?: CallOptions) => getApplicationCredential(sc, userId, id, o),
      delete: (userId: string, id: string, o?: CallOptions) => deleteApplicationCredential(sc, userId, id, o),
    },
    catalog: (o?: CallOptions) => getCatalog(sc, o),
  };
}

export type IdentityV3 = ReturnType<typeof identityV3>;
