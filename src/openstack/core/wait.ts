/**
 * Polling an object until it reaches a state: a load balancer ACTIVE, a server gone. For jobs and
 * CLIs; controllers should requeue instead of blocking a reconcile (see aesthetics §9).
 *
 * Bounded by `timeoutMs` and the signal. The interval grows ×1.5 from `intervalMs` up to
 * `maxIntervalMs`. An error state ends the wait at once (ResourceErrorStateError): waiting longer
 * would not help. Errors other than the 404 of a deletion wait are passed through: the transport
 * has already retried what can be retried.
 */
import { systemClock, type Clock } from '../../lib/clock.ts';
import { isNotFound, ResourceErrorStateError, WaitTimeoutError } from './errors.ts';

export interface ErrorState {
  status: string;
  /** The service's reason, e.g. Nova's `fault.message`. */
  fault?: string | undefined;
}

export interface WaitOptions<T> {
  /** Reads the object once. */
  get: (signal: AbortSignal | undefined) => Promise<T>;
  /** True once the object is where the caller wants it. */
  done: (value: T) => boolean;
  /** An error state, or undefined while none: e.g. `v => v.provisioning_status === 'ERROR' ? { status: 'ERROR' } : undefined`. */
  failed?: ((value: T) => ErrorState | undefined) | undefined;
  /** For messages: `load balancer 4f… to become ACTIVE`. */
  describe: string;
  /** The object's id, for ResourceErrorStateError. */
  resourceId?: string | undefined;
  /** The status to report on timeout. */
  statusOf?: ((value: T) => string | undefined) | undefined;
  timeoutMs: number;
  /** First interval. Default 1 s. */
  intervalMs?: number | undefined;
  /** Interval cap. Default 10 s. */
  maxIntervalMs?: number | undefined;
  signal?: AbortSignal | undefined;
  clock?: Clock | undefined;
}

/**
 * What a caller of a service's waiter (`waitForServerActive`, `waitForVolumeDeleted`, …) may tune:
 * the timeout (the service's default otherwise), the first interval (1 s) growing ×1.5 up to the cap
 * (10 s), the AbortSignal and the clock.
 */
export type WaiterOptions = Partial<
  Pick<WaitOptions<unknown>, 'timeoutMs' | 'intervalMs' | 'maxIntervalMs' | 'signal' | 'clock'>
>;

/** Polls until `done`; rejects with WaitTimeoutError, ResourceErrorStateError, the signal's reason, or the error `get` threw. */
export async function waitFor<T>(options: WaitOptions<T>): Promise<T> {
  const result = await poll(options, false);
  return result as T;
}

/** Polls until `get` throws a 404 (the object is gone). `done` is not needed; `failed` still applies (error_deleting). */
export async function waitForDeletion<T>(options: Omit<WaitOptions<T>, 'done'>): Promise<void> {
  await poll({ ...options, done: () => false }, true);
}

async function poll<T>(options: WaitOptions<T>, untilGone: boolean): Promise<T | undefined> {
  const clock = options.clock ?? systemClock;
  const deadline = clock.now() + options.timeoutMs;
  const maxInterval = options.maxIntervalMs ?? 10_000;
  let interval = Math.min(options.intervalMs ?? 1000, maxInterval);
  let lastStatus: string | undefined;
  // The deadline bounds the loop; the counter only guards against a clock that does not advance.
  for (let polls = 0; polls < 1_000_000; polls++) {
    if (options.signal?.aborted) throw options.signal.reason;
    let value: T;
    try {
      value = await options.get(options.signal);
    } catch (err) {
      if (untilGone && isNotFound(err)) return undefined;
      throw err;
    }
    lastStatus = options.statusOf?.(value) ?? lastStatus;
    const bad = options.failed?.(value);
    if (bad) {
      throw new ResourceErrorStateError({
        what: options.describe,
        resourceId: options.resourceId,
        status: bad.status,
        fault: bad.fault,
      });
    }
    if (options.done(value)) return value;
    const left = deadline - clock.now();
    if (left <= 0) break;
    await clock.sleep(Math.min(interval, left), options.signal);
    interval = Math.min(maxInterval, Math.ceil(interval * 1.5));
  }
  throw new WaitTimeoutError({ what: options.describe, timeoutMs: options.timeoutMs, lastStatus });
}
