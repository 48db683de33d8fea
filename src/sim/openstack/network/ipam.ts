import type { IpVersion } from './ip.ts';

export interface Range {
  start: bigint;
  end: bigint;
}

/** A binary min-heap of addresses: the holes freed below the allocation frontier. */
class AddressHeap {
  private readonly items: bigint[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): bigint | undefined {
    return this.items[0];
  }

  push(v: bigint): void {
    const a = this.items;
    a.push(v);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (a[parent]! <= a[i]!) break;
      [a[parent], a[i]] = [a[i]!, a[parent]!];
      i = parent;
    }
  }

  pop(): bigint | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && a[l]! < a[m]!) m = l;
        if (r < a.length && a[r]! < a[m]!) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i]!, a[m]!];
        i = m;
      }
    }
    return top;
  }

  clear(): void {
    this.items.length = 0;
  }
}

/**
 * The addresses of one subnet: which are taken (and by which port), and the lowest free one.
 * Allocation is amortised O(log n): a frontier walks the pools upwards, skipping addresses taken
 * explicitly, and addresses released below it go to a min-heap, so 10k ports never mean a scan.
 */
export class SubnetAllocator {
  readonly version: IpVersion;
  private pools: Range[] = [];
  private readonly used = new Map<bigint, string>();
  private readonly holes = new AddressHeap();
  private poolIndex = 0;
  private cursor = 0n;

  constructor(version: IpVersion, pools: readonly Range[]) {
    this.version = version;
    this.setPools(pools);
  }

  /** New pools (subnet update): addresses already taken stay taken, wherever they are. */
  setPools(pools: readonly Range[]): void {
    this.pools = [...pools].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    this.holes.clear();
    this.poolIndex = 0;
    this.cursor = this.pools[0]?.start ?? 0n;
  }

  get usedCount(): number {
    return this.used.size;
  }

  /** Number of addresses in the pools (what Neutron reports as total_ips). */
  get poolSize(): bigint {
    return this.pools.reduce((acc, p) => acc + (p.end - p.start + 1n), 0n);
  }

  /** Taken addresses that lie inside the pools (Neutron's used_ips counts only those). */
  get usedInPools(): number {
    let n = 0;
    for (const ip of this.used.keys()) if (this.inPools(ip)) n++;
    return n;
  }

  owner(ip: bigint): string | undefined {
    return this.used.get(ip);
  }

  inPools(ip: bigint): boolean {
    return this.pools.some((p) => ip >= p.start && ip <= p.end);
  }

  reserve(ip: bigint, owner: string): void {
    this.used.set(ip, owner);
  }

  release(ip: bigint): void {
    if (!this.used.delete(ip)) return;
    if (this.inPools(ip) && this.isBelowFrontier(ip)) this.holes.push(ip);
  }

  /** The address `allocate` would hand out next, without taking it. */
  peek(): bigint | undefined {
    return this.findFree(false);
  }

  allocate(owner: string): bigint | undefined {
    const ip = this.findFree(true);
    if (ip !== undefined) this.used.set(ip, owner);
    return ip;
  }

  private isBelowFrontier(ip: bigint): boolean {
    const pool = this.pools[this.poolIndex];
    if (!pool) return true;
    if (ip < pool.start) return true;
    return ip <= pool.end && ip < this.cursor;
  }

  private findFree(take: boolean): bigint | undefined {
    for (let top = this.holes.peek(); top !== undefined; top = this.holes.peek()) {
      if (!this.used.has(top) && this.inPools(top)) {
        if (take) this.holes.pop();
        return top;
      }
      this.holes.pop();
    }
    while (this.poolIndex < this.pools.length) {
      const pool = this.pools[this.poolIndex]!;
      if (this.cursor < pool.start) this.cursor = pool.start;
      if (this.cursor > pool.end) {
        this.poolIndex++;
        continue;
      }
      if (this.used.has(this.cursor)) {
        this.cursor++;
        continue;
      }
      const ip = this.cursor;
      if (take) this.cursor++;
      return ip;
    }
    return undefined;
  }
}
