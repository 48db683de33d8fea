/**
 * The machine-drain-controller of the machine-api-operator (`pkg/controller/machine/drain_controller.go`),
 * for clusters where no machine-api-operator runs (`--act-as-machine-api-operator`). It drains the
 * Node of a Machine being deleted (deletionTimestamp set and phase `Deleting`, which the machine
 * controller writes) before the machine controller deletes the instance, and says so in
 * the Machine's conditions:
 *
 * - `Drainable`: False (reason HookPresent, naming the hooks) while `spec.lifecycleHooks.preDrain`
 *   has any, True otherwise;
 * - `Drained`: True once the Node is drained, or at once when the Machine has the annotation
 *   `machine.openshift.io/exclude-node-draining` or no `status.nodeRef` (the drain is skipped, as
 *   upstream, hooks or not); False with the progress or the problem meanwhile.
 *
 * A drain cordons the Node and evicts its pods through `pods/eviction` (drain-pods.ts says which),
 * so PodDisruptionBudgets hold. A pod a budget protects (429) fails the attempt: `Drained=False`
 * naming the pod, an Event, and the queue backs off per Machine from 5 s to 1000 s (upstream's
 * drain rate limiter; upstream also retries each eviction every 5 s for up to 20 s inside the
 * call, which here is the back-off instead, so no worker waits). Evicted pods that are still
 * terminating are looked at again after `podDeletionPollMs`. On an unreachable Node (Ready
 * Unknown) pods are evicted with a 1 s grace period and their deletion is not waited for. A control
 * plane Node is drained only when no other control plane Node is cordoned (upstream's
 * `isDrainAllowed`); else, and when the cordon fails, it looks again after 20 s.
 *
 * Events (reason, action Drain) are upstream's: DrainBlocked, DrainSkipped, DrainProceeds,
 * DrainRequeued, DrainSucceeded.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import {
  BucketRateLimiter,
  clone,
  fieldsChanged,
  isNotFound,
  isTooManyRequests,
  ItemExponentialFailureRateLimiter,
  kinds,
  MaxOfRateLimiter,
  mergePatch,
  patchStatus,
  RetryAfterError,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import {
  Annotations,
  MachineConditions,
  mapoKinds,
  type Condition,
  type LifecycleHook,
  type Machine,
} from '../api/index.ts';
import { getMachineCondition, setMachineCondition, type MachineConditionInput } from '../conditions.ts';
import { isNodeUnreachable, podName, podsToEvict } from './drain-pods.ts';

export const DRAIN_CONTROLLER = 'machine-drain';

export const DRAINABLE = MachineConditions.Drainable;
export const DRAINED = MachineConditions.Drained;

export const DrainReasons = {
  /** Drainable=False: preDrain hooks (openshift/api MachineHookPresent). */
  HookPresent: 'HookPresent',
  NoPreDrainHooks: 'NoPreDrainHooks',
  /** Drained=False: a failed attempt (openshift/api MachineDrainError). */
  DrainError: 'MachineDrainError',
  /** Drained=False: evicted pods still terminating. */
  Draining: 'Draining',
  DrainFinished: 'DrainFinished',
  DrainSkipped: 'DrainSkipped',
} as const;

export const DrainEventReasons = {
  DrainBlocked: 'DrainBlocked',
  DrainSkipped: 'DrainSkipped',
  DrainProceeds: 'DrainProceeds',
  DrainRequeued: 'DrainRequeued',
  DrainSucceeded: 'DrainSucceeded',
} as const;

const NODE_CONTROL_PLANE_LABEL = 'node-role.kubernetes.io/control-plane';
const NODE_MASTER_LABEL = 'node-role.kubernetes.io/master';

/** Upstream's waits: a failed cordon, another control plane Node draining. */
export const DRAIN_REQUEUE_MS = 20_000;
/** An unreachable Node's pods: evicted with this grace, and not waited for once it passed. */
const UNREACHABLE_GRACE_SECONDS = 1;
const EVICTIONS_AT_ONCE = 10;

