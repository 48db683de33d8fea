/**
 * The work queue, with client-go's semantics (`util/workqueue/queue.go`):
 *
 * - an item in the queue is there once, however often it is added (the `dirty` set);
 * - an item a worker holds (`processing`) is never handed to a second worker; added meanwhile, it
 *   is queued again when the first worker calls `done`. Hence one reconcile per key at a time,
 *   and at most one more pending behind it, whatever the burst.
 *
 * One deliberate difference: after `shutDown`, `get` hands out nothing more (client-go lets
 * workers drain what is queued). A stopping manager stops taking work and only finishes what is
 * in flight; whoever runs next relists and reconciles everything anyway.
 */
import { systemClock, type Clock } from '../../lib/clock.ts';
import { noQueueMetrics, type QueueMetrics } from './metrics.ts';

export interface WorkQueueOptions {
  clock?: Clock;
  metrics?: QueueMetrics;
}

export class WorkQueue<T> {
  protected readonly clock: Clock;
  protected readonly metrics: QueueMetrics;
  /** A FIFO as an array with a moving head: shift() is O(n), this is O(1) amortised. */
  private items: T[] = [];
  private head = 0;
  private readonly dirty = new Set<T>();
  private readonly processing = new Set<T>();
  private readonly addedAt = new Map<T, number>();
  private readonly startedAt = new Map<T, number>();
  private waiters: ((item: T | undefined) => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private shutting = false;

  constructor(opts: WorkQueueOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.metrics = opts.metrics ?? noQueueMetrics;
  }

  /** Queues `item` unless it is queued already; one held by a worker is queued on its `done`. */
  add(item: T): void {
    if (this.shutting || this.dirty.has(item)) return;
    this.metrics.added();
    this.dirty.add(item);
    this.addedAt.set(item, this.clock.now());
    if (this.processing.has(item)) return;
    this.push(item);
  }

  /** Items waiting for a worker. */
  len(): number {
    return this.items.length - this.head;
  }

  /** Items held by workers. */
  inFlight(): number {
    return this.processing.size;
  }

  /** The next item, marked as processing; undefined once the queue is shutting down. */
  get(): Promise<T | undefined> {
    if (this.shutting) return Promise.resolve(undefined);
    if (this.len() > 0) {
      const item = this.items[this.head] as T;
      this.items[this.head] = undefined as T;
      this.head++;
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      this.metrics.depth(this.len());
      this.take(item);
      return Promise.resolve(item);
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks a worker's item finished; if it was added meanwhile, it is queued again now. */
  done(item: T): void {
    if (!this.processing.delete(item)) return;
    const started = this.startedAt.get(item);
    this.startedAt.delete(item);
    if (started !== undefined) this.metrics.worked((this.clock.now() - started) / 1000);
    if (this.dirty.has(item) && !this.shutting) this.push(item);
    if (this.processing.size === 0 && this.drainWaiters.length > 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** Stops handing out items and accepting new ones; workers waiting in `get` get undefined. */
  shutDown(): void {
    if (this.shutting) return;
    this.shutting = true;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(undefined);
    this.items = [];
    this.head = 0;
    this.metrics.depth(0);
  }

  /** `shutDown`, then resolves when every item held by a worker is `done` (or `signal` aborts). */
  shutDownWithDrain(signal?: AbortSignal): Promise<void> {
    this.shutDown();
    if (this.processing.size === 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        signal?.removeEventListener('abort', finish);
        this.drainWaiters = this.drainWaiters.filter((w) => w !== finish);
        resolve();
      };
      this.drainWaiters.push(finish);
      signal?.addEventListener('abort', finish, { once: true });
    });
  }

  shuttingDown(): boolean {
    return this.shutting;
  }

  private push(item: T): void {
    const waiter = this.waiters.shift();
    if (waiter) {
      // Handed over synchronously, so a second add before the worker runs is deduplicated.
      this.take(item);
      waiter(item);
      return;
    }
    this.items.push(item);
    this.metrics.depth(this.len());
  }

  private take(item: T): void {
    const now = this.clock.now();
    this.processing.add(item);
    this.dirty.delete(item);
    const added = this.addedAt.get(item);
    this.addedAt.delete(item);
    if (added !== undefined) this.metrics.queued((now - added) / 1000);
    this.startedAt.set(item, now);
  }
}
