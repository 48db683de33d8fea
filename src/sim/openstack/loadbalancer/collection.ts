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
 * Keyed by the record object, so it needs no field on the wire and no per-cloud state.
 */
const creationOrder = new WeakMap<Ordered, number>();
let nextCreation = 0;

function creationOf(record: Ordered): number {
  let n = creationOrder.get(record);
  if (n === undefined) creationOrder.set(record, (n = nextCreation++));
  return n;
}

export function compareCreated(a: Ordered, b: Ordered): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  if (a.id === b.id) return 0;
  return creationOf(a) - creationOf(b);
}

export class Collection<T extends Ordered> {
  private readonly byId = new Map<string, T>();
  private readonly order: T[] = [];

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
    this.byId.set(record.id, record);
    creationOf(record);
    // Records are created with a monotonic clock, so this is an append in practice.
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareCreated(this.order[mid]!, record) < 0) lo = mid + 1;
      else hi = mid;
    }
    this.order.splice(lo, 0, record);
  }

  delete(id: string): boolean {
    const record = this.byId.get(id);
    if (!record) return false;
    this.byId.delete(id);
    const idx = this.indexOf(record);
    if (idx >= 0) this.order.splice(idx, 1);
    return true;
  }

  /** All records in (created_at, id) order; the array is shared, do not mutate it. */
  ordered(): readonly T[] {
    return this.order;
  }

  clear(): void {
    this.byId.clear();
    this.order.length = 0;
  }

  private indexOf(record: T): number {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const c = compareCreated(this.order[mid]!, record);
      if (c === 0) return mid;
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    return -1;
  }
}
