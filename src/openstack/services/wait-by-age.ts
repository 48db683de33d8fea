/**
 * Waits that remember nothing: how long to wait before looking again at something OpenStack is
 * working on grows with its age (half of it), between a floor and a cap. A restarted process, or
 * another replica, therefore waits exactly as the one before it would have, and no worker sleeps
 * (DESIGN.md "No blocked workers"). The engines' policies (a PENDING load balancer, a BUILD
 * server, a creating volume) and the controllers' waits by the age of an object use this one rule.
 */

/** The hard ceiling of an engine's wait on something in progress. */
export const MAX_BACKOFF_MS = 10_000;

export interface WaitBounds {
  /** The first look, and the floor. */
  initialMs: number;
  /** The cap. */
  maxMs: number;
}

/** An engine policy's bounds: maxMs within [1 ms, 10 s] (10 s by default), initialMs within [1 ms, maxMs] (1 s). */
export function engineWaitBounds(p: Partial<WaitBounds>): WaitBounds {
  const maxMs = Math.min(Math.max(p.maxMs ?? MAX_BACKOFF_MS, 1), MAX_BACKOFF_MS);
  const initialMs = Math.min(Math.max(p.initialMs ?? 1_000, 1), maxMs);
  return { initialMs, maxMs };
}

/** Time since `sinceMs`; 0 when it is unknown or in the future. */
export function ageMs(sinceMs: number | undefined, now: number): number {
  return sinceMs === undefined || Number.isNaN(sinceMs) ? 0 : Math.max(0, now - sinceMs);
}

/** Half of `age`, within the bounds. */
export function waitByAge(age: number, bounds: WaitBounds): number {
  return Math.min(bounds.maxMs, Math.max(bounds.initialMs, Math.round(age / 2)));
}
