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

/** What Octavia is doing to an object, by its provisioning status. */
export type Phase = 'create' | 'update' | 'delete';
export type PhaseDurations = Record<Phase, number>;

/**
 * How long an amphora load balancer typically takes (the emulator's realistic profile follows the
 * same figures): a create ~30 s, a change (listener, pool, batch member update) ~5 s, a cascade delete ~5 s.
 */
export const AMPHORA_PHASES: PhaseDurations = { create: 30_000, update: 5_000, delete: 5_000 };

/** Past its expected duration, a phase is looked at this often (a fraction of the phase)… */
export const PHASE_POLL_FRACTION = 0.05;
/** …until it has taken this many times its expected duration; then by age again (half of it, ≤ 10 s). */
export const PHASE_OVERRUN = 3;
/** Octavia's timestamps have whole seconds: an age read from them is up to this much too old. */
const TIMESTAMP_RESOLUTION_MS = 1_000;

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
  /**
   * The cloud's expected phase durations, when known: the first look after a write is when the
   * phase should be over, then every `PHASE_POLL_FRACTION` of it (at least initialMs / 4) until
   * `PHASE_OVERRUN` times its duration — instead of half the age, which looks 6 times during a 30 s
   * create and still finds it done up to 10 s late. Without, by age only.
   */
  phases?: PhaseDurations | undefined;
}

export function backoffPolicy(p: Partial<BackoffPolicy> = {}): BackoffPolicy {
  return {
    ...engineWaitBounds(p),
    stuckAfterMs: p.stuckAfterMs ?? 300_000,
    ...(p.phases ? { phases: p.phases } : {}),
  };
}

export function phaseOf(provisioningStatus: string | undefined): Phase | undefined {
  switch (provisioningStatus) {
    case 'PENDING_CREATE':
      return 'create';
    case 'PENDING_UPDATE':
      return 'update';
    case 'PENDING_DELETE':
      return 'delete';
    default:
      return undefined;
  }
}

/** The first look after a write that starts `phase`: when it should be over, else the floor. */
export function afterWrite(policy: BackoffPolicy, phase: Phase): number {
  return policy.phases?.[phase] ?? policy.initialMs;
}

/** The wait for a phase `age` old, by its expected duration; undefined once it has overrun (by age then). */
function phaseWait(age: number, phase: Phase | undefined, policy: BackoffPolicy): number | undefined {
  const expected = phase && policy.phases?.[phase];
  if (!expected) return undefined;
  const fine = Math.max(Math.round(expected * PHASE_POLL_FRACTION), Math.round(policy.initialMs / 4), 1);
  if (age < expected) return Math.max(expected - age, fine);
  if (age < expected * PHASE_OVERRUN + TIMESTAMP_RESOLUTION_MS) return fine;
  return undefined;
}

/** How long the object has been in its current state, as far as its timestamps tell. */
export function pendingAgeMs(obj: OctaviaTimestamps, now: number): number {
  return ageMs(parseOpenStackTime(obj.updated_at) ?? parseOpenStackTime(obj.created_at), now);
}

/** `status`: the object's provisioning status, for its phase's expected duration. */
export function pendingHint(
  obj: OctaviaTimestamps,
  now: number,
  policy: BackoffPolicy,
  status?: string,
): { retryAfterMs: number; stuck: boolean; ageMs: number } {
  const age = pendingAgeMs(obj, now);
  if (age > policy.stuckAfterMs) return { retryAfterMs: policy.maxMs, stuck: true, ageMs: age };
  const retryAfterMs = phaseWait(age, phaseOf(status), policy) ?? waitByAge(age, policy);
  return { retryAfterMs, stuck: false, ageMs: age };
}
