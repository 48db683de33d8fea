/** Small field moves the conversions share. */
import type { Json } from './carry.ts';
import { isObj } from './carry.ts';

/** Moves `o[from]` to `o[to]` (when set). */
export function rename(o: Json, from: string, to: string): void {
  if (o[from] === undefined) return;
  o[to] = o[from];
  delete o[from];
}

/** Moves `o[from]` to `o[to]` negated: `disableX: true` is `enableX: false`. */
export function renameNegated(o: Json, from: string, to: string): void {
  const v = o[from];
  if (v === undefined) return;
  o[to] = typeof v === 'boolean' ? !v : v;
  delete o[from];
}

/** `f` applied to each object of a list (a copy); anything else as it is. */
export function mapObjects(v: unknown, f: (o: Json) => Json): unknown {
  return Array.isArray(v) ? (v as unknown[]).map((x) => (isObj(x) ? f({ ...x }) : x)) : v;
}

/** `f` applied to a copy of `o[key]` when it is an object. */
export function updateObject(o: Json, key: string, f: (v: Json) => Json): void {
  const v = o[key];
  if (isObj(v)) o[key] = f({ ...v });
}
