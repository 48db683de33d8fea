/**
 * The kuryrnetwork-population controller (upstream's KuryrNetworkPopulationHandler, on when
 * `kuryrnetwork_population` is among `[kubernetes] enabled_handlers` — OpenShift's
 * `enablePortPoolsPrepopulation`): once a namespace's KuryrNetwork has its subnet, each Node's
 * pool for it is filled to `ports_pool_min`, then `status.populated` is set. The populates go
 * through the pools, so they share the bound on bulk creates in flight and one populate per pool at
 * a time — prepopulating many namespaces cannot flood Neutron (what made OpenShift lower the
 * defaults).
 */
import {
  isDeleting,
  isNotFound,
  kinds,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import { kuryrKinds } from '../api/index.ts';
import type { KuryrContext } from '../context.ts';
import { isPending } from '../drivers.ts';
import { NodeTrunkError } from '../vif/node-trunk.ts';
import type { PoolRequest } from '../vif/pool.ts';
import { vifStack, type VifStack } from '../vif/stack.ts';

export const KURYRNETWORK_POPULATION_CONTROLLER = 'kuryrnetwork-population';

export interface PopulationControllerOptions {
  /** How soon to look again while populates are under way. */
  pollMs?: number;
}

export function registerKuryrNetworkPopulationController(
  mgr: Manager,
  ctx: KuryrContext,
  opts: PopulationControllerOptions = {},
): void {
  const stack = vifStack(mgr, ctx);
  const networks = mgr.informers.informerFor(kuryrKinds.KuryrNetwork);
  mgr
    .controller(KURYRNETWORK_POPULATION_CONTROLLER)
    .for(kuryrKinds.KuryrNetwork)
    // A Node joining: every namespace not populated yet covers it too.
    .watches(kinds.Node, () =>
      networks
        .list()
        .filter((kn) => !kn.status?.populated)
        .map((kn) => ({ namespace: kn.metadata?.namespace ?? '', name: kn.metadata?.name ?? '' })),
    )
    .complete((req, signal, rctx) => populate(mgr, ctx, stack, opts.pollMs ?? 1_000, req, signal, rctx));
}

async function populate(
  mgr: Manager,
  ctx: KuryrContext,
  stack: VifStack,
  pollMs: number,
  req: Request,
  signal: AbortSignal,
  rctx: ReconcileContext,
): Promise<Result> {
  const kn = await mgr.client.get(kuryrKinds.KuryrNetwork, req, { signal });
  if (!kn || isDeleting(kn) || kn.status?.populated || !kn.status?.subnetId) return {};
  if (!stack.ready()) return { requeueAfterMs: pollMs };
  const subnet = await ctx.subnets.forNamespace(kn.spec.nsName, signal);
  if (isPending(subnet)) return { requeueAfterMs: subnet.retryAfterMs };
  const groups = [...ctx.options.neutronDefaults.podSecurityGroups].sort();
  const nodes = (await mgr.client.list(kinds.Node, { signal })).filter((n) => !isDeleting(n));
  const requests: PoolRequest[] = [];
  for (const node of nodes) {
    try {
      const trunk = await stack.trunks.resolve(node, signal);
      requests.push({
        trunkId: trunk.trunkId,
        projectId: kn.spec.projectId || ctx.projectId,
        networkId: subnet.networkId,
        subnetIds: [subnet.subnetId],
        securityGroups: groups,
      });
    } catch (err) {
      // A Node that cannot take pods has no pool to fill; the pod controller reports it.
      if (!(err instanceof NodeTrunkError)) throw err;
      rctx.log.debug({ node: node.metadata?.name, problem: err.problem }, 'node skipped by prepopulation');
    }
  }
  for (const r of requests) stack.pools.ensureMin(r);
  if (!requests.every((r) => stack.pools.populated(r))) return { requeueAfterMs: pollMs };
  try {
    await mgr.api.patch(kuryrKinds.KuryrNetwork, req, 'merge', { status: { populated: true } }, { signal });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  rctx.log.info({ namespace: kn.spec.nsName, nodes: requests.length }, 'port pools prepopulated');
  return {};
}
