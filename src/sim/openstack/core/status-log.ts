/**
 * When each object reached each status, to the millisecond: what a benchmark needs to tell a
 * controller's slack (the time between the cloud being done and the controller acting on it) apart
 * from the cloud's own time. The objects' own times cannot: Nova's are to the second, and a
 * volume's `updated_at` moves on with its attachment. Kept as a bounded journal like the request
 * journal (stats.ts), read over the admin API (`GET /_sim/statuses?since=`).
 */

export interface StatusRecord {
  /** Increasing from 1 over the cloud's life, so a reader can ask for what came after. */
  seq: number;
  /** Epoch milliseconds (Date.now()). */
  at: number;
  service: string;
  /** `server`, `volume`, `port`, `loadbalancer` (settled by its worker: ACTIVE, ERROR, DELETED). */
  resource: string;
  id: string;
  /** The status clients see from now on (`ACTIVE`, `available`). */
  status: string;
}

/** Records kept; the oldest go first. */
export const STATUS_LOG_CAPACITY = 100_000;

export class StatusLog {
  private readonly log: StatusRecord[] = [];
  private readonly capacity: number;
  private seq = 0;

  constructor(capacity = STATUS_LOG_CAPACITY) {
    this.capacity = capacity;
  }

  record(service: string, resource: string, id: string, status: string): void {
    this.log.push({ seq: ++this.seq, at: Date.now(), service, resource, id, status });
    if (this.log.length > this.capacity) this.log.splice(0, this.log.length - this.capacity);
  }

  /** The records after `since` (a `seq`), oldest first; `dropped` counts those already gone. */
  since(
    since = 0,
    filter: { service?: string } = {},
  ): { statuses: StatusRecord[]; last: number; dropped: number } {
    const first = this.log[0]?.seq ?? this.seq + 1;
    const dropped = Math.max(0, first - since - 1);
    const statuses = this.log.filter(
      (r) => r.seq > since && (filter.service === undefined || r.service === filter.service),
    );
    return { statuses, last: this.seq, dropped };
  }
}
