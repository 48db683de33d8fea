/**
 * The Deployment controller's rollout arithmetic (`pkg/controller/deployment`: `rolling.go`,
 * `recreate.go`, `util/deployment_util.go`), pure: given the Deployment's replicas and strategy and
 * what its ReplicaSets hold, the replica counts its ReplicaSets should have next. Called on every
 * sync, as upstream, it converges one step at a time: a step changes counts only once pods have
 * started or become available.
 *
 * - RollingUpdate: maxSurge rounds up and maxUnavailable down (both 25 % by default; both 0 means
 *   an unavailable of 1), so a 2-replica Deployment runs one new pod and waits for it to be
 *   available before it stops an old one. Old ReplicaSets lose their unavailable pods first,
 *   then the oldest lose available ones, never below `replicas - maxUnavailable` available.
 * - Recreate: every old ReplicaSet goes to 0, and the new one scales up once no old pod runs
 *   (terminating ones included).
 */

export type IntOrPercent = number | string;

export interface Strategy {
  type: 'RollingUpdate' | 'Recreate';
  maxSurge?: IntOrPercent | undefined;
  maxUnavailable?: IntOrPercent | undefined;
}

/** What one ReplicaSet holds, as its status would say. */
export interface ReplicaSetView {
  name: string;
  /** Its `spec.replicas`. */
  desired: number;
  /** Pods that are available (ready for minReadySeconds). */
  available: number;
  /** Pods still running that are being stopped. */
  terminating: number;
  /** Pods not being stopped, started or not. */
  active: number;
  /** Older ReplicaSets scale down first. */
  createdAt: number;
}

/** `intstr.GetScaledValueFromIntOrPercent`: a count, or a percentage of `total` rounded up or down. */
export function scaled(value: IntOrPercent | undefined, total: number, roundUp: boolean): number {
  if (value === undefined) return 0;
  if (typeof value === 'number') return value;
  const m = /^(\d+)%$/.exec(value);
  if (!m) {
    const n = Number(value);
    if (Number.isInteger(n)) return n;
    throw new Error(`invalid value for IntOrString: ${JSON.stringify(value)}`);
  }
  const exact = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** `ResolveFenceposts`: surge and unavailable for `replicas`; never both 0. */
export function fenceposts(strategy: Strategy, replicas: number): { surge: number; unavailable: number } {
  const surge = scaled(strategy.maxSurge, replicas, true);
  let unavailable = scaled(strategy.maxUnavailable, replicas, false);
  if (surge === 0 && unavailable === 0) unavailable = 1;
  return { surge, unavailable };
}

/** `MaxUnavailable(deployment)`: 0 for Recreate or no replicas, at most `replicas`. */
export function maxUnavailable(strategy: Strategy, replicas: number): number {
  if (strategy.type !== 'RollingUpdate' || replicas === 0) return 0;
  return Math.min(fenceposts(strategy, replicas).unavailable, replicas);
}

/**
 * The next `spec.replicas` of each ReplicaSet (by name) that must change; an empty map when the
 * rollout waits or is done.
 */
export function planRollout(
  replicas: number,
  strategy: Strategy,
  current: ReplicaSetView,
  old: readonly ReplicaSetView[],
): Map<string, number> {
  return strategy.type === 'Recreate'
    ? recreate(replicas, current, old)
    : rolling(replicas, strategy, current, old);
}

function byAge(sets: readonly ReplicaSetView[]): ReplicaSetView[] {
  return [...sets].sort((a, b) => a.createdAt - b.createdAt);
}

const sum = (sets: readonly ReplicaSetView[], f: (s: ReplicaSetView) => number) =>
  sets.reduce((n, s) => n + f(s), 0);

function recreate(
  replicas: number,
  current: ReplicaSetView,
  old: readonly ReplicaSetView[],
): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of old) if (s.desired > 0) out.set(s.name, 0);
  if (out.size > 0) return out;
  // `oldPodsRunning`: a stopping pod still runs.
  if (sum(old, (s) => s.active + s.terminating) > 0) return out;
  if (current.desired !== replicas) out.set(current.name, replicas);
  return out;
}

function rolling(
  replicas: number,
  strategy: Strategy,
  current: ReplicaSetView,
  old: readonly ReplicaSetView[],
): Map<string, number> {
  const out = new Map<string, number>();
  const { surge } = fenceposts(strategy, replicas);
  const all = [current, ...old];

  // reconcileNewReplicaSet
  if (current.desired > replicas) {
    out.set(current.name, replicas);
    return out;
  }
  if (current.desired < replicas) {
    const room = replicas + surge - sum(all, (s) => s.desired);
    const up = Math.min(room, replicas - current.desired);
    if (up > 0) {
      out.set(current.name, current.desired + up);
      return out;
    }
  }

  // reconcileOldReplicaSets
  if (sum(old, (s) => s.desired) === 0) return out;
  const minAvailable = replicas - maxUnavailable(strategy, replicas);
  const newUnavailable = current.desired - current.available;
  const maxScaledDown = sum(all, (s) => s.desired) - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return out;
  const next = new Map(old.map((s) => [s.name, s.desired]));

  // cleanupUnhealthyReplicas: the old pods that are not available go first.
  let cleaned = 0;
  for (const s of byAge(old)) {
    if (cleaned >= maxScaledDown) break;
    if (s.desired === 0 || s.desired === s.available) continue;
    const down = Math.min(maxScaledDown - cleaned, s.desired - s.available);
    next.set(s.name, s.desired - down);
    cleaned += down;
  }

  // scaleDownOldReplicaSetsForRollingUpdate: then available ones, keeping minAvailable.
  const availableNow = sum(all, (s) => s.available);
  if (availableNow > minAvailable) {
    const total = availableNow - minAvailable;
    let done = 0;
    for (const s of byAge(old)) {
      if (done >= total) break;
      const desired = next.get(s.name) ?? 0;
      if (desired === 0) continue;
      const down = Math.min(desired, total - done);
      next.set(s.name, desired - down);
      done += down;
    }
  }
  for (const s of old) if (next.get(s.name) !== s.desired) out.set(s.name, next.get(s.name) ?? 0);
  return out;
}
