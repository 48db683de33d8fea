/**
 * Port pools (upstream's `NestedVIFPool`, doc/source/devref/port_manager.rst): ready subports per
 * (trunk, project, network, sorted security groups), so a pod's port is a pool hit — no Neutron
 * write on the pod's path — and the pool is refilled behind it in batches.
 *
 * - take: a port of the exact group set; else one of a sibling set (same trunk, project, network),
 *   the least recently refilled, re-grouped by `update_port` (upstream does); else a miss: the
 *   requester is remembered and a populate starts. The caller requeues; the requester is woken as
 *   soon as the populate lands.
 * - populate: one at a time per pool. Its size is `max(ports_pool_batch, ports_pool_min − size)`
 *   (upstream), raised to cover the requesters waiting, in whole batches and at most
 *   MAX_PORTS_PER_POPULATE; one a pod waits for gathers the requests of a short window
 *   (`coalesceMs`) first: a burst of N pods is a few populates, not N. Bulk creates in flight
 *   are bounded process-wide by the driver's limiter. A refill only to keep `ports_pool_min` waits
 *   `ports_pool_update_frequency` after the last one; requesters never wait for it. A failed
 *   populate backs off per pool (bounded, doubling).
 * - release: a pod's port becomes recyclable; `recycle()` (every update frequency) re-reads its
 *   groups and puts it back, or, above `ports_pool_max`, detaches and deletes it.
 * - a trunk gone (its Node deleted, CAPO took it and its subports): its pools are dropped, never
 *   refilled; a trunk whose Node is gone or deleting gets nothing added (`trunkUsable`).
 */
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import { TrunkGoneError, type NestedVlanDriver, type SubportVif } from './nested-vlan.ts';

/** The most ports one populate makes, whatever the demand: one Neutron bulk request stays modest. */
export const MAX_PORTS_PER_POPULATE = 100;
/** The window a pod's populate waits for the rest of a burst: small beside a bulk create's seconds. */
export const DEFAULT_COALESCE_MS = 100;
/** Back-off of a pool whose populate failed: first wait and cap. */
export const POPULATE_BACKOFF = { initialMs: 1_000, maxMs: 60_000 } as const;

export interface PoolLimits {
  /** `[vif_pool] ports_pool_min`. */
  min: number;
  /** `[vif_pool] ports_pool_max`; 0 = no limit. */
  max: number;
  /** `[vif_pool] ports_pool_batch`. */
  batch: number;
  /** `[vif_pool] ports_pool_update_frequency`, in ms. */
  updateFrequencyMs: number;
  /** How long a populate a pod is waiting for gathers further requests first (default 100 ms). */
  coalesceMs?: number;
  /**
   * False for `[kubernetes] vif_pool_driver = noop` (a port per pod, no pool): a released port is
   * detached and deleted, never pooled.
   */
  keepReleased?: boolean;
}

/** Which pool a pod's port comes from. */
export interface PoolRequest {
  trunkId: string;
  projectId: string;
  networkId: string;
  subnetIds: readonly string[];
  securityGroups: readonly string[];
}

interface Pool {
  key: string;
  base: string;
  request: PoolRequest;
  sgKey: string;
  ports: SubportVif[];
  /** Requesters (KuryrPort keys) waiting for a port of this pool. */
  waiting: Set<string>;
  populating: Promise<void> | undefined;
  lastUpdate: number;
  failures: number;
  retryAt: number;
}

export interface VifPoolsOptions {
  driver: NestedVlanDriver;
  limits: PoolLimits;
  clock: Clock;
  log: Logger;
  /** False for a trunk whose Node is gone or deleting: nothing is added to it. */
  trunkUsable?: (trunkId: string) => boolean;
  /** Called with the requesters a populate served (or failed), so they look again at once. */
  onPopulated?: (requesters: readonly string[]) => void;
  /** Called after each populate with the ports made and the time it took, for metrics. */
  onBatch?: (ports: number, ms: number) => void;
}

export interface PoolStats {
  pools: number;
  available: number;
  /** Released ports not yet recycled, and those being recycled now. */
  recyclable: number;
  populating: number;
}

