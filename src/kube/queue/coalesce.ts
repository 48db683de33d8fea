/**
 * A burst of events, acted on once: `touch()` on each event; `fire` runs once the events have been
 * quiet for `windowMs`, and at the latest `maxWindows` windows after the first, so a stream that
 * never goes quiet is still acted on. What a controller needs when one kind of event concerns many
 * keys (every Node change concerns every load balancer): 50 Nodes joining become one fan-out of the
 * Services instead of 50, and each load balancer gets one member update per pool.
 */
import type { Clock } from '../../lib/clock.ts';

export interface CoalesceOptions {
  windowMs: number;
  /** A stream that never goes quiet fires this many windows after its first event (10). */
  maxWindows?: number;
}

export class Coalescer {
  private readonly clock: Clock;
  private readonly windowMs: number;
  private readonly maxMs: number;
  private readonly fire: () => void;
  private firstMs: number | undefined;
  private lastMs = 0;
  private cancel: (() => void) | undefined;

  constructor(clock: Clock, opts: CoalesceOptions, fire: () => void) {
    this.clock = clock;
    this.windowMs = Math.max(0, opts.windowMs);
    this.maxMs = this.windowMs * Math.max(1, opts.maxWindows ?? 10);
    this.fire = fire;
  }

  /** One more event of the burst. */
  touch(): void {
    const now = this.clock.now();
    this.lastMs = now;
    if (this.windowMs === 0) {
      this.fire();
      return;
    }
    if (this.firstMs === undefined) {
      this.firstMs = now;
      this.arm(this.windowMs);
    }
  }

  /** Drops a pending fire (the controller stops). */
  stop(): void {
    this.cancel?.();
    this.cancel = undefined;
    this.firstMs = undefined;
  }

  private arm(ms: number): void {
    this.cancel = this.clock.setTimer(ms, () => this.due());
  }

  /** The timer is due: fire if quiet (or past the cap), else wait for the rest of the window. */
  private due(): void {
    const now = this.clock.now();
    const first = this.firstMs ?? now;
    const at = Math.min(this.lastMs + this.windowMs, first + this.maxMs);
    if (at > now) {
      this.arm(at - now);
      return;
    }
    this.cancel = undefined;
    this.firstMs = undefined;
    this.fire();
  }
}
