/**
 * The cache behind an informer: objects by key, frozen, with indices. Writes come only from the
 * informer (upsert, delete, and `replace` after a relist, which swaps everything at once so readers
 * never see half a list); everyone else reads.
 */
import type { KubernetesObject } from '../resource.ts';
import { keyOf } from '../resource.ts';

/** The index values of an object (client-go's `IndexFunc`): e.g. its namespace, its owners' uids. */
export type IndexFunc<T> = (obj: T) => readonly string[];

/** Recursively freezes a JSON value, so no reconciler can mutate what other readers share. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}

export interface ReplaceResult<T> {
  added: T[];
  updated: [old: T, now: T][];
  /** The last known state of every object the new list no longer has. */
  deleted: T[];
}

export class Store<T extends KubernetesObject> {
  private items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** index name → index value → keys. */
  private indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Readonly<Record<string, IndexFunc<T>>> = {}) {
    for (const [name, fn] of Object.entries(indexers)) {
      this.indexers.set(name, fn);
      this.indices.set(name, new Map());
    }
  }

  get size(): number {
    return this.items.size;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  /** Objects whose index `name` has `value`; throws for an unknown index, which is a wiring bug. */
  byIndex(name: string, value: string): T[] {
    const index = this.indices.get(name);
    if (!index)
      throw new Error(`no index "${name}"; known: ${[...this.indices.keys()].join(', ') || 'none'}`);
    const keys = index.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const k of keys) {
      const o = this.items.get(k);
      if (o) out.push(o);
    }
    return out;
  }

  hasIndex(name: string): boolean {
    return this.indices.has(name);
  }

  /** Adds an index, built over what the store holds now; re-adding one by the same name is a no-op. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) return;
    this.indexers.set(name, fn);
    const index = new Map<string, Set<string>>();
    for (const [key, obj] of this.items) addToIndex(index, fn(obj), key);
    this.indices.set(name, index);
  }

  /** Stores (and freezes) an object; returns what it replaced. */
  upsert(obj: T): T | undefined {
    deepFreeze(obj);
    const key = keyOf(obj);
    const old = this.items.get(key);
    if (old) this.unindex(old, key);
    this.items.set(key, obj);
    this.index(obj, key);
    return old;
  }

  delete(key: string): T | undefined {
    const old = this.items.get(key);
    if (!old) return undefined;
    this.unindex(old, key);
    this.items.delete(key);
    return old;
  }

  /** Swaps in a complete new list at once and tells what changed (by resourceVersion). */
  replace(objs: readonly T[]): ReplaceResult<T> {
    const items = new Map<string, T>();
    const indices = new Map<string, Map<string, Set<string>>>();
    for (const name of this.indexers.keys()) indices.set(name, new Map());
    const result: ReplaceResult<T> = { added: [], updated: [], deleted: [] };
    for (const obj of objs) {
      deepFreeze(obj);
      const key = keyOf(obj);
      items.set(key, obj);
      for (const [name, fn] of this.indexers)
        addToIndex(indices.get(name) as Map<string, Set<string>>, fn(obj), key);
      const old = this.items.get(key);
      if (!old) result.added.push(obj);
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
        result.updated.push([old, obj]);
    }
    for (const [key, old] of this.items) if (!items.has(key)) result.deleted.push(old);
    this.items = items;
    this.indices = indices;
    return result;
  }

  private index(obj: T, key: string): void {
    for (const [name, fn] of this.indexers)
      addToIndex(this.indices.get(name) as Map<string, Set<string>>, fn(obj), key);
  }

  private unindex(obj: T, key: string): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name) as Map<string, Set<string>>;
      for (const v of fn(obj)) {
        const keys = index.get(v);
        if (!keys) continue;
        keys.delete(key);
        if (keys.size === 0) index.delete(v);
      }
    }
  }
}

function addToIndex(index: Map<string, Set<string>>, values: readonly string[], key: string): void {
  for (const v of values) {
    let keys = index.get(v);
    if (!keys) index.set(v, (keys = new Set()));
    keys.add(key);
  }
}