export interface DrainControllerOptions {
  workers?: number;
  /** Back-off of a failed drain per Machine (upstream: 5 s to 1000 s). */
  backoff?: { baseMs: number; maxMs: number };
  /** How soon to look again while evicted pods terminate (default 5 s). */
  podDeletionPollMs?: number;
  /** The fixed waits after a failed cordon or while another control plane Node drains (20 s). */
  requeueMs?: number;
}

/** A drain attempt that evicted what it could; the rest is named. Retried with back-off. */
export class DrainBlockedError extends Error {
  override readonly name = 'DrainBlockedError';
  readonly node: string;
  readonly pods: readonly string[];

  constructor(node: string, blocked: readonly { pod: string; message: string }[]) {
    super(
      `could not drain Node ${node}: ${blocked.map((b) => `cannot evict pod ${b.pod}: ${b.message}`).join('; ')}`,
    );
    this.node = node;
    this.pods = blocked.map((b) => b.pod);
  }
}

export function registerDrainController(mgr: Manager, opts: DrainControllerOptions = {}): void {
  const reconciler = new DrainReconciler(mgr, opts);
  const backoff = opts.backoff ?? { baseMs: 5_000, maxMs: 1_000_000 };
  mgr
    .controller(DRAIN_CONTROLLER)
    .for(mapoKinds.Machine, { predicates: [deleting, drainInputsChanged] })
    .withOptions({
      maxConcurrentReconciles: opts.workers ?? 1,
      rateLimiter: new MaxOfRateLimiter<string>(
        new ItemExponentialFailureRateLimiter<string>(backoff.baseMs, backoff.maxMs),
        new BucketRateLimiter<string>(10, 100, mgr.clock),
      ),
    })
    .complete((req, signal, ctx) => reconciler.reconcile(req, signal, ctx));
}

/** Only Machines being deleted are drained. */
const deleting = {
  create: (m: Machine) => !!m.metadata?.deletionTimestamp,
  update: (_old: Machine, m: Machine) => !!m.metadata?.deletionTimestamp,
  delete: () => false,
};

/** What the drain depends on; its own condition writes are not among them. */
const drainInputsChanged = fieldsChanged<Machine>((m) => [
  m.metadata?.deletionTimestamp ?? null,
  m.status?.phase ?? null,
  m.status?.nodeRef ?? null,
  m.spec?.lifecycleHooks?.preDrain ?? [],
  m.metadata?.annotations?.[Annotations.ExcludeNodeDraining] ?? null,
]);

export class DrainReconciler {
  private readonly mgr: Manager;
  private readonly pollMs: number;
  private readonly requeueMs: number;

  constructor(mgr: Manager, opts: DrainControllerOptions = {}) {
    this.mgr = mgr;
    this.pollMs = opts.podDeletionPollMs ?? 5_000;
    this.requeueMs = opts.requeueMs ?? DRAIN_REQUEUE_MS;
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const machine = await this.mgr.client.get(mapoKinds.Machine, req, { signal });
    if (!machine?.metadata?.deletionTimestamp || machine.status?.phase !== 'Deleting') return {};
    if (getMachineCondition(machine.status?.conditions, DRAINED)?.status === 'True') return {};
    const report = new Report(this.mgr, machine);
    try {
      return await this.drain(machine, report, signal, ctx);
    } finally {
      await report.write(signal);
    }
  }

