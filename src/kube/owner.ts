/**
 * Owner references (controller-runtime's `controllerutil`): who owns an object, so the garbage
 * collector deletes it with its owner and `owns()` maps its events back to the owner. Functions
 * that change references work on a mutable copy (`clone` from patch.ts).
 */
import type { V1OwnerReference } from '@kubernetes/client-node';
import type { KubernetesObject } from './resource.ts';
import { groupOf } from './resource.ts';

export type OwnerReference = V1OwnerReference;

/** The object already has a different controller: two controllers must not fight over it. */
export class AlreadyOwnedError extends Error {
  override readonly name = 'AlreadyOwnedError';
  readonly owner: OwnerReference;

  constructor(obj: KubernetesObject, owner: OwnerReference) {
    super(
      `${obj.kind ?? 'object'} ${obj.metadata?.name ?? ''} is already controlled by ${owner.kind} ${owner.name} (uid ${owner.uid})`,
    );
    this.owner = owner;
  }

  static is(err: unknown): err is AlreadyOwnedError {
    return err instanceof Error && err.name === 'AlreadyOwnedError';
  }
}

export function ownerReference(
  owner: KubernetesObject,
  opts: { controller?: boolean; blockOwnerDeletion?: boolean } = {},
): OwnerReference {
  const { apiVersion, kind } = owner;
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  if (!apiVersion || !kind || !name || !uid) {
    throw new Error(
      'an owner needs apiVersion, kind, metadata.name and metadata.uid (read it from the API first)',
    );
  }
  return {
    apiVersion,
    kind,
    name,
    uid,
    ...(opts.controller ? { controller: true } : {}),
    ...(opts.blockOwnerDeletion ? { blockOwnerDeletion: true } : {}),
  };
}

/** Same group, kind and name (the version may differ: references survive API version changes). */
function sameOwner(a: OwnerReference, b: OwnerReference): boolean {
  return groupOf(a.apiVersion) === groupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name;
}

function checkScope(owner: KubernetesObject, obj: KubernetesObject): void {
  const ownerNs = owner.metadata?.namespace;
  if (!ownerNs) return;
  const objNs = obj.metadata?.namespace;
  if (!objNs)
    throw new Error(
      `cluster-scoped ${obj.kind ?? 'object'} cannot be owned by namespaced ${owner.kind ?? 'owner'}`,
    );
  if (objNs !== ownerNs) {
    throw new Error(
      `cross-namespace owner references are not allowed: owner in ${ownerNs}, object in ${objNs}`,
    );
  }
}

/**
 * Makes `owner` the controller of `obj` (controller and blockOwnerDeletion set), replacing an
 * older reference to the same owner. Throws `AlreadyOwnedError` if another object controls it.
 */
export function setControllerReference(owner: KubernetesObject, obj: KubernetesObject): void {
  checkScope(owner, obj);
  const ref = ownerReference(owner, { controller: true, blockOwnerDeletion: true });
  const current = getControllerOf(obj);
  if (current && !sameOwner(current, ref)) throw new AlreadyOwnedError(obj, current);
  upsert(obj, ref);
}

/** Adds `owner` as a (non-controlling) owner, or refreshes its reference. */
export function setOwnerReference(owner: KubernetesObject, obj: KubernetesObject): void {
  checkScope(owner, obj);
  const existing = obj.metadata?.ownerReferences?.find((r) => sameOwner(r, ownerReference(owner)));
  upsert(
    obj,
    ownerReference(owner, {
      controller: existing?.controller ?? false,
      blockOwnerDeletion: existing?.blockOwnerDeletion ?? false,
    }),
  );
}

export function removeOwnerReference(owner: KubernetesObject, obj: KubernetesObject): boolean {
  const refs = obj.metadata?.ownerReferences;
  if (!refs || !obj.metadata) return false;
  const ref = ownerReference(owner);
  const kept = refs.filter((r) => !sameOwner(r, ref));
  if (kept.length === refs.length) return false;
  obj.metadata.ownerReferences = kept;
  return true;
}

export function getControllerOf(obj: KubernetesObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** True when `owner` (by uid) is the controller of `obj`. */
export function isControlledBy(obj: KubernetesObject, owner: KubernetesObject): boolean {
  const c = getControllerOf(obj);
  return c !== undefined && c.uid === owner.metadata?.uid;
}

function upsert(obj: KubernetesObject, ref: OwnerReference): void {
  obj.metadata ??= {};
  const refs = obj.metadata.ownerReferences ?? [];
  const i = refs.findIndex((r) => sameOwner(r, ref));
  if (i >= 0) refs[i] = ref;
  else refs.push(ref);
  obj.metadata.ownerReferences = refs;
}
