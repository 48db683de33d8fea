/**
 * Neutron list semantics for every collection: validated filters (filter-validation), empty-string
 * filters, tag filters, `fields`, sort_key/sort_dir, and marker pagination with absolute
 * `<collection>_links` built as neutron.api.api_common does.
 */
import type { SimError } from '../core/errors.ts';
import { matchesTagFilters } from '../core/query.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import type { Collection } from './collection.ts';
import { lowerBound } from './collection.ts';
import { asText, badRequest, httpBadRequest, pyRepr } from './errors.ts';
import { toBoolean, toInt } from './schema.ts';
import { pickFields, type View } from './views.ts';

export interface FilterSpec<T> {
  kind: 'str' | 'bool' | 'int';
  /** The record's value; defaults to the same-named field. */
  get?: (rec: T) => unknown;
  /** Ignored for non-admins (they cannot see the attribute either). */
  admin?: boolean;
  /** Usable as sort_key (scalars only). */
  sort?: boolean;
}

export interface ListDef<T extends { id: string; project_id: string; tags?: string[] }> {
  collection: string;
  source: Collection<T>;
  filters: Readonly<Record<string, FilterSpec<T>>>;
  /** Filters with their own matching (`fixed_ips=ip_address=...`). */
  special?: Readonly<Record<string, (values: string[]) => (rec: T) => boolean>>;
  /** Index lookups: ids that may match, given the parsed filters; undefined to scan all. */
  candidates?: (filters: ReadonlyMap<string, string[]>) => Iterable<string> | undefined;
  visible: (rec: T) => boolean;
  markerNotFound: (id: string) => SimError;
  render: (rec: T) => View;
  isAdmin: boolean;
}

const CONTROL = new Set([
  'fields',
  'sort_key',
  'sort_dir',
  'limit',
  'marker',
  'page_reverse',
  'changed_since',
]);
const TAG_FILTERS = new Set(['tags', 'tags-any', 'not-tags', 'not-tags-any']);
const PROJECT_FILTERS = new Set(['tenant_id', 'project_id']);

type Pred<T> = (rec: T) => boolean;

function buildPredicates<T extends { id: string; project_id: string; tags?: string[] }>(
  def: ListDef<T>,
  query: URLSearchParams,
) {
  const groups = new Map<string, string[]>();
  const invalid: string[] = [];
  for (const [k, v] of query) {
    if (CONTROL.has(k) || TAG_FILTERS.has(k)) continue;
    if (!(k in def.filters) && !def.special?.[k] && !PROJECT_FILTERS.has(k)) {
      if (!invalid.includes(k)) invalid.push(k);
      continue;
    }
    const list = groups.get(k) ?? [];
    list.push(v);
    groups.set(k, list);
  }
  if (invalid.length > 0) throw httpBadRequest(`${pyRepr(invalid)} is invalid attribute for filtering`);
  const preds: Pred<T>[] = [];
  for (const [k, values] of groups) {
    const special = def.special?.[k];
    if (special) {
      preds.push(special(values));
      continue;
    }
    if (PROJECT_FILTERS.has(k)) {
      const set = new Set(values);
      preds.push((r) => set.has(r.project_id));
      continue;
    }
    const spec = def.filters[k]!;
    if (spec.admin && !def.isAdmin) continue;
    const get = spec.get ?? ((r: T) => (r as Record<string, unknown>)[k]);
    if (spec.kind === 'bool') {
      const wanted = new Set(values.map((v) => toBoolean(v)));
      preds.push((r) => wanted.has(get(r) as boolean));
    } else if (spec.kind === 'int') {
      const wanted = new Set(values.map((v) => toInt(v)));
      preds.push((r) => wanted.has(get(r) as number));
    } else {
      const wanted = new Set(values);
      preds.push((r) => {
        const v = get(r);
        return v !== null && v !== undefined && wanted.has(asText(v));
      });
    }
  }
  if ([...TAG_FILTERS].some((k) => query.has(k))) preds.push((r) => matchesTagFilters(r.tags ?? [], query));
  const since = query.get('changed_since');
  if (since)
    preds.push((r) => asText((r as Record<string, unknown>).updated_at ?? '') >= since.replace(/\.\d+/, ''));
  return { preds, groups };
}

interface SortKey {
  key: string;
  asc: boolean;
}

function parseSorts<T>(
  def: ListDef<T & { id: string; project_id: string }>,
  query: URLSearchParams,
): SortKey[] {
  const keys = query.getAll('sort_key').filter(Boolean);
  const dirs = query.getAll('sort_dir').filter(Boolean);
  if (keys.length !== dirs.length) throw httpBadRequest('The number of sort_keys and sort_dirs must be same');
  const sortable = (k: string) => k === 'id' || PROJECT_FILTERS.has(k) || (def.filters[k]?.sort ?? false);
  const absent = keys.filter((k) => !sortable(k));
  if (absent.length > 0) throw httpBadRequest(`${pyRepr(absent)} is invalid attribute for sort_keys`);
  const badDirs = dirs.filter((d) => d !== 'asc' && d !== 'desc');
  if (badDirs.length > 0) {
    throw httpBadRequest(
      `${pyRepr(badDirs)} is invalid value for sort_dirs, valid value is 'asc' and 'desc'`,
    );
  }
  return keys.map((key, i) => ({
    key: PROJECT_FILTERS.has(key) ? 'project_id' : key,
    asc: dirs[i] === 'asc',
  }));
}

