/**
 * From an event on a watched object to the requests it should trigger (controller-runtime's
 * `handler` package): the object itself (`for`), its controlling owner (`owns`), or any mapping
 * (`watches`). On an update both the old and the new object are mapped, so a child that changes
 * owner wakes both; the queue removes the duplicates.
 */
import type { Request } from './reconcile/types.ts';
import { groupOf, objectKey, type KubernetesObject, type ResourceType } from './resource.ts';

export type MapFunc<T> = (obj: T) => readonly Request[];

export function requestForObject<T extends KubernetesObject>(): MapFunc<T> {
  return (obj) => [objectKey(obj)];
}

/**
 * The owners of kind `owner` named in the object's ownerReferences; by default only the
 * controlling one (`controller: true`), as `Owns()` does.
 */
export function requestForOwner<T extends KubernetesObject>(
  owner: ResourceType,
  opts: { onlyController?: boolean } = {},
): MapFunc<T> {
  const onlyController = opts.onlyController ?? true;
  const group = groupOf(owner.apiVersion);
  return (obj) =>
    (obj.metadata?.ownerReferences ?? [])
      .filter(
        (r) => r.kind === owner.kind && groupOf(r.apiVersion) === group && (!onlyController || r.controller),
      )
      .map((r) =>
        owner.namespaced && obj.metadata?.namespace
          ? { namespace: obj.metadata.namespace, name: r.name }
          : { name: r.name },
      );
}
