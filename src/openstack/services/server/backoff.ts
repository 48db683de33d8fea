/**
 * When to look again, without remembering anything: a wait grows with the age of what is awaited
 * (half the time since the server was created or the volume was made), between `initialMs` and
 * `maxMs`, so a restarted process backs off exactly as the one that died would have.
 */

/** The hard ceiling of a wait on something in progress (as the load-balancer engine's). */
export const MAX_BACKOFF_MS = 10_000;

export interface BackoffPolicy {
  /** The first look after a write, and the floor. Default 1 s. */
  initialMs: number;
  /** The cap of a wait on a BUILD, a creating volume or a delete: CAPO's 10 s, never more. */
  maxMs: number;
  /** A server in a state nobody here is changing (SHUTOFF, PAUSED, …): CAPO's 60 s. */
  idleMs: number;
}

export function backoffPolicy(p: Partial<BackoffPolicy> = {}): BackoffPolicy {
  const maxMs = Math.min(Math.max(p.maxMs ?? MAX_BACKOFF_MS, 1), MAX_BACKOFF_MS);
  const initialMs = Math.min(Math.max(p.initialMs ?? 1_000, 1), maxMs);
  return { initialMs, maxMs, idleMs: Math.max(p.idleMs ?? 60_000, initialMs) };
}

/** Nova writes `2024-05-01T10:00:00Z`; Cinder `2024-05-01T10:00:00.000000`, UTC without a zone. */
export function parseOpenStackTime(text: string | null | undefined): number | undefined {
  if (!text) return undefined;
  const zoned = /(?:Z|[+-]\d\d:?\d\d)$/.test(text) ? text : `${text}Z`;
  const ms = Date.parse(zoned);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Half the age of `since`, within the policy's bounds. */
export function waitHint(since: string | null | undefined, now: number, policy: BackoffPolicy): number {
  const start = parseOpenStackTime(since);
  const age = start === undefined ? 0 : Math.max(0, now - start);
  return Math.min(policy.maxMs, Math.max(policy.initialMs, Math.round(age / 2)));
}