  private async drain(
    machine: Machine,
    report: Report,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    const hooks = machine.spec?.lifecycleHooks?.preDrain ?? [];
    report.set(
      hooks.length > 0
        ? {
            type: DRAINABLE,
            status: 'False',
            reason: DrainReasons.HookPresent,
            severity: 'Warning',
            message: `Drain operation currently blocked by: ${describeHooks(hooks)}`,
          }
        : { type: DRAINABLE, status: 'True', reason: DrainReasons.NoPreDrainHooks },
    );
    const excluded = machine.metadata?.annotations?.[Annotations.ExcludeNodeDraining] !== undefined;
    const nodeName = machine.status?.nodeRef?.name;
    if (excluded || !nodeName) {
      const why = excluded ? `annotation ${Annotations.ExcludeNodeDraining}` : 'the Machine has no Node';
      report.set({
        type: DRAINED,
        status: 'True',
        reason: DrainReasons.DrainSkipped,
        message: `Node drain skipped: ${why}`,
      });
      report.event('Normal', DrainEventReasons.DrainSkipped, `Node drain skipped: ${why}`);
      return {};
    }
    if (hooks.length > 0) {
      // The hook's removal is a spec change: it wakes this controller.
      if (report.changed(DRAINABLE)) {
        report.event(
          'Normal',
          DrainEventReasons.DrainBlocked,
          `Drain blocked by pre-drain hook: ${describeHooks(hooks)}`,
        );
      }
      ctx.log.info({ hooks: hooks.map((h) => h.name) }, 'not draining: blocked by pre-drain hooks');
      return {};
    }

    const node = await this.mgr.client.get(kinds.Node, { name: nodeName }, { signal });
    if (!node) {
      // An administrator deleted it: nothing is left to drain.
      report.set({
        type: DRAINED,
        status: 'True',
        reason: DrainReasons.DrainFinished,
        message: `Node ${nodeName} not found: it may have been deleted already`,
      });
      return {};
    }
    const wait = await this.controlPlaneWait(node, signal);
    if (wait) return this.requeue(report, wait);
    if (getMachineCondition(machine.status?.conditions, DRAINED)?.reason !== DrainReasons.Draining) {
      report.event('Normal', DrainEventReasons.DrainProceeds, 'Node drain proceeds');
    }
    if (!node.spec?.unschedulable) {
      try {
        await mergePatch(
          this.mgr.api,
          kinds.Node,
          node,
          { ...node, spec: { ...node.spec, unschedulable: true } },
          { signal },
        );
      } catch (err) {
        if (isNotFound(err)) throw err;
        ctx.log.warn({ node: nodeName, err }, 'cordon failed');
        return this.requeue(report, `cordon failed for Node ${nodeName}: ${messageOf(err)}`);
      }
    }

    const unreachable = isNodeUnreachable(node);
    const selection = podsToEvict(await this.podsOn(nodeName, signal), {
      skipWaitForDeleteSeconds: unreachable ? UNREACHABLE_GRACE_SECONDS : 0,
      nowMs: this.mgr.clock.now(),
    });
    const blocked = await this.evict(
      selection.evict.filter((p) => !p.metadata?.deletionTimestamp),
      unreachable,
      signal,
    );
    if (blocked.length > 0) {
      const err = new DrainBlockedError(nodeName, blocked);
      report.set({
        type: DRAINED,
        status: 'False',
        reason: DrainReasons.DrainError,
        severity: 'Warning',
        message: `could not drain machine: ${err.message}`,
      });
      report.event('Normal', DrainEventReasons.DrainRequeued, `Node drain requeued: ${err.message}`);
      throw err;
    }

    // No kubelet will confirm the pods of an unreachable Node gone: upstream does not wait for them.
    const waiting = unreachable
      ? []
      : podsToEvict(await this.podsOn(nodeName, signal), {
          skipWaitForDeleteSeconds: 0,
          nowMs: this.mgr.clock.now(),
        }).evict;
    if (waiting.length > 0) {
      report.set({
        type: DRAINED,
        status: 'False',
        reason: DrainReasons.Draining,
        severity: 'Info',
        message: `Node ${nodeName} cordoned; waiting for ${waiting.length} evicted pod(s) to terminate: ${waiting.map(podName).join(', ')}`,
      });
      return { requeueAfterMs: this.pollMs };
    }
    report.set({
      type: DRAINED,
      status: 'True',
      reason: DrainReasons.DrainFinished,
      message: 'Drain finished successfully',
    });
    report.event(
      'Normal',
      DrainEventReasons.DrainSucceeded,
      `Node drain succeeded: Node ${nodeName} drained`,
    );
    ctx.log.info({ node: nodeName, skipped: selection.skipped.length }, 'Node drained');
    return {};
  }

