/**
 * The reconciler contract (controller-runtime's `reconcile.Reconciler`, with kube-rs's Action):
 *
 * - The request names an object, nothing more. A reconcile reads the whole world from the cache
 *   and makes it right: it never knows which event woke it, and a deleted object is simply
 *   missing (level-based).
 * - Resolve with `{}` (or nothing) when done; `{ requeueAfterMs }` to look again later, the way to
 *   wait for an external system (never sleep or poll inside a reconcile).
 * - Throw to retry with per-key exponential back-off; throw `TerminalError` when retrying cannot
 *   help (no requeue); throw `RetryAfterError` for a known fixed wait.
 * - `signal` aborts when the manager's graceful-shutdown deadline or the reconcile timeout passes;
 *   pass it to every call.
 */
import type { Logger } from '../../lib/log.ts';
import type { ObjectKey } from '../resource.ts';

/** What to reconcile: `{ namespace, name }`, without namespace for cluster-scoped kinds. */
export type Request = ObjectKey;

export interface Result {
  /** Reconcile again after this long even if nothing changes. No boolean "requeue": say when. */
  requeueAfterMs?: number;
}

export interface ReconcileContext {
  /** Carries `controller`, `namespace`, `name` and `reconcileId`. */
  log: Logger;
  controller: string;
  /** Unique per call, for correlating log lines. */
  reconcileId: string;
  /** Failed attempts of this key since its last success. */
  retries: number;
}

export interface Reconciler {
  reconcile(request: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result | void>;
}

export type ReconcileFunc = Reconciler['reconcile'];

export function asReconciler(r: Reconciler | ReconcileFunc): Reconciler {
  return typeof r === 'function' ? { reconcile: r } : r;
}
