/**
 * One resource's records, keyed by id and also kept in id order (Neutron's default list order and
 * marker pagination walk that array, without sorting or map lookups per request), with
 * per-project counts for quotas.
 */
export class Collection<T extends { id: string; project_id: string }> {
  private readonly items = new Map<string, T>();
  private readonly ordered: T[] = [];
  private readonly perProject = new Map<string, number>();

  get size(): number {
    return this.items.size;
  }

  get(id: string): T | undefined {
    return this.items.get(id);
  }

  has(id: string): boolean {
    return this.items.has(id);
  }

  values(): IterableIterator<T> {
    return this.items.values();
  }

  /** Records in ascending id order; do not mutate. */
  get sorted(): readonly T[] {
    return this.ordered;
  }

  countFor(projectId: string): number {
    return this.perProject.get(projectId) ?? 0;
  }

  insert(rec: T): void {
    if (this.items.has(rec.id)) throw new Error(`duplicate id ${rec.id}`);
    this.items.set(rec.id, rec);
    this.ordered.splice(lowerBound(this.ordered, rec.id), 0, rec);
    this.perProject.set(rec.project_id, this.countFor(rec.project_id) + 1);
  }

  remove(id: string): T | undefined {
    const rec = this.items.get(id);
    if (!rec) return undefined;
    this.items.delete(id);
    const i = lowerBound(this.ordered, id);
    if (this.ordered[i]?.id === id) this.ordered.splice(i, 1);
    const n = this.countFor(rec.project_id) - 1;
    if (n > 0) this.perProject.set(rec.project_id, n);
    else this.perProject.delete(rec.project_id);
    return rec;
  }

  clear(): void {
    this.items.clear();
    this.ordered.length = 0;
    this.perProject.clear();
  }
}

/** Index of the first record whose id is >= `id` in an id-sorted array. */
export function lowerBound(sorted: readonly { id: string }[], id: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]!.id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A secondary index: key → ids (ports by network, by device). */
export class MultiIndex {
  private readonly map = new Map<string, Set<string>>();

  add(key: string, id: string): void {
    let set = this.map.get(key);
    if (!set) {
      set = new Set();
      this.map.set(key, set);
    }
    set.add(id);
  }

  delete(key: string, id: string): void {
    const set = this.map.get(key);
    if (!set) return;
    set.delete(id);
    if (set.size === 0) this.map.delete(key);
  }

  get(key: string): ReadonlySet<string> {
    return this.map.get(key) ?? EMPTY;
  }

  clear(): void {
    this.map.clear();
  }
}

const EMPTY: ReadonlySet<string> = new Set();
