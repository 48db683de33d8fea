/**
 * The emulator's etcd: one global, monotonic resourceVersion counter; objects per storage
 * (`group/resource`) keyed `namespace/name` and listed in key order; a bounded history of every
 * change for watches and consistent paginated reads; compaction, after which older
 * resourceVersions answer 410 Expired exactly as the real server does.
 *
 * Stored objects are immutable: writers hand in fresh objects, readers may serialise them
 * directly, and the history shares them instead of copying.
 */
import { apiErrors } from './errors.ts';
import { meta, type Obj } from './json.ts';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  type: EventType;
  storageKey: string;
  key: string;
  rv: number;
  /** The object after the change; for DELETED, the last state with the deletion's resourceVersion. */
  object: Obj;
  /** The object before the change (MODIFIED and DELETED). */
  prev?: Obj;
}

interface Bucket {
  items: Map<string, Obj>;
  /** Keys in order, rebuilt lazily after inserts and deletes (updates keep the order). */
  sorted: string[] | undefined;
  /** resourceVersion of the last change in this bucket. */
  lastRv: number;
}

export function objectKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export interface StoreOptions {
  /** How many changes the history keeps before compacting (watch resume window). */
  historySize: number;
  /** First resourceVersion handed out minus one. */
  initialRv?: number;
}

export class Store {
  private rv: number;
  private readonly buckets = new Map<string, Bucket>();
  private history: StoreEvent[] = [];
  /** Every change at or below this resourceVersion has left the history. */
  private compactedRv: number;
  private readonly listeners = new Set<(ev: StoreEvent) => void>();

  private readonly options: StoreOptions;

  constructor(options: StoreOptions) {
    this.options = options;
    this.rv = options.initialRv ?? 0;
    this.compactedRv = this.rv;
  }

  currentRv(): number {
    return this.rv;
  }

  oldestRv(): number {
    return this.compactedRv;
  }

  subscribe(fn: (ev: StoreEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private bucket(storageKey: string): Bucket {
    let b = this.buckets.get(storageKey);
    if (!b) {
      b = { items: new Map(), sorted: undefined, lastRv: 0 };
      this.buckets.set(storageKey, b);
    }
    return b;
  }

  get(storageKey: string, key: string): Obj | undefined {
    return this.buckets.get(storageKey)?.items.get(key);
  }

  count(storageKey: string): number {
    return this.buckets.get(storageKey)?.items.size ?? 0;
  }

  /** Keys in etcd order (namespace, then name), optionally only those under a namespace. */
  keys(storageKey: string, namespace?: string): string[] {
    const b = this.buckets.get(storageKey);
    if (!b) return [];
    if (!b.sorted) b.sorted = [...b.items.keys()].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
    if (namespace === undefined) return b.sorted;
    const prefix = `${namespace}/`;
    return b.sorted.filter((k) => k.startsWith(prefix));
  }

  lastChange(storageKey: string): number {
    return this.buckets.get(storageKey)?.lastRv ?? 0;
  }

  /** Writes an object with the next resourceVersion; the caller has done every precondition check. */
  put(storageKey: string, key: string, obj: Obj): Obj {
    const b = this.bucket(storageKey);
    const prev = b.items.get(key);
    const rv = ++this.rv;
    meta(obj).resourceVersion = String(rv);
    b.items.set(key, obj);
    if (!prev) b.sorted = undefined;
    b.lastRv = rv;
    this.record(
      prev
        ? { type: 'MODIFIED', storageKey, key, rv, object: obj, prev }
        : { type: 'ADDED', storageKey, key, rv, object: obj },
    );
    return obj;
  }

  remove(storageKey: string, key: string): Obj | undefined {
    const b = this.buckets.get(storageKey);
    const prev = b?.items.get(key);
    if (!b || !prev) return undefined;
    const rv = ++this.rv;
    const object = { ...prev, metadata: { ...(prev.metadata as Obj), resourceVersion: String(rv) } };
    b.items.delete(key);
    b.sorted = undefined;
    b.lastRv = rv;
    this.record({ type: 'DELETED', storageKey, key, rv, object, prev });
    return object;
  }

  private record(ev: StoreEvent): void {
    this.history.push(ev);
    if (this.history.length > this.options.historySize) {
      // Drop in chunks so compaction stays amortised O(1) per write.
      const drop = Math.max(1, Math.floor(this.options.historySize / 10));
      const dropped = this.history.splice(0, drop);
      this.compactedRv = Math.max(this.compactedRv, dropped[dropped.length - 1]?.rv ?? this.compactedRv);
    }
    for (const l of this.listeners) l(ev);
  }

  /** Forgets history up to `rv` (default: everything), as an etcd compaction does. */
  compact(rv = this.rv): void {
    this.history = this.history.filter((e) => e.rv > rv);
    this.compactedRv = Math.max(this.compactedRv, Math.min(rv, this.rv));
  }

  /** Changes after `rv` in one storage (all storages when undefined); 410 if compacted away. */
  since(rv: number, storageKey?: string): StoreEvent[] {
    if (rv < this.compactedRv) {
      throw apiErrors.expired(`too old resource version: ${rv} (${this.compactedRv})`);
    }
    const out: StoreEvent[] = [];
    // Binary search for the first event after rv: history is ordered by rv.
    let lo = 0;
    let hi = this.history.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.history[mid] as StoreEvent).rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.history.length; i++) {
      const e = this.history[i] as StoreEvent;
      if (storageKey === undefined || e.storageKey === storageKey) out.push(e);
    }
    return out;
  }

  /**
   * The objects of one storage as they were at `rv`, in key order: the current state with every
   * later change undone. Throws 410 Expired when those changes are no longer in the history.
   */
  snapshot(storageKey: string, rv: number, namespace?: string): { key: string; object: Obj }[] {
    if (rv >= this.lastChange(storageKey)) {
      return this.keys(storageKey, namespace).map((key) => ({
        key,
        object: this.get(storageKey, key) as Obj,
      }));
    }
    const later = this.since(rv, storageKey);
    const items = new Map(this.buckets.get(storageKey)?.items ?? []);
    for (let i = later.length - 1; i >= 0; i--) {
      const e = later[i] as StoreEvent;
      if (e.type === 'ADDED') items.delete(e.key);
      else if (e.prev) items.set(e.key, e.prev);
    }
    const prefix = namespace === undefined ? '' : `${namespace}/`;
    return [...items.keys()]
      .filter((k) => k.startsWith(prefix))
      .sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))
      .map((key) => ({ key, object: items.get(key) as Obj }));
  }
}
