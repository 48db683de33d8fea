/**
 * The cloud-node-lifecycle controller (k8s.io/cloud-provider `controllers/nodelifecycle`): a Node
 * that is not Ready is checked against Nova every monitor period (upstream `--node-monitor-period`,
 * 5 s): server gone (404) → the Node is deleted (`DeletingNode`, then `RemovingNode`); server
 * SHUTOFF → the `node.cloudprovider.kubernetes.io/shutdown:NoSchedule` taint. A Ready Node loses
 * that taint, as upstream.
 *
 * Upstream lists every Node each period; here each Node is a key that requeues itself while it is
 * NotReady, so Ready Nodes cost no Nova call and wake the controller when their condition changes.
 */
import type { V1Node } from '@kubernetes/client-node';
import {
  clone,
  isNotFound,
  kinds,
  mergePatch,
  timeMs,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import type { OpenStackApi } from '../secret/rotating-client.ts';
import type { LiveConfig } from '../config/types.ts';
import { NodeReason } from '../events.ts';
import { findServer, type ServerLookup } from '../instances.ts';
import { hasTaint, TAINT_SHUTDOWN, TAINT_UNINITIALIZED, withoutTaint } from '../node-spec.ts';
import { ProviderIdError } from '../../openstack/services/provider-id.ts';

export const CLOUD_NODE_LIFECYCLE_CONTROLLER = 'cloud-node-lifecycle';

/** Upstream's uninitializedNodeDelay: a new Node without providerID gets this long to be initialized. */
export const UNINITIALIZED_NODE_DELAY_MS = 60_000;

export interface CloudNodeLifecycleOptions {
  /** Upstream `--node-monitor-period` (5 s). */
  monitorPeriodMs: number;
}

export function registerCloudNodeLifecycleController(
  mgr: Manager,
  os: OpenStackApi,
  config: LiveConfig,
  opts: CloudNodeLifecycleOptions,
): void {
  mgr
    .controller(CLOUD_NODE_LIFECYCLE_CONTROLLER)
    .for(kinds.Node)
    .complete(cloudNodeLifecycleReconciler(mgr, os, config, opts));
}

/**
 * The controller's reconcile, for a manager that registers it itself: kube-controller-manager's
 * in-tree stand-in ran the same k8s.io/cloud-provider loop, gated by who owns the cloud loops.
 */
export function cloudNodeLifecycleReconciler(
  mgr: Manager,
  os: OpenStackApi,
  config: LiveConfig,
  opts: CloudNodeLifecycleOptions,
): (req: Request, signal: AbortSignal, ctx: ReconcileContext) => Promise<Result> {
  return (req, signal, ctx) => reconcileLifecycle(mgr, os, config, opts, req, signal, ctx);
}

function readyStatus(node: V1Node): string {
  return node.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown';
}

async function reconcileLifecycle(
  mgr: Manager,
  os: OpenStackApi,
  config: LiveConfig,
  opts: CloudNodeLifecycleOptions,
  req: Request,
  signal: AbortSignal,
  ctx: ReconcileContext,
): Promise<Result> {
  const node = await mgr.client.get(kinds.Node, req, { signal });
  if (!node) return {};
  const period = opts.monitorPeriodMs;

  if (readyStatus(node) === 'True') {
    await setShutdownTaint(mgr, node, false, signal);
    return {};
  }

  // Upstream's "wait unknown uninitialized node": kubelet may register before the server is findable.
  if (!node.spec?.providerID && hasTaint(node, TAINT_UNINITIALIZED)) {
    const created = timeMs(node.metadata?.creationTimestamp);
    const age = created === undefined ? Infinity : mgr.clock.now() - created;
    if (age < UNINITIALIZED_NODE_DELAY_MS)
      return { requeueAfterMs: Math.max(period, UNINITIALIZED_NODE_DELAY_MS - age) };
  }

  let found: ServerLookup;
  try {
    found = await findServer(os, node, config.current().cloud.regionName, signal);
  } catch (err) {
    if (!(err instanceof ProviderIdError)) throw err;
    ctx.log.error({ err }, 'error checking if node exists');
    return { requeueAfterMs: period };
  }

  if (found.kind === 'notFound') {
    const name = node.metadata!.name!;
    mgr.events.event(
      node,
      'Normal',
      NodeReason.DeletingNode,
      `Deleting node ${name} because it does not exist in the cloud provider`,
    );
    ctx.log.info({ by: found.by }, 'deleting node since it is no longer present in cloud provider');
    try {
      // The uid precondition spares a Node recreated under the same name meanwhile.
      await mgr.api.delete(kinds.Node, { name }, { signal, preconditions: { uid: node.metadata!.uid! } });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    mgr.events.event(node, 'Normal', NodeReason.RemovingNode, `Removing Node ${name} from Controller`);
    return {};
  }
  if (found.kind === 'ambiguous') {
    ctx.log.error({ servers: found.ids }, 'several servers match the node; not touching it');
    return { requeueAfterMs: period };
  }
  // InstanceShutdown: only SHUTOFF counts. A server running again loses the taint at once rather
  // than when kubelet reports Ready (upstream), so the Node's taints say what Nova says.
  await setShutdownTaint(mgr, node, found.server.status === 'SHUTOFF', signal);
  return { requeueAfterMs: period };
}

async function setShutdownTaint(mgr: Manager, node: V1Node, on: boolean, signal: AbortSignal): Promise<void> {
  if (hasTaint(node, TAINT_SHUTDOWN) === on) return;
  const draft = clone(node);
  draft.spec ??= {};
  draft.spec.taints = on
    ? [...(draft.spec.taints ?? []), { key: TAINT_SHUTDOWN, effect: 'NoSchedule' }]
    : withoutTaint(draft.spec.taints, TAINT_SHUTDOWN);
  // Taints are one list in a merge patch: the lock keeps a concurrent taint change from being lost.
  await mergePatch(mgr.api, kinds.Node, node, draft, { optimisticLock: true, signal });
}
