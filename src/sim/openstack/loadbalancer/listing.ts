/**
 * Octavia's PaginationHelper: attribute filters (unknown ones are a 400), tag filters, sorting by
 * any attribute with (created_at, id) appended, marker/limit pagination with `<collection>_links`,
 * and `fields=` selection.
 */
import { SimError } from '../core/errors.ts';
import { selectFields } from '../core/query.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import { compareCreated, type Ordered } from './collection.ts';
import type { Provisioned } from './model.ts';

/** octavia.conf [api_settings] pagination_max_limit default. */
const MAX_LIMIT = 1000;

const AUXILIARY = new Set([
  'limit',
  'marker',
  'sort',
  'sort_key',
  'sort_dir',
  'fields',
  'page_reverse',
  'project_id',
]);
const TAG_PARAMS = new Set(['tags', 'tags-any', 'not-tags', 'not-tags-any']);

/** Filter and sort attributes every Octavia object has (all but L7 rules add `name`). */
export const PROVISIONED_ATTRIBUTES: Readonly<Record<string, (item: Provisioned) => unknown>> = {
  id: (r) => r.id,
  provisioning_status: (r) => r.provisioning_status,
  admin_state_up: (r) => r.admin_state_up,
  created_at: (r) => r.created_at,
  updated_at: (r) => r.updated_at,
  project_id: (r) => r.project_id,
};

export interface ListOptions<T extends Ordered> {
  /** Wire name of the collection: `loadbalancers` gives `loadbalancers` and `loadbalancers_links`. */
  collection: string;
  /** Candidates in (created_at, id) order. */
  items: readonly T[];
  /** Which candidates the caller may see (project scoping). */
  visible?: (item: T) => boolean;
  /** Looks a marker up among all objects of the kind, visible or not. */
  lookup: (id: string) => T | undefined;
  view: (item: T) => Record<string, unknown>;
  /** Attributes usable as filters and sort keys, with the record value to compare. */
  attributes: Readonly<Record<string, (item: T) => unknown>>;
  tags?: (item: T) => readonly string[];
}

export function listResponse<T extends Ordered>(req: SimRequest, opts: ListOptions<T>): SimResponse {
  const q = req.query;
  const limit = parseLimit(q.get('limit'));
  const sortKeys = parseSort(q, opts.attributes);

  const filters: [(item: T) => unknown, string[]][] = [];
  for (const key of new Set(q.keys())) {
    if (AUXILIARY.has(key) || TAG_PARAMS.has(key)) continue;
    const get = opts.attributes[key];
    if (!get) throw new SimError(400, 'One or more arguments are either duplicate or invalid');
    filters.push([get, q.getAll(key)]);
  }
  const tagFilter = parseTagFilters(q);
  const accept = (item: T): boolean => {
    if (opts.visible && !opts.visible(item)) return false;
    for (const [get, wanted] of filters) {
      const value = get(item);
      if (!wanted.some((w) => matches(value, w))) return false;
    }
    return !tagFilter || !opts.tags || tagFilter(opts.tags(item));
  };

  const keys: [(item: T) => unknown, 'asc' | 'desc'][] = sortKeys.map(([k, d]) => [opts.attributes[k]!, d]);
  const compare = (a: T, b: T): number => {
    for (const [get, dir] of keys) {
      const c = compareValues(get(a), get(b));
      if (c !== 0) return dir === 'asc' ? c : -c;
    }
    // The appended default keys (created_at, id) always sort ascending.
    return compareCreated(a, b);
  };

  const markerId = q.get('marker');
  const reverse = q.get('page_reverse') === 'True';
  const marker = markerId === null ? undefined : opts.lookup(markerId);
  if (markerId !== null && !marker) {
    throw new SimError(400, `Supplied pagination marker '${markerId}' is not valid.`);
  }

  let page: T[];
  if (sortKeys.length === 0) {
    // Default order: the candidates are already sorted, so scan from the marker up to the limit.
    const items = opts.items;
    const at = marker ? lowerBound(items, marker) : reverse ? items.length : 0;
    page = [];
    const max = limit ?? Infinity;
    if (reverse) {
      for (let i = at - 1; i >= 0 && page.length < max; i--) if (accept(items[i]!)) page.push(items[i]!);
      page.reverse();
    } else {
      let i = at;
      if (marker && items[i] && compareCreated(items[i]!, marker) === 0) i++;
      for (; i < items.length && page.length < max; i++) if (accept(items[i]!)) page.push(items[i]!);
    }
  } else {
    let items = opts.items.filter(accept).sort(compare);
    if (marker)
      items = items.filter((item) => (reverse ? compare(item, marker) < 0 : compare(item, marker) > 0));
    page =
      limit === undefined
        ? items
        : reverse
          ? items.slice(Math.max(0, items.length - limit))
          : items.slice(0, limit);
  }

  const links: { href: string; rel: string }[] = [];
  if (limit !== undefined && page.length > 0) {
    const base = [`limit=${limit}`];
    const sort = q.get('sort');
    const sortKey = q.get('sort_key');
    if (sort) base.push(`sort=${sort}`);
    if (sortKey) base.push(`sort_key=${sortKey}`);
    const path = `${req.baseUrl}${req.path}`;
    if (markerId !== null) {
      links.push({
        href: `${path}?${[...base, `marker=${page[0]!.id}`, 'page_reverse=True'].join('&')}`,
        rel: 'previous',
      });
    }
    // Octavia cannot tell a full last page from a partial one, so a full page always links on.
    if (page.length >= limit) {
      links.push({
        href: `${path}?${[...base, `marker=${page[page.length - 1]!.id}`].join('&')}`,
        rel: 'next',
      });
    }
  }

  return {
    status: 200,
    body: {
      [opts.collection]: page.map((item) => selectFields(opts.view(item), q)),
      [`${opts.collection}_links`]: links,
    },
  };
}

