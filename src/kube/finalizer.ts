/**
 * Finalizers, after kube-rs's `finalizer` helper. `withFinalizer` runs a reconcile in two halves,
 * `apply` (the object is live) and `cleanup` (it is being deleted), with these guarantees:
 *
 * - the finalizer is on the object before `apply` first runs, so nothing `apply` creates outside
 *   the cluster can outlive the object unnoticed;
 * - once `apply` may have run, the object is not deleted until `cleanup` has finished;
 * - the finalizer is removed last, only after `cleanup` resolves without `requeueAfterMs`.
 *
 * And these assumptions: `apply` and `cleanup` are idempotent; `cleanup` tolerates `apply` never
 * having run (it finds external resources by deterministic name or tag, not only by ids in
 * status); `cleanup` returns `{ requeueAfterMs }` while it waits for something (a load balancer
 * going away) and `{}` once everything is gone.
 *
 * Adding and removing use JSON Patch with a `test` operation on the finalizer list, so we never
 * drop a finalizer someone else added meanwhile (the API server does not merge finalizer lists):
 * a concurrent change fails the patch, and the reconcile retries from fresh state.
 */
import type { KubeClient } from './client.ts';
import type { OwnWrites } from './own-writes.ts';
import { clone } from './patch.ts';
import type { Result } from './reconcile/types.ts';
import { objectKey, type KubernetesObject, type ResourceType } from './resource.ts';

/** `domain/name`, as the API server expects of finalizers it does not own. */
const FINALIZER = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
/**
 * A dotted name without a slash (`openstackcluster.infrastructure.cluster.x-k8s.io`): the API
 * server accepts it (with a warning), and Cluster API providers use such names, which must be kept
 * for objects they guarded to stay guarded.
 */
const DOTTED = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

function validate(name: string): void {
  if (!(FINALIZER.test(name) || (DOTTED.test(name) && name.length <= 63)) || name.length > 316) {
    throw new TypeError(
      `invalid finalizer ${JSON.stringify(name)}: use a domain-qualified name, e.g. openstack.shiftstack.io/load-balancer`,
    );
  }
}

export function hasFinalizer(obj: KubernetesObject, name: string): boolean {
  return obj.metadata?.finalizers?.includes(name) ?? false;
}

export function isDeleting(obj: KubernetesObject): boolean {
  return Boolean(obj.metadata?.deletionTimestamp);
}

/**
 * Adds the finalizer unless present, tested against the finalizer list `obj` has. With `own`, the
 * controller's own writes: the update event the finalizer causes does not wake it again.
 */
export async function addFinalizer<T extends KubernetesObject>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  name: string,
  opts: { signal?: AbortSignal | undefined; own?: OwnWrites<T> | undefined } = {},
): Promise<T> {
  validate(name);
  if (hasFinalizer(obj, name)) return obj;
  const own = opts.own;
  if (own) {
    const intended = clone(obj);
    intended.metadata = { ...intended.metadata, finalizers: [...(obj.metadata?.finalizers ?? []), name] };
    return own.write(obj, intended, () => addFinalizer(client, type, obj, name, { signal: opts.signal }));
  }
  const current = obj.metadata?.finalizers;
  const ops =
    current && current.length > 0
      ? [
          { op: 'test' as const, path: '/metadata/finalizers', value: current },
          { op: 'add' as const, path: '/metadata/finalizers/-', value: name },
        ]
      : [
          // A missing list tests equal to null, so this also holds when nobody added one meanwhile.
          { op: 'test' as const, path: '/metadata/finalizers', value: null },
          { op: 'add' as const, path: '/metadata/finalizers', value: [name] },
        ];
  return client.patch(type, objectKey(obj), 'json', ops, { signal: opts.signal });
}

/** Removes the finalizer if present, tested at its index. Resolves to the object as stored (it may be gone). */
export async function removeFinalizer<T extends KubernetesObject>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  name: string,
  opts: { signal?: AbortSignal | undefined } = {},
): Promise<T> {
  validate(name);
  const i = obj.metadata?.finalizers?.indexOf(name) ?? -1;
  if (i < 0) return obj;
  return client.patch(
    type,
    objectKey(obj),
    'json',
    [
      { op: 'test', path: `/metadata/finalizers/${i}`, value: name },
      { op: 'remove', path: `/metadata/finalizers/${i}` },
    ],
    { signal: opts.signal },
  );
}

export interface FinalizerHandlers<T> {
  /** The object is live and carries the finalizer: make the world match it. */
  apply(obj: T, signal: AbortSignal): Promise<Result | void>;
  /** The object is being deleted: remove what `apply` may have created. */
  cleanup(obj: T, signal: AbortSignal): Promise<Result | void>;
}

/**
 * One reconcile step of an object guarded by finalizer `name` (see the module comment). After
 * adding the finalizer it returns `{}` without running `apply`: the write wakes the controller
 * again, and that reconcile starts from the stored object.
 */
export async function withFinalizer<T extends KubernetesObject>(
  client: KubeClient,
  type: ResourceType<T>,
  obj: T,
  name: string,
  handlers: FinalizerHandlers<T>,
  signal: AbortSignal,
): Promise<Result> {
  validate(name);
  const present = hasFinalizer(obj, name);
  if (isDeleting(obj)) {
    if (!present) return {};
    const result = (await handlers.cleanup(obj, signal)) ?? {};
    if (result.requeueAfterMs !== undefined && result.requeueAfterMs > 0) return result;
    await removeFinalizer(client, type, obj, name, { signal });
    return {};
  }
  if (!present) {
    await addFinalizer(client, type, obj, name, { signal });
    return {};
  }
  return (await handlers.apply(obj, signal)) ?? {};
}