export class VifPools {
  private readonly opts: VifPoolsOptions;
  private readonly pools = new Map<string, Pool>();
  private readonly recyclable = new Map<string, SubportVif>();
  private readonly goneTrunks = new Set<string>();
  /** Recycling passes under way (their detach and delete calls). */
  private recycling = 0;

  constructor(opts: VifPoolsOptions) {
    this.opts = opts;
  }

  get limits(): PoolLimits {
    return this.opts.limits;
  }

  /**
   * A port for `requester`, or undefined on a miss (a populate is under way or backing off; the
   * requester is woken through `onPopulated`). Throws TrunkGoneError for a trunk known gone.
   */
  async take(req: PoolRequest, requester: string, signal?: AbortSignal): Promise<SubportVif | undefined> {
    if (this.goneTrunks.has(req.trunkId)) throw new TrunkGoneError(req.trunkId);
    const pool = this.pool(req);
    let vif = pool.ports.pop();
    if (!vif) {
      const sibling = this.siblingWithPorts(pool);
      const other = sibling?.ports.pop();
      if (sibling && other) {
        try {
          await this.opts.driver.updateSecurityGroups(other.portId, pool.request.securityGroups, signal);
        } catch (err) {
          sibling.ports.push(other);
          throw err;
        }
        vif = { ...other, securityGroups: [...pool.request.securityGroups].sort() };
      }
    }
    if (!vif) {
      pool.waiting.add(requester);
      this.startPopulate(pool, true);
      return undefined;
    }
    pool.waiting.delete(requester);
    if (this.size(pool.base) < this.opts.limits.min || pool.waiting.size > pool.ports.length)
      this.startPopulate(pool, pool.waiting.size > pool.ports.length);
    return vif;
  }

  /** A requester that needs no port any more (its KuryrPort went): no populate counts it. */
  cancel(requester: string): void {
    for (const pool of this.pools.values()) pool.waiting.delete(requester);
  }

  /** A port taken but not used (its KuryrPort status could not be written): back to its pool. */
  putBack(vif: SubportVif): void {
    if (this.goneTrunks.has(vif.trunkId)) return;
    this.poolOf(vif).ports.push(vif);
  }

  /** A pod's port released: recyclable until the next `recycle()`. */
  release(vif: SubportVif): void {
    if (this.goneTrunks.has(vif.trunkId)) return;
    this.recyclable.set(vif.portId, vif);
  }

  /** Ports found on the trunks at start (restart recovery), back in their pools. */
  adopt(vifs: readonly SubportVif[]): void {
    for (const vif of vifs) this.poolOf(vif).ports.push(vif);
  }

  /** Prepopulation: the pool is filled to `ports_pool_min` unless a refill happened lately. */
  ensureMin(req: PoolRequest): void {
    if (this.goneTrunks.has(req.trunkId)) return;
    const pool = this.pool(req);
    if (this.size(pool.base) < this.opts.limits.min) this.startPopulate(pool, false);
  }

  /** Whether a pool holds at least `ports_pool_min` ports, or is not to be filled. */
  populated(req: PoolRequest): boolean {
    return this.goneTrunks.has(req.trunkId) || this.size(baseKey(req)) >= this.opts.limits.min;
  }

  /**
   * The trunk is gone or its Node is: its pools are forgotten (CAPO deletes a trunk's subports
   * with it) and never refilled. Returns the ports the pools held, for the caller to check.
   */
  dropTrunk(trunkId: string): SubportVif[] {
    this.goneTrunks.add(trunkId);
    const dropped: SubportVif[] = [];
    for (const [key, pool] of this.pools) {
      if (pool.request.trunkId !== trunkId) continue;
      dropped.push(...pool.ports);
      this.pools.delete(key);
      if (pool.waiting.size > 0) this.opts.onPopulated?.([...pool.waiting]);
    }
    for (const [id, vif] of this.recyclable) {
      if (vif.trunkId !== trunkId) continue;
      dropped.push(vif);
      this.recyclable.delete(id);
    }
    return dropped;
  }

