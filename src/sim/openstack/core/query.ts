/** Query helpers shared by the emulated services: pagination, `fields=`, tag filters. */

export interface Page<T> {
  items: T[];
  /** The marker for the next page, when there is one. */
  next: string | undefined;
  /** The marker for the previous page (the first item), when this is not the first page. */
  previous: string | undefined;
}

/**
 * Marker pagination over an id-sorted list: items after `marker` (or before it with `reverse`),
 * at most `limit`. An unknown marker is the caller's 404/400; here it yields an empty page.
 */
export function paginate<T extends { id: string }>(
  items: readonly T[],
  options: { limit?: number | undefined; marker?: string | undefined; reverse?: boolean | undefined },
): Page<T> {
  let start = 0;
  let end = items.length;
  if (options.marker !== undefined) {
    const idx = items.findIndex((i) => i.id === options.marker);
    if (idx < 0) return { items: [], next: undefined, previous: undefined };
    if (options.reverse) end = idx;
    else start = idx + 1;
  }
  const limit = options.limit;
  let slice: T[];
  if (limit === undefined || limit <= 0) slice = items.slice(start, end);
  else if (options.reverse) slice = items.slice(Math.max(start, end - limit), end);
  else slice = items.slice(start, start + limit);
  const last = slice[slice.length - 1];
  const first = slice[0];
  const hasMore =
    limit !== undefined && limit > 0 && (options.reverse ? end - limit > start : start + limit < end);
  return {
    items: slice,
    next: hasMore && last ? last.id : undefined,
    previous: options.marker !== undefined && first ? first.id : undefined,
  };
}

export function parseLimit(value: string | null): number | undefined {
  if (value === null || value === '') return undefined;
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 ? n : Number.NaN;
}

/** Keeps only the `fields=` keys (repeatable or comma-separated), as Neutron and Octavia do. */
export function selectFields<T extends object>(obj: T, query: URLSearchParams): Partial<T> {
  const fields = query
    .getAll('fields')
    .flatMap((f) => f.split(','))
    .filter(Boolean);
  if (fields.length === 0) return obj;
  const out: Record<string, unknown> = {};
  for (const f of fields) if (f in obj) out[f] = (obj as Record<string, unknown>)[f];
  return out as Partial<T>;
}

/** Neutron/Octavia tag filters: tags (all), tags-any, not-tags, not-tags-any; each comma-separated and repeatable. */
export function matchesTagFilters(tags: readonly string[], query: URLSearchParams): boolean {
  const list = (key: string) =>
    query
      .getAll(key)
      .flatMap((v) => v.split(','))
      .filter(Boolean);
  const all = list('tags');
  const any = list('tags-any');
  const notAll = list('not-tags');
  const notAny = list('not-tags-any');
  const has = (t: string) => tags.includes(t);
  if (all.length > 0 && !all.every(has)) return false;
  if (any.length > 0 && !any.some(has)) return false;
  if (notAll.length > 0 && notAll.every(has)) return false;
  if (notAny.length > 0 && notAny.some(has)) return false;
  return true;
}

/** Builds a URL on `baseUrl + path` with the given query, keeping the caller's other parameters. */
export function pageUrl(
  baseUrl: string,
  path: string,
  query: URLSearchParams,
  set: Record<string, string | undefined>,
): string {
  const q = new URLSearchParams(query);
  for (const [k, v] of Object.entries(set)) {
    if (v === undefined) q.delete(k);
    else q.set(k, v);
  }
  const s = q.toString();
  return `${baseUrl}${path}${s ? `?${s}` : ''}`;
}
