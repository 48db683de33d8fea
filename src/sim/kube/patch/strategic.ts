/**
 * Strategic merge patch (`application/strategic-merge-patch+json`) as apimachinery's
 * `strategicpatch.StrategicMergePatch` applies it: maps merge, `null` deletes, lists with a
 * `patchStrategy: merge` merge by `patchMergeKey` (or as sets of primitives), other lists replace,
 * and the directives `$patch` (replace/merge/delete), `$retainKeys`, `$setElementOrder/<field>`
 * and `$deleteFromPrimitiveList/<field>` are honoured. Field semantics come from {@link Hints}.
 */
import { deepEqual, isObj, type Obj } from '../json.ts';
import type { FieldHint, Hints } from './hints.ts';

export class StrategicPatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StrategicPatchError';
  }
}

const MAX_DEPTH = 100;

export function strategicMergePatch(original: unknown, patch: unknown, hints: Hints): unknown {
  if (!isObj(patch)) throw new StrategicPatchError('strategic merge patch must be a JSON object');
  const base = isObj(original) ? structuredClone(original) : {};
  const merged = mergeMap(base, patch, [], hints, 0);
  return merged ?? {};
}

function directive(o: Obj): string | undefined {
  const d = o.$patch;
  return typeof d === 'string' ? d : undefined;
}

/** Removes every `$…` directive from a value that is being set wholesale. */
function stripDirectives(v: unknown): unknown {
  if (Array.isArray(v))
    return v
      .filter((x) => !(isObj(x) && directive(x) !== undefined && Object.keys(x).length === 1))
      .map(stripDirectives);
  if (!isObj(v)) return v;
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) {
    if (k.startsWith('$')) continue;
    out[k] = stripDirectives(x);
  }
  return out;
}

function mergeMap(original: Obj, patch: Obj, path: string[], hints: Hints, depth: number): Obj | undefined {
  if (depth > MAX_DEPTH) throw new StrategicPatchError('patch nesting too deep');
  const d = directive(patch);
  if (d === 'delete') return undefined;
  if (d === 'replace') return stripDirectives(patch) as Obj;
  if (d !== undefined && d !== 'merge') throw new StrategicPatchError(`Unknown patch type: ${d}`);

  const out = original;
  const orders = new Map<string, unknown[]>();
  let retainKeys: string[] | undefined;
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch') continue;
    if (k === '$retainKeys') {
      if (!Array.isArray(v)) throw new StrategicPatchError('$retainKeys must be a list');
      retainKeys = v.filter((x): x is string => typeof x === 'string');
      continue;
    }
    if (k.startsWith('$setElementOrder/')) {
      if (!Array.isArray(v)) throw new StrategicPatchError(`${k} must be a list`);
      orders.set(k.slice('$setElementOrder/'.length), v);
      continue;
    }
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const f = k.slice('$deleteFromPrimitiveList/'.length);
      const cur = out[f];
      if (Array.isArray(cur) && Array.isArray(v)) {
        out[f] = cur.filter((x) => !v.some((y) => deepEqual(x, y)));
      }
      continue;
    }
    const childPath = [...path, k];
    if (v === null) {
      delete out[k];
      continue;
    }
    const cur = out[k];
    if (isObj(v)) {
      const hint = hints.get(childPath);
      if (isObj(cur) && !hint?.atomicMap) {
        const merged = mergeMap(cur, v, childPath, hints, depth + 1);
        if (merged === undefined) delete out[k];
        else out[k] = merged;
      } else {
        if (directive(v) === 'delete') delete out[k];
        else out[k] = stripDirectives(v);
      }
      continue;
    }
    if (Array.isArray(v)) {
      const hint = hints.get(childPath);
      if (hint?.patchStrategy?.includes('merge')) {
        out[k] = mergeList(Array.isArray(cur) ? cur : [], v, childPath, hint, hints, depth + 1);
      } else {
        out[k] = stripDirectives(v);
      }
      continue;
    }
    out[k] = v;
  }
  for (const [f, order] of orders) {
    const cur = out[f];
    if (Array.isArray(cur)) out[f] = applyOrder(cur, order, hints.get([...path, f])?.patchMergeKey);
  }
  if (retainKeys) {
    for (const k of Object.keys(out)) if (!retainKeys.includes(k)) delete out[k];
  }
  return out;
}

function mergeList(
  original: unknown[],
  patch: unknown[],
  path: string[],
  hint: FieldHint,
  hints: Hints,
  depth: number,
): unknown[] {
  // A `{"$patch": "replace"}` element replaces the whole list with the other elements.
  if (patch.some((x) => isObj(x) && directive(x) === 'replace')) {
    return patch.filter((x) => !(isObj(x) && directive(x) === 'replace')).map(stripDirectives);
  }
  const key = hint.patchMergeKey;
  if (!key) {
    // A set of primitives: union, in original order, patch additions appended.
    const out = [...original];
    for (const x of patch) if (!out.some((y) => deepEqual(x, y))) out.push(x);
    return out;
  }
  const out = original.map((x) => (isObj(x) ? structuredClone(x) : x));
  for (const item of patch) {
    if (!isObj(item))
      throw new StrategicPatchError(
        `map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`,
      );
    if (!Object.hasOwn(item, key)) {
      throw new StrategicPatchError(
        `map: ${JSON.stringify(item)} does not contain declared merge key: ${key}`,
      );
    }
    const idx = out.findIndex((x) => isObj(x) && deepEqual(x[key], item[key]));
    if (directive(item) === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
      continue;
    }
    if (idx >= 0) {
      const merged = mergeMap(out[idx] as Obj, item, path, hints, depth + 1);
      if (merged === undefined) out.splice(idx, 1);
      else out[idx] = merged;
    } else {
      out.push(stripDirectives(item));
    }
  }
  return out;
}

/** `$setElementOrder`: listed elements first, in that order; the rest keep their relative order. */
function applyOrder(list: unknown[], order: unknown[], key: string | undefined): unknown[] {
  const idOf = (x: unknown) => JSON.stringify(key && isObj(x) ? x[key] : x);
  const rank = new Map<string, number>();
  order.forEach((o, i) => rank.set(idOf(o), i));
  const indexed = list.map((x, i) => ({ x, i, r: rank.get(idOf(x)) }));
  indexed.sort((a, b) => {
    if (a.r !== undefined && b.r !== undefined) return a.r - b.r;
    if (a.r !== undefined) return -1;
    if (b.r !== undefined) return 1;
    return a.i - b.i;
  });
  return indexed.map((e) => e.x);
}
