/**
 * An informer: keeps a cache of one kind in step with the API server and tells handlers what
 * changed. Written as the explicit state machine of kube-rs's watcher rather than on
 * client-node's ListWatch, which stops for good on any error but 410 (kubernetes-client/javascript
 * #795) and can go quiet without noticing (#596, #958):
 *
 *   Empty ──list page──▶ InitPage ──…last page: atomic swap──▶ InitListed(rv)
 *   InitListed(rv) ──watch from rv, bookmarks on──▶ Watching(rv′) ──clean end──▶ InitListed(rv′)
 *   410 Gone / "too large resource version" anywhere ──▶ Empty (relist at once)
 *   no event for `stalenessMs` while Watching (the watchdog) ──▶ Empty
 *   any other error ──back-off──▶ Empty (while listing) or InitListed(rv) (while watching)
 *
 * The back-off (0.8 s doubling to 30 s, jittered) is always on and resets once `resetAfterMs`
 * has passed without a failure. A relist swaps the whole cache at once and reports the difference
 * as adds, updates and deletes, so a 410 loses no event; a delete handler always gets the last
 * known state of the object. Handlers run synchronously and must only enqueue.
 */
import type { Logger } from '../../lib/log.ts';
import type { Registry } from '../../lib/metrics.ts';
import type { KubeClient } from '../client.ts';
import { abortReason, jitter, systemClock, type Clock } from '../../lib/clock.ts';
import { isGone, KubeApiError } from '../errors.ts';
import { counter } from '../metrics.ts';
import { keyOf, resourceLabel, type KubernetesObject, type ResourceType } from '../resource.ts';
import { byNamespace, NAMESPACE_INDEX } from './indexers.ts';
import { Store, type IndexFunc } from './store.ts';

export type InformerState<T> =
  /** Nothing listed yet, or the last resourceVersion is unusable: list from scratch. */
  | { kind: 'Empty' }
  /** Listing in pages; the buffer is swapped in after the last page. */
  | { kind: 'InitPage'; continue: string; resourceVersion: string; buffer: T[] }
  /** The cache holds the state at `resourceVersion`: watch from there. */
  | { kind: 'InitListed'; resourceVersion: string }
  /** A watch is open; `resourceVersion` is the last one seen. */
  | { kind: 'Watching'; resourceVersion: string };

export interface InformerHandler<T> {
  onAdd?(obj: T): void;
  /** `old === obj` on a resync. */
  onUpdate?(old: T, obj: T): void;
  /** `obj` is the last known state: the watch's final object, or the cached one after a relist. */
  onDelete?(obj: T): void;
}

export interface InformerOptions<T extends KubernetesObject> {
  client: KubeClient;
  type: ResourceType<T>;
  /** Only this namespace (all when absent). */
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /** Indices besides `namespace`. */
  indexers?: Readonly<Record<string, IndexFunc<T>>>;
  /** List page size (limit/continue). */
  pageSize?: number;
  /**
   * Drop `metadata.managedFields` from every object before it is cached (controller-runtime's
   * `cache.TransformStripManagedFields`): for controllers that never read them, a third or more of
   * each cached object's memory and of the work to freeze it. Writes are unaffected: an update or
   * patch that carries no managedFields leaves the live ones as they are.
   */
  stripManagedFields?: boolean;
  /** Every this often, `onUpdate(obj, obj)` for every cached object; 0 (default) never. */
  resyncPeriodMs?: number;
  /** Server-side watch timeout; by default 5–10 minutes, spread as client-go does. */
  watchTimeoutSeconds?: number;
  /**
   * A watch with no event (bookmarks included) for this long is presumed stalled and the
   * informer relists. Longer than the longest watch timeout, so a healthy quiet watch ends first.
   */
  stalenessMs?: number;
  backoff?: { initialMs?: number; maxMs?: number; resetAfterMs?: number };
  clock?: Clock;
  log?: Logger;
  registry?: Registry;
}

/** The watchdog's reason for ending a watch. */
export class StaleWatchError extends Error {
  override readonly name = 'StaleWatchError';
}

/** A watch the server ended at once without any event: treated as a failure so it backs off. */
class ShortWatchError extends Error {
  override readonly name = 'ShortWatchError';
}

