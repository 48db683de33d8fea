/**
 * The shape every config source produces before validation: each value remembers the file and key
 * it was read from, so that one validator can name the right place in any source's vocabulary.
 */
import type { AuthType, ConfigSource, EndpointInterface } from './types.ts';

export interface Located<T> {
  value: T;
  /** The file (with `:line` for cloud.conf) or `environment`. */
  file: string;
  /** The key in the source's own words: `clouds.prod.auth.password`, `[Global] password`, `OS_PASSWORD`. */
  key: string;
}

export interface DraftFields {
  authUrl?: Located<string>;
  authType?: Located<AuthType>;
  username?: Located<string>;
  userId?: Located<string>;
  password?: Located<string>;
  userDomainName?: Located<string>;
  userDomainId?: Located<string>;
  projectName?: Located<string>;
  projectId?: Located<string>;
  projectDomainName?: Located<string>;
  projectDomainId?: Located<string>;
  domainName?: Located<string>;
  domainId?: Located<string>;
  systemScope?: Located<boolean>;
  applicationCredentialId?: Located<string>;
  applicationCredentialName?: Located<string>;
  applicationCredentialSecret?: Located<string>;
  token?: Located<string>;
  trustId?: Located<string>;
  regionName?: Located<string>;
  interface?: Located<EndpointInterface>;
  caFile?: Located<string>;
  certFile?: Located<string>;
  keyFile?: Located<string>;
  insecure?: Located<boolean>;
  requestTimeoutMs?: Located<number>;
}

export type DraftField = keyof DraftFields;

export interface Draft {
  fields: DraftFields;
  endpointOverride: Record<string, Located<string>>;
  /** Where a field that is missing would be set, in this source's vocabulary. */
  where: (field: DraftField) => { file: string; key: string };
  source: ConfigSource;
  /**
   * Keys the source holds under a name its reader does not know, by the field they look meant for
   * (`[Global] project-name` for the project): the fix for that field names the rename.
   */
  unread?: Partial<Record<DraftField, string>>;
}

/** Sets a field only when the value is present, so absent keys stay absent rather than undefined. */
export function put<F extends DraftField>(
  fields: DraftFields,
  field: F,
  located: DraftFields[F] | undefined,
): void {
  if (located !== undefined) fields[field] = located;
}

/** The fields that hold plain text (ids, names, secrets, URLs, paths). */
export type TextField = {
  [K in DraftField]-?: Located<string> extends NonNullable<DraftFields[K]> ? K : never;
}[DraftField];
