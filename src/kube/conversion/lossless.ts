/**
 * Lossless conversion between two versions of a kind, declared as field mappings: each mapping
 * takes its fields out of the object in one version and puts their counterpart into the other;
 * everything no mapping names is copied as is (the kinds' schemas keep unknown fields). What a
 * version cannot hold is kept, as Cluster API keeps it, in the annotation
 * `cluster.x-k8s.io/conversion-data` of the converted object: for each mapping whose value does
 * not come back unchanged, the value it had and the value it was converted to. Converting back
 * restores the kept value when the converted one is still what it was made (nobody changed it in
 * the meantime); a changed one is converted afresh.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ConvertibleObject, KindConversion } from './types.ts';

/** Cluster API's annotation for what one version of an object cannot hold. */
export const CONVERSION_DATA_ANNOTATION = 'cluster.x-k8s.io/conversion-data';

type Obj = Record<string, unknown>;

/**
 * One field (or group of fields) in both versions, `undefined` being "not set". The methods may
 * narrow their value parameters to the shape they convert.
 */
export interface FieldMapping {
  /** Its name in the annotation. */
  name: string;
  /** Reads and removes the fields from an object of the first version (a private copy). */
  takeA(obj: Obj): unknown;
  putA(obj: Obj, value: unknown): void;
  takeB(obj: Obj): unknown;
  putB(obj: Obj, value: unknown): void;
  /** The value in the other version; `obj` is the object being converted (its namespace, say). */
  toB(value: unknown, obj: Obj): unknown;
  toA(value: unknown, obj: Obj): unknown;
}

/** Reads and removes fields of an object, and puts them back. */
export interface FieldAccess {
  take: (obj: Obj) => unknown;
  put: (obj: Obj, value: unknown) => void;
}

/** A path of object keys: take removes the leaf, put sets it (creating parents only for a value). */
export function at(...path: string[]): FieldAccess {
  return {
    take: (obj) => {
      let node: unknown = obj;
      for (const key of path.slice(0, -1)) {
        if (!isObj(node)) return undefined;
        node = node[key];
      }
      if (!isObj(node)) return undefined;
      const leaf = path[path.length - 1] as string;
      const value = node[leaf];
      delete node[leaf];
      return value;
    },
    put: (obj, value) => {
      if (value === undefined) return;
      let node: Obj = obj;
      for (const key of path.slice(0, -1)) {
        const next = node[key];
        if (!isObj(next)) node[key] = {};
        node = node[key] as Obj;
      }
      node[path[path.length - 1] as string] = value;
    },
  };
}

/** A field that only version B has; in A it lives in the annotation only. */
export function onlyInB(name: string, ...path: string[]): FieldMapping {
  const p = at(...path);
  return {
    name,
    takeA: () => undefined,
    putA: () => {},
    takeB: p.take,
    putB: p.put,
    toB: () => undefined,
    toA: () => undefined,
  };
}

/** The same value at different paths. */
export function moved(name: string, pathA: string[], pathB: string[]): FieldMapping {
  const a = at(...pathA);
  const b = at(...pathB);
  return { name, takeA: a.take, putA: a.put, takeB: b.take, putB: b.put, toB: (v) => v, toA: (v) => v };
}

interface Kept {
  from: unknown;
  to: unknown;
}

/**
 * A KindConversion between versions `a` and `b` of one kind from its field mappings. Each mapping
 * owns its paths: two mappings never take the same field of one version.
 */
export function losslessConversion(def: {
  group: string;
  kind: string;
  a: string;
  b: string;
  fields: readonly FieldMapping[];
}): KindConversion {
  const { group, kind, a, b } = def;
  return {
    group,
    kind,
    versions: [a, b],
    convert(obj, toVersion) {
      const fromVersion = obj.apiVersion.slice(obj.apiVersion.lastIndexOf('/') + 1);
      if (fromVersion === toVersion) return obj;
      const toB = toVersion === b;
      const src = structuredClone(obj) as Obj;
      const out = structuredClone(obj) as Obj;
      const kept = readKept(out, toVersion);
      const nowKept: Record<string, Kept> = {};
      // Every mapping takes its fields first, then each puts its own: one version's field may sit
      // at the path of another field in the other version (v1beta1 and v1beta2 `status.conditions`).
      const taken = def.fields.map((f) => (toB ? f.takeA(out) : f.takeB(out)));
      def.fields.forEach((f, i) => {
        const value = taken[i];
        const previous = kept[f.name];
        let converted: unknown;
        // Kept from the last conversion the other way, and not changed since: restored as it was.
        if (previous && isDeepStrictEqual(normal(value), normal(previous.to))) converted = previous.from;
        else converted = toB ? f.toB(value, src) : f.toA(value, src);
        // Does it come back? If not, what it was is kept for the way back.
        const back = toB ? f.toA(converted, src) : f.toB(converted, src);
        if (!isDeepStrictEqual(normal(back), normal(value))) nowKept[f.name] = { from: value, to: converted };
        if (toB) f.putB(out, converted);
        else f.putA(out, converted);
      });
      out['apiVersion'] = `${group}/${toVersion}`;
      writeKept(out, toVersion === a ? b : a, nowKept);
      return out as ConvertibleObject;
    },
  };
}

/** The values kept for `version` (restorable when converting to it); the annotation is removed. */
function readKept(obj: Obj, version: string): Record<string, Kept> {
  const meta = isObj(obj['metadata']) ? obj['metadata'] : undefined;
  const annotations =
    meta && isObj(meta['annotations']) ? (meta['annotations'] as Record<string, string>) : undefined;
  const raw = annotations?.[CONVERSION_DATA_ANNOTATION];
  if (raw === undefined || !annotations || !meta) return {};
  delete annotations[CONVERSION_DATA_ANNOTATION];
  if (Object.keys(annotations).length === 0) delete meta['annotations'];
  try {
    const parsed: unknown = JSON.parse(raw);
    const forVersion = isObj(parsed) ? parsed[version] : undefined;
    return isObj(forVersion) ? (forVersion as Record<string, Kept>) : {};
  } catch {
    // Not ours (or damaged): nothing is restored, every field is converted afresh.
    return {};
  }
}

function writeKept(obj: Obj, version: string, kept: Record<string, Kept>): void {
  if (Object.keys(kept).length === 0) return;
  const meta = isObj(obj['metadata']) ? obj['metadata'] : (obj['metadata'] = {});
  const annotations = isObj(meta['annotations']) ? meta['annotations'] : (meta['annotations'] = {});
  annotations[CONVERSION_DATA_ANNOTATION] = JSON.stringify({ [version]: kept });
}

/** JSON's view of a value: `undefined` members dropped, as the API server stores them. */
function normal(v: unknown): unknown {
  return v === undefined ? undefined : (JSON.parse(JSON.stringify(v)) as unknown);
}

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