const SHORT_WATCH_MS = 1000;

export interface InformerStats {
  lists: number;
  pages: number;
  relists: number;
  watches: number;
  events: number;
  bookmarks: number;
  failures: number;
  staleRestarts: number;
  resyncs: number;
}

export class Informer<T extends KubernetesObject> {
  readonly type: ResourceType<T>;
  readonly store: Store<T>;
  readonly stats: InformerStats = {
    lists: 0,
    pages: 0,
    relists: 0,
    watches: 0,
    events: 0,
    bookmarks: 0,
    failures: 0,
    staleRestarts: 0,
    resyncs: 0,
  };
  private readonly opts: InformerOptions<T>;
  private readonly clock: Clock;
  private readonly label: string;
  private current: InformerState<T> = { kind: 'Empty' };
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  private readonly handlers = new Set<InformerHandler<T>>();
  private running: Promise<void> | undefined;
  private failures = 0;
  private lastFailureAt = Number.NEGATIVE_INFINITY;
  private readonly metrics:
    | {
        lists: ReturnType<typeof counter<'resource'>>;
        relists: ReturnType<typeof counter<'resource' | 'reason'>>;
        failures: ReturnType<typeof counter<'resource'>>;
      }
    | undefined;

  constructor(opts: InformerOptions<T>) {
    this.opts = opts;
    this.type = opts.type;
    this.clock = opts.clock ?? systemClock;
    this.label = resourceLabel(opts.type);
    this.store = new Store<T>({ [NAMESPACE_INDEX]: byNamespace, ...opts.indexers });
    this.metrics = opts.registry
      ? {
          lists: counter(opts.registry, 'informer_lists_total', 'Full lists started by informers.', [
            'resource',
          ]),
          relists: counter(
            opts.registry,
            'informer_relists_total',
            'Relists after the first, by cause (expired, stale, error).',
            ['resource', 'reason'],
          ),
          failures: counter(
            opts.registry,
            'informer_failures_total',
            'List and watch failures that led to a back-off.',
            ['resource'],
          ),
        }
      : undefined;
  }

  /** The state machine's current state (diagnostics and tests). */
  get state(): InformerState<T>['kind'] {
    return this.current.kind;
  }

  /** The resourceVersion the cache reflects, once listed. */
  get resourceVersion(): string | undefined {
    return this.current.kind === 'InitListed' || this.current.kind === 'Watching'
      ? this.current.resourceVersion
      : undefined;
  }

