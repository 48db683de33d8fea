/**
 * Keystone v3 token wire types and the `POST /v3/auth/tokens` request built from a CloudConfig:
 * password (ids, or names with their domains), application credential (id, or name + user), token,
 * each with project, domain, system, trust or no scope.
 * https://docs.openstack.org/api-ref/identity/v3/#password-authentication-with-scoped-authorization
 */
import { createHash } from 'node:crypto';
import type { CloudConfig } from '../config/types.ts';

export interface KeystoneRef {
  id: string;
  name?: string;
  domain?: { id: string; name?: string };
}

/** An endpoint of one service in the catalog. */
export interface CatalogEndpoint {
  id?: string;
  interface: string;
  /** Region name; Keystone sends both `region` and `region_id` (equal in practice). */
  region?: string | null;
  region_id?: string | null;
  url: string;
}

/** One service of the catalog. */
export interface CatalogService {
  id?: string;
  type: string;
  name?: string;
  endpoints: CatalogEndpoint[];
}

/** The `token` object of a token response (`POST` or `GET /v3/auth/tokens`). */
export interface KeystoneToken {
  methods: string[];
  expires_at: string;
  issued_at: string;
  audit_ids?: string[];
  user: KeystoneRef & { password_expires_at?: string | null };
  project?: KeystoneRef;
  domain?: { id: string; name?: string };
  system?: Record<string, boolean>;
  roles?: { id: string; name: string }[];
  catalog?: CatalogService[];
  is_domain?: boolean;
  application_credential?: { id: string; name?: string; restricted?: boolean };
  'OS-TRUST:trust'?: {
    id: string;
    impersonation?: boolean;
    trustor_user?: { id: string };
    trustee_user?: { id: string };
  };
}

export interface TokenResponseBody {
  token: KeystoneToken;
}

type Json = Record<string, unknown>;

/** The `{auth:{identity, scope}}` body for this config. Holds the secret: never log it. */
export function authRequestBody(config: CloudConfig): { auth: Json } {
  const auth: Json = { identity: identity(config) };
  const scope = scopeOf(config);
  if (scope) auth.scope = scope;
  return { auth };
}

function identity(config: CloudConfig): Json {
  switch (config.authType) {
    case 'password':
      return { methods: ['password'], password: { user: { ...userRef(config), password: config.password } } };
    case 'v3applicationcredential': {
      const ac: Json = config.applicationCredentialId
        ? { id: config.applicationCredentialId }
        : { name: config.applicationCredentialName, user: userRef(config) };
      return {
        methods: ['application_credential'],
        application_credential: { ...ac, secret: config.applicationCredentialSecret },
      };
    }
    case 'token':
      return { methods: ['token'], token: { id: config.token } };
  }
}

function userRef(config: CloudConfig): Json {
  if (config.userId) return { id: config.userId };
  return { name: config.username, domain: domainRef(config.userDomainId, config.userDomainName) };
}

function domainRef(id: string | undefined, name: string | undefined): Json | undefined {
  if (id) return { id };
  if (name) return { name };
  return undefined;
}

/**
 * The scope Keystone is asked for. Application credentials carry their own project and Keystone
 * refuses any scope with them. A trust wins over every other scope (it names its project itself).
 */
export function scopeOf(config: CloudConfig): Json | undefined {
  if (config.authType === 'v3applicationcredential') return undefined;
  if (config.trustId) return { 'OS-TRUST:trust': { id: config.trustId } };
  if (config.systemScope) return { system: { all: true } };
  if (config.projectId) return { project: { id: config.projectId } };
  if (config.projectName) {
    return {
      project: {
        name: config.projectName,
        domain:
          domainRef(config.projectDomainId, config.projectDomainName) ??
          domainRef(config.domainId, config.domainName),
      },
    };
  }
  const domain = domainRef(config.domainId, config.domainName);
  return domain ? { domain } : undefined;
}

/** Who authenticates, in words, without any secret: `user demo (domain Default), project demo (domain Default)`. */
export function describeIdentity(config: CloudConfig): string {
  let who: string;
  switch (config.authType) {
    case 'password':
      who = `user ${describeUser(config)}`;
      break;
    case 'v3applicationcredential':
      who = config.applicationCredentialId
        ? `application credential ${config.applicationCredentialId}`
        : `application credential "${config.applicationCredentialName ?? ''}" of user ${describeUser(config)}`;
      break;
    case 'token':
      who = 'a token (auth type token)';
      break;
  }
  return `${who}${describeScope(config)}`;
}

function describeUser(config: CloudConfig): string {
  if (config.userId) return `id ${config.userId}`;
  const domain = config.userDomainId ?? config.userDomainName;
  return `${config.username ?? '?'}${domain ? ` (domain ${domain})` : ''}`;
}

function describeScope(config: CloudConfig): string {
  if (config.authType === 'v3applicationcredential') return '';
  if (config.trustId) return `, trust ${config.trustId}`;
  if (config.systemScope) return ', system scope';
  if (config.projectId) return `, project id ${config.projectId}`;
  if (config.projectName) {
    const domain = config.projectDomainId ?? config.projectDomainName ?? config.domainId ?? config.domainName;
    return `, project ${config.projectName}${domain ? ` (domain ${domain})` : ''}`;
  }
  const domain = config.domainId ?? config.domainName;
  return domain ? `, domain ${domain}` : ', unscoped';
}

/**
 * The token cache key: a SHA-256 over the auth URL, the whole auth request (secret included, so a
 * changed password is a different identity) and the TLS settings that decide which server answers.
 * Only the digest is kept, so no secret sits in clear in the cache's keys.
 */
export function tokenCacheKey(config: CloudConfig): string {
  const material = JSON.stringify([
    config.authUrl.replace(/\/+$/, ''),
    authRequestBody(config),
    config.tls.caFile ?? null,
    config.tls.caPem ?? null,
    config.tls.insecure,
  ]);
  return createHash('sha256').update(material).digest('hex');
}
