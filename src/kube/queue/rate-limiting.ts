/**
 * The queue controllers use: a delaying queue plus a rate limiter that turns failures into
 * delays (`addRateLimited`), reset by `forget` after a success (client-go's rate-limiting queue).
 */
import type { Registry } from '../../lib/metrics.ts';
import type { Clock } from '../../lib/clock.ts';
import { defaultControllerRateLimiter, type RateLimiter } from '../ratelimit.ts';
import { DelayingQueue } from './delaying.ts';
import { queueMetrics } from './metrics.ts';

export interface RateLimitingQueueOptions<T> {
  /** The `name` label of the workqueue metrics (the controller's name). */
  name: string;
  rateLimiter?: RateLimiter<T>;
  clock?: Clock;
  registry?: Registry;
}

export class RateLimitingQueue<T> extends DelayingQueue<T> {
  readonly name: string;
  private readonly limiter: RateLimiter<T>;

  constructor(opts: RateLimitingQueueOptions<T>) {
    super({
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.registry ? { metrics: queueMetrics(opts.registry, opts.name) } : {}),
    });
    this.name = opts.name;
    this.limiter = opts.rateLimiter ?? defaultControllerRateLimiter<T>(opts.clock);
  }

  /** Adds `item` after the delay its failures so far call for (and counts one more). */
  addRateLimited(item: T): void {
    if (this.shuttingDown()) return;
    this.metrics.retried();
    this.addAfter(item, this.limiter.when(item));
  }

  /** Clears the item's back-off: call after every success. */
  forget(item: T): void {
    this.limiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.limiter.numRequeues(item);
  }
}