  /** True once the first complete list is in the cache; gates controllers' start. */
  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.syncWaiters = this.syncWaiters.filter((w) => w !== done);
        reject(abortReason(signal));
      };
      const done = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.syncWaiters.push(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Adds a handler; returns its remover. A handler added after the first sync is first told
   * about every cached object as an add, as client-go does for late handlers.
   */
  addHandler(handler: InformerHandler<T>): () => void {
    this.handlers.add(handler);
    if (this.synced) for (const obj of this.store.list()) this.call(() => handler.onAdd?.(obj));
    return () => this.handlers.delete(handler);
  }

  addIndexer(name: string, fn: IndexFunc<T>): void {
    this.store.addIndexer(name, fn);
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(): T[] {
    return this.store.list();
  }

  byIndex(name: string, value: string): T[] {
    return this.store.byIndex(name, value);
  }

  /** Runs until `signal` aborts; starting twice returns the same run. */
  start(signal: AbortSignal): Promise<void> {
    this.running ??= this.run(signal);
    return this.running;
  }

  private async run(signal: AbortSignal): Promise<void> {
    const stopResync = this.scheduleResync();
    try {
      while (!signal.aborted) {
        try {
          this.current = await this.step(this.current, signal);
        } catch (err) {
          if (signal.aborted) break;
          const { next, backoff, reason } = this.afterError(this.current, err);
          this.current = next;
          if (!backoff) {
            this.opts.log?.info({ resource: this.label, reason, err }, 'informer relisting');
            continue;
          }
          const delayMs = this.nextBackoff();
          this.stats.failures++;
          this.metrics?.failures.inc({ resource: this.label });
          this.opts.log?.warn(
            { resource: this.label, state: this.current.kind, delayMs: Math.round(delayMs), err },
            'informer list/watch failed; backing off',
          );
          try {
            await this.clock.sleep(delayMs, signal);
          } catch {
            break;
          }
        }
      }
    } finally {
      stopResync();
      this.running = undefined;
    }
  }

  private async step(state: InformerState<T>, signal: AbortSignal): Promise<InformerState<T>> {
    switch (state.kind) {
      case 'Empty': {
        this.stats.lists++;
        this.metrics?.lists.inc({ resource: this.label });
        const page = await this.opts.client.list(this.type, {
          ...this.selection(),
          limit: this.pageSize,
          signal,
        });
        this.stats.pages++;
        return this.afterPage([], page.resourceVersion, page);
      }
      case 'InitPage': {
        const page = await this.opts.client.list(this.type, {
          ...this.selection(),
          limit: this.pageSize,
          continue: state.continue,
          signal,
        });
        this.stats.pages++;
        return this.afterPage(state.buffer, state.resourceVersion, page);
      }
      case 'InitListed':
        return this.watch(state.resourceVersion, signal);
      case 'Watching':
        // Only a watch in progress is in this state; resuming one means watching from its rv.
        return { kind: 'InitListed', resourceVersion: state.resourceVersion };
    }
  }

  private afterPage(
    buffer: T[],
    resourceVersion: string,
    page: { items: T[]; continue: string | undefined },
  ): InformerState<T> {
    for (const item of page.items) buffer.push(this.admit(item));
    if (page.continue) return { kind: 'InitPage', continue: page.continue, resourceVersion, buffer };
    this.commit(buffer);
    return { kind: 'InitListed', resourceVersion };
  }

  /** The atomic swap after a complete list, reported to handlers as the difference. */
  private commit(items: T[]): void {
    const first = !this.synced;
    const diff = this.store.replace(items);
    for (const obj of diff.added) this.emitAdd(obj);
    for (const [old, obj] of diff.updated) this.emitUpdate(old, obj);
    for (const obj of diff.deleted) this.emitDelete(obj);
    if (first) {
      this.synced = true;
      const waiters = this.syncWaiters;
      this.syncWaiters = [];
      for (const w of waiters) w();
    }
  }

  private async watch(resourceVersion: string, signal: AbortSignal): Promise<InformerState<T>> {
    this.stats.watches++;
    const started = this.clock.now();
    let lastEventAt = started;
    let events = 0;
    let rv = resourceVersion;
    this.current = { kind: 'Watching', resourceVersion: rv };
    const watchdog = new AbortController();
    const stopWatchdog = this.armWatchdog(() => lastEventAt, watchdog);
    try {
      const stream = this.opts.client.watch(this.type, {
        ...this.selection(),
        resourceVersion: rv,
        allowWatchBookmarks: true,
        timeoutSeconds: this.opts.watchTimeoutSeconds ?? Math.round(300 * (1 + this.clock.random())),
        signal: AbortSignal.any([signal, watchdog.signal]),
      });
      for await (const ev of stream) {
        lastEventAt = this.clock.now();
        events++;
        if (ev.type === 'BOOKMARK') {
          this.stats.bookmarks++;
          if (ev.resourceVersion) rv = ev.resourceVersion;
        } else {
          this.stats.events++;
          rv = ev.object.metadata?.resourceVersion ?? rv;
          this.apply(ev.type, ev.object);
        }
        this.current = { kind: 'Watching', resourceVersion: rv };
      }
    } catch (err) {
      if (watchdog.signal.aborted && !signal.aborted) throw abortReason(watchdog.signal);
      throw err;
    } finally {
      stopWatchdog();
    }
    if (events === 0 && this.clock.now() - started < SHORT_WATCH_MS && !signal.aborted) {
      throw new ShortWatchError('the watch ended at once without any event');
    }
    return { kind: 'InitListed', resourceVersion: rv };
  }

  /** What the cache keeps of an object from the API server. */
  private admit(obj: T): T {
    if (this.opts.stripManagedFields && obj.metadata?.managedFields !== undefined)
      delete obj.metadata.managedFields;
    return obj;
  }

  private apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', received: T): void {
    const obj = this.admit(received);
    if (type === 'DELETED') {
      this.store.delete(keyOf(obj));
      // The watch's final object is newer than anything cached: it is the last known state.
      this.emitDelete(Object.freeze(obj));
      return;
    }
    const old = this.store.upsert(obj);
    if (old) this.emitUpdate(old, obj);
    else this.emitAdd(obj);
  }

  /** Ends the watch when no event arrived for `stalenessMs`. */
  private armWatchdog(lastEventAt: () => number, watchdog: AbortController): () => void {
    const stalenessMs = this.opts.stalenessMs ?? 15 * 60_000;
    let cancel = () => {};
    const check = () => {
      const idle = this.clock.now() - lastEventAt();
      if (idle >= stalenessMs) {
        watchdog.abort(new StaleWatchError(`no watch event for ${Math.round(idle / 1000)} s`));
        return;
      }
      cancel = this.clock.setTimer(stalenessMs - idle, check);
    };
    cancel = this.clock.setTimer(stalenessMs, check);
    return () => cancel();
  }

  private afterError(
    state: InformerState<T>,
    err: unknown,
  ): { next: InformerState<T>; backoff: boolean; reason: string } {
    if (isGone(err) || isTooLargeResourceVersion(err)) {
      this.countRelist('expired');
      return { next: { kind: 'Empty' }, backoff: false, reason: 'resourceVersion expired' };
    }
    if (err instanceof StaleWatchError) {
      this.stats.staleRestarts++;
      this.countRelist('stale');
      return { next: { kind: 'Empty' }, backoff: false, reason: err.message };
    }
    if (state.kind === 'Empty' || state.kind === 'InitPage') {
      if (this.synced) this.countRelist('error');
      return { next: { kind: 'Empty' }, backoff: true, reason: 'list failed' };
    }
    return {
      next: { kind: 'InitListed', resourceVersion: state.resourceVersion },
      backoff: true,
      reason: 'watch failed',
    };
  }

  private countRelist(reason: string): void {
    this.stats.relists++;
    this.metrics?.relists.inc({ resource: this.label, reason });
  }

  private nextBackoff(): number {
    const initialMs = this.opts.backoff?.initialMs ?? 800;
    const maxMs = this.opts.backoff?.maxMs ?? 30_000;
    const resetAfterMs = this.opts.backoff?.resetAfterMs ?? 120_000;
    const now = this.clock.now();
    if (now - this.lastFailureAt > resetAfterMs) this.failures = 0;
    this.lastFailureAt = now;
    const base = Math.min(initialMs * 2 ** this.failures, maxMs);
    this.failures++;
    return Math.min(jitter(base, 1, this.clock), maxMs);
  }

  private scheduleResync(): () => void {
    const period = this.opts.resyncPeriodMs ?? 0;
    if (period <= 0) return () => {};
    let cancel = () => {};
    const tick = () => {
      if (this.synced) {
        this.stats.resyncs++;
        for (const obj of this.store.list()) this.emitUpdate(obj, obj);
      }
      cancel = this.clock.setTimer(period, tick);
    };
    cancel = this.clock.setTimer(period, tick);
    return () => cancel();
  }

  private get pageSize(): number {
    return this.opts.pageSize ?? 500;
  }

  private selection() {
    return {
      namespace: this.opts.namespace,
      labelSelector: this.opts.labelSelector,
      fieldSelector: this.opts.fieldSelector,
    };
  }

  private emitAdd(obj: T): void {
    for (const h of this.handlers) this.call(() => h.onAdd?.(obj));
  }

  private emitUpdate(old: T, obj: T): void {
    for (const h of this.handlers) this.call(() => h.onUpdate?.(old, obj));
  }

  private emitDelete(obj: T): void {
    for (const h of this.handlers) this.call(() => h.onDelete?.(obj));
  }

  /** A throwing handler is a bug in that handler; it must not stop the informer or its siblings. */
  private call(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.opts.log?.error({ resource: this.label, err }, 'informer event handler threw');
    }
  }
}

/** The server's answer to a resourceVersion newer than it knows (after a restore or a reset). */
function isTooLargeResourceVersion(err: unknown): boolean {
  return KubeApiError.is(err) && err.code === 504 && /too large resource version/i.test(err.message);
}
