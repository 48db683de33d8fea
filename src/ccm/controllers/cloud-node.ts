/**
 * The cloud-node controller (k8s.io/cloud-provider `controllers/node`, with OCCM's InstancesV2):
 *
 * - a Node with the uninitialized taint gets its server (by providerID, else by exact name), then
 *   one optimistic-locked patch sets providerID, the instance-type, zone and region labels and
 *   removes the taint, then a status patch sets the addresses, and a `Synced` Event — upstream's
 *   order (its Update, then updateNodeAddress);
 * - an initialized Node has its addresses and additional labels refreshed every
 *   `statusUpdateFrequencyMs` (upstream `--node-status-update-frequency`, 5 min), writing nothing
 *   when nothing changed.
 *
 * Waiting never blocks a worker: a server in BUILD or not there yet is a requeue that grows with the
 * age of what is awaited (the server's, else the Node's), capped, and kept nowhere, so a restarted
 * process waits exactly as the one before it would have.
 */
import type { V1Node } from '@kubernetes/client-node';
import {
  clone,
  kinds,
  mergePatch,
  patchStatus,
  TerminalError,
  timeMs,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import type { OpenStackApi } from '../secret/rotating-client.ts';
import type { CcmConfig, LiveConfig } from '../config/types.ts';
import { changedSections } from '../secret/compare.ts';
import { NodeReason, ShiftstackNodeReason } from '../events.ts';
import { addressesOf, findServer, instanceMetadata, type ServerLookup } from '../instances.ts';
import type { NodeAddress } from '../node-addresses.ts';
import { additionalLabels } from '../node-metadata.ts';
import {
  desiredAddresses,
  hasTaint,
  initializeNode,
  NodeIpError,
  reconcileLabels,
  sameAddresses,
  TAINT_UNINITIALIZED,
} from '../node-spec.ts';
import { parseOpenStackTime } from '../../openstack/core/time.ts';
import { ageMs, waitByAge } from '../../openstack/services/wait-by-age.ts';
import { ProviderIdError } from '../../openstack/services/provider-id.ts';

export const CLOUD_NODE_CONTROLLER = 'cloud-node';

export interface CloudNodeOptions {
  /** Upstream `--node-status-update-frequency` (5 min). */
  statusUpdateFrequencyMs: number;
  /** Upstream `--concurrent-node-syncs` (1). */
  workers: number;
  /** Longest wait between two looks at a server in BUILD (10 s). */
  buildBackoffCapMs?: number;
  /** Longest wait between two searches for a server that does not exist yet (60 s). */
  missingBackoffCapMs?: number;
}

/** The first look again, and the floor of every wait. */
const FIRST_LOOK_MS = 250;

export function registerCloudNodeController(
  mgr: Manager,
  os: OpenStackApi,
  config: LiveConfig,
  opts: CloudNodeOptions,
): void {
  const r = new CloudNodeReconciler(mgr, os, config, opts);
  const controller = mgr
    .controller(CLOUD_NODE_CONTROLLER)
    .for(kinds.Node)
    .withOptions({ maxConcurrentReconciles: opts.workers })
    .complete((req, signal, ctx) => r.reconcile(req, signal, ctx));
  // Node addresses follow [Networking]: a rotation refreshes every Node now, not at its next period.
  const nodes = mgr.informers.informerFor(kinds.Node);
  config.onChange((next, previous) => {
    if (!changedSections(previous, next).includes('[Networking]')) return;
    r.forgetRefreshes();
    for (const n of nodes.list()) controller.enqueue({ name: n.metadata!.name! });
  });
}

class CloudNodeReconciler {
  private readonly mgr: Manager;
  private readonly os: OpenStackApi;
  private readonly live: LiveConfig;
  private readonly opts: Required<CloudNodeOptions>;
  /** When each initialized Node's addresses were last read from the cloud (kubelet's updates must not each cost a Nova call). */
  private readonly lastRefresh = new Map<string, number>();

  constructor(mgr: Manager, os: OpenStackApi, config: LiveConfig, opts: CloudNodeOptions) {
    this.mgr = mgr;
    this.os = os;
    this.live = config;
    this.opts = { buildBackoffCapMs: 10_000, missingBackoffCapMs: 60_000, ...opts };
  }

  /** The config now: a rotation of the Secret reaches the next reconcile. */
  private get config(): CcmConfig {
    return this.live.current();
  }

  /** Every initialized Node is refreshed at its next reconcile, whatever its period says. */
  forgetRefreshes(): void {
    this.lastRefresh.clear();
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const node = await this.mgr.client.get(kinds.Node, req, { signal });
    if (!node) {
      this.lastRefresh.delete(req.name);
      return {};
    }
    return hasTaint(node, TAINT_UNINITIALIZED)
      ? this.initialize(node, signal, ctx)
      : this.refresh(node, signal, ctx);
  }

  /** The wait for a server that is not there (or not the only one) yet: by the Node's age. */
  private nodeWait(node: V1Node): number {
    const age = ageMs(timeMs(node.metadata?.creationTimestamp), this.mgr.clock.now());
    return waitByAge(age, { initialMs: FIRST_LOOK_MS, maxMs: this.opts.missingBackoffCapMs });
  }

  private async lookup(node: V1Node, signal: AbortSignal): Promise<ServerLookup> {
    try {
      return await findServer(this.os, node, this.config.cloud.regionName, signal);
    } catch (err) {
      if (!(err instanceof ProviderIdError)) throw err;
      // A providerID is immutable: retrying cannot help until someone recreates the Node.
      this.mgr.events.event(node, 'Warning', ShiftstackNodeReason.InstanceNotFound, err.message);
      throw new TerminalError(err.message);
    }
  }

  private async initialize(node: V1Node, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const name = node.metadata!.name!;
    ctx.log.info('initializing node with cloud provider');
    const found = await this.lookup(node, signal);
    if (found.kind === 'notFound') {
      this.mgr.events.event(
        node,
        'Warning',
        ShiftstackNodeReason.InstanceNotFound,
        `No server found by ${found.by}; the node stays uninitialized until one exists`,
      );
      return { requeueAfterMs: this.nodeWait(node) };
    }
    if (found.kind === 'ambiguous') {
      this.mgr.events.event(
        node,
        'Warning',
        ShiftstackNodeReason.InstanceAmbiguous,
        `${found.ids.length} servers match ${found.by} (${found.ids.join(', ')}); set spec.providerID or rename them`,
      );
      return { requeueAfterMs: this.nodeWait(node) };
    }
    const server = found.server;
    if (server.status === 'BUILD') {
      ctx.log.info({ server: server.id }, 'server still building; looking again later');
      const age = ageMs(parseOpenStackTime(server.created), this.mgr.clock.now());
      return {
        requeueAfterMs: waitByAge(age, { initialMs: FIRST_LOOK_MS, maxMs: this.opts.buildBackoffCapMs }),
      };
    }

    const meta = await instanceMetadata(this.os, this.config, server, signal);
    let addresses;
    try {
      addresses = desiredAddresses(node, meta.addresses);
    } catch (err) {
      if (!(err instanceof NodeIpError)) throw err;
      // Upstream keeps the taint and retries: the node IP kubelet was given is not the server's.
      this.mgr.events.event(node, 'Warning', ShiftstackNodeReason.InstanceNotReady, err.message);
      return { requeueAfterMs: this.nodeWait(node) };
    }

    const draft = clone(node);
    initializeNode(draft, meta);
    // The resourceVersion lock makes a concurrent writer (kubelet, another CCM) a 409 and a retry.
    const updated = await mergePatch(this.mgr.api, kinds.Node, node, draft, {
      optimisticLock: true,
      signal,
    });
    await this.writeAddresses(updated, addresses, signal);
    this.mgr.events.event(node, 'Normal', NodeReason.Synced, 'Node synced successfully');
    ctx.log.info({ server: server.id, providerID: meta.providerId }, 'initialized node with cloud provider');
    this.lastRefresh.set(name, this.mgr.clock.now());
    return { requeueAfterMs: this.opts.statusUpdateFrequencyMs };
  }

  private async refresh(node: V1Node, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const name = node.metadata!.name!;
    // reconcileNodeLabels needs no cloud call: it runs on every event, and sends nothing when consistent.
    const labelled = clone(node);
    reconcileLabels(labelled, {});
    let current = await mergePatch(this.mgr.api, kinds.Node, node, labelled, { signal });

    const now = this.mgr.clock.now();
    const last = this.lastRefresh.get(name);
    const every = this.opts.statusUpdateFrequencyMs;
    if (last !== undefined && now - last < every) return { requeueAfterMs: every - (now - last) };
    this.lastRefresh.set(name, now);

    const found = await this.lookup(current, signal);
    if (found.kind !== 'found') {
      // Deleting Nodes whose server is gone is the lifecycle controller's job.
      ctx.log.info({ lookup: found.kind }, 'no single server for the node; addresses left as they are');
      return { requeueAfterMs: every };
    }
    const extra = clone(current);
    reconcileLabels(extra, additionalLabels(found.server));
    current = await mergePatch(this.mgr.api, kinds.Node, current, extra, { signal });

    const cloud = await addressesOf(this.os, this.config, found.server, signal);
    try {
      await this.writeAddresses(current, desiredAddresses(current, cloud), signal);
    } catch (err) {
      if (!(err instanceof NodeIpError)) throw err;
      ctx.log.error({ err }, 'failed to update node addresses');
    }
    return { requeueAfterMs: every };
  }

  /** updateNodeAddress: nothing when the cloud gave no address or nothing changed. */
  private async writeAddresses(node: V1Node, addresses: NodeAddress[], signal: AbortSignal): Promise<void> {
    if (addresses.length === 0 || sameAddresses(node.status?.addresses, addresses)) return;
    const modified = clone(node);
    modified.status = { ...modified.status, addresses };
    await patchStatus(this.mgr.api, kinds.Node, node, modified, { signal });
  }
}
