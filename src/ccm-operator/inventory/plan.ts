/**
 * What applying a rendered set of operands means for the inventory, as pure functions: each
 * object labelled with its platform before it is applied, and the objects to remove — those of
 * the inventory that the new set no longer holds (the previous platform's, after a platform
 * change; all of them, on a hand-back). An object is only removed if its managedFields show that
 * this operator applied it: a label copied onto someone else's object does not make it ours.
 */
import type { KubernetesObject } from '../../kube/index.ts';
import { NEVER_PRUNED, OPERAND_KINDS, PLATFORM_LABEL, objectId } from './kinds.ts';

/**
 * A copy of the object labelled as part of the inventory of `platform`, unless the renderer
 * labelled it already (`shared`, for what every platform uses).
 */
export function stamp<T extends KubernetesObject>(obj: T, platform: string): T {
  const copy = structuredClone(obj);
  const labels = copy.metadata?.labels ?? {};
  copy.metadata = {
    ...copy.metadata,
    labels: { ...labels, [PLATFORM_LABEL]: labels[PLATFORM_LABEL] ?? platform },
  };
  return copy;
}

/** Whether this operator's field manager applied the object (server-side apply). */
export function appliedBy(obj: KubernetesObject, fieldManager: string): boolean {
  return (obj.metadata?.managedFields ?? []).some(
    (f) => f.manager === fieldManager && f.operation === 'Apply',
  );
}

/** The inventory objects to remove, in removal order (workloads first). */
export function planPrune(
  desired: readonly KubernetesObject[],
  inventory: readonly KubernetesObject[],
  fieldManager: string,
): KubernetesObject[] {
  const keep = new Set(desired.map(objectId));
  const rank = (o: KubernetesObject) => OPERAND_KINDS.findIndex((t) => t.kind === o.kind);
  return inventory
    .filter((o) => o.metadata?.labels?.[PLATFORM_LABEL] !== undefined)
    .filter((o) => !NEVER_PRUNED.some((t) => t.apiVersion === o.apiVersion && t.kind === o.kind))
    .filter((o) => !keep.has(objectId(o)) && !o.metadata?.deletionTimestamp && appliedBy(o, fieldManager))
    .sort((a, b) => rank(a) - rank(b));
}
