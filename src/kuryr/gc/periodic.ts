/**
 * Upstream's periodic cleanups, the controller's safety net (kuryr_kubernetes/utils.py
 * `cleanup_dead_ports` / `cleanup_dead_networks`, every 90 s; vif_pool.py `_cleanup_removed_nodes`,
 * every NODE_PORTS_CLEAN_FREQUENCY = 600 s):
 *
 * - dead ports: in a network a KuryrNetwork records, ports of `compute:kuryr` that are DOWN, lack
 *   our tags (their tagging failed) and have not changed for ZOMBIE_AGE (600 s);
 * - dead networks: our tagged networks no KuryrNetwork records, without ports, unchanged for
 *   ZOMBIE_AGE; in a recorded network, extra subnets lacking our tags, unchanged for ZOMBIE_AGE;
 * - removed nodes: our tagged ports, DOWN, detached from a trunk (no device owner, or still
 *   `trunk:subport` of a trunk that no longer exists — upstream's Neutron bug), with one address in
 *   one of our pod subnets, seen on two passes in a row (a port being created and attached is
 *   never taken); then our DOWN `compute:kuryr` ports without a binding host, seen twice.
 *
 * One runnable on the leader runs both on their periods. Each pass is bounded (`maxDeletes`); a
 * pass that fails is logged and the next one comes after a doubled wait, up to 10 minutes, reset
 * by a pass that succeeds. A delete that fails is logged and left for the next pass.
 */
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import type { OpenStackClient } from '../../openstack/client.ts';
import { ignoreNotFound, isNotFound } from '../../openstack/core/errors.ts';
import type { Port } from '../../openstack/network/v2/ports.ts';
import type { Manager } from '../../kube/index.ts';
import { kuryrKinds } from '../api/index.ts';
import type { KuryrContext } from '../context.ts';
import { ZOMBIE_AGE_MS } from './orphans.ts';

export const DEAD_RESOURCES_PERIOD_MS = 90_000;
export const NODE_PORTS_CLEAN_PERIOD_MS = 600_000;
const MAX_BACKOFF_MS = 600_000;
const KURYR_OWNER = 'compute:kuryr';

/** What a KuryrNetwork's status names. */
export interface RecordedNetwork {
  netId?: string | undefined;
  subnetId?: string | undefined;
}

export interface PeriodicCleanupDeps {
  os: OpenStackClient;
  /** ownerTags(options). */
  tags: readonly string[];
  /** `[namespace_subnet] pod_subnet_pool`: our namespace subnets come from it. */
  podSubnetPool?: string | undefined;
  /** `[neutron_defaults] pod_subnet`: the default driver's subnet. */
  podSubnet?: string | undefined;
  /** The KuryrNetworks' recorded ids (from the manager's cache). */
  recordedNetworks: () => readonly RecordedNetwork[];
  clock: Clock;
  log: Logger;
  /** Deletes per pass and kind (default 100). */
  maxDeletes?: number | undefined;
}

export interface PassReport {
  deleted: { kind: 'port' | 'network' | 'subnet'; id: string; why: string }[];
  failed: { id: string; error: string }[];
}

const age = (clock: Clock, updated: string | null | undefined) => {
  const t = updated ? Date.parse(updated) : NaN;
  return Number.isNaN(t) ? Infinity : clock.now() - t;
};

export class PeriodicCleanups {
  private readonly deps: PeriodicCleanupDeps;
  /** Ports seen on the last removed-nodes pass: deleted only when seen again. */
  private seen = new Set<string>();

  constructor(deps: PeriodicCleanupDeps) {
    this.deps = deps;
  }

  private get max(): number {
    return this.deps.maxDeletes ?? 100;
  }

