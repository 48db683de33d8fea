/** Small helpers shared by the Nova handlers: responses, links, paging and policy checks. */
import { SimError } from '../core/errors.ts';
import type { AuthContext, SimRequest, SimResponse } from '../core/types.ts';
import { policyForbidden } from './errors.ts';

/** CONF.api.max_limit: no page is longer, with or without `limit`. */
export const MAX_LIMIT = 1000;

export const json = (status: number, body: unknown, headers?: Record<string, string>): SimResponse =>
  headers ? { status, body, headers } : { status, body };

export const empty = (status: number): SimResponse => ({ status });

export function auth(req: SimRequest): AuthContext {
  if (!req.auth)
    throw new SimError(401, 'The request you have made requires authentication.', { type: 'Unauthorized' });
  return req.auth;
}

/** Projectless (system or domain scoped) tokens act on no project's objects. */
export const projectOf = (req: SimRequest): string => auth(req).projectId ?? '';

export function requireAdmin(req: SimRequest, rule: string): void {
  if (!auth(req).isAdmin) throw policyForbidden(rule);
}

export function links(req: SimRequest, collection: string, id: string) {
  return [
    { rel: 'self', href: `${req.baseUrl}/v2.1/${collection}/${id}` },
    { rel: 'bookmark', href: `${req.baseUrl}/${collection}/${id}` },
  ];
}

/** common.get_limit_and_marker: limit 0 or absent means the maximum page. */
export function limitOf(req: SimRequest): number {
  const raw = req.query.get('limit');
  if (raw === null) return MAX_LIMIT;
  if (!/^-?\d+$/.test(raw.trim())) throw new SimError(400, 'limit param must be an integer');
  const n = Number(raw);
  if (n < 0) throw new SimError(400, 'limit param must be positive');
  return n === 0 ? MAX_LIMIT : Math.min(n, MAX_LIMIT);
}

/** Items after `marker` (400 when the marker is unknown), at most `limit`. */
export function pageAfter<T>(
  items: readonly T[],
  idOf: (t: T) => string,
  marker: string | null,
  limit: number,
): T[] {
  let start = 0;
  if (marker !== null) {
    const idx = items.findIndex((i) => idOf(i) === marker);
    if (idx < 0) throw new SimError(400, `marker [${marker}] not found`);
    start = idx + 1;
  }
  return items.slice(start, start + limit);
}

/**
 * ViewBuilder._get_collection_links: a `next` link whenever the page is full, carrying the
 * caller's parameters with `marker` moved to the end, as webob's MultiDict assignment leaves it.
 */
export function collectionLinks(
  req: SimRequest,
  path: string,
  count: number,
  lastId: string | undefined,
): { rel: string; href: string }[] {
  const raw = req.query.get('limit');
  const asked = raw !== null && /^\d+$/.test(raw) ? Number(raw) : MAX_LIMIT;
  const max = Math.min(asked, MAX_LIMIT);
  if (!max || count !== max || lastId === undefined) return [];
  const params = new URLSearchParams(req.query);
  params.delete('marker');
  params.append('marker', lastId);
  return [{ rel: 'next', href: `${req.baseUrl}/v2.1/${path}?${params.toString()}` }];
}

/** Nova timestamps with microseconds and no zone, as str(datetime) shows launched_at. */
export function microIso(date: Date = new Date()): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000');
}

export function asRecord(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}
