/**
 * JSON merge patch (RFC 7386), the `application/merge-patch+json` of the API server: objects merge
 * recursively, `null` deletes a field, anything else (lists included) replaces.
 */
import { isObj, type Obj } from '../json.ts';
import { cloneJson } from '../../../lib/json.ts';

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return cloneJson(patch);
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/**
 * The merge patch that turns `from` into `to` (used for dry computations and tests): changed
 * fields set, removed fields null, objects recursed, everything else replaced.
 */
export function createMergePatch(from: unknown, to: unknown): unknown {
  if (!isObj(from) || !isObj(to)) return structuredClone(to);
  const out: Obj = {};
  for (const k of Object.keys(from)) if (!Object.hasOwn(to, k)) out[k] = null;
  for (const [k, v] of Object.entries(to)) {
    const prev = from[k];
    if (JSON.stringify(prev) === JSON.stringify(v)) continue;
    out[k] = isObj(prev) && isObj(v) ? createMergePatch(prev, v) : structuredClone(v);
  }
  return out;
}
