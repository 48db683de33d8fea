/**
 * Patch helpers. Reconcilers change a private copy of a cached (frozen) object and send only the
 * difference as a JSON merge patch (RFC 7386), controller-runtime's `client.MergeFrom`:
 *
 * - `mergePatch(…, { optimisticLock: true })` puts the original resourceVersion in the patch, so
 *   the server refuses it (409 Conflict) if anyone wrote in between (`MergeFromWithOptimisticLock`);
 * - `patchStatus` sends the status difference to the status subresource;
 * - `StatusPatcher` is CAPO's deferred patch: take a draft at the start of a reconcile, change it
 *   anywhere, write one status patch at the end, and only if something changed.
 *
 * Lists are replaced whole by a merge patch, which is what conditions and finalizers need.
 */
import type { KubeClient } from './client.ts';
import type { KubernetesObject, ResourceType } from './resource.ts';
import { objectKey } from './resource.ts';
import { cloneJson } from '../lib/json.ts';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A deep, mutable copy (cached objects are frozen). */
export function clone<T>(obj: T): T {
  return cloneJson(obj);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ak = Object.keys(a).filter((k) => a[k] !== undefined);
    const bk = Object.keys(b).filter((k) => b[k] !== undefined);
    return ak.length === bk.length && ak.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The RFC 7386 merge patch that turns `original` into `modified`; undefined when they are equal.
 * Removed keys become null; arrays and scalars are replaced whole.
 */
export function createMergePatch(original: unknown, modified: unknown): Record<string, Json> | undefined {
  if (!isObject(original) || !isObject(modified)) {
    throw new Error('a merge patch is computed between two objects');
  }
  const patch: Record<string, Json> = {};
  for (const [k, v] of Object.entries(modified)) {
    if (v === undefined) continue;
    const o = original[k];
    if (deepEqual(o, v)) continue;
    if (isObject(o) && isObject(v)) {
      const sub = createMergePatch(o, v);
      if (sub) patch[k] = sub;
    } else {
      patch[k] = v as Json;
    }
  }
  for (const [k, v] of Object.entries(original)) {
    if (v !== undefined && (!(k in modified) || modified[k] === undefined)) patch[k] = null;
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}

export interface MergePatchOptions {
  signal?: AbortSignal | undefined;
  /** Fail with 409 Conflict if the object changed since `original` was read. */
  optimisticLock?: boolean;
  fieldManager?: string;
}

/**
 * Sends the difference between `original` and `modified` as a merge patch; resolves to the
 * object as stored, or `original` when there was nothing to send (no request made).
 */
export async function mergePatch<T extends KubernetesObject>(
  client: KubeClient,
  type: ResourceType<T>,
  original: T,
  modified: T,
  opts: MergePatchOptions = {},
): Promise<T> {
  const patch = createMergePatch(original, modified);
  if (!patch) return original;
  return sendMergePatch(client, type, original, patch, opts);
}

/** Sends the difference of `status` only, to the status subresource; `original` if none. */
export async function patchStatus<T extends KubernetesObject & { status?: unknown }>(
  client: KubeClient,
  type: ResourceType<T>,
  original: T,
  modified: T,
  opts: MergePatchOptions = {},
): Promise<T> {
  const diff = createMergePatch({ status: original.status ?? {} }, { status: modified.status ?? {} });
  if (!diff) return original;
  return sendMergePatch(client, type, original, diff, opts, 'status');
}

/**
 * Sends a merge patch computed from `original`; with `optimisticLock` its resourceVersion goes
 * along, so the server refuses the patch (409) when someone else wrote in between.
 */
async function sendMergePatch<T extends KubernetesObject>(
  client: KubeClient,
  type: ResourceType<T>,
  original: T,
  patch: Record<string, Json>,
  opts: MergePatchOptions,
  subresource?: 'status',
): Promise<T> {
  if (opts.optimisticLock) {
    const rv = original.metadata?.resourceVersion;
    if (!rv) throw new Error('an optimistic-lock patch needs the original resourceVersion');
    const meta = isObject(patch.metadata) ? patch.metadata : {};
    patch.metadata = { ...meta, resourceVersion: rv };
  }
  return client.patch(type, objectKey(original), 'merge', patch, {
    signal: opts.signal,
    ...(subresource ? { subresource } : {}),
    ...(opts.fieldManager ? { fieldManager: opts.fieldManager } : {}),
  });
}

/**
 * One deferred status write per reconcile:
 *
 *   const p = new StatusPatcher(obj);          // obj from the cache
 *   try { …mutate p.draft.status… } finally { await p.patch(client, type, { signal }); }
 */
export class StatusPatcher<T extends KubernetesObject & { status?: unknown }> {
  readonly original: T;
  /** A mutable copy; change its status freely. */
  readonly draft: T;

  constructor(obj: T) {
    this.original = obj;
    this.draft = clone(obj);
  }

  /** True when the draft's status differs from the original's. */
  changed(): boolean {
    return (
      createMergePatch({ status: this.original.status ?? {} }, { status: this.draft.status ?? {} }) !==
      undefined
    );
  }

  /** Writes the status difference, if any; resolves to the stored object (or the original). */
  patch(client: KubeClient, type: ResourceType<T>, opts: MergePatchOptions = {}): Promise<T> {
    return patchStatus(client, type, this.original, this.draft, opts);
  }
}
