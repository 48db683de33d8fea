/**
 * The pods' VIF machinery of one kuryr controller process: the Nodes' trunks, the nested VLAN
 * driver behind the process-wide bound on bulk creates, the port pools, and the runnable that
 * recovers the pools from the trunks at start and then recycles and refills them every
 * `ports_pool_update_frequency`. The pod, kuryrport and kuryrnetwork-population controllers share
 * it (one per KuryrContext).
 */
import { kinds, type KubeClient, type Manager } from '../../kube/index.ts';
import type { Runnable } from '../../kube/runnable.ts';
import { isDeleting } from '../../kube/finalizer.ts';
import { Limiter } from '../../openstack/core/limiter.ts';
import { POOL_PORT_NAME } from '../api/names.ts';
import { kuryrKinds } from '../api/index.ts';
import { readVif } from '../api/vif.ts';
import type { KuryrContext } from '../context.ts';
import { podMetrics, type PodMetrics } from '../metrics.ts';
import { NestedVlanDriver, type PortOwner } from './nested-vlan.ts';
import { NodeTrunks } from './node-trunk.ts';
import { VifPools } from './pool.ts';
import { recoverPorts } from './recovery.ts';

/** Recovery failing at start (Neutron down): first retry and cap. */
const RECOVERY_BACKOFF = { initialMs: 1_000, maxMs: 30_000 } as const;

export interface VifStack {
  trunks: NodeTrunks;
  driver: NestedVlanDriver;
  pools: VifPools;
  metrics: PodMetrics;
  owner: PortOwner;
  /** The pools are recovered from the trunks: ports may be taken. */
  ready(): boolean;
  /** Who to wake when a populate lands (the kuryrport controller sets it). */
  wake: (keys: readonly string[]) => void;
}

/** What our ports carry besides the tags: the pool name, and a description naming the owner. */
export function portOwner(ctx: KuryrContext): PortOwner {
  return {
    tags: ctx.tags,
    name: POOL_PORT_NAME,
    description: `kuryr pod port, owner ${ctx.tags.join(',')}`,
  };
}

const stacks = new WeakMap<KuryrContext, VifStack>();

/** The process's stack for `ctx`, made (and its runnable added to `mgr`) on first use. */
export function vifStack(mgr: Manager, ctx: KuryrContext): VifStack {
  const known = stacks.get(ctx);
  if (known) return known;
  const { vifPool, podVifNested } = ctx.options;
  const noop = ctx.options.kubernetes.vifPoolDriver === 'noop';
  const nodes = mgr.informers.informerFor(kinds.Node);
  const trunks = new NodeTrunks(ctx.os, podVifNested.workerNodesSubnets);
  const owner = portOwner(ctx);
  const driver = new NestedVlanDriver({
    api: ctx.os,
    owner,
    bulkCreates: new Limiter(Math.max(1, vifPool.maxBulkCreatesInFlight)),
    log: ctx.log,
  });
  let ready = false;
  const stack: VifStack = {
    trunks,
    driver,
    owner,
    metrics: podMetrics(ctx.registry),
    ready: () => ready,
    wake: () => undefined,
    pools: new VifPools({
      driver,
      clock: mgr.clock,
      log: ctx.log.child({ component: 'port-pools' }),
      limits: noop
        ? // A port per pod: made when a pod asks (a burst still in one bulk create), deleted on release.
          { min: 0, max: 0, batch: 1, updateFrequencyMs: 0, keepReleased: false }
        : {
            min: vifPool.portsPoolMin,
            max: vifPool.portsPoolMax,
            batch: Math.max(1, vifPool.portsPoolBatch),
            updateFrequencyMs: vifPool.portsPoolUpdateFrequency * 1_000,
          },
      trunkUsable: (trunkId) => {
        const name = trunks.nodeOfTrunk(trunkId);
        const node = name === undefined ? undefined : nodes.get(name);
        return node !== undefined && !isDeleting(node);
      },
      onPopulated: (keys) => stack.wake(keys),
    }),
  };
  stacks.set(ctx, stack);
  mgr.add(poolRunnable(mgr, ctx, stack, () => (ready = true)));
  return stack;
}

/** Recovery, then recycling and refills every update frequency, while this process leads. */
function poolRunnable(mgr: Manager, ctx: KuryrContext, stack: VifStack, recovered: () => void): Runnable {
  const log = ctx.log.child({ component: 'port-pools' });
  const every = Math.max(1, ctx.options.vifPool.portsPoolUpdateFrequency * 1_000);
  return {
    name: 'kuryr-port-pools',
    needLeaderElection: true,
    async start(signal, { hardStop }) {
      for (let wait: number = RECOVERY_BACKOFF.initialMs; !signal.aborted;) {
        try {
          const inUse = await portsInUse(mgr.api, signal);
          const { pooled } = await recoverPorts({
            api: ctx.os,
            driver: stack.driver,
            owner: stack.owner,
            inUse,
            log,
            signal,
          });
          stack.pools.adopt(pooled);
          recovered();
          break;
        } catch (err) {
          if (signal.aborted) return;
          log.warn({ err, retryInMs: wait }, 'recovering the port pools failed; retrying');
          await mgr.clock.sleep(wait, signal).catch(() => undefined);
          wait = Math.min(wait * 2, RECOVERY_BACKOFF.maxMs);
        }
      }
      while (!signal.aborted) {
        await mgr.clock.sleep(every, signal).catch(() => undefined);
        if (signal.aborted) break;
        try {
          dropGoneNodes(mgr, stack);
          // A pass finishes its detach-and-delete within the graceful stop, not half way.
          await stack.pools.recycle(hardStop);
          stack.pools.maintain();
        } catch (err) {
          if (!signal.aborted) log.warn({ err }, 'recycling the port pools failed; next pass retries');
        }
      }
      await stack.pools.settled();
    },
  };
}

/** Pools of trunks whose Node is gone or deleting are dropped: CAPO deletes the subports with the trunk. */
function dropGoneNodes(mgr: Manager, stack: VifStack): void {
  const nodes = mgr.informers.informerFor(kinds.Node);
  for (const name of stack.trunks.known()) {
    const node = nodes.get(name);
    if (node && !isDeleting(node)) continue;
    const trunk = stack.trunks.trunkOf(name);
    stack.trunks.forget(name);
    if (trunk) stack.pools.dropTrunk(trunk);
  }
}

/** The port ids every KuryrPort holds: never pooled, never deleted by recovery. */
async function portsInUse(api: KubeClient, signal: AbortSignal): Promise<Set<string>> {
  const all = await api.listAll(kuryrKinds.KuryrPort, { signal });
  const ids = new Set<string>();
  for (const kp of all.items) {
    for (const entry of Object.values(kp.status?.vifs ?? {})) {
      try {
        ids.add(readVif(entry.vif).id);
      } catch {
        // A VIF we cannot read in full still holds its port: never pool it for another pod.
        const id = (entry.vif?.['versioned_object.data'] as { id?: unknown } | undefined)?.id;
        if (typeof id === 'string') ids.add(id);
      }
    }
  }
  return ids;
}