  private async tryDelete(
    report: PassReport,
    kind: 'port' | 'network' | 'subnet',
    id: string,
    why: string,
    del: () => Promise<unknown>,
  ): Promise<void> {
    try {
      await del();
      report.deleted.push({ kind, id, why });
      this.deps.log.info({ kind, id, why }, `kuryr cleanup: deleted ${kind} ${id}: ${why}`);
    } catch (err) {
      if (isNotFound(err)) return;
      const error = err instanceof Error ? err.message : String(err);
      report.failed.push({ id, error });
      this.deps.log.warn({ kind, id, err: error }, `kuryr cleanup: could not delete ${kind} ${id}`);
    }
  }

  /** cleanup_dead_ports then cleanup_dead_networks. */
  async deadResources(signal: AbortSignal): Promise<PassReport> {
    const { os, tags, clock } = this.deps;
    const o = { signal };
    const report: PassReport = { deleted: [], failed: [] };
    const recorded = this.deps.recordedNetworks();
    const netIds = new Set(recorded.flatMap((r) => (r.netId ? [r.netId] : [])));

    let budget = this.max;
    for (const netId of netIds) {
      const ports = await os.network.ports
        .list({ network_id: netId, status: 'DOWN', device_owner: KURYR_OWNER, 'not-tags': tags }, o)
        .all();
      for (const p of ports) {
        if (budget <= 0 || age(clock, p.updated_at) <= ZOMBIE_AGE_MS) continue;
        budget--;
        await this.tryDelete(report, 'port', p.id, 'DOWN kuryr port without our tags for 10 minutes', () =>
          os.network.ports.delete(p.id, o),
        );
      }
    }

    budget = this.max;
    for (const net of await os.network.networks.list({ tags }, o).all()) {
      if (budget <= 0) break;
      if (netIds.has(net.id)) {
        const extra = await os.network.subnets.list({ network_id: net.id, 'not-tags': tags }, o).all();
        for (const s of extra) {
          if (age(clock, s.updated_at) <= ZOMBIE_AGE_MS) continue;
          budget--;
          await this.tryDelete(report, 'subnet', s.id, 'untagged subnet in a kuryr network', () =>
            os.network.subnets.delete(s.id, o),
          );
        }
        continue;
      }
      if (age(clock, net.updated_at) <= ZOMBIE_AGE_MS) continue;
      const ports = await os.network.ports.list({ network_id: net.id, limit: 1 }, o).all();
      if (ports.length > 0) continue;
      budget--;
      await this.tryDelete(report, 'network', net.id, 'tagged network without ports in no KuryrNetwork', () =>
        os.network.networks.delete(net.id, o),
      );
    }
    return report;
  }

  /** _cleanup_removed_nodes: detached subports of our subnets, then unbound kuryr ports, each seen twice. */
  async removedNodes(signal: AbortSignal): Promise<PassReport> {
    const { os, tags } = this.deps;
    const o = { signal };
    const report: PassReport = { deleted: [], failed: [] };
    const subnets = new Set<string>();
    if (this.deps.podSubnetPool) {
      for (const s of await os.network.subnets
        .list({ tags, subnetpool_id: this.deps.podSubnetPool }, o)
        .all())
        subnets.add(s.id);
    }
    if (this.deps.podSubnet) subnets.add(this.deps.podSubnet);

    const seenNow = new Set<string>();
    let budget = this.max;
    const down = await os.network.ports.list({ status: 'DOWN', tags }, o).all();
    for (const p of down) {
      if (!(await this.detached(p, signal))) continue;
      if (p.fixed_ips.length !== 1 || !subnets.has(p.fixed_ips[0]!.subnet_id)) continue;
      if (!this.seen.has(p.id)) {
        seenNow.add(p.id);
        continue;
      }
      if (budget-- <= 0) continue;
      await this.tryDelete(report, 'port', p.id, 'subport detached from a removed node', () =>
        os.network.ports.delete(p.id, o),
      );
    }
    for (const p of down) {
      if (p.device_owner !== KURYR_OWNER || p['binding:host_id']) continue;
      if (!this.seen.has(p.id)) {
        seenNow.add(p.id);
        continue;
      }
      if (budget-- <= 0) continue;
      await this.tryDelete(report, 'port', p.id, 'unbound kuryr port', () =>
        os.network.ports.delete(p.id, o),
      );
    }
    // A port deleted or no longer matching is forgotten; one seen for the first time waits a pass.
    this.seen = seenNow;
    for (const f of report.failed) this.seen.add(f.id);
    return report;
  }

