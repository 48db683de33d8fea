/** Per-operation request accounting, so tests and benchmarks can hold API-call budgets. */
export interface OperationStats {
  count: number;
  errors: number;
  statuses: Record<string, number>;
  totalMs: number;
  maxMs: number;
}

export interface StatsSnapshot {
  since: string;
  total: number;
  services: Record<
    string,
    { count: number; operations: Record<string, OperationStats & { meanMs: number }> }
  >;
}

export class Stats {
  private ops = new Map<string, Map<string, OperationStats>>();
  private since = new Date();

  record(service: string, operation: string, status: number, ms: number): void {
    let byOp = this.ops.get(service);
    if (!byOp) this.ops.set(service, (byOp = new Map<string, OperationStats>()));
    let s = byOp.get(operation);
    if (!s) byOp.set(operation, (s = { count: 0, errors: 0, statuses: {}, totalMs: 0, maxMs: 0 }));
    s.count += 1;
    if (status >= 400) s.errors += 1;
    s.statuses[status] = (s.statuses[status] ?? 0) + 1;
    s.totalMs += ms;
    if (ms > s.maxMs) s.maxMs = ms;
  }

  /** Count for one operation key (`POST /v3/auth/tokens`), 0 when never called. */
  count(service: string, operation: string): number {
    return this.ops.get(service)?.get(operation)?.count ?? 0;
  }

  reset(): void {
    this.ops = new Map();
    this.since = new Date();
  }

  snapshot(): StatsSnapshot {
    const services: StatsSnapshot['services'] = {};
    let total = 0;
    for (const [service, byOp] of this.ops) {
      const operations: Record<string, OperationStats & { meanMs: number }> = {};
      let count = 0;
      for (const [op, s] of byOp) {
        operations[op] = {
          ...s,
          statuses: { ...s.statuses },
          totalMs: round(s.totalMs),
          maxMs: round(s.maxMs),
          meanMs: round(s.totalMs / s.count),
        };
        count += s.count;
      }
      services[service] = { count, operations };
      total += count;
    }
    return { since: this.since.toISOString(), total, services };
  }
}

const round = (n: number) => Math.round(n * 1000) / 1000;
