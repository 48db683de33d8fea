/**
 * keystoneauth's auth options, which clouds.yaml and the OS_* variables both spell: clouds.yaml as
 * written (`project_name`), the environment as `OS_` and the name upper-cased (`OS_PROJECT_NAME`),
 * the rule openstacksdk reads the environment by. One table, so the two sources cannot drift apart.
 * Each source reads the groups in its own order (which fixes the order of its problems and of the
 * variables it reports having used).
 */
import type { DraftField, DraftFields, Located } from './draft.ts';

/** Fields and their keys, the preferred spelling first (it wins when two are set, and errors name it). */
export type FieldKeys = ReadonlyArray<readonly [DraftField, readonly string[]]>;

export const AUTH_URL: FieldKeys = [['authUrl', ['auth_url']]];

/** The user and the project, domain or system scope. */
export const USER_AND_SCOPE: FieldKeys = [
  ['username', ['username']],
  ['userId', ['user_id']],
  ['password', ['password']],
  ['projectName', ['project_name', 'tenant_name']],
  ['projectId', ['project_id', 'tenant_id']],
  ['userDomainName', ['user_domain_name']],
  ['userDomainId', ['user_domain_id']],
  ['projectDomainName', ['project_domain_name']],
  ['projectDomainId', ['project_domain_id']],
  ['domainName', ['domain_name']],
  ['domainId', ['domain_id']],
];

/** Application credentials, tokens and trusts. */
export const OTHER_CREDENTIALS: FieldKeys = [
  ['applicationCredentialId', ['application_credential_id']],
  ['applicationCredentialName', ['application_credential_name']],
  ['applicationCredentialSecret', ['application_credential_secret']],
  ['token', ['token', 'auth_token']],
  ['trustId', ['trust_id']],
];

/** A word (`all`) rather than text, so each source parses it apart from the others. */
export const SYSTEM_SCOPE: FieldKeys = [['systemScope', ['system_scope']]];

/** keystoneauth's fallback for both the user's and the project's domain. */
export const DEFAULT_DOMAIN = [
  ['default_domain_name', 'userDomainName', 'projectDomainName'],
  ['default_domain_id', 'userDomainId', 'projectDomainId'],
] as const;

/**
 * The fields that hold a credential. One written in cloud.conf's `[Global]` decides the auth method
 * over clouds.yaml's `auth_type`; with the auth URL they make the environment a cloud of its own.
 */
export const CREDENTIAL_FIELDS: readonly DraftField[] = [
  'username',
  'userId',
  'password',
  'token',
  'applicationCredentialId',
  'applicationCredentialName',
  'applicationCredentialSecret',
];

/** The OS_* variable of a clouds.yaml auth key: `project_name` → `OS_PROJECT_NAME`. */
export function envVariable(key: string): string {
  return `OS_${key.toUpperCase()}`;
}

/** A default domain fills the user's and the project's domain where neither its name nor id is set. */
export function applyDefaultDomain(
  fields: DraftFields,
  [, userField, projectField]: (typeof DEFAULT_DOMAIN)[number],
  at: Located<string>,
): void {
  if (!fields.userDomainName && !fields.userDomainId) fields[userField] = at;
  if (!fields.projectDomainName && !fields.projectDomainId) fields[projectField] = at;
}