  /** No device owner, or a `trunk:subport` whose trunk is gone: a port on a live trunk is never ours to take. */
  private async detached(p: Port, signal: AbortSignal): Promise<boolean> {
    if (p.device_owner === '') return true;
    if (p.device_owner !== 'trunk:subport' || !p.device_id) return false;
    const trunk = await this.deps.os.network.trunks.get(p.device_id, { signal }).catch(ignoreNotFound);
    return trunk === undefined || !trunk.sub_ports.some((sp) => sp.port_id === p.id);
  }
}

/** The loop: both passes on their periods, bounded, with a doubled wait after a failed pass. */
export async function runPeriodicCleanups(
  cleanups: PeriodicCleanups,
  deps: Pick<PeriodicCleanupDeps, 'clock' | 'log'>,
  signal: AbortSignal,
  periods: { deadMs?: number; nodesMs?: number } = {},
): Promise<void> {
  const deadMs = periods.deadMs ?? DEAD_RESOURCES_PERIOD_MS;
  const nodesMs = periods.nodesMs ?? NODE_PORTS_CLEAN_PERIOD_MS;
  const { clock, log } = deps;
  let nextDead = clock.now() + deadMs;
  let nextNodes = clock.now() + nodesMs;
  let failures = 0;
  while (!signal.aborted) {
    const wake = Math.min(nextDead, nextNodes);
    const backoff = failures === 0 ? 0 : Math.min(deadMs * 2 ** failures, MAX_BACKOFF_MS);
    try {
      await clock.sleep(Math.max(wake - clock.now(), backoff), signal);
    } catch {
      return;
    }
    try {
      if (clock.now() >= nextDead) {
        await cleanups.deadResources(signal);
        nextDead = clock.now() + deadMs;
      }
      if (clock.now() >= nextNodes) {
        await cleanups.removedNodes(signal);
        nextNodes = clock.now() + nodesMs;
      }
      failures = 0;
    } catch (err) {
      if (signal.aborted) return;
      failures++;
      log.warn(
        { err: err instanceof Error ? err.message : String(err), failures },
        'kuryr cleanup pass failed; retrying after a longer wait',
      );
      nextDead = Math.max(nextDead, clock.now());
    }
  }
}

/** The controller name of the cleanups' runnable (logs, and `--controllers`-style selection by kuryr-cmd). */
export const CLEANUPS_RUNNABLE = 'kuryr-cleanups';

/**
 * Adds the periodic cleanups to a manager, on the leader only, reading the KuryrNetworks from the
 * manager's cache. kuryr-cmd calls it for `shiftstack kuryr controller`.
 */
export function registerKuryrCleanups(
  mgr: Manager,
  ctx: KuryrContext,
  periods: { deadMs?: number; nodesMs?: number } = {},
): PeriodicCleanups {
  const knsInformer = mgr.informers.informerFor(kuryrKinds.KuryrNetwork);
  const cleanups = new PeriodicCleanups({
    os: ctx.os,
    tags: ctx.tags,
    podSubnetPool: ctx.options.namespaceSubnet.podSubnetPool || undefined,
    podSubnet: ctx.options.neutronDefaults.podSubnet || undefined,
    recordedNetworks: () =>
      knsInformer.list().map((k) => ({ netId: k.status?.netId, subnetId: k.status?.subnetId })),
    clock: mgr.clock,
    log: ctx.log.child({ runnable: CLEANUPS_RUNNABLE }),
  });
  mgr.add({
    name: CLEANUPS_RUNNABLE,
    // Never before the KuryrNetworks are all in the cache: a network missing from it would look unrecorded.
    start: async (signal) => {
      await knsInformer.waitForSync(signal);
      await runPeriodicCleanups(cleanups, { clock: mgr.clock, log: ctx.log }, signal, periods);
    },
  });
  return cleanups;
}
