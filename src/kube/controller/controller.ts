/**
 * A controller: a rate-limited work queue of object keys and `maxConcurrentReconciles` workers
 * that reconcile them. What happens after a reconcile is controller-runtime's `reconcileHandler`:
 *
 * | outcome                         | queue                                   |
 * | ------------------------------- | --------------------------------------- |
 * | `{}`                            | `forget` (back-off reset)               |
 * | `{ requeueAfterMs }`            | `forget`, then `addAfter(ms)`           |
 * | throws `TerminalError`          | `forget`; counted; no requeue           |
 * | throws `RetryAfterError`        | `addAfter(retryAfterMs)`                |
 * | throws anything else            | `addRateLimited` (per-key back-off)     |
 *
 * The queue guarantees one worker per key; workers start once the caches of the controller's
 * sources are synced. On stop the controller takes no new key and waits for the reconciles in
 * flight, which see their signal abort only at the manager's hard-stop deadline.
 */
import { randomUUID } from 'node:crypto';
import { createLogger, type Logger } from '../../lib/log.ts';
import type { Registry } from '../../lib/metrics.ts';
import { abortReason, systemClock, timeoutSignal, type Clock } from '../../lib/clock.ts';
import { errorSummary, isConflict, RetryAfterError, TerminalError, toError } from '../errors.ts';
import { RateLimitingQueue } from '../queue/rate-limiting.ts';
import type { RateLimiter } from '../ratelimit.ts';
import {
  asReconciler,
  type ReconcileFunc,
  type Reconciler,
  type Request,
  type Result,
} from '../reconcile/types.ts';
import { keyString, parseKey } from '../resource.ts';
import type { RunContext, Runnable } from '../runnable.ts';
import { controllerMetrics, noControllerMetrics, type ControllerMetrics } from './metrics.ts';

/** Conflicts in a row for one key logged at info before they count as errors. */
const QUIET_CONFLICTS = 3;
export interface ControllerOptions {
  name: string;
  reconciler: Reconciler | ReconcileFunc;
  /** Workers; the same key is still never reconciled twice at once. Default 1. */
  maxConcurrentReconciles?: number;
  /** Bound on one reconcile; its signal aborts then. Default 10 minutes; 0 for none. */
  reconcileTimeoutMs?: number;
  /** Default: client-go's max(5 ms × 2^n up to 1000 s, 10/s burst 100). */
  rateLimiter?: RateLimiter<string>;
  /** Resolves when the caches the controller reads are synced; workers wait for it. */
  waitForSync?: (signal: AbortSignal) => Promise<void>;
  /** How long to wait for that before failing the start. Default 2 minutes. */
  cacheSyncTimeoutMs?: number;
  /** Default true: run only on the leader. */
  needLeaderElection?: boolean;
  clock?: Clock;
  log?: Logger;
  registry?: Registry;
}

export interface ControllerStats {
  reconciles: number;
  errors: number;
  terminalErrors: number;
  requeuesAfter: number;
}

const DEFAULT_RECONCILE_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 2 * 60_000;

export class Controller implements Runnable {
  readonly name: string;
  readonly needLeaderElection: boolean;
  readonly queue: RateLimitingQueue<string>;
  readonly stats: ControllerStats = { reconciles: 0, errors: 0, terminalErrors: 0, requeuesAfter: 0 };
  private readonly reconciler: Reconciler;
  private readonly opts: ControllerOptions;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly metrics: ControllerMetrics;
  private started = false;