  /**
   * A network going (its namespace deleted: the KuryrNetwork's finalizer): every pooled port on it
   * detached and deleted, and its pools forgotten. Ports of pods still running are not pooled.
   */
  async deleteNetworkPools(networkId: string, signal?: AbortSignal): Promise<void> {
    const doomed = new Map<string, string[]>();
    const add = (v: SubportVif) => doomed.set(v.trunkId, [...(doomed.get(v.trunkId) ?? []), v.portId]);
    for (const [key, pool] of this.pools) {
      if (pool.request.networkId !== networkId) continue;
      pool.ports.forEach(add);
      this.pools.delete(key);
    }
    for (const [id, vif] of this.recyclable) {
      if (vif.networkId !== networkId) continue;
      add(vif);
      this.recyclable.delete(id);
    }
    for (const [trunkId, ids] of doomed) {
      if (this.goneTrunks.has(trunkId)) continue;
      await this.opts.driver.releaseVifs(trunkId, ids, signal);
    }
  }

  /**
   * Released ports back to their pools with the groups Neutron has for them now, or, above
   * `ports_pool_max`, detached and deleted. A port gone meanwhile is forgotten.
   */
  async recycle(signal?: AbortSignal): Promise<void> {
    const items = [...this.recyclable.values()];
    if (items.length === 0) return;
    this.recycling++;
    try {
      await this.recycleItems(items, signal);
    } finally {
      this.recycling--;
    }
  }

  private async recycleItems(items: readonly SubportVif[], signal?: AbortSignal): Promise<void> {
    const current = await this.opts.driver.currentGroups(
      items.map((v) => v.portId),
      signal,
    );
    const doomed = new Map<string, string[]>();
    for (const vif of items) {
      this.recyclable.delete(vif.portId);
      const groups = current.get(vif.portId);
      if (!groups || this.goneTrunks.has(vif.trunkId)) continue;
      const back = { ...vif, securityGroups: [...groups].sort() };
      const { max, keepReleased = true } = this.opts.limits;
      if (!keepReleased || (max > 0 && this.size(baseKey(back)) >= max)) {
        doomed.set(vif.trunkId, [...(doomed.get(vif.trunkId) ?? []), vif.portId]);
      } else {
        this.poolOf(back).ports.push(back);
      }
    }
    for (const [trunkId, ids] of doomed) await this.opts.driver.releaseVifs(trunkId, ids, signal);
  }

  /** Pools below `ports_pool_min` refilled (those with a refill due). */
  maintain(): void {
    if (this.opts.limits.min <= 0) return;
    for (const pool of this.pools.values()) {
      if (this.size(pool.base) < this.opts.limits.min) this.startPopulate(pool, false);
    }
  }

  /** Populates under way, for a graceful stop. */
  async settled(): Promise<void> {
    const running: Promise<void>[] = [];
    for (const p of this.pools.values()) if (p.populating) running.push(p.populating);
    await Promise.all(running);
  }

  stats(): PoolStats {
    let available = 0;
    let populating = 0;
    for (const p of this.pools.values()) {
      available += p.ports.length;
      if (p.populating) populating++;
    }
    return {
      pools: this.pools.size,
      available,
      recyclable: this.recyclable.size + this.recycling,
      populating,
    };
  }

  /** The ports of every pool (what is not in use by a pod). */
  availablePortIds(): Set<string> {
    const ids = new Set<string>();
    for (const p of this.pools.values()) for (const v of p.ports) ids.add(v.portId);
    for (const id of this.recyclable.keys()) ids.add(id);
    return ids;
  }

  private pool(req: PoolRequest): Pool {
    const base = baseKey(req);
    const sgKey = [...req.securityGroups].sort().join(',');
    const key = `${base}/${sgKey}`;
    let pool = this.pools.get(key);
    if (!pool) {
      pool = {
        key,
        base,
        request: { ...req, securityGroups: [...req.securityGroups].sort() },
        sgKey,
        ports: [],
        waiting: new Set(),
        populating: undefined,
        lastUpdate: Number.NEGATIVE_INFINITY,
        failures: 0,
        retryAt: 0,
      };
      this.pools.set(key, pool);
    } else if (pool.request.subnetIds.length === 0 && req.subnetIds.length > 0) {
      // A pool adopted at recovery learns its subnets from the first request.
      pool.request = { ...pool.request, subnetIds: [...req.subnetIds] };
    }
    return pool;
  }

