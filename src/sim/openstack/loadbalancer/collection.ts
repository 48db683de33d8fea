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

export class Collection<T extends Ordered> {
  private readonly byId = new Map<string, T>();
  /**
   * Creation order, kept lazily: an add in order (the usual case, the clock being monotonic) is an
   * append; a delete only counts the record as gone, and the next ordered() drops the gone ones in
   * one pass. A pool's members are hundreds of thousands of records across a cloud: splicing this
   * array per deleted member, or bisecting it per added one, cost the emulator more than its
   * callers' requests did.
   */
  private order: T[] = [];
  private gone = 0;
  private sorted = true;

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
    const last = this.order[this.order.length - 1];
    if (last !== undefined && compareCreated(last, record) > 0) this.sorted = false;
    this.order.push(record);
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
      this.order = this.order.filter((r) => this.byId.get(r.id) === r && !kept.has(r) && kept.add(r));
      this.gone = 0;
    }
    if (!this.sorted) {
      this.order.sort(compareCreated);
      this.sorted = true;
    }
    return this.order;
  }

  clear(): void {
    this.byId.clear();
    this.order = [];
    this.gone = 0;
    this.sorted = true;
  }
}
