/**
 * Records of one kind, by id, plus their order by (created_at, id): Octavia's default sort, so
 * default-ordered lists and marker pagination never sort the whole collection per request.
 */
export interface Ordered {
  id: string;
  created_at: string;
}

export function compareCreated(a: Ordered, b: Ordered): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
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