  private poolOf(vif: SubportVif): Pool {
    return this.pool({
      trunkId: vif.trunkId,
      projectId: vif.projectId,
      networkId: vif.networkId,
      subnetIds: [],
      securityGroups: vif.securityGroups,
    });
  }

  private size(base: string): number {
    let n = 0;
    for (const p of this.pools.values()) if (p.base === base) n += p.ports.length;
    return n;
  }

  /** The sibling set refilled longest ago that has a port (upstream's choice). */
  private siblingWithPorts(pool: Pool): Pool | undefined {
    let best: Pool | undefined;
    for (const p of this.pools.values()) {
      if (p === pool || p.base !== pool.base || p.ports.length === 0) continue;
      if (!best || p.lastUpdate < best.lastUpdate) best = p;
    }
    return best;
  }

  private startPopulate(pool: Pool, demanded: boolean): void {
    if (pool.populating) return;
    const now = this.opts.clock.now();
    if (now < pool.retryAt) return;
    if (!demanded && now < pool.lastUpdate + this.opts.limits.updateFrequencyMs) return;
    if (pool.request.subnetIds.length === 0) return;
    if (this.opts.trunkUsable && !this.opts.trunkUsable(pool.request.trunkId)) return;
    // A miss opens a short window before the bulk create: the requests of a burst that arrive in
    // it are served by the same populate instead of queueing one small populate each.
    const window = demanded ? (this.opts.limits.coalesceMs ?? DEFAULT_COALESCE_MS) : 0;
    const start = window > 0 ? this.opts.clock.sleep(window) : Promise.resolve();
    pool.populating = start
      .then(() => this.populate(pool))
      .finally(() => {
        pool.populating = undefined;
        if (this.pools.get(pool.key) === pool && pool.waiting.size > pool.ports.length && pool.failures === 0)
          this.startPopulate(pool, true);
      });
  }

  private async populate(pool: Pool): Promise<void> {
    const { min, batch } = this.opts.limits;
    const size = this.size(pool.base);
    const need = Math.max(min - size, pool.waiting.size - pool.ports.length, 1);
    const count = Math.min(Math.max(batch, Math.ceil(need / batch) * batch), MAX_PORTS_PER_POPULATE);
    const started = this.opts.clock.now();
    try {
      const vifs = await this.opts.driver.requestVifs({ ...pool.request, count });
      pool.failures = 0;
      pool.lastUpdate = this.opts.clock.now();
      if (this.pools.get(pool.key) === pool) pool.ports.push(...vifs);
      else if (!this.goneTrunks.has(pool.request.trunkId))
        // The pool went meanwhile (its network deleted): these ports have no one to serve.
        await this.opts.driver.releaseVifs(
          pool.request.trunkId,
          vifs.map((v) => v.portId),
        );
      this.opts.onBatch?.(vifs.length, this.opts.clock.now() - started);
      this.opts.log.debug({ pool: pool.key, ports: vifs.length }, 'pool populated');
    } catch (err) {
      if (err instanceof TrunkGoneError) {
        this.opts.log.info({ trunk: err.trunkId }, 'trunk gone: its pools are dropped');
        this.dropTrunk(err.trunkId);
        return;
      }
      pool.failures++;
      const wait = Math.min(POPULATE_BACKOFF.initialMs * 2 ** (pool.failures - 1), POPULATE_BACKOFF.maxMs);
      pool.retryAt = this.opts.clock.now() + wait;
      this.opts.log.warn({ pool: pool.key, err, retryInMs: wait }, 'populating a port pool failed');
    }
    if (pool.waiting.size > 0) this.opts.onPopulated?.([...pool.waiting]);
  }
}

function baseKey(req: Pick<PoolRequest, 'trunkId' | 'projectId' | 'networkId'>): string {
  return `${req.trunkId}/${req.projectId}/${req.networkId}`;
}
