/** Cinder's list query: filters, sort keys, limits and the default newest-first order. */
import { badRequest, invalidInput, pyish } from './errors.ts';
import type { Caller, VolumeRecord } from './store.ts';

/** osapi_max_limit: the default and largest page. */
export const MAX_LIMIT = 1000;

const SORT_KEYS = new Set([
  'id',
  'name',
  'size',
  'status',
  'created_at',
  'updated_at',
  'availability_zone',
  'bootable',
  'project_id',
  'user_id',
]);

export interface SortSpec {
  key: string;
  dir: 'asc' | 'desc';
}

export const DEFAULT_SORT: SortSpec[] = [
  { key: 'created_at', dir: 'desc' },
  { key: 'id', dir: 'desc' },
];

/** `sort=size:asc,name` or `sort_key`/`sort_dir`; empty means Cinder's default (newest first). */
export function parseSort(query: URLSearchParams): SortSpec[] {
  const specs: SortSpec[] = [];
  const sort = query.get('sort');
  if (sort !== null) {
    for (const part of sort.split(',')) {
      const [key = '', dir = 'desc'] = part.trim().split(':');
      specs.push({ key, dir: dir.toLowerCase() as 'asc' | 'desc' });
    }
  } else if (query.get('sort_key') !== null) {
    specs.push({
      key: query.get('sort_key') ?? '',
      dir: (query.get('sort_dir') ?? 'desc').toLowerCase() as 'asc' | 'desc',
    });
  }
  for (const s of specs) {
    if (!SORT_KEYS.has(s.key)) throw invalidInput(`Invalid sort key: ${s.key}`);
    if (s.dir !== 'asc' && s.dir !== 'desc')
      throw invalidInput(`Unknown sort direction, must be 'desc' or 'asc'`);
  }
  if (specs.length > 0 && !specs.some((s) => s.key === 'id')) specs.push({ key: 'id', dir: specs[0]!.dir });
  return specs;
}

export function comparator(specs: SortSpec[]): (a: VolumeRecord, b: VolumeRecord) => number {
  return (a, b) => {
    for (const s of specs) {
      const c =
        s.key === 'created_at'
          ? a.seq - b.seq
          : compareValues(a[s.key as keyof VolumeRecord], b[s.key as keyof VolumeRecord]);
      if (c !== 0) return s.dir === 'asc' ? c : -c;
    }
    return 0;
  };
}

/** NULLs first in ascending order, as MySQL sorts them. */
function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = pyish(a);
  const sb = pyish(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

export function parseLimit(value: string | null): number {
  if (value === null) return MAX_LIMIT;
  if (!/^-?\d+$/.test(value.trim())) throw badRequest('limit param must be an integer');
  const n = Number(value);
  if (n < 0) throw badRequest('limit param must be positive');
  return Math.min(n, MAX_LIMIT);
}

export function isTrue(value: string | null | undefined): boolean {
  return (
    value !== null &&
    value !== undefined &&
    ['1', 't', 'true', 'on', 'y', 'yes'].includes(value.toLowerCase())
  );
}

export function listFilter(
  caller: Caller,
  query: URLSearchParams,
  allTenants: boolean,
): (v: VolumeRecord) => boolean {
  const project = allTenants ? query.get('project_id') : caller.projectId;
  const name = query.get('name');
  const nameLike = query.get('name~');
  const status = query.get('status');
  const bootable = query.get('bootable');
  const az = query.get('availability_zone');
  const size = query.get('size');
  const metadata = parseMetadataFilter(query.get('metadata'));
  return (v) => {
    if (project !== null && v.project_id !== project) return false;
    if (name !== null && v.name !== name) return false;
    if (nameLike !== null && !(v.name ?? '').includes(nameLike)) return false;
    if (status !== null && v.status !== status) return false;
    if (bootable !== null && v.bootable !== isTrue(bootable)) return false;
    if (az !== null && v.availability_zone !== az) return false;
    if (size !== null && String(v.size) !== size) return false;
    for (const [k, val] of metadata) if (v.metadata[k] !== val) return false;
    return true;
  };
}

/** `metadata={'k': 'v'}` arrives as a Python dict literal; JSON works too. */
function parseMetadataFilter(value: string | null): [string, string][] {
  if (value === null) return [];
  for (const text of [value, value.replace(/'/g, '"')]) {
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
        return Object.entries(parsed as Record<string, unknown>).map(([k, v]) => [k, String(v)]);
      }
    } catch {
      // try the next spelling
    }
  }
  throw invalidInput(`Invalid filter metadata: ${value}`);
}
