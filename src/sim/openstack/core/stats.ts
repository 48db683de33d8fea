/**
 * Per-operation request accounting, so tests and benchmarks can hold API-call budgets, and a
 * bounded journal of the requests themselves with who sent them (their User-Agent), so a test can
 * tell two controllers apart and prove that they never acted at the same time.
 */
export interface OperationStats {
  count: number;
  errors: number;
  statuses: Record<string, number>;
  totalMs: number;
  maxMs: number;
}

/** What one caller (a User-Agent) sent: its requests, its writes, and their operations. */
export interface CallerStats {
  count: number;
  /** POST, PUT, PATCH and DELETE: what changes the cloud. */
  writes: number;
  /** `octavia POST /v2/lbaas/loadbalancers` → count. */
  operations: Record<string, number>;
}

export interface StatsSnapshot {
  since: string;
  total: number;
  services: Record<
    string,
    { count: number; operations: Record<string, OperationStats & { meanMs: number }> }
  >;
  /** By User-Agent (`(none)` for a request without one). */
  callers: Record<string, CallerStats>;
}

/** One served request, in the journal. */
export interface RequestRecord {
  /** Increasing from 1 over the cloud's life (never reset), so a reader can ask for what came after. */
  seq: number;
  /** When the answer was sent: epoch milliseconds (Date.now()), comparable with Lease times. */
  at: number;
  service: string;
  /** `POST /v2/lbaas/loadbalancers` (the route's template). */
  operation: string;
  status: number;
  /** The request's User-Agent, `(none)` without one. */
  caller: string;
  write: boolean;
}

export const NO_CALLER = '(none)';
/** Requests kept in the journal; the oldest go first. */
export const REQUEST_LOG_CAPACITY = 100_000;

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export function isWriteOperation(operation: string): boolean {
  return WRITES.has(operation.slice(0, operation.indexOf(' ')));
}

export class Stats {
  private ops = new Map<string, Map<string, OperationStats>>();
  private callers = new Map<string, CallerStats>();
  private since = new Date();
  private readonly log: RequestRecord[] = [];
  private readonly capacity: number;
  private seq = 0;

  constructor(capacity = REQUEST_LOG_CAPACITY) {
    this.capacity = capacity;
  }

  record(service: string, operation: string, status: number, ms: number, caller = NO_CALLER): void {
    let byOp = this.ops.get(service);
    if (!byOp) this.ops.set(service, (byOp = new Map<string, OperationStats>()));
    let s = byOp.get(operation);
    if (!s) byOp.set(operation, (s = { count: 0, errors: 0, statuses: {}, totalMs: 0, maxMs: 0 }));
    s.count += 1;
    if (status >= 400) s.errors += 1;
    s.statuses[status] = (s.statuses[status] ?? 0) + 1;
    s.totalMs += ms;
    if (ms > s.maxMs) s.maxMs = ms;

    const write = isWriteOperation(operation);
    let c = this.callers.get(caller);
    if (!c) this.callers.set(caller, (c = { count: 0, writes: 0, operations: {} }));
    c.count += 1;
    if (write) c.writes += 1;
    const key = `${service} ${operation}`;
    c.operations[key] = (c.operations[key] ?? 0) + 1;

    this.log.push({ seq: ++this.seq, at: Date.now(), service, operation, status, caller, write });
    if (this.log.length > this.capacity) this.log.splice(0, this.log.length - this.capacity);
  }

  /** Count for one operation key (`POST /v3/auth/tokens`), 0 when never called. */
  count(service: string, operation: string): number {
    return this.ops.get(service)?.get(operation)?.count ?? 0;
  }

  /**
   * The journal after `since` (a `seq`), oldest first; `filter` narrows it. Requests older than the
   * journal's capacity are gone: `dropped` says how many a reader asking from `since` missed.
   */
  requests(
    since = 0,
    filter: { writes?: boolean; service?: string; caller?: string } = {},
  ): { requests: RequestRecord[]; last: number; dropped: number } {
    const first = this.log[0]?.seq ?? this.seq + 1;
    const dropped = Math.max(0, first - since - 1);
    const requests = this.log.filter(
      (r) =>
        r.seq > since &&
        (filter.writes === undefined || r.write === filter.writes) &&
        (filter.service === undefined || r.service === filter.service) &&
        (filter.caller === undefined || r.caller === filter.caller),
    );
    return { requests, last: this.seq, dropped };
  }

  /** Resets the counters; the journal keeps its sequence (readers go on from their last `seq`). */
  reset(): void {
    this.ops = new Map();
    this.callers = new Map();
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
    const callers: StatsSnapshot['callers'] = {};
    for (const [caller, c] of this.callers) callers[caller] = { ...c, operations: { ...c.operations } };
    return { since: this.since.toISOString(), total, services, callers };
  }
}

const round = (n: number) => Math.round(n * 1000) / 1000;