  /** Upstream's isDrainAllowed: one control plane Node at a time. */
  private async controlPlaneWait(node: V1Node, signal: AbortSignal): Promise<string | undefined> {
    if (node.spec?.unschedulable || !isControlPlane(node)) return undefined;
    const others = await this.mgr.client.list(kinds.Node, { signal });
    const draining = others.find(
      (o) => o.metadata?.name !== node.metadata?.name && isControlPlane(o) && o.spec?.unschedulable,
    );
    return draining
      ? `drain not permitted: found other control plane node (${draining.metadata?.name ?? ''}) already cordoned; waiting until it is removed`
      : undefined;
  }

  private requeue(report: Report, why: string): never {
    report.set({
      type: DRAINED,
      status: 'False',
      reason: DrainReasons.DrainError,
      severity: 'Warning',
      message: why,
    });
    report.event('Normal', DrainEventReasons.DrainRequeued, `Node drain requeued: ${why}`);
    throw new RetryAfterError(why, this.requeueMs);
  }

  /** The Node's pods, from the API server: pods are not cached (a cluster's worth of them). */
  private async podsOn(node: string, signal: AbortSignal): Promise<V1Pod[]> {
    const page = await this.mgr.api.listAll(kinds.Pod, { fieldSelector: `spec.nodeName=${node}`, signal });
    return page.items;
  }

  /** Evicts `pods`, a few at a time; resolves to those a disruption budget kept. */
  private async evict(
    pods: readonly V1Pod[],
    unreachable: boolean,
    signal: AbortSignal,
  ): Promise<{ pod: string; message: string }[]> {
    const blocked: { pod: string; message: string }[] = [];
    for (let i = 0; i < pods.length; i += EVICTIONS_AT_ONCE) {
      await Promise.all(
        pods.slice(i, i + EVICTIONS_AT_ONCE).map(async (pod) => {
          const namespace = pod.metadata?.namespace ?? '';
          const name = pod.metadata?.name ?? '';
          const eviction = {
            apiVersion: 'policy/v1',
            kind: 'Eviction',
            metadata: { name, namespace },
            ...(unreachable ? { deleteOptions: { gracePeriodSeconds: UNREACHABLE_GRACE_SECONDS } } : {}),
          };
          try {
            await this.mgr.api.createSubresource(kinds.Pod, { namespace, name }, 'eviction', eviction, {
              signal,
            });
          } catch (err) {
            if (isNotFound(err)) return;
            if (isTooManyRequests(err)) blocked.push({ pod: podName(pod), message: messageOf(err) });
            else throw err;
          }
        }),
      );
    }
    return blocked;
  }
}

/** Conditions and Events of one reconcile, written once at its end. */
class Report {
  private readonly mgr: Manager;
  private readonly machine: Machine;
  private readonly draft: Machine;
  private readonly conditions: Condition[];
  private readonly changes = new Set<string>();

  constructor(mgr: Manager, machine: Machine) {
    this.mgr = mgr;
    this.machine = machine;
    this.draft = clone(machine);
    this.conditions = [...(this.draft.status?.conditions ?? [])];
  }

  set(input: MachineConditionInput): void {
    if (setMachineCondition(this.conditions, input, this.mgr.clock.now())) this.changes.add(input.type);
  }

  changed(type: string): boolean {
    return this.changes.has(type);
  }

  event(type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.mgr.events.event(this.machine, type, reason, message, 'Drain');
  }

  async write(signal: AbortSignal): Promise<void> {
    if (this.changes.size === 0) return;
    this.draft.status = { ...this.draft.status, conditions: this.conditions };
    try {
      // The list is replaced whole: the lock keeps the machine controller's conditions.
      await patchStatus(this.mgr.api, mapoKinds.Machine, this.machine, this.draft, {
        signal,
        optimisticLock: true,
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

function describeHooks(hooks: readonly LifecycleHook[]): string {
  return hooks.map((h) => `${h.name} (owner ${h.owner})`).join(', ');
}

function isControlPlane(node: V1Node): boolean {
  const labels = node.metadata?.labels ?? {};
  return NODE_CONTROL_PLANE_LABEL in labels || NODE_MASTER_LABEL in labels;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
