/**
 * Who controls an OpenStackServer. The conventions: the Machine API Machine or, after a switch to
 * Cluster API, the OpenStackMachine of the same name acts for it; both stay owners, so the garbage
 * collector keeps the server while either exists, and only the `controller: true` flag moves. Pure.
 */
import type { KubernetesObject } from '../../kube/index.ts';

type OwnerReference = NonNullable<NonNullable<KubernetesObject['metadata']>['ownerReferences']>[number];

/**
 * The owner references with `controller` the one controlling reference: added if absent, flagged
 * if present; every other owner stays, unflagged (blockOwnerDeletion kept as it was).
 */
export function withController(
  refs: readonly OwnerReference[] | undefined,
  controller: OwnerReference,
): OwnerReference[] {
  const out: OwnerReference[] = [];
  let found = false;
  for (const ref of refs ?? []) {
    if (ref.uid === controller.uid) {
      found = true;
      out.push({ ...ref, controller: true, blockOwnerDeletion: true });
    } else {
      const { controller: _flag, ...rest } = ref;
      out.push(rest);
    }
  }
  if (!found) out.push({ ...controller, controller: true, blockOwnerDeletion: true });
  return out;
}

/** Whether `refs` already name `owner` (by uid) as their only controller. */
export function controlledOnlyBy(refs: readonly OwnerReference[] | undefined, uid: string): boolean {
  const controllers = (refs ?? []).filter((r) => r.controller === true);
  return controllers.length === 1 && controllers[0]?.uid === uid;
}

/** The controlling reference, if any. */
export function controllerOf(refs: readonly OwnerReference[] | undefined): OwnerReference | undefined {
  return (refs ?? []).find((r) => r.controller === true);
}
