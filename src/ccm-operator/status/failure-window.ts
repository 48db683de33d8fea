/**
 * Transient failures degrade only once they have lasted (upstream CCCMO's failure window): an API
 * server blip during an upgrade must not turn the operator Degraded. Measured on the manager's
 * clock, so tests move time instead of waiting; kept in memory, as upstream keeps it.
 */
import type { Clock } from '../../lib/clock.ts';

/** How long a sub-controller's (cloud config, trusted CA) transient failures last before it degrades. */
export const TRANSIENT_DEGRADED_THRESHOLD_MS = 2 * 60_000;
/** How long the operator's own transient failures last before it degrades (longer: the sub-controllers settle first). */
export const AGGREGATED_TRANSIENT_DEGRADED_THRESHOLD_MS = 2 * 60_000 + 30_000;

export class FailureWindow {
  private readonly clock: Clock;
  readonly thresholdMs: number;
  private since: number | undefined;

  constructor(clock: Clock, thresholdMs: number) {
    this.clock = clock;
    this.thresholdMs = thresholdMs;
  }

  /** Records a transient failure; true once failures have gone on for the threshold. */
  failed(): boolean {
    const now = this.clock.now();
    this.since ??= now;
    return now - this.since >= this.thresholdMs;
  }

  /** A success ends the window. */
  clear(): void {
    this.since = undefined;
  }

  /** When the current window started, if failures are going on. */
  get failingSince(): number | undefined {
    return this.since;
  }
}
