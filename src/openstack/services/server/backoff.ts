/**
 * When to look again, without remembering anything: a wait grows with the age of what is awaited
 * (half the time since the server was created or the volume was made), between `initialMs` and
 * `maxMs`, so a restarted process backs off exactly as the one that died would have (the rule is
 * src/openstack/services/wait-by-age.ts, shared with the load-balancer engine).
 */
import { parseOpenStackTime } from '../../core/time.ts';
import { ageMs, engineWaitBounds, waitByAge } from '../wait-by-age.ts';

export interface BackoffPolicy {
  /** The first look after a write, and the floor. Default 1 s. */
  initialMs: number;
  /** The cap of a wait on a BUILD, a creating volume or a delete: CAPO's 10 s, never more. */
  maxMs: number;
  /** A server in a state nobody here is changing (SHUTOFF, PAUSED, …): CAPO's 60 s. */
  idleMs: number;
}

export function backoffPolicy(p: Partial<BackoffPolicy> = {}): BackoffPolicy {
  const bounds = engineWaitBounds(p);
  return { ...bounds, idleMs: Math.max(p.idleMs ?? 60_000, bounds.initialMs) };
}

/** Half the age of `since` (an OpenStack time), within the policy's bounds. */
export function waitHint(since: string | null | undefined, now: number, policy: BackoffPolicy): number {
  return waitByAge(ageMs(parseOpenStackTime(since), now), policy);
}
