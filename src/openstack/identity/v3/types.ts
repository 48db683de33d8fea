/**
 * Keystone v3 wire types, snake_case as on the wire.
 * https://docs.openstack.org/api-ref/identity/v3/
 */
export type { CatalogEndpoint, CatalogService, KeystoneRef, KeystoneToken } from '../../core/keystone.ts';

/** https://docs.openstack.org/api-ref/identity/v3/#projects */
export interface Project {
  id: string;
  name: string;
  domain_id: string;
  description?: string | null;
  enabled: boolean;
  parent_id?: string | null;
  is_domain: boolean;
  tags?: string[];
  options?: Record<string, unknown>;
  links?: { self: string };
}

/** Filters of `GET /v3/projects`. Keystone ignores `limit` (it returns everything, see NOTES.md). */
export interface ProjectListQuery {
  name?: string;
  domain_id?: string;
  enabled?: boolean;
  parent_id?: string;
  is_domain?: boolean;
  tags?: string;
  'tags-any'?: string;
}

export interface RoleRef {
  id?: string;
  name?: string;
  domain_id?: string | null;
}

/** https://docs.openstack.org/api-ref/identity/v3/#application-credentials */
export interface ApplicationCredential {
  id: string;
  name: string;
  description?: string | null;
  /** ISO 8601, or null for a credential that never expires. */
  expires_at: string | null;
  project_id: string;
  user_id?: string;
  roles: RoleRef[];
  /** Keystone answers null for a credential created without the flag (restricted). */
  unrestricted: boolean | null;
  access_rules?: { id?: string; path: string; method: string; service: string }[];
  links?: { self: string };
}

/** The create answer: the only time Keystone shows the secret. */
export interface ApplicationCredentialWithSecret extends ApplicationCredential {
  secret: string;
}

export interface ApplicationCredentialCreateOpts {
  name: string;
  description?: string;
  /** Keystone generates one when absent. */
  secret?: string;
  expires_at?: string | null;
  /** Defaults to every role of the token. */
  roles?: RoleRef[];
  /** Allows the credential to create other credentials and trusts. Off by default, as it should be. */
  unrestricted?: boolean;
  access_rules?: { path: string; method: string; service: string }[];
}

export interface ApplicationCredentialListQuery {
  name?: string;
}
