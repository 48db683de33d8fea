/**
 * Which children of a load balancer belong to an identity. On a load balancer shared by several
 * identities (max-shared-lb), each one manages, and deletes, only its own listeners and pools: those
 * carrying its tag, or its names (for clouds without tags). On a load balancer it owns, untagged
 * children are its own too (created before tags existed, or by OCCM without them).
 */
import type { Listener } from '../../loadbalancer/v2/listeners.ts';
import type { Pool } from '../../loadbalancer/v2/pools.ts';
import type { DesiredLoadBalancer } from './types.ts';

export interface Ownership {
  /** The identity's own listener or pool. */
  listener(l: Listener): boolean;
  pool(p: Pool, myListenerIds: ReadonlySet<string>): boolean;
}

export function ownership(desired: DesiredLoadBalancer, owned: boolean): Ownership {
  const { identity } = desired;
  const listenerNames = new Set(desired.listeners.map((l) => l.name));
  const poolNames = new Set(desired.listeners.map((l) => l.pool.name));
  const prefix = identity.sharedTagPrefix;
  const mineByTags = (name: string, names: ReadonlySet<string>, tags: readonly string[] | undefined) => {
    if ((tags ?? []).includes(identity.name) || names.has(name)) return true;
    if (!owned) return false;
    return prefix === undefined || !(tags ?? []).some((t) => t.startsWith(prefix));
  };
  return {
    listener: (l) => mineByTags(l.name, listenerNames, l.tags),
    pool: (p, myListenerIds) => {
      if (p.listeners.length > 0) return p.listeners.some((ref) => myListenerIds.has(ref.id));
      return mineByTags(p.name, poolNames, p.tags);
    },
  };
}
