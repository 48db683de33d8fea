/**
 * The status changes every CAPO kind shares between v1beta1 and v1beta2: Cluster API v1beta1
 * conditions (with `severity`) ↔ metav1.Conditions (without); the deprecated `ready`,
 * `failureReason` and `failureMessage`, which v1beta2 drops (`ready` is read back from the Ready
 * condition, as CAPO's conversion does).
 */
import { type Carry, isObj, type Json } from './carry.ts';

function readyStatus(conditions: unknown): string | null {
  if (!Array.isArray(conditions)) return null;
  const ready = conditions.find((c) => isObj(c) && c.type === 'Ready') as Json | undefined;
  return typeof ready?.status === 'string' ? ready.status : null;
}

/** v1beta1 conditions → metav1.Conditions; each severity is kept with the condition's type and status. */
export function conditionsUp(o: Json, carry: Carry, path: string): void {
  if (!Array.isArray(o.conditions)) return;
  const severities: { type: unknown; status: unknown; severity: unknown }[] = [];
  o.conditions = o.conditions.map((c: unknown) => {
    if (!isObj(c)) return c;
    const { severity, ...rest } = c;
    if (severity !== undefined) severities.push({ type: c.type, status: c.status, severity });
    return rest;
  });
  if (severities.length > 0) carry.keep(path, severities);
}

/** metav1.Conditions → v1beta1; a kept severity comes back while its condition has the same status. */
export function conditionsDown(o: Json, carry: Carry, path: string): void {
  if (!Array.isArray(o.conditions)) return;
  const kept = carry.take(path);
  const severities: Json[] = Array.isArray(kept) ? kept.filter(isObj) : [];
  o.conditions = o.conditions.map((c: unknown) => {
    if (!isObj(c)) return c;
    const s = severities.find((k) => k.type === c.type && k.status === c.status);
    return s ? { ...c, severity: s.severity } : c;
  });
}

/** Drops ready, failureReason and failureMessage, keeping what the Ready condition does not say. */
export function deprecatedStatusUp(o: Json, carry: Carry): void {
  const derived = readyStatus(o.conditions) === 'True';
  if (o.ready !== derived) {
    carry.keep('status.ready', { value: o.ready ?? null, readyCondition: readyStatus(o.conditions) });
  }
  delete o.ready;
  for (const k of ['failureReason', 'failureMessage']) {
    if (o[k] === undefined) continue;
    carry.keep(`status.${k}`, o[k]);
    delete o[k];
  }
}

/**
 * Sets ready from the Ready condition, unless a kept value was taken with the Ready condition as
 * it still is; brings back failureReason and failureMessage (no v1beta2 writer can change them).
 */
export function deprecatedStatusDown(o: Json, carry: Carry): void {
  const condition = readyStatus(o.conditions);
  o.ready = condition === 'True';
  const kept = carry.take('status.ready');
  if (isObj(kept) && kept.readyCondition === condition) {
    if (kept.value === null) delete o.ready;
    else o.ready = kept.value;
  }
  for (const k of ['failureReason', 'failureMessage']) {
    const v = carry.take(`status.${k}`);
    if (v !== undefined) o[k] = v;
  }
}
