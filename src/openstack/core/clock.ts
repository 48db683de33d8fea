/**
 * Time and chance, injected: the transport's back-off, the token cache's refresh decision and the
 * waiters all read the clock through this interface, so tests can record delays instead of sleeping.
 */

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`; rejects with `signal.reason` as soon as `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A number in [0, 1), for back-off jitter. */
  random(): number;
}

/**
 * Sleeps `ms` milliseconds. Unlike `timers/promises` (which rejects with a generic AbortError), an
 * abort rejects with the signal's own reason, so a caller's "shutting down" error comes back intact.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason as Error);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep,
  random: () => Math.random(),
};

/**
 * Settles like `promise`, or rejects with `signal.reason` when `signal` aborts first. The promise
 * itself keeps running: used where one in-flight operation (a token issue) serves many callers and
 * one caller giving up must not cancel it for the others.
 */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
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
