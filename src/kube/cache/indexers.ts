/**
 * Common indices. Every informer has `namespace`; `ownerUid` finds the dependents of an owner
 * (what `owns()` maps back from), and `field(...)` builds a custom one such as providerID.
 */
import type { KubernetesObject } from '../resource.ts';
import type { IndexFunc } from './store.ts';

export const NAMESPACE_INDEX = 'namespace';
export const OWNER_UID_INDEX = 'ownerUid';

export const byNamespace: IndexFunc<KubernetesObject> = (obj) => [obj.metadata?.namespace ?? ''];

export const byOwnerUid: IndexFunc<KubernetesObject> = (obj) =>
  (obj.metadata?.ownerReferences ?? []).map((r) => r.uid);

/** An index on one string field, e.g. `field((n: V1Node) => n.spec?.providerID)`; unset values are not indexed. */
export function field<T>(get: (obj: T) => string | undefined | null): IndexFunc<T> {
  return (obj) => {
    const v = get(obj);
    return v ? [v] : [];
  };
}