function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const sa = asText(a);
  const sb = asText(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

function parseLimit(query: URLSearchParams): number | undefined {
  const raw = query.get('limit');
  if (raw === null || raw === '') return undefined;
  if (!/^\d+$/.test(raw.trim()))
    throw badRequest('limit', `Limit must be an integer 0 or greater and not '${raw}'`);
  const n = Number(raw);
  return n === 0 ? undefined : n;
}

/** Python's urlencode of the request's parameters after Neutron's pops and sets. */
function linkHref(req: SimRequest, marker: string | undefined, reverse: boolean): string {
  const params = new URLSearchParams(req.query);
  params.delete('marker');
  params.delete('page_reverse');
  if (marker !== undefined) params.append('marker', marker);
  if (reverse) params.append('page_reverse', 'True');
  return `${req.baseUrl}${req.path}?${params.toString()}`;
}

export function listResponse<T extends { id: string; project_id: string; tags?: string[] }>(
  req: SimRequest,
  def: ListDef<T>,
): SimResponse {
  const query = req.query;
  const { preds, groups } = buildPredicates(def, query);
  const sorts = parseSorts(def, query);
  const limit = parseLimit(query);
  const reverse = (query.get('page_reverse') ?? 'False').toLowerCase() === 'true';
  const marker = limit !== undefined ? (query.get('marker') ?? undefined) : undefined;
  let markerRec: T | undefined;
  if (marker) {
    markerRec = def.source.get(marker);
    if (!markerRec || !def.visible(markerRec)) throw def.markerNotFound(marker);
  }
  const matches = (r: T) => def.visible(r) && preds.every((p) => p(r));

  const subset = def.candidates?.(groups);
  const recs: readonly T[] =
    subset === undefined
      ? def.source.sorted
      : [...new Set(subset)].sort().flatMap((id) => def.source.get(id) ?? []);
  let page: T[];
  const byIdOnly = sorts.length === 0 || (sorts.length === 1 && sorts[0]!.key === 'id');
  if (byIdOnly) {
    const asc = sorts[0]?.asc ?? true;
    // Walking forward in display order, or backward for page_reverse: `step` is the array direction.
    const forward = asc !== reverse;
    const step = forward ? 1 : -1;
    let i: number;
    if (marker !== undefined) {
      const pos = lowerBound(recs, marker);
      i = forward ? (recs[pos]?.id === marker ? pos + 1 : pos) : pos - 1;
    } else {
      i = forward ? 0 : recs.length - 1;
    }
    page = [];
    for (; i >= 0 && i < recs.length; i += step) {
      const rec = recs[i]!;
      if (!matches(rec)) continue;
      page.push(rec);
      if (limit !== undefined && page.length >= limit) break;
    }
    // A reversed page was walked against the display order.
    if (reverse) page.reverse();
  } else {
    // Sort keys are extracted once per record, not once per comparison.
    const keyed = recs
      .filter(matches)
      .map((rec) => ({ rec, keys: sorts.map((s) => valueOf(def, rec, s.key)) }));
    const cmp = (a: { rec: T; keys: unknown[] }, b: { rec: T; keys: unknown[] }) => {
      for (let k = 0; k < sorts.length; k++) {
        const c = compareValues(a.keys[k], b.keys[k]);
        if (c !== 0) return sorts[k]!.asc ? c : -c;
      }
      return a.rec.id < b.rec.id ? -1 : a.rec.id > b.rec.id ? 1 : 0;
    };
    keyed.sort(cmp);
    let slice = keyed;
    if (markerRec) {
      const m = { rec: markerRec, keys: sorts.map((s) => valueOf(def, markerRec, s.key)) };
      slice = reverse ? keyed.filter((r) => cmp(r, m) < 0) : keyed.filter((r) => cmp(r, m) > 0);
    }
    if (limit !== undefined)
      slice = reverse ? slice.slice(Math.max(0, slice.length - limit)) : slice.slice(0, limit);
    page = slice.map((k) => k.rec);
  }

  const body: Record<string, unknown> = {
    [def.collection]: page.map((r) => pickFields(def.render(r), query)),
  };
  if (limit !== undefined) {
    const links: { rel: string; href: string }[] = [];
    if (!(page.length < limit && !reverse))
      links.push({ rel: 'next', href: linkHref(req, page[page.length - 1]?.id, false) });
    if (!(page.length < limit && reverse))
      links.push({ rel: 'previous', href: linkHref(req, page[0]?.id, true) });
    body[`${def.collection}_links`] = links;
  }
  return { status: 200, body };
}

function valueOf<T extends { id: string; project_id: string }>(
  def: ListDef<T>,
  rec: T,
  key: string,
): unknown {
  const spec = def.filters[key];
  if (spec?.get) return spec.get(rec);
  return (rec as Record<string, unknown>)[key];
}
