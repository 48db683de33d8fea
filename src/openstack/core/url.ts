/** URL helpers: query strings, joining paths onto endpoints, following links safely, and URLs fit for logs. */
import { isSecretKey, REDACTED } from '../../lib/redact.ts';

/** A query parameter value; arrays repeat the key (`?id=a&id=b`, as Neutron filters expect), undefined is left out. */
export type QueryValue = string | number | boolean | readonly (string | number | boolean)[] | undefined;
export type Query = Readonly<Record<string, QueryValue>>;

/** Appends `query` to `url`, keeping any query the URL already has. */
export function withQuery(url: string, query: Query | undefined): string {
  if (!query) return url;
  const u = new URL(url);
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    const values = Array.isArray(value) ? (value as readonly unknown[]) : [value];
    for (const v of values) u.searchParams.append(key, String(v));
  }
  return u.toString();
}

/** The URL with the values of secret-looking query parameters replaced: fit for logs and error messages. */
export function safeUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  let changed = false;
  if (u.username || u.password) {
    u.username = '';
    u.password = '';
    changed = true;
  }
  for (const key of [...u.searchParams.keys()]) {
    if (isSecretKey(key) || /sig(nature)?$/i.test(key)) {
      u.searchParams.set(key, REDACTED);
      changed = true;
    }
  }
  return changed ? u.toString() : url;
}

/** The path and query of a URL, for log lines. */
export function pathOf(url: string): string {
  try {
    const u = new URL(safeUrl(url));
    return `${u.pathname}${u.search}`;
  } catch {
    return url;
  }
}

/** `base` + `/` + `path`, with exactly one slash between them. */
export function joinUrl(base: string, path: string): string {
  if (path === '') return base;
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

const VERSION_SEGMENT = /^v\d+(\.\d+)?$/i;

/** True when any path segment of `url` is an API version (`v2.1`, `v3`): the endpoint is already versioned. */
export function hasVersionSegment(url: string): boolean {
  return new URL(url).pathname.split('/').some((s) => VERSION_SEGMENT.test(s));
}

/**
 * Resolves a link a service returned (a `next` page) against the endpoint the client was configured
 * with. The link's own scheme, host and port are never trusted: behind a TLS-terminating proxy they
 * name the internal address, and sending the token to a host the catalog did not name would leak it.
 *
 * - A link under the endpoint is used as is.
 * - Otherwise its path from the first version segment (`/v2.0/networks?…`) is put under the
 *   endpoint's path before its own version segment: `https://cloud/network` + `/v2.0/networks?…`.
 *   Glance's relative `next` (`/v2/images?marker=…`) takes the same route.
 * - A link with no version segment keeps its path on the endpoint's origin.
 */
export function resolveLink(link: string, endpoint: string): string {
  const base = new URL(endpoint);
  const target = new URL(link, base.origin);
  const baseHref = base.toString().replace(/\/+$/, '');
  if (target.origin === base.origin && target.toString().startsWith(baseHref)) return target.toString();

  const linkSegments = target.pathname.split('/');
  const at = linkSegments.findIndex((s) => VERSION_SEGMENT.test(s));
  if (at < 0) return `${base.origin}${target.pathname}${target.search}`;
  const baseSegments = base.pathname.replace(/\/+$/, '').split('/');
  const baseAt = baseSegments.findIndex((s) => VERSION_SEGMENT.test(s));
  const prefix = (baseAt < 0 ? baseSegments : baseSegments.slice(0, baseAt)).join('/');
  return `${base.origin}${prefix}/${linkSegments.slice(at).join('/')}${target.search}`;
}
