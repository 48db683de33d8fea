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
  /**
   * How long Cinder typically takes to make a volume (from an image) available: the first look is
   * then; one that overruns it is looked at by the age of the overrun (half of it, from a quarter
   * of `initialMs` up to `maxMs`). 0: by the volume's age alone. Default 3 s (a Ceph or LVM backend
   * copying a cloud image; the emulator's realistic profile).
   */
  volumeCreateMs: number;
}

/** Cinder's typical time to make a volume from an image. */
export const VOLUME_CREATE_MS = 3_000;

export function backoffPolicy(p: Partial<BackoffPolicy> = {}): BackoffPolicy {
  const bounds = engineWaitBounds(p);
  return {
    ...bounds,
    idleMs: Math.max(p.idleMs ?? 60_000, bounds.initialMs),
    volumeCreateMs: Math.max(0, p.volumeCreateMs ?? VOLUME_CREATE_MS),
  };
}

/** Half the age of `since` (an OpenStack time), within the policy's bounds. */
export function waitHint(since: string | null | undefined, now: number, policy: BackoffPolicy): number {
  return waitByAge(ageMs(parseOpenStackTime(since), now), policy);
}

/**
 * A volume being made since `created` (Cinder's time, to the microsecond): until it should be
 * available, then by how long it has overrun — a few quick looks right after the expected end
 * (where most volumes are done), fewer and fewer after, so a slow Cinder is not polled harder.
 */
export function volumeWait(created: string | null | undefined, now: number, policy: BackoffPolicy): number {
  const age = ageMs(parseOpenStackTime(created), now);
  const expected = policy.volumeCreateMs;
  if (expected <= 0) return waitByAge(age, policy);
  if (age < expected) return expected - age;
  return waitByAge(age - expected, {
    initialMs: Math.max(1, Math.round(policy.initialMs / 4)),
    maxMs: policy.maxMs,
  });
}
