/**
 * Event filters in front of the work queue (controller-runtime's `predicate` package). A
 * predicate drops events that cannot matter to a reconcile; it never replaces reading the world
 * in the reconcile itself. A missing method lets the event through.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubernetesObject } from './resource.ts';
import { matchesLabelSelector, type LabelSelector } from './selector.ts';

export interface Predicate<T = KubernetesObject> {
  create?(obj: T): boolean;
  update?(old: T, obj: T): boolean;
  delete?(obj: T): boolean;
}

/**
 * Updates that change `metadata.generation`, i.e. the spec (status-only and metadata-only updates
 * and resyncs are dropped). Kinds without a generation (ConfigMap, Secret, Service) never bump it:
 * do not use it for them.
 */
export function generationChanged<T extends KubernetesObject>(): Predicate<T> {
  return { update: (old, obj) => old.metadata?.generation !== obj.metadata?.generation };
}

/** Updates that change the annotations, or only the one given. */
export function annotationChanged<T extends KubernetesObject>(key?: string): Predicate<T> {
  return {
    update: (old, obj) =>
      key === undefined
        ? !sameRecord(old.metadata?.annotations, obj.metadata?.annotations)
        : old.metadata?.annotations?.[key] !== obj.metadata?.annotations?.[key],
  };
}

/** Updates that change the labels. */
export function labelChanged<T extends KubernetesObject>(): Predicate<T> {
  return { update: (old, obj) => !sameRecord(old.metadata?.labels, obj.metadata?.labels) };
}

/** Updates with a new resourceVersion: drops resyncs. */
export function resourceVersionChanged<T extends KubernetesObject>(): Predicate<T> {
  return { update: (old, obj) => old.metadata?.resourceVersion !== obj.metadata?.resourceVersion };
}

/**
 * Updates that change anything but the status: spec (or any other top-level field, such as a
 * Secret's data), labels, annotations, finalizers, ownerReferences, deletionTimestamp. Dropped:
 * status-only writes (a controller's own among them), resyncs and managedFields churn. Unlike
 * `generationChanged` it lets metadata changes through, so a paused annotation, a finalizer
 * removed by someone else or a new owner still wake the controller, and it works for kinds that
 * have no generation (Service).
 */
export function specOrMetadataChanged<T extends KubernetesObject>(): Predicate<T> {
  return { update: (old, obj) => !isDeepStrictEqual(withoutStatus(old), withoutStatus(obj)) };
}

/**
 * Updates where `project` gives a different value (deep comparison): for a related object of
 * which only a few fields matter, e.g. the state a controller mirrors from a child.
 */
export function fieldsChanged<T extends KubernetesObject>(project: (obj: T) => unknown): Predicate<T> {
  return { update: (old, obj) => !isDeepStrictEqual(project(old), project(obj)) };
}

/** Objects whose labels match (the new object's, on update). */
export function labelSelector<T extends KubernetesObject>(sel: LabelSelector): Predicate<T> {
  const m = (obj: T) => matchesLabelSelector(sel, obj.metadata?.labels);
  return { create: m, update: (_old, obj) => m(obj), delete: m };
}

export function and<T>(...ps: Predicate<T>[]): Predicate<T> {
  return {
    create: (o) => ps.every((p) => p.create?.(o) ?? true),
    update: (a, b) => ps.every((p) => p.update?.(a, b) ?? true),
    delete: (o) => ps.every((p) => p.delete?.(o) ?? true),
  };
}

export function or<T>(...ps: Predicate<T>[]): Predicate<T> {
  return {
    create: (o) => ps.some((p) => p.create?.(o) ?? true),
    update: (a, b) => ps.some((p) => p.update?.(a, b) ?? true),
    delete: (o) => ps.some((p) => p.delete?.(o) ?? true),
  };
}

export function not<T>(p: Predicate<T>): Predicate<T> {
  return {
    create: (o) => !(p.create?.(o) ?? true),
    update: (a, b) => !(p.update?.(a, b) ?? true),
    delete: (o) => !(p.delete?.(o) ?? true),
  };
}

function sameRecord(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  const ak = Object.keys(a ?? {});
  if (ak.length !== Object.keys(b ?? {}).length) return false;
  return ak.every((k) => a?.[k] === b?.[k]);
}

/** The object as `specOrMetadataChanged` compares it: no status, resourceVersion or managedFields. */
function withoutStatus(obj: KubernetesObject): unknown {
  const { status: _status, metadata, ...rest } = obj as KubernetesObject & { status?: unknown };
  if (!metadata) return rest;
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = metadata;
  return { ...rest, metadata: meta };
}
