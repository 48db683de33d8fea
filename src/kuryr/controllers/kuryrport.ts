/**
 * The KuryrPort controller (upstream's KuryrPortHandler, `controller/handlers/kuryrport.py`): a
 * pod's KuryrPort gets a subport of its Node's trunk from the pools, recorded in `status.vifs`
 * before anything else, then marked active once Neutron says ACTIVE.
 *
 * One reconcile, never waiting:
 *   deleting → the ports back to the pools (recyclable), then the finalizer;
 *   pod gone, or another pod of the same name → the KuryrPort is deleted;
 *   no VIF → the Node's trunk (a Node without providerID or trunk: Warning Event on the pod naming
 *     the Node and the fix), the subnet and groups from the context's drivers (Pending → requeue),
 *     a port from the pools (a miss → requeue; the populate wakes us), `status.vifs` written with
 *     the object's resourceVersion — a port taken but not recorded goes straight back;
 *   VIF not active → the port read: ACTIVE → `active: true` and kuryr_pod_creation_latency; not yet
 *     → requeue by the KuryrPort's age; past upstream's 90 s a Warning Event and
 *     kuryr_port_readiness, once; gone → on a live Node a new VIF, on a gone Node nothing (CAPO took
 *     it with the trunk: never recreated).
 */
import type { V1Pod } from '@kubernetes/client-node';
import {
  isDeleting,
  isNotFound as isKubeNotFound,
  kinds,
  removeFinalizer,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import { timeMs } from '../../kube/time.ts';
import { isNotFound } from '../../openstack/core/errors.ts';
import { ageMs, waitByAge, type WaitBounds } from '../../openstack/services/wait-by-age.ts';
import { DEFAULT_IFNAME, Finalizers, Labels } from '../api/names.ts';
import { kuryrKinds, type KuryrPort } from '../api/index.ts';
import { defaultVif, readVif, vifPrimitive, type Vif } from '../api/vif.ts';
import type { KuryrContext } from '../context.ts';
import { isPending } from '../drivers.ts';
import { SUBPORT_DEVICE_OWNER, TrunkGoneError, type SubportVif } from '../vif/nested-vlan.ts';
import { NodeTrunkError } from '../vif/node-trunk.ts';
import { podVif } from '../vif/pod-vif.ts';
import { vifStack, type VifStack } from '../vif/stack.ts';

export const KURYRPORT_CONTROLLER = 'kuryrport';

/** Upstream's ACTIVE_TIMEOUT: past it a port not ACTIVE is reported (not thrown). */
export const ACTIVE_TIMEOUT_MS = 90_000;

export const PodEventReasons = {
  /** The Node has no providerID, no server or no trunk. */
  NodeTrunkMissing: 'KuryrNodeTrunkMissing',
  /** The port is not ACTIVE after 90 s. */
  PortNotActive: 'KuryrPortNotActive',
  /** The port vanished with its Node's trunk; not recreated on a gone Node. */
  PortGone: 'KuryrPortGone',
  /** The pod's VIF is active. */
  VifActive: 'KuryrVifActive',
} as const;

export interface KuryrPortControllerOptions {
  workers?: number;
  /** Waiting for a port to turn ACTIVE: by the KuryrPort's age, within these bounds. */
  activeWait?: WaitBounds;
  /** A pool miss: look again after this long at the latest (the populate wakes us sooner). */
  missWaitMs?: number;
  /** A Node that cannot take pods: look again after this long (Node changes wake us sooner). */
  nodeWaitMs?: number;
}

export function registerKuryrPortController(
  mgr: Manager,
  ctx: KuryrContext,
  opts: KuryrPortControllerOptions = {},
): void {
  const stack = vifStack(mgr, ctx);
  const r = new KuryrPortReconciler(mgr, ctx, stack, opts);
  const ports = mgr.informers.informerFor(kuryrKinds.KuryrPort);
  const controller = mgr
    .controller(KURYRPORT_CONTROLLER)
    .for(kuryrKinds.KuryrPort)
    // The pod going (or replaced under the same name) is ours to act on.
    .watches(kinds.Pod, (pod) => [
      { namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '' },
    ])
    // A Node getting its providerID, or going: the KuryrPorts scheduled on it.
    .watches(kinds.Node, (node) =>
      ports
        .list()
        .filter((kp) => kp.metadata?.labels?.[Labels.KuryrPortNode] === node.metadata?.name)
        .map((kp) => ({ namespace: kp.metadata?.namespace ?? '', name: kp.metadata?.name ?? '' })),
    )
    .withOptions({ maxConcurrentReconciles: opts.workers ?? 16 })
    .complete((req, signal, rctx) => r.reconcile(req, signal, rctx));
  stack.wake = (keys) => {
    for (const key of keys) {
      const [namespace, name] = key.split('/');
      controller.enqueue({ namespace: namespace ?? '', name: name ?? '' });
    }
  };
}

class KuryrPortReconciler {
  private readonly mgr: Manager;
  private readonly ctx: KuryrContext;
  private readonly stack: VifStack;
  private readonly activeWait: WaitBounds;
  private readonly missWaitMs: number;
  private readonly nodeWaitMs: number;
  /** KuryrPorts already reported as slow, so the Event and the counter come once. */
  private readonly reportedSlow = new Set<string>();

  constructor(mgr: Manager, ctx: KuryrContext, stack: VifStack, opts: KuryrPortControllerOptions) {
    this.mgr = mgr;
    this.ctx = ctx;
    this.stack = stack;
    this.activeWait = opts.activeWait ?? { initialMs: 200, maxMs: 5_000 };
    this.missWaitMs = opts.missWaitMs ?? 5_000;
    this.nodeWaitMs = opts.nodeWaitMs ?? 30_000;
  }

  async reconcile(req: Request, signal: AbortSignal, rctx: ReconcileContext): Promise<Result> {
    const key = `${req.namespace ?? ''}/${req.name}`;
    let kp: KuryrPort;
    try {
      // Fresh, never the cache: a VIF we recorded a moment ago must not be recorded twice.
      kp = await this.mgr.api.get(kuryrKinds.KuryrPort, req, { signal });
    } catch (err) {
      if (isKubeNotFound(err)) {
        this.reportedSlow.delete(key);
        this.stack.pools.cancel(key);
        return {};
      }
      throw err;
    }
    if (isDeleting(kp)) {
      this.stack.pools.cancel(key);
      return this.finalize(kp, signal, rctx);
    }
    const pod = await this.mgr.client.get(kinds.Pod, req, { signal });
    if (!pod || pod.metadata?.uid !== kp.spec.podUid) {
      rctx.log.info({ kuryrport: key }, 'pod gone: deleting its KuryrPort');
      await this.mgr.api.delete(kuryrKinds.KuryrPort, req, { signal }).catch(ignoreNotFound);
      return {};
    }
    const current = defaultVif(kp.status?.vifs);
    if (!current) return this.wire(kp, pod, key, signal, rctx);
    if (current.vif.active) return {};
    return this.activate(kp, pod, current.ifname, current.vif, key, signal, rctx);
  }

  /** A VIF from the pools, recorded before anything else could lose it. */
  private async wire(
    kp: KuryrPort,
    pod: V1Pod,
    key: string,
    signal: AbortSignal,
    rctx: ReconcileContext,
  ): Promise<Result> {
    if (!this.stack.ready()) return { requeueAfterMs: this.activeWait.initialMs };
    const nodeName = kp.spec.podNodeName;
    const node = await this.mgr.client.get(kinds.Node, { name: nodeName }, { signal });
    if (!node || isDeleting(node)) {
      // Nothing is added to a trunk whose Node is gone or going; the pod goes with its Node.
      rctx.log.info({ kuryrport: key, node: nodeName }, 'node gone or deleting: no port for its pod');
      return {};
    }
    let trunk;
    try {
      trunk = await this.stack.trunks.resolve(node, signal);
    } catch (err) {
      if (!(err instanceof NodeTrunkError)) throw err;
      rctx.log.warn({ kuryrport: key, node: nodeName, problem: err.problem }, err.message);
      this.mgr.events.event(pod, 'Warning', PodEventReasons.NodeTrunkMissing, err.message);
      return { requeueAfterMs: this.nodeWaitMs };
    }
    const subnet = await this.ctx.subnets.forPod(pod, signal);
    if (isPending(subnet)) return { requeueAfterMs: subnet.retryAfterMs };
    const groups = await this.ctx.securityGroups.forPod(pod, signal);
    if (isPending(groups)) return { requeueAfterMs: groups.retryAfterMs };
    let port: SubportVif | undefined;
    try {
      port = await this.stack.pools.take(
        {
          trunkId: trunk.trunkId,
          projectId: this.ctx.projectId,
          networkId: subnet.networkId,
          subnetIds: [subnet.subnetId],
          securityGroups: groups,
        },
        key,
        signal,
      );
    } catch (err) {
      if (!(err instanceof TrunkGoneError)) throw err;
      this.stack.trunks.forget(nodeName);
      return { requeueAfterMs: this.activeWait.initialMs };
    }
    if (!port) return { requeueAfterMs: this.missWaitMs };
    const vif = podVif(port, subnet);
    try {
      kp = await this.writeVif(kp, DEFAULT_IFNAME, vif, signal);
    } catch (err) {
      this.stack.pools.putBack(port);
      throw err;
    }
    rctx.log.debug({ kuryrport: key, port: port.portId, vlan: port.vlanId }, 'VIF recorded');
    return this.activate(kp, pod, DEFAULT_IFNAME, vif, key, signal, rctx);
  }

  private async activate(
    kp: KuryrPort,
    pod: V1Pod,
    ifname: string,
    vif: Vif,
    key: string,
    signal: AbortSignal,
    rctx: ReconcileContext,
  ): Promise<Result> {
    let status: string;
    try {
      status = (await this.ctx.os.network.ports.get(vif.id, { signal })).status;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      return this.vanished(kp, pod, ifname, vif, key, signal, rctx);
    }
    const age = ageMs(timeMs(kp.metadata?.creationTimestamp), this.mgr.clock.now());
    if (status !== 'ACTIVE') {
      if (age > ACTIVE_TIMEOUT_MS && !this.reportedSlow.has(key)) {
        this.reportedSlow.add(key);
        this.stack.metrics.portReadiness.inc();
        const message = `port ${vif.id} on node ${kp.spec.podNodeName} is ${status}, not ACTIVE, after ${Math.round(age / 1000)} s; check the Neutron agent of that host and the trunk`;
        rctx.log.warn({ kuryrport: key, port: vif.id }, message);
        this.mgr.events.event(pod, 'Warning', PodEventReasons.PortNotActive, message);
      }
      return { requeueAfterMs: waitByAge(age, this.activeWait) };
    }
    await this.writeVif(kp, ifname, { ...vif, active: true }, signal);
    this.reportedSlow.delete(key);
    const created = timeMs(pod.metadata?.creationTimestamp);
    if (created !== undefined)
      this.stack.metrics.podCreationLatency.observe(ageMs(created, this.mgr.clock.now()) / 1000);
    return {};
  }

  /** The port is gone: a new one on a live Node; on a gone Node nothing (CAPO took it with the trunk). */
  private async vanished(
    kp: KuryrPort,
    pod: V1Pod,
    ifname: string,
    vif: Vif,
    key: string,
    signal: AbortSignal,
    rctx: ReconcileContext,
  ): Promise<Result> {
    const node = await this.mgr.client.get(kinds.Node, { name: kp.spec.podNodeName }, { signal });
    if (!node || isDeleting(node)) {
      const message = `port ${vif.id} went with node ${kp.spec.podNodeName}'s trunk; not recreated on a node that is gone`;
      rctx.log.info({ kuryrport: key }, message);
      this.mgr.events.event(pod, 'Normal', PodEventReasons.PortGone, message);
      return {};
    }
    rctx.log.warn({ kuryrport: key, port: vif.id }, 'port vanished on a live node: getting a new one');
    const vifs = { ...(kp.status?.vifs ?? {}) };
    delete vifs[ifname];
    await this.mgr.api.update(kuryrKinds.KuryrPort, { ...kp, status: { vifs } }, { signal });
    return { requeueAfterMs: 0 };
  }

  private async finalize(kp: KuryrPort, signal: AbortSignal, rctx: ReconcileContext): Promise<Result> {
    for (const entry of Object.values(kp.status?.vifs ?? {})) {
      let vif: Vif;
      try {
        vif = readVif(entry.vif);
      } catch {
        continue;
      }
      await this.release(vif, signal, rctx);
    }
    await removeFinalizer(this.mgr.api, kuryrKinds.KuryrPort, kp, Finalizers.KuryrPort, { signal }).catch(
      ignoreNotFound,
    );
    return {};
  }

  /**
   * A pod's port back to the pools, with its trunk and groups as Neutron has them now. Gone (CAPO
   * took it with its Node's trunk) is done; detached from a trunk that went is deleted (it is ours).
   */
  private async release(vif: Vif, signal: AbortSignal, rctx: ReconcileContext): Promise<void> {
    let port;
    try {
      port = await this.ctx.os.network.ports.get(vif.id, { signal });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    if (port.device_owner !== SUBPORT_DEVICE_OWNER || vif.vlanId === undefined) {
      rctx.log.info({ port: port.id }, 'released port is no subport any more: deleting it');
      await this.stack.driver.deletePort(port.id, signal);
      return;
    }
    this.stack.pools.release({
      portId: port.id,
      trunkId: port.device_id,
      vlanId: vif.vlanId,
      projectId: port.project_id,
      networkId: port.network_id,
      securityGroups: [...port.security_groups].sort(),
      macAddress: port.mac_address,
      fixedIps: port.fixed_ips.map((f) => ({ subnet_id: f.subnet_id, ip_address: f.ip_address })),
    });
  }

  private writeVif(kp: KuryrPort, ifname: string, vif: Vif, signal: AbortSignal): Promise<KuryrPort> {
    const vifs = {
      ...(kp.status?.vifs ?? {}),
      // The primitive is plain JSON; the schema types `vif` as an open object.
      [ifname]: {
        default: ifname === DEFAULT_IFNAME,
        vif: vifPrimitive(vif) as unknown as Record<string, unknown>,
      },
    };
    // The resourceVersion read goes with it: a concurrent writer makes this a 409, never a lost VIF.
    return this.mgr.api.update(kuryrKinds.KuryrPort, { ...kp, status: { vifs } }, { signal });
  }
}

function ignoreNotFound(err: unknown): undefined {
  if (isKubeNotFound(err)) return undefined;
  throw err;
}
