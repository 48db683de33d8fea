/**
 * Rate limiters with client-go's semantics (`util/workqueue/default_rate_limiters.go`,
 * `golang.org/x/time/rate`): a per-item exponential back-off, a token bucket shared by every
 * item, and the maximum of several. The work queue asks `when(item)` for a requeue delay and calls
 * `forget(item)` after a success, which is the only thing that resets an item's back-off.
 * The same token bucket, waited on, is the client's QPS/burst limit.
 */
import { abortReason, systemClock, type Clock } from '../lib/clock.ts';

export interface RateLimiter<T> {
  /** The delay before `item` may be retried; each call counts as one more failure. */
  when(item: T): number;
  /** Clears the item's failures, after a success. */
  forget(item: T): void;
  /** Failures recorded since the last `forget`. */
  numRequeues(item: T): number;
}

/** baseDelayMs × 2^failures, capped at maxDelayMs (client-go: 5 ms → 1000 s). */
export class ItemExponentialFailureRateLimiter<T> implements RateLimiter<T> {
  private readonly failures = new Map<T, number>();
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;

  constructor(baseDelayMs: number, maxDelayMs: number) {
    this.baseDelayMs = baseDelayMs;
    this.maxDelayMs = maxDelayMs;
  }

  when(item: T): number {
    const exp = this.failures.get(item) ?? 0;
    this.failures.set(item, exp + 1);
    // 2^exp overflows to Infinity long before it matters; the cap applies either way.
    return Math.min(this.baseDelayMs * 2 ** exp, this.maxDelayMs);
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/**
 * A token bucket of `burst` tokens refilled at `qps` per second, with reservations as in
 * `golang.org/x/time/rate`: taking a token never fails, it tells how long to wait for it.
 * `qps <= 0` or `Infinity` means no limit.
 */
export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  private readonly clock: Clock;
  private tokens: number;
  private last: number;

  constructor(qps: number, burst: number, clock: Clock = systemClock) {
    if (burst < 1 && Number.isFinite(qps) && qps > 0)
      throw new Error(`token bucket burst must be ≥ 1, got ${burst}`);
    this.qps = qps;
    this.burst = burst;
    this.clock = clock;
    this.tokens = burst;
    this.last = clock.now();
  }

  private get unlimited(): boolean {
    return !Number.isFinite(this.qps) || this.qps <= 0;
  }

  private refill(): void {
    const now = this.clock.now();
    const elapsed = Math.max(0, now - this.last);
    this.last = now;
    this.tokens = Math.min(this.burst, this.tokens + (elapsed * this.qps) / 1000);
  }

  /** Takes a token and returns how many ms to wait before using it (0 when one was available). */
  reserve(): number {
    if (this.unlimited) return 0;
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  /** Takes a token if one is available now. */
  tryTake(): boolean {
    if (this.unlimited) return true;
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Waits for a token. An abort gives the reserved token back, as `Reservation.Cancel` does. */
  async wait(signal?: AbortSignal): Promise<number> {
    if (signal?.aborted) throw abortReason(signal);
    const delayMs = this.reserve();
    if (delayMs <= 0) return 0;
    try {
      await this.clock.sleep(delayMs, signal);
    } catch (err) {
      this.tokens = Math.min(this.burst, this.tokens + 1);
      throw err;
    }
    return delayMs;
  }
}

/** The overall limit of a queue: every retry of every item draws from one bucket. */
export class BucketRateLimiter<T> implements RateLimiter<T> {
  private readonly bucket: TokenBucket;

  constructor(qps: number, burst: number, clock: Clock = systemClock) {
    this.bucket = new TokenBucket(qps, burst, clock);
  }

  when(_item: T): number {
    return this.bucket.reserve();
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}

/** The longest delay of several limiters; every limiter sees every call, as in client-go. */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  private readonly limiters: readonly RateLimiter<T>[];

  constructor(...limiters: RateLimiter<T>[]) {
    this.limiters = limiters;
  }

  when(item: T): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.when(item));
    return max;
  }

  forget(item: T): void {
    for (const l of this.limiters) l.forget(item);
  }

  numRequeues(item: T): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.numRequeues(item));
    return max;
  }
}

/**
 * client-go's `DefaultControllerRateLimiter`: per-item 5 ms × 2^n up to 1000 s, and 10 retries per
 * second with a burst of 100 over all items, whichever is slower.
 */
export function defaultControllerRateLimiter<T>(clock: Clock = systemClock): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(5, 1_000_000),
    new BucketRateLimiter<T>(10, 100, clock),
  );
}
