/**
 * Value rules shared by every source: each parser returns the normalized value, or records a problem
 * naming the file, the key, the value and the fix and returns undefined.
 */
import { closest } from '../../lib/config.ts';
import type { Problems } from './problems.ts';
import type { AuthType, EndpointInterface } from './types.ts';

/** openstacksdk / keystoneauth plugin names, and the method each means here. */
const AUTH_TYPES: Readonly<Record<string, AuthType>> = {
  password: 'password',
  v3password: 'password',
  v3applicationcredential: 'v3applicationcredential',
  application_credential: 'v3applicationcredential',
  token: 'token',
  v3token: 'token',
};

export function parseAuthType(
  raw: string,
  file: string,
  key: string,
  problems: Problems,
): AuthType | undefined {
  const found = AUTH_TYPES[raw.toLowerCase()];
  if (found) return found;
  const known = Object.keys(AUTH_TYPES);
  const suggestion = closest(raw, known);
  problems.add(
    file,
    key,
    raw,
    raw.startsWith('v2') ? 'Keystone v2 auth is not supported' : 'this auth type is not supported',
    `use one of ${known.join(', ')}${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`,
  );
  return undefined;
}

const INTERFACES: Readonly<Record<string, EndpointInterface>> = {
  public: 'public',
  publicurl: 'public',
  internal: 'internal',
  internalurl: 'internal',
  admin: 'admin',
  adminurl: 'admin',
};

export function parseInterface(
  raw: string,
  file: string,
  key: string,
  problems: Problems,
): EndpointInterface | undefined {
  const found = INTERFACES[raw.toLowerCase()];
  if (found) return found;
  const suggestion = closest(raw, ['public', 'internal', 'admin']);
  problems.add(
    file,
    key,
    raw,
    'not a catalog interface',
    `use public, internal or admin (publicURL, internalURL and adminURL also work)${suggestion ? `; did you mean "${suggestion}"?` : ''}`,
  );
  return undefined;
}

/** Boolean words as environment variables and YAML strings spell them. */
export function parseBoolWord(
  raw: string | boolean,
  file: string,
  key: string,
  problems: Problems,
): boolean | undefined {
  if (typeof raw === 'boolean') return raw;
  const v = raw.trim().toLowerCase();
  if (['true', 'yes', 'on', '1'].includes(v)) return true;
  if (['false', 'no', 'off', '0'].includes(v)) return false;
  problems.add(file, key, raw, 'not a boolean', 'use true or false');
  return undefined;
}

/** Keystone's only system scope is `all`; openstacksdk writes it `system_scope: all`. */
export function parseSystemScope(
  raw: string | boolean,
  file: string,
  key: string,
  problems: Problems,
): boolean | undefined {
  if (typeof raw === 'boolean') return raw;
  const v = raw.trim().toLowerCase();
  if (v === 'all' || v === 'true') return true;
  if (v === 'false' || v === '') return false;
  problems.add(file, key, raw, 'Keystone only knows the system scope "all"', 'set it to all, or remove it');
  return undefined;
}

/** Only Keystone v3 exists in any supported OpenStack; v2.0 was removed in Queens. */
export function checkIdentityVersion(
  raw: string | number | boolean,
  file: string,
  key: string,
  problems: Problems,
): void {
  const v = String(raw).trim().replace(/^v/i, '');
  if (/^3(\.\d+)?$/.test(v)) return;
  problems.add(
    file,
    key,
    raw,
    /^2(\.\d+)?$/.test(v) ? 'Keystone v2 is not supported' : 'not a Keystone API version',
    'set it to 3 (or remove it) and point the auth URL at the v3 endpoint, e.g. https://keystone.example.com:5000/v3',
  );
}

/** `load_balancer_endpoint_override` → `load-balancer`: service types use dashes, config keys underscores. */
export function endpointOverrideService(key: string): string | undefined {
  const match = /^([a-z][a-z0-9_-]*?)[_-]endpoint[_-]override$/i.exec(key);
  return match?.[1]?.toLowerCase().replace(/_/g, '-');
}

export const AUTH_URL_EXAMPLE = 'https://keystone.example.com:5000/v3';

/** An http(s) URL; Keystone v2.0 endpoints are refused with the v3 fix. */
export function parseUrl(
  raw: string,
  file: string,
  key: string,
  problems: Problems,
  example: string,
): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    problems.add(file, key, raw, 'not a URL', `write an absolute http(s) URL, e.g. ${example}`);
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    problems.add(
      file,
      key,
      raw,
      `unsupported URL scheme "${url.protocol}"`,
      `use https:// (or http://), e.g. ${example}`,
    );
    return undefined;
  }
  return raw;
}

export function checkNotKeystoneV2(url: string, file: string, key: string, problems: Problems): void {
  if (/\/v2\.0\/?$/.test(new URL(url).pathname)) {
    problems.add(
      file,
      key,
      url,
      'this is a Keystone v2.0 endpoint, which shiftstack does not support',
      `use the v3 endpoint instead, e.g. ${url.replace(/\/v2\.0\/?$/, '/v3')}`,
    );
  }
}

/** A timeout in seconds (openstacksdk's api_timeout) to milliseconds. */
export function parseSeconds(
  raw: string | number,
  file: string,
  key: string,
  problems: Problems,
): number | undefined {
  const n = typeof raw === 'number' ? raw : raw.trim() === '' ? NaN : Number(raw);
  if (Number.isFinite(n) && n > 0) return Math.ceil(n * 1000);
  problems.add(
    file,
    key,
    raw,
    'not a positive number of seconds',
    'set it to a number of seconds greater than 0, e.g. 60',
  );
  return undefined;
}
