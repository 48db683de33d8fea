/**
 * When to look again at a load balancer (or one of its children) Octavia is working on, without
 * remembering anything: the hint grows with how long it has been PENDING (half its age, from
 * updated_at, else created_at), between `initialMs` and `maxMs` (at most 10 s). A restarted process
 * therefore backs off exactly as the one that died would have, and one slow load balancer never
 * holds a worker.
 */

/** The timestamps every Octavia object carries: enough to tell how long it has been in its state. */
export interface OctaviaTimestamps {
  created_at?: string | null | undefined;
  updated_at?: string | null | undefined;
}

/** The hard ceiling of a PENDING requeue (DESIGN.md "No blocked workers"). */
export const MAX_BACKOFF_MS = 10_000;

export interface BackoffPolicy {
  /** The first look after a write, and the floor. Default 1 s. */
  initialMs: number;
  /** Cap, never above 10 s. Default 10 s. */
  maxMs: number;
  /**
   * The load balancer, or one of its listeners, pools, members or monitors, PENDING for longer than
   * this (by updated_at) is reported as LoadBalancerStuck. Default 5 min.
   */
  stuckAfterMs: number;
}

export function backoffPolicy(p: Partial<BackoffPolicy> = {}): BackoffPolicy {
  const maxMs = Math.min(Math.max(p.maxMs ?? MAX_BACKOFF_MS, 1), MAX_BACKOFF_MS);
  const initialMs = Math.min(Math.max(p.initialMs ?? 1_000, 1), maxMs);
  return { initialMs, maxMs, stuckAfterMs: p.stuckAfterMs ?? 300_000 };
}

/** Octavia writes times as UTC without a zone (`2024-05-01T10:00:00`). */
export function parseOctaviaTime(text: string | null | undefined): number | undefined {
  if (!text) return undefined;
  const zoned = /(?:Z|[+-]\d\d:?\d\d)$/.test(text) ? text : `${text}Z`;
  const ms = Date.parse(zoned);
  return Number.isNaN(ms) ? undefined : ms;
}

/** How long the object has been in its current state, as far as its timestamps tell. */
export function pendingAgeMs(obj: OctaviaTimestamps, now: number): number {
  const since = parseOctaviaTime(obj.updated_at) ?? parseOctaviaTime(obj.created_at);
  return since === undefined ? 0 : Math.max(0, now - since);
}

export function pendingHint(
  obj: OctaviaTimestamps,
  now: number,
  policy: BackoffPolicy,
): { retryAfterMs: number; stuck: boolean; ageMs: number } {
  const ageMs = pendingAgeMs(obj, now);
  if (ageMs > policy.stuckAfterMs) return { retryAfterMs: policy.maxMs, stuck: true, ageMs };
  const retryAfterMs = Math.min(policy.maxMs, Math.max(policy.initialMs, Math.round(ageMs / 2)));
  return { retryAfterMs, stuck: false, ageMs };
}
