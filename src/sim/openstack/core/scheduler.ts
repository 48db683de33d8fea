/**
 * Runs delayed state transitions (BUILD → ACTIVE, PENDING_UPDATE → ACTIVE). Timers never keep the
 * process alive, and `stop()` cancels them all so a stopped emulator does not mutate state.
 * `settleAll()` runs everything pending at once: used when saving a state file, so a restart never
 * finds an object stuck in a state nothing will move it out of.
 */
export class Scheduler {
  private readonly pending = new Map<number, { timer: NodeJS.Timeout; fn: () => void }>();
  private nextId = 1;
  private stopped = false;

  schedule(delayMs: number, fn: () => void): number {
    const id = this.nextId++;
    if (this.stopped) return id;
    const timer = setTimeout(() => {
      this.pending.delete(id);
      fn();
    }, delayMs);
    timer.unref();
    this.pending.set(id, { timer, fn });
    return id;
  }

  cancel(id: number): void {
    const p = this.pending.get(id);
    if (!p) return;
    clearTimeout(p.timer);
    this.pending.delete(id);
  }

  get size(): number {
    return this.pending.size;
  }

  settleAll(): void {
    // Bounded: a settled transition may schedule follow-ups; stop after a few rounds.
    for (let round = 0; round < 8 && this.pending.size > 0; round++) {
      const batch = [...this.pending.entries()];
      for (const [id, p] of batch) {
        clearTimeout(p.timer);
        this.pending.delete(id);
        p.fn();
      }
    }
  }

  stop(): void {
    this.stopped = true;
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
  }
}