function parseLimit(raw: string | null): number | undefined {
  if (raw === null) return MAX_LIMIT;
  if (raw === 'infinite') return undefined;
  if (!/^-?\d+$/.test(raw.trim()))
    throw new SimError(400, `Supplied pagination limit '${raw}' is not valid.`);
  const n = Number(raw);
  if (n < 1) return undefined;
  return Math.min(n, MAX_LIMIT);
}

function parseSort(
  q: URLSearchParams,
  attributes: Readonly<Record<string, unknown>>,
): [string, 'asc' | 'desc'][] {
  const out: [string, 'asc' | 'desc'][] = [];
  const dirOf = (d: string): 'asc' | 'desc' => {
    const lower = d.toLowerCase();
    if (lower !== 'asc' && lower !== 'desc')
      throw new SimError(400, `Supplied sort direction '${lower}' is not valid.`);
    return lower;
  };
  const sort = q.get('sort');
  const sortKey = q.get('sort_key');
  if (sort) {
    for (const part of sort.split(',')) {
      const comps = part.split(':');
      if (comps.length > 2) throw new SimError(400, `Supplied sort key '${String(comps)}' is not valid.`);
      out.push([comps[0]!, comps[1] !== undefined ? dirOf(comps[1]) : 'asc']);
    }
  } else if (sortKey) {
    const dirs = (q.get('sort_dir') ?? '').split(',').filter(Boolean);
    sortKey.split(',').forEach((k, i) => out.push([k, dirs[i] !== undefined ? dirOf(dirs[i]) : 'asc']));
  }
  for (const [k] of out) {
    if (!(k in attributes)) throw new SimError(400, `Supplied sort key '${k}' is not valid.`);
  }
  return out;
}

function matches(value: unknown, wanted: string): boolean {
  if (typeof value === 'boolean') return ['true', '1', 'yes', 'on'].includes(wanted.toLowerCase()) === value;
  if (value === null || value === undefined) return wanted === '' || wanted.toLowerCase() === 'none';
  return scalar(value) === wanted;
}

function scalar(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? '';
}

function compareValues(a: unknown, b: unknown): number {
  const x = a ?? '';
  const y = b ?? '';
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  const sx = scalar(x);
  const sy = scalar(y);
  return sx < sy ? -1 : sx > sy ? 1 : 0;
}

/** First index whose record sorts at or after `marker` in (created_at, id) order. */
function lowerBound<T extends Ordered>(items: readonly T[], marker: Ordered): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareCreated(items[mid]!, marker) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** tags (all of), tags-any, not-tags (not all of), not-tags-any; comma-separated and repeatable. */
function parseTagFilters(q: URLSearchParams): ((tags: readonly string[]) => boolean) | undefined {
  const list = (key: string) =>
    q
      .getAll(key)
      .flatMap((v) => v.split(','))
      .filter(Boolean);
  const all = list('tags');
  const any = list('tags-any');
  const notAll = list('not-tags');
  const notAny = list('not-tags-any');
  if (all.length + any.length + notAll.length + notAny.length === 0) return undefined;
  return (tags) => {
    const has = (t: string) => tags.includes(t);
    if (all.length > 0 && !all.every(has)) return false;
    if (any.length > 0 && !any.some(has)) return false;
    if (notAll.length > 0 && notAll.every(has)) return false;
    if (notAny.length > 0 && notAny.some(has)) return false;
    return true;
  };
}
