/**
 * Helpers for the untyped JSON the API server stores: objects arrive as arbitrary JSON and are
 * kept that way (like the real server's unstructured handling of custom resources), so every
 * access narrows from `unknown` here instead of trusting a cast.
 */

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function asObj(v: unknown): Obj | undefined {
  return isObj(v) ? v : undefined;
}

export function asArray(v: unknown): unknown[] | undefined {
  return Array.isArray(v) ? v : undefined;
}

export function asString(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function asNumber(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** The object's `metadata`, created empty when absent so callers can write to it. */
export function meta(o: Obj): Obj {
  let m = o.metadata;
  if (!isObj(m)) {
    m = {};
    o.metadata = m;
  }
  return m as Obj;
}

/** Reads `metadata` without creating it. */
export function metaOf(o: Obj): Obj {
  return asObj(o.metadata) ?? {};
}

export function nameOf(o: Obj): string {
  return asString(metaOf(o).name) ?? '';
}

export function namespaceOf(o: Obj): string {
  return asString(metaOf(o).namespace) ?? '';
}

export function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Obj;
  const bo = b as Obj;
  const ak = Object.keys(ao);
  if (ak.length !== Object.keys(bo).length) return false;
  for (const k of ak) {
    if (!Object.hasOwn(bo, k) || !deepEqual(ao[k], bo[k])) return false;
  }
  return true;
}

/** Go's `%q`: a double-quoted string with JSON escapes (close enough for messages). */
export function quote(s: string): string {
  return JSON.stringify(s);
}

/** A scalar as text (printer cells, field selectors); objects and arrays as JSON. */
export function scalarText(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}
