/**
 * Time and chance, injected: the one Clock of every layer. The work queue's delays, the rate
 * limiters, the informer's back-off and watchdog, the leader elector, the OpenStack transport's
 * back-off, the token cache's refresh, the waiters and the controllers' age-based waits read time
 * through it, so tests drive or record it instead of sleeping (see `testing/fake-clock.ts`).
 */

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with `signal.reason` as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Calls `fn` once after `ms`; the returned function cancels it. Never keeps the process alive. */
  setTimer(ms: number, fn: () => void): () => void;
  /** A number in [0, 1), for jitter. */
  random(): number;
}

/**
 * Sleeps `ms` milliseconds. An abort rejects with the signal's own reason (not a generic
 * AbortError), so the caller's "shutting down" error comes back intact.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The reason a signal aborted, always an Error (a bare `abort()` gives a DOMException). */
export function abortReason(signal: AbortSignal | undefined): Error {
  const r: unknown = signal?.reason;
  return r instanceof Error ? r : new Error(typeof r === 'string' ? r : 'aborted');
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep,
  setTimer(ms, fn) {
    const t = setTimeout(fn, Math.max(0, ms));
    // A pending delayed requeue or lease renewal must not keep a stopped process alive.
    t.unref();
    return () => clearTimeout(t);
  },
  random: () => Math.random(),
};

/** `ms` scaled by a random factor in [1, 1 + factor): client-go's `wait.Jitter`. */
export function jitter(ms: number, factor: number, clock: Clock): number {
  return factor > 0 ? ms * (1 + clock.random() * factor) : ms;
}

/**
 * A signal that aborts after `ms` on `clock` (or when `parent` does); `cancel` releases the timer
 * once the bounded work is done.
 */
export function timeoutSignal(
  clock: Clock,
  ms: number,
  parent?: AbortSignal,
  reason: () => Error = () => new Error(`timed out after ${ms} ms`),
): { signal: AbortSignal; cancel: () => void } {
  const timeout = new AbortController();
  const cancel = clock.setTimer(ms, () => timeout.abort(reason()));
  return { signal: parent ? AbortSignal.any([parent, timeout.signal]) : timeout.signal, cancel };
}

/**
 * Settles like `promise`, or rejects with the signal's reason when `signal` aborts first. The
 * promise itself keeps running: used where one in-flight operation (a token issue) serves many
 * callers and one caller giving up must not cancel it for the others.
 */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: Error) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
