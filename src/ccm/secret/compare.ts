/**
 * Whether two effective configs differ, and where, without ever printing a value: the answer
 * names sections only, because `[Global]` holds the credentials.
 */
import type { CcmConfig } from '../config/types.ts';

/** The parts a rotation can change, as a user names them in cloud.conf. */
const PARTS: readonly (readonly [label: string, pick: (c: CcmConfig) => unknown])[] = [
  ['[Global]', (c) => c.cloud],
  ['[LoadBalancer]', (c) => c.loadBalancer],
  ['[LoadBalancerClass]', (c) => c.loadBalancerClasses],
  ['[Networking]', (c) => c.networking],
  ['[Route]', (c) => c.route],
  ['[Metadata]', (c) => c.metadata],
];

/** The sections whose values differ (warnings and line numbers do not count). */
export function changedSections(previous: CcmConfig, next: CcmConfig): string[] {
  return PARTS.filter(([, pick]) => fingerprint(pick(previous)) !== fingerprint(pick(next))).map(
    ([label]) => label,
  );
}

/**
 * The keys whose change a running process cannot apply, because they decide which controllers run:
 * `[LoadBalancer] enabled` (the service controller), `[Route] router-id` set where it was not (the
 * route controller is started only with one). Every other key is read on the next reconcile.
 */
export function restartNeeded(previous: CcmConfig, next: CcmConfig): string[] {
  const out: string[] = [];
  if (previous.loadBalancer.enabled !== next.loadBalancer.enabled) out.push('[LoadBalancer] enabled');
  if (!previous.route.routerId && next.route.routerId) out.push('[Route] router-id');
  return out;
}

export function sameCloud(previous: CcmConfig, next: CcmConfig): boolean {
  return fingerprint(previous.cloud) === fingerprint(next.cloud);
}

/** JSON with sorted keys and Maps as sorted entries, so equal configs compare equal. */
export function fingerprint(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Map) return [...(v as Map<unknown, unknown>).entries()].sort(byKey);
    if (v instanceof Set) return [...(v as Set<unknown>)].sort();
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return v;
  });
}

function byKey(a: [unknown, unknown], b: [unknown, unknown]): number {
  const x = String(a[0]);
  const y = String(b[0]);
  return x < y ? -1 : x > y ? 1 : 0;
}
