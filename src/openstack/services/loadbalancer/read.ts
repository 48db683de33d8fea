/**
 * One read of the world below an ACTIVE load balancer: its listeners, pools, and, for the pools
 * this identity owns, their members and monitor. The engine re-reads on every call (level-based),
 * so nothing it remembers can be stale after a crash, a second controller, or a hand edit.
 * Cost: 2 lists + per own pool 1 member list and at most 1 monitor get, issued concurrently (the
 * member lists beside the first two when asked: membersAhead); a pool `skipMembers` names
 * (unchanged since its members were confirmed, confirmed-members.ts) is not read.
 */
import { isNotFound } from '../../core/errors.ts';
import type { HealthMonitor } from '../../loadbalancer/v2/healthmonitors.ts';
import type { Listener } from '../../loadbalancer/v2/listeners.ts';
import type { LoadBalancer } from '../../loadbalancer/v2/loadbalancers.ts';
import type { Member } from '../../loadbalancer/v2/members.ts';
import type { Pool } from '../../loadbalancer/v2/pools.ts';
import type { LoadBalancerApi } from './api.ts';
import type { Ownership } from './ownership.ts';
import type { CallOptions } from './types.ts';

export interface CurrentState {
  lb: LoadBalancer;
  /** This identity's listeners. */
  listeners: Listener[];
  /** Listeners of other identities sharing the load balancer: their ports are taken. */
  foreignListeners: Listener[];
  /** This identity's pools. */
  pools: Pool[];
  /** Members by pool id (own pools only, but those in `unread`). */
  members: Map<string, Member[]>;
  /** Own pools whose members were not read (unchanged since they were last confirmed). */
  unread?: ReadonlySet<string> | undefined;
  /** Monitor by pool id (own pools only). */
  monitors: Map<string, HealthMonitor>;
}

export interface ReadOptions {
  /**
   * The members of every pool the load balancer names are read beside its listeners and pools,
   * instead of after them: one round trip fewer. For a load balancer no one shares, whose pools
   * are all this identity's (a shared one's other pools would be read for nothing).
   */
  membersAhead?: boolean | undefined;
  /** A pool whose members need not be read: unchanged since they were confirmed (confirmed-members.ts). */
  skipMembers?: ((pool: Pool) => boolean) | undefined;
  /** Before the pools are listed, with membersAhead: a pool likely to be skipped is not read ahead. */
  likelySkipped?: ((poolId: string) => boolean) | undefined;
}

export async function readState(
  api: LoadBalancerApi,
  lb: LoadBalancer,
  own: Ownership,
  options: CallOptions = {},
  read: ReadOptions = {},
): Promise<CurrentState> {
  const { signal } = options;
  const octavia = api.loadBalancer;
  const ahead = new Map<string, Promise<Member[]>>();
  if (read.membersAhead) {
    for (const { id } of lb.pools ?? []) {
      if (read.likelySkipped?.(id)) continue;
      const list = octavia.members.list(id, {}, { signal }).all();
      // A pool gone since the load balancer was read is not listed below, so nothing awaits this.
      list.catch(() => undefined);
      ahead.set(id, list);
    }
  }
  const [allListeners, allPools] = await Promise.all([
    octavia.listeners.list({ loadbalancer_id: lb.id }, { signal }).all(),
    octavia.pools.list({ loadbalancer_id: lb.id }, { signal }).all(),
  ]);
  const listeners = allListeners.filter((l) => own.listener(l));
  const foreignListeners = allListeners.filter((l) => !own.listener(l));
  const mine = new Set(listeners.map((l) => l.id));
  const pools = allPools.filter((p) => own.pool(p, mine));

  const members = new Map<string, Member[]>();
  const monitors = new Map<string, HealthMonitor>();
  const unread = new Set(pools.filter((p) => read.skipMembers?.(p) ?? false).map((p) => p.id));
  await Promise.all(
    pools.map(async (pool) => {
      const [list, monitor] = await Promise.all([
        unread.has(pool.id)
          ? undefined
          : (ahead.get(pool.id) ?? octavia.members.list(pool.id, {}, { signal }).all()),
        pool.healthmonitor_id
          ? octavia.healthMonitors.get(pool.healthmonitor_id, { signal }).catch((err: unknown) => {
              if (isNotFound(err)) return undefined;
              throw err;
            })
          : undefined,
      ]);
      if (list) members.set(pool.id, list);
      if (monitor) monitors.set(pool.id, monitor);
    }),
  );
  return { lb, listeners, foreignListeners, pools, members, monitors, unread };
}
