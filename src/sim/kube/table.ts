/**
 * `meta.k8s.io/v1` Table rendering for `kubectl get` (Accept `…;as=Table;g=meta.k8s.io;v=v1`):
 * column definitions, one row per object with its cells, and the row's object as
 * PartialObjectMetadata, the whole object or nothing (`includeObject`).
 */
import { asObj, asString, metaOf, type Obj } from './json.ts';
import type { ResourceDef, TableColumn } from './types.ts';

/** apimachinery's `duration.HumanDuration`. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365;
    const y = Math.floor(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

/** The AGE cell: time since a timestamp, `<unknown>` when absent. */
export function since(ts: unknown, now: number): string {
  const s = asString(ts);
  if (!s) return '<unknown>';
  const t = Date.parse(s);
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

export const NAME_COLUMN: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description:
    'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  priority: 0,
  cell: (o) => asString(metaOf(o).name) ?? '',
};

export const AGE_COLUMN: TableColumn = {
  name: 'Age',
  type: 'string',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  priority: 0,
  cell: (o, now) => since(metaOf(o).creationTimestamp, now),
};

export function col(
  name: string,
  cell: (o: Obj, now: number) => unknown,
  opts: { type?: TableColumn['type']; priority?: number; description?: string } = {},
): TableColumn {
  return {
    name,
    type: opts.type ?? 'string',
    description: opts.description ?? name,
    priority: opts.priority ?? 0,
    cell,
  };
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

function partialMetadata(o: Obj): Obj {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: o.metadata ?? {} };
}

export function toTable(
  def: ResourceDef,
  objects: Obj[],
  listMeta: Obj,
  include: IncludeObject,
  now: number,
  noHeaders = false,
): Obj {
  const columns = def.columns;
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: noHeaders
      ? null
      : columns.map((c) => ({
          name: c.name,
          type: c.type,
          format: c.format ?? '',
          description: c.description,
          priority: c.priority,
        })),
    rows: objects.map((o) => ({
      cells: columns.map((c) => c.cell(o, now)),
      object: include === 'None' ? null : include === 'Object' ? o : partialMetadata(o),
    })),
  };
}

/** Comma-joined keys of a map (`Data` counts, selectors). */
export function mapText(v: unknown): string {
  const o = asObj(v);
  if (!o || Object.keys(o).length === 0) return '<none>';
  return Object.entries(o)
    .map(([k, x]) => `${k}=${String(x)}`)
    .join(',');
}
