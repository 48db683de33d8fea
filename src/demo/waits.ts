/**
 * What the scenario's steps share: waits on the caches, and reads of the emulator's state in this
 * process (which cost the cloud nothing).
 */
import { isNotFound } from '../kube/index.ts';
import type { World } from './world.ts';

export const MEMBERS_PUT = 'PUT /v2/lbaas/pools/{pool_id}/members';

/** Polls `check` (the caches, or a cheap read) until it gives a value; the step's signal bounds it. */
export async function until<T>(
  signal: AbortSignal,
  what: string,
  check: () => T | undefined | false | null | Promise<T | undefined | false | null>,
  intervalMs = 50,
): Promise<T> {
  for (;;) {
    const v = await check();
    if (v) return v;
    if (signal.aborted) throw new Error(`still waiting for ${what}`);
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, intervalMs);
      signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
  }
}

export function mustHave<T>(v: T | undefined, why: string): T {
  if (v === undefined) throw new Error(why);
  return v;
}

export async function deleteIgnoringMissing(fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (err) {
    if (!isNotFound(err) && (err as { status?: number }).status !== 404) throw err;
  }
}

export function openstackCalls(world: World): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, s] of Object.entries(world.sim.cloud.stats.snapshot().services)) out[name] = s.count;
  return out;
}

/** The octavia batch member updates served so far. */
export function membersPuts(world: World): number {
  return world.sim.cloud.stats.count('octavia', MEMBERS_PUT);
}

/** A load balancer's status and members per pool, read from the emulator in this process. */
export function lbMembers(
  world: World,
  lbId: string,
): { name: string; status: string; pools: { id: string; members: number }[] } | undefined {
  const snap = world.sim.cloud.snapshot() as {
    octavia?: {
      loadbalancers?: { id: string; name: string; provisioning_status: string }[];
      pools?: { id: string; loadbalancer_id: string }[];
      members?: { id: string; pool_id: string }[];
    };
  };
  const o = snap.octavia;
  const lb = o?.loadbalancers?.find((l) => l.id === lbId);
  if (!lb) return undefined;
  const pools = (o?.pools ?? []).filter((p) => p.loadbalancer_id === lbId);
  return {
    name: lb.name,
    status: lb.provisioning_status,
    pools: pools.map((p) => ({
      id: p.id,
      members: (o?.members ?? []).filter((m) => m.pool_id === p.id).length,
    })),
  };
}

/** The id of the load balancer named `name`, read from the emulator in this process. */
export function lbIdByName(world: World, name: string): string | undefined {
  const snap = world.sim.cloud.snapshot() as {
    octavia?: { loadbalancers?: { id: string; name: string }[] };
  };
  return snap.octavia?.loadbalancers?.find((l) => l.name === name)?.id;
}

/** Octavia's writes after the journal's `since` whose User-Agent names `caller`. */
export function octaviaWritesBy(world: World, caller: string, since: number): number {
  return world.sim.cloud.stats
    .requests(since, { writes: true, service: 'octavia' })
    .requests.filter((r) => r.caller.includes(caller)).length;
}