  constructor(opts: ControllerOptions) {
    const workers = opts.maxConcurrentReconciles ?? 1;
    if (!Number.isInteger(workers) || workers < 1) {
      throw new Error(
        `controller ${opts.name}: maxConcurrentReconciles must be a positive integer, got ${workers}`,
      );
    }
    this.opts = opts;
    this.name = opts.name;
    this.needLeaderElection = opts.needLeaderElection ?? true;
    this.reconciler = asReconciler(opts.reconciler);
    this.clock = opts.clock ?? systemClock;
    this.log = (opts.log ?? createLogger({ level: 'silent' })).child({ controller: opts.name });
    this.metrics = opts.registry ? controllerMetrics(opts.registry, opts.name, workers) : noControllerMetrics;
    this.queue = new RateLimitingQueue<string>({
      name: opts.name,
      ...(opts.rateLimiter ? { rateLimiter: opts.rateLimiter } : {}),
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.registry ? { registry: opts.registry } : {}),
    });
  }

  /** Queues a request (deduplicated with any pending one for the same object). */
  enqueue(request: Request): void {
    this.queue.add(keyString(request));
  }

  async start(signal: AbortSignal, ctx?: RunContext): Promise<void> {
    if (this.started) throw new Error(`controller ${this.name} started twice`);
    this.started = true;
    const hardStop = ctx?.hardStop ?? new AbortController().signal;
    try {
      if (this.opts.waitForSync) {
        const timeoutMs = this.opts.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS;
        const bound = timeoutSignal(this.clock, timeoutMs, signal);
        try {
          await this.opts.waitForSync(bound.signal);
        } catch (err) {
          if (signal.aborted) return;
          throw new Error(`controller ${this.name}: caches not synced after ${timeoutMs} ms`, { cause: err });
        } finally {
          bound.cancel();
        }
      }
      if (signal.aborted) return;
      const workers = this.opts.maxConcurrentReconciles ?? 1;
      this.log.info({ workers }, 'starting workers');
      const running = Array.from({ length: workers }, () => this.worker(hardStop));
      await new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener('abort', () => resolve(), { once: true });
      });
      this.log.info({ inFlight: this.queue.inFlight() }, 'stopping: finishing reconciles in flight');
      this.queue.shutDown();
      await Promise.all(running);
    } finally {
      this.queue.shutDown();
    }
  }

  private async worker(hardStop: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      this.metrics.activeWorkers(1);
      try {
        await this.reconcileKey(key, hardStop);
      } finally {
        this.metrics.activeWorkers(-1);
        this.queue.done(key);
      }
    }
  }

  private async reconcileKey(key: string, hardStop: AbortSignal): Promise<void> {
    const request = parseKey(key);
    const reconcileId = randomUUID();
    const log = this.log.child({ ...request, reconcileId });
    const timeoutMs = this.opts.reconcileTimeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS;
    const bound =
      timeoutMs > 0
        ? timeoutSignal(
            this.clock,
            timeoutMs,
            hardStop,
            () => new Error(`reconcile exceeded ${timeoutMs} ms`),
          )
        : { signal: hardStop, cancel: () => {} };
    const signal = bound.signal;
    const retries = this.queue.numRequeues(key);
    const started = this.clock.now();
    this.stats.reconciles++;
    log.debug({ retries }, 'reconciling');
    let result: Result;
    try {
      if (signal.aborted) throw abortReason(signal);
      result =
        (await this.reconciler.reconcile(request, signal, {
          log,
          controller: this.name,
          reconcileId,
          retries,
        })) ?? {};
    } catch (thrown) {
      const seconds = (this.clock.now() - started) / 1000;
      this.afterError(key, toError(thrown), log, retries, hardStop.aborted);
      this.metrics.reconciled('error', seconds);
      return;
    } finally {
      bound.cancel();
    }
    const seconds = (this.clock.now() - started) / 1000;
    this.queue.forget(key);
    if (result.requeueAfterMs !== undefined && result.requeueAfterMs > 0) {
      this.stats.requeuesAfter++;
      this.queue.addAfter(key, result.requeueAfterMs);
      this.metrics.reconciled('requeue_after', seconds);
      return;
    }
    // This reconcile saw the object as it is now and asked for no other look: a requeue an earlier
    // one asked for (or a retry after its failure) would only repeat it, so it is dropped (a Service
    // made Ready by an event was otherwise reconciled again when its old requeue came due).
    this.queue.cancelAfter(key);
    this.metrics.reconciled('success', seconds);
  }

  private afterError(key: string, err: Error, log: Logger, retries: number, stopping: boolean): void {
    this.stats.errors++;
    // One line per failure; the stack, which for a failed API call points into the client and not
    // at the problem, only at debug.
    const summary = errorSummary(err);
    log.debug({ err }, 'reconcile error with its stack');
    if (TerminalError.is(err)) {
      this.stats.terminalErrors++;
      this.metrics.errored(true);
      this.queue.forget(key);
      log.error({ ...summary, reason: err.reason }, 'reconcile failed terminally; not requeued');
      return;
    }
    this.metrics.errored(false);
    if (stopping) {
      log.info(summary, 'reconcile cut short by shutdown');
      return;
    }
    if (RetryAfterError.is(err)) {
      log.info({ ...summary, retryAfterMs: err.retryAfterMs }, 'reconcile asked to retry later');
      this.queue.addAfter(key, err.retryAfterMs);
      return;
    }
    if (isConflict(err) && retries < QUIET_CONFLICTS) {
      // Optimistic concurrency at work: another writer changed the object between this read and
      // write, and the next reconcile reads the newer one. Only a conflict that keeps coming back
      // is an error worth a user's attention.
      log.info({ ...summary, retries }, 'write raced another writer (409 Conflict); requeued');
    } else {
      log.error({ ...summary, retries }, 'reconcile failed; requeued with back-off');
    }
    this.queue.addRateLimited(key);
  }
}
