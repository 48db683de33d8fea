/**
 * A counting semaphore: at most `limit` requests in flight to one service, the rest queued in
 * arrival order. A controller that lists 500 ports at once must not open 500 connections to Neutron.
 */
export class Limiter {
  readonly limit: number;
  private active = 0;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`concurrency limit must be ≥ 1, got ${limit}`);
    this.limit = limit;
  }

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Resolves with a release function once a slot is free; call it exactly once (extra calls are
   * ignored). Rejects with `signal.reason` if the signal aborts while queued.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (this.active < this.limit) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.releaser());
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal?.reason as Error);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `active` stays counted.
      if (next) next.grant();
      else this.active--;
    };
  }
}
