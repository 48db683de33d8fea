/** Glance's list query: filters, sort keys, limits and the keyset order behind `marker`. */
import { SimError } from '../core/errors.ts';
import type { ImageRecord, Viewer } from './record.ts';

const SORT_KEYS = [
  'name',
  'status',
  'container_format',
  'disk_format',
  'size',
  'id',
  'created_at',
  'updated_at',
];
const VISIBILITIES = ['public', 'private', 'shared', 'community', 'all'];
const MEMBER_STATUSES = ['accepted', 'pending', 'rejected', 'all'];
/** Query keys that are not image property filters. */
const RESERVED_QUERY = new Set([
  'limit',
  'marker',
  'sort',
  'sort_key',
  'sort_dir',
  'member_status',
  'visibility',
  'os_hidden',
  'tag',
]);
const DEFAULT_LIMIT = 25;
const MAX_LIMIT = 1000;

export interface SortSpec {
  key: string;
  dir: 'asc' | 'desc';
}

/** The predicate of one listing: the query's filters and what the viewer may see. */
export function listFilter(
  viewer: Viewer,
  query: URLSearchParams,
  canSee: (viewer: Viewer, img: ImageRecord) => boolean,
): (img: ImageRecord) => boolean {
  const visibility = query.get('visibility');
  if (visibility !== null && !VISIBILITIES.includes(visibility)) {
    throw new SimError(400, `Invalid visibility value: ${visibility}`, { type: 'BadRequest' });
  }
  const memberStatus = query.get('member_status');
  if (memberStatus !== null && !MEMBER_STATUSES.includes(memberStatus)) {
    throw new SimError(400, `Invalid status value: ${memberStatus}`, { type: 'BadRequest' });
  }
  const hidden = parseBool(query.get('os_hidden'), 'os_hidden') ?? false;
  const tags = query.getAll('tag');
  const exact: [string, string][] = [];
  for (const [k, v] of query) if (!RESERVED_QUERY.has(k)) exact.push([k, v]);
  const sizeMin = query.get('size_min');
  const sizeMax = query.get('size_max');
  const project = viewer.projectId;
  return (img) => {
    if (img.os_hidden !== hidden) return false;
    if (visibility !== null && visibility !== 'all' && img.visibility !== visibility) return false;
    if (!canSee(viewer, img)) return false;
    // Community images are listed only on request or to their owner.
    if (visibility === null && !viewer.isAdmin && img.visibility === 'community' && img.owner !== project)
      return false;
    if (tags.length > 0 && !tags.every((t) => img.tags.includes(t))) return false;
    if (sizeMin !== null && (img.size === null || img.size < Number(sizeMin))) return false;
    if (sizeMax !== null && (img.size === null || img.size > Number(sizeMax))) return false;
    for (const [k, v] of exact) {
      if (k === 'size_min' || k === 'size_max') continue;
      if (!matchesValue(fieldValue(img, k), v)) return false;
    }
    return true;
  };
}

export function parseGlanceLimit(value: string | null): number {
  if (value === null) return DEFAULT_LIMIT;
  if (!/^-?\d+$/.test(value.trim()))
    throw new SimError(400, 'limit param must be an integer', { type: 'BadRequest' });
  const n = Number(value);
  if (n < 0) throw new SimError(400, 'limit param must be positive', { type: 'BadRequest' });
  return Math.min(n, MAX_LIMIT);
}

/** `sort=name:asc,size` or repeated `sort_key`/`sort_dir`; `created_at desc, id desc` by default. */
export function parseSort(query: URLSearchParams): SortSpec[] {
  const specs: SortSpec[] = [];
  const sort = query.get('sort');
  const keys = query.getAll('sort_key');
  const dirs = query.getAll('sort_dir');
  if (sort !== null && (keys.length > 0 || dirs.length > 0)) {
    throw new SimError(400, 'The sort and sort_key/sort_dir parameters cannot be used together.', {
      type: 'BadRequest',
    });
  }
  if (sort !== null) {
    for (const part of sort.split(',')) {
      const [key = '', dir = 'desc'] = part.trim().split(':');
      specs.push({ key: checkSortKey(key), dir: checkSortDir(dir) });
    }
  } else {
    keys.forEach((k, i) =>
      specs.push({ key: checkSortKey(k), dir: checkSortDir(dirs[i] ?? dirs[0] ?? 'desc') }),
    );
  }
  if (specs.length === 0) specs.push({ key: 'created_at', dir: 'desc' });
  if (!specs.some((s) => s.key === 'id')) specs.push({ key: 'id', dir: specs[0]?.dir ?? 'desc' });
  return specs;
}

function checkSortKey(key: string): string {
  if (!SORT_KEYS.includes(key)) {
    throw new SimError(
      400,
      `Invalid sort key: ${key}. It must be one of the following: ${SORT_KEYS.join(', ')}.`,
      {
        type: 'BadRequest',
      },
    );
  }
  return key;
}

function checkSortDir(dir: string): 'asc' | 'desc' {
  if (dir !== 'asc' && dir !== 'desc') {
    throw new SimError(400, `Invalid sort direction: ${dir}`, { type: 'BadRequest' });
  }
  return dir;
}

export function comparator(specs: SortSpec[]): (a: ImageRecord, b: ImageRecord) => number {
  return (a, b) => {
    for (const s of specs) {
      let c: number;
      // Timestamps have second precision: creation order breaks the ties, so "newest" is stable.
      if (s.key === 'created_at') c = compareValues(a.created_at, b.created_at) || a.seq - b.seq;
      else c = compareValues(a[s.key as keyof ImageRecord], b[s.key as keyof ImageRecord]);
      if (c !== 0) return s.dir === 'asc' ? c : -c;
    }
    return 0;
  };
}

function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  // NULLs sort first in ascending order, as in Glance's MySQL.
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = scalarText(a);
  const sb = scalarText(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

function fieldValue(img: ImageRecord, key: string): unknown {
  if (key in img && key !== 'properties' && key !== 'seq' && key !== 'stored')
    return img[key as keyof ImageRecord];
  return img.properties[key];
}

/** Glance filter values: exact, or `in:a,b` for id, name, status, disk/container format. */
function matchesValue(actual: unknown, wanted: string): boolean {
  const text = actual === null || actual === undefined ? undefined : scalarText(actual);
  if (wanted.startsWith('in:')) {
    return text !== undefined && wanted.slice(3).split(',').includes(text);
  }
  if (typeof actual === 'boolean') return String(actual) === wanted.toLowerCase();
  return text === wanted;
}

function scalarText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

function parseBool(value: string | null, name: string): boolean | undefined {
  if (value === null) return undefined;
  const v = value.toLowerCase();
  if (['true', '1', 'yes', 'on', 't', 'y'].includes(v)) return true;
  if (['false', '0', 'no', 'off', 'f', 'n'].includes(v)) return false;
  throw new SimError(
    400,
    `Failed to parse ${name}: Unrecognized value '${value}', acceptable values are: '0', '1', 'f', 'false', 'n', 'no', 'off', 'on', 't', 'true', 'y', 'yes'`,
    {
      type: 'BadRequest',
    },
  );
}
