/**
 * Per-Node attempt counters for waits on the cloud (server in BUILD, not created yet): the delay
 * doubles from `baseMs` to `capMs` and resets on success, so a slow server costs a few reads and
 * never holds a worker.
 */
export class NodeBackoff {
  private readonly attempts = new Map<string, number>();
  private readonly baseMs: number;

  constructor(baseMs = 250) {
    this.baseMs = baseMs;
  }

  next(name: string, capMs: number): number {
    const n = this.attempts.get(name) ?? 0;
    this.attempts.set(name, n + 1);
    return Math.min(capMs, this.baseMs * 2 ** Math.min(n, 20));
  }

  reset(name: string): void {
    this.attempts.delete(name);
  }
}
