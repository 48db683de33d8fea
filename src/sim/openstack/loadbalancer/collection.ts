/**
 * Records of one kind, by id, plus their order by (created_at, id): Octavia's default sort, so
 * default-ordered lists and marker pagination never sort the whole collection per request.
 */
export interface Ordered {
  id: string;
  created_at: string;
}

/**
 * created_at has one-second resolution, and the emulator creates many objects within a second where a
 * real cloud takes seconds per write: records created in the same second keep their creation order
 * (as a real cloud's would, being seconds apart) instead of falling back to random id order.
 * Held in a hidden property of the record (a symbol, not enumerable): never on the wire nor in the
 * state file, and no per-cloud state. Not a WeakMap: with millions of members its entries were a
 * large part of every garbage collection.
 */
export const CREATION = Symbol('creation');
type Numbered = Ordered & { [CREATION]?: number };
let nextCreation = 0;

/**
 * A creation number for a record that keeps it in a field of its own (a member, member-record.ts):
 * set in its constructor, it is part of the record's fixed shape instead of a property added later.
 */
export function creationNumber(): number {
  return nextCreation++;
}

function creationOf(record: Ordered): number {
  const r = record as Numbered;
  let n = r[CREATION];
  if (n === undefined) {
    n = nextCreation++;
    Object.defineProperty(r, CREATION, { value: n, enumerable: false });
  }
  return n;
}

export function compareCreated(a: Ordered, b: Ordered): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  if (a.id === b.id) return 0;
  return creationOf(a) - creationOf(b);
}

/**
 * Records in (created_at, id) order, kept lazily: an append in order (the usual case, the clock
 * being monotonic) is a push, and the sort and the dropping of removed records wait for the next
 * ordered(). A pool's members are hundreds of thousands of records across a cloud: splicing the
 * array per deleted member, or bisecting it per added one, cost the emulator more than its
 * callers' requests did. Shared by Collection and a pool's members (pool-members.ts).
 */
export class CreationOrder<T extends Ordered> {
  private order: T[] = [];
  private sorted = true;

  get length(): number {
    return this.order.length;
  }

  append(record: T): void {
    const last = this.order[this.order.length - 1];
    if (last !== undefined && compareCreated(last, record) > 0) this.sorted = false;
    this.order.push(record);
  }

  /** Keeps only the records `keep` accepts, in one pass. */
  compact(keep: (record: T) => unknown): void {
    this.order = this.order.filter(keep);
  }

  /** The first record `match` accepts, in no particular order. */
  find(match: (record: T) => boolean): T | undefined {
    return this.order.find(match);
  }

  /** All records in (created_at, id) order; the array is shared, do not mutate it. */
  ordered(): readonly T[] {
    if (!this.sorted) {
      this.order.sort(compareCreated);
      this.sorted = true;
    }
    return this.order;
  }

  clear(): void {
    this.order = [];
    this.sorted = true;
  }
}

export class Collection<T extends Ordered> {
  private readonly byId = new Map<string, T>();
  /** Removed records stay in it until the next ordered() counts them out (`gone`). */
  private readonly order = new CreationOrder<T>();
  private gone = 0;

  get size(): number {
    return this.byId.size;
  }

  get(id: string): T | undefined {
    return this.byId.get(id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  add(record: T): void {
    const replaced = this.byId.get(record.id);
    if (replaced !== undefined) this.gone++;
    this.byId.set(record.id, record);
    creationOf(record);
    this.order.append(record);
  }

  delete(id: string): boolean {
    if (!this.byId.delete(id)) return false;
    this.gone++;
    return true;
  }

  /** All records in (created_at, id) order; the array is shared, do not mutate it. */
  ordered(): readonly T[] {
    if (this.gone > 0) {
      // A record deleted and added again is in the array twice: it is kept once.
      const kept = new Set<T>();
      this.order.compact((r) => this.byId.get(r.id) === r && !kept.has(r) && kept.add(r));
      this.gone = 0;
    }
    return this.order.ordered();
  }

  clear(): void {
    this.byId.clear();
    this.order.clear();
    this.gone = 0;
  }
}
