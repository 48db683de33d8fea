/**
 * When to look again at a load balancer (or one of its children) Octavia is working on, without
 * remembering anything: the hint grows with how long it has been PENDING (half its age, from
 * updated_at, else created_at), between `initialMs` and `maxMs` (at most 10 s). A restarted process
 * therefore backs off exactly as the one that died would have, and one slow load balancer never
 * holds a worker (the rule is src/openstack/services/wait-by-age.ts, shared with the server path).
 */
import { parseOpenStackTime } from '../../core/time.ts';
import { ageMs, engineWaitBounds, waitByAge } from '../wait-by-age.ts';

/** The timestamps every Octavia object carries: enough to tell how long it has been in its state. */
export interface OctaviaTimestamps {
  created_at?: string | null | undefined;
  updated_at?: string | null | undefined;
}

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
  return { ...engineWaitBounds(p), stuckAfterMs: p.stuckAfterMs ?? 300_000 };
}

/** How long the object has been in its current state, as far as its timestamps tell. */
export function pendingAgeMs(obj: OctaviaTimestamps, now: number): number {
  return ageMs(parseOpenStackTime(obj.updated_at) ?? parseOpenStackTime(obj.created_at), now);
}

export function pendingHint(
  obj: OctaviaTimestamps,
  now: number,
  policy: BackoffPolicy,
): { retryAfterMs: number; stuck: boolean; ageMs: number } {
  const age = pendingAgeMs(obj, now);
  if (age > policy.stuckAfterMs) return { retryAfterMs: policy.maxMs, stuck: true, ageMs: age };
  return { retryAfterMs: waitByAge(age, policy), stuck: false, ageMs: age };
}
