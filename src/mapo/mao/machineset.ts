/**
 * The MachineSet controller of the machine-api-operator (`pkg/controller/machineset/controller.go`),
 * for clusters where no machine-api-operator runs (`shiftstack mapo --act-as-machine-api-operator`):
 *
 * - counts the Machines of its namespace that match `spec.selector`, are not being deleted and
 *   are controlled by this set or by nothing; one controlled by nothing is adopted (a controller
 *   ownerReference added, guarded by its resourceVersion);
 * - creates the missing ones from `spec.template` (generateName `<set>-`, the template's labels
 *   and annotations, its spec as is: `providerSpec.value` goes over unchanged) and deletes the
 *   surplus in the order of `spec.deletePolicy` (delete-policy.ts);
 * - writes the status (machineset-status.ts) and, with `minReadySeconds`, looks again when the
 *   next Ready Machine becomes available.
 *
 * Beyond upstream: at most `burstReplicas` creates or deletes per reconcile (the ReplicaSet
 * controller's 500; upstream has none), sent in slow-start batches (1, 2, 4, …) that stop at the
 * first failure, so a quota error costs one failed create, not hundreds; and expectations
 * (expectations.ts) instead of upstream's 10-second poll of the cache after each write, so a
 * cache that lags never creates a Machine twice and no worker waits.
 *
 * With `status.authoritativeAPI` ClusterAPI or Migrating the set is Paused (condition `Paused`,
 * reason AuthoritativeAPINotMachineAPI) and left alone, as upstream's MachineAPIMigration gate.
 */
import type { V1Node } from '@kubernetes/client-node';
import {
  clone,
  getControllerOf,
  isNotFound,
  isControlledBy,
  keyString,
  kinds,
  matchesLabelSelector,
  mergePatch,
  NAMESPACE_INDEX,
  ownerReference,
  patchStatus,
  specOrMetadataChanged,
  TerminalError,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import {
  MACHINE_API_VERSION,
  MachineConditions,
  mapoKinds,
  type Machine,
  type MachineSet,
} from '../api/index.ts';
import { pausedCondition, setMachineCondition } from '../conditions.ts';
import { deletePriorityFunc, machinesToDelete, unknownDeletePolicy } from './delete-policy.ts';
import { Expectations } from './expectations.ts';
import { machineSetStatus } from './machineset-status.ts';

export const MACHINESET_CONTROLLER = 'machineset';

/** The ReplicaSet controller's `BurstReplicas`. */
export const BURST_REPLICAS = 500;

export const MachineSetEventReasons = {
  /** Upstream's, for any failed reconcile. */
  ReconcileError: 'ReconcileError',
  /** The ReplicaSet controller's. */
  SuccessfulCreate: 'SuccessfulCreate',
  SuccessfulDelete: 'SuccessfulDelete',
  FailedCreate: 'FailedCreate',
  FailedDelete: 'FailedDelete',
} as const;

export interface MachineSetControllerOptions {
  workers?: number;
  /** Creates or deletes per reconcile. */
  burstReplicas?: number;
  /** How long unobserved creates and deletes hold scaling back (5 minutes). */
  expectationsTtlMs?: number;
}

export function registerMachineSetController(mgr: Manager, opts: MachineSetControllerOptions = {}): void {
  const sets = mgr.informers.informerFor(mapoKinds.MachineSet);
  const reconciler = new MachineSetReconciler(mgr, opts);
  mgr
    .controller(MACHINESET_CONTROLLER)
    // Its own status writes are not news; /scale and spec edits bump the generation.
    .for(mapoKinds.MachineSet, { predicates: [specOrMetadataChanged()] })
    .owns(mapoKinds.Machine)
    // An orphan that matches a set's selector: adopted by the sets of its namespace it matches.
    .watches(mapoKinds.Machine, (m) => {
      if (getControllerOf(m)) return [];
      return sets
        .byIndex(NAMESPACE_INDEX, m.metadata?.namespace ?? '')
        .filter((s) => s.spec?.selector && matchesLabelSelector(s.spec.selector, m.metadata?.labels))
        .map((s) => ({ namespace: s.metadata?.namespace ?? '', name: s.metadata?.name ?? '' }));
    })
    .withOptions({ maxConcurrentReconciles: opts.workers ?? 1 })
    .complete((req, signal, ctx) => reconciler.reconcile(req, signal, ctx));
}

export class MachineSetReconciler {
  private readonly mgr: Manager;
  private readonly burst: number;
  readonly expectations: Expectations;

  constructor(mgr: Manager, opts: MachineSetControllerOptions = {}) {
    this.mgr = mgr;
    this.burst = opts.burstReplicas ?? BURST_REPLICAS;
    this.expectations = new Expectations(mgr.clock, opts.expectationsTtlMs);
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const key = keyString(req);
    const ms = await this.mgr.client.get(mapoKinds.MachineSet, req, { signal });
    if (!ms) {
      this.expectations.forget(key);
      return {};
    }
    // Foreground deletion: the garbage collector takes the Machines.
    if (ms.metadata?.deletionTimestamp) return {};
    if (await this.pausedOrResumed(ms, signal, ctx)) return {};
    try {
      return await this.sync(ms, key, signal, ctx);
    } catch (err) {
      if (!isNotFound(err)) {
        const message = err instanceof Error ? err.message : String(err);
        this.mgr.events.event(ms, 'Warning', MachineSetEventReasons.ReconcileError, message);
      }
      throw err;
    }
  }

  private async sync(
    ms: MachineSet,
    key: string,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    const name = ms.metadata?.name ?? '';
    const selector = ms.spec?.selector ?? {};
    // Upstream refuses a selector that would never count the Machines the set creates.
    if (!matchesLabelSelector(selector, ms.spec?.template?.metadata?.labels)) {
      throw new TerminalError(
        `failed validation on MachineSet ${JSON.stringify(name)} label selector, cannot match any machines: spec.selector must match spec.template.metadata.labels`,
      );
    }
    const priority = deletePriorityFunc(ms.spec?.deletePolicy);
    if (!priority) throw new TerminalError(unknownDeletePolicy(String(ms.spec?.deletePolicy)));

    const namespace = ms.metadata?.namespace ?? '';
    const all = await this.mgr.client.list(mapoKinds.Machine, { namespace, signal });
    const counted: Machine[] = [];
    for (const m of all) {
      const controller = getControllerOf(m);
      if (controller && !isControlledBy(m, ms)) continue;
      if (m.metadata?.deletionTimestamp) continue;
      if (!matchesLabelSelector(selector, m.metadata?.labels)) continue;
      if (!controller) {
        const adopted = await this.adopt(ms, m, signal, ctx);
        if (!adopted) continue;
      }
      counted.push(m);
    }

    let result: Result = {};
    if (this.expectations.satisfied(key, all)) {
      await this.scale(ms, key, counted, priority, signal, ctx);
    } else {
      // The cache has not shown our last writes yet: acting on it could create twice.
      ctx.log.debug(
        { pending: this.expectations.describe(key) },
        'waiting for the cache to show our last writes',
      );
      result = { requeueAfterMs: this.expectations.expiresInMs(key) };
    }
    const now = this.mgr.clock.now();
    const nodes = new Map<string, V1Node | undefined>();
    for (const m of counted) {
      const ref = m.status?.nodeRef?.name;
      if (ref && !nodes.has(ref))
        nodes.set(ref, await this.mgr.client.get(kinds.Node, { name: ref }, { signal }));
    }
    const computed = machineSetStatus(
      ms,
      counted,
      (m) => (m.status?.nodeRef?.name ? nodes.get(m.status.nodeRef.name) : undefined),
      now,
    );
    const draft = clone(ms);
    draft.status = computed.status;
    await patchStatus(this.mgr.api, mapoKinds.MachineSet, ms, draft, { signal });
    if (computed.nextAvailableAtMs !== undefined) {
      const wait = Math.max(1, computed.nextAvailableAtMs - now + 1);
      result = { requeueAfterMs: Math.min(wait, result.requeueAfterMs ?? wait) };
    }
    return result;
  }

  /** Adds this set as the Machine's controller; false when the Machine changed or went meanwhile. */
  private async adopt(
    ms: MachineSet,
    m: Machine,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<boolean> {
    const draft = clone(m);
    draft.metadata = {
      ...draft.metadata,
      ownerReferences: [
        ...(draft.metadata?.ownerReferences ?? []),
        ownerReference(setWithKind(ms), { controller: true, blockOwnerDeletion: true }),
      ],
    };
    try {
      await mergePatch(this.mgr.api, mapoKinds.Machine, m, draft, { signal, optimisticLock: true });
      ctx.log.info({ machine: m.metadata?.name }, 'adopted an orphaned Machine');
      return true;
    } catch (err) {
      ctx.log.warn({ machine: m.metadata?.name, err }, 'could not adopt the Machine; looking again later');
      return false;
    }
  }

  private async scale(
    ms: MachineSet,
    key: string,
    machines: readonly Machine[],
    priority: NonNullable<ReturnType<typeof deletePriorityFunc>>,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<void> {
    const replicas = ms.spec?.replicas ?? 1;
    const diff = machines.length - replicas;
    if (diff < 0) {
      const count = Math.min(-diff, this.burst);
      ctx.log.info({ replicas, current: machines.length, creating: count }, 'too few replicas');
      await slowStart(count, signal, async () => {
        const created = await this.create(ms, signal);
        const name = created.metadata?.name ?? '';
        this.expectations.expectCreation(key, name);
        this.mgr.events.event(
          ms,
          'Normal',
          MachineSetEventReasons.SuccessfulCreate,
          `Created machine: ${name}`,
        );
      }).catch((err: unknown) => {
        const message = err instanceof Error ? err.message : String(err);
        this.mgr.events.event(
          ms,
          'Warning',
          MachineSetEventReasons.FailedCreate,
          `Error creating: ${message}`,
        );
        throw err;
      });
    } else if (diff > 0) {
      const count = Math.min(diff, this.burst);
      const victims = machinesToDelete(machines, count, priority, this.mgr.clock.now());
      ctx.log.info(
        { replicas, current: machines.length, deleting: victims.map((m) => m.metadata?.name) },
        'too many replicas',
      );
      await slowStart(victims.length, signal, async (i) => {
        const m = victims[i] as Machine;
        const machineName = m.metadata?.name ?? '';
        try {
          await this.mgr.api.delete(
            mapoKinds.Machine,
            { namespace: m.metadata?.namespace ?? '', name: machineName },
            {
              signal,
              preconditions: { uid: m.metadata?.uid ?? '' },
            },
          );
        } catch (err) {
          if (!isNotFound(err)) {
            const message = err instanceof Error ? err.message : String(err);
            this.mgr.events.event(
              ms,
              'Warning',
              MachineSetEventReasons.FailedDelete,
              `Error deleting: ${message}`,
            );
            throw err;
          }
        }
        this.expectations.expectDeletion(key, m.metadata?.uid ?? '');
        this.mgr.events.event(
          ms,
          'Normal',
          MachineSetEventReasons.SuccessfulDelete,
          `Deleted machine: ${machineName}`,
        );
      });
    }
  }

  /** upstream's createMachine: the template as it is, owned by the set. */
  private create(ms: MachineSet, signal: AbortSignal): Promise<Machine> {
    const template = ms.spec?.template ?? {};
    const machine: Machine = {
      apiVersion: MACHINE_API_VERSION,
      kind: 'Machine',
      metadata: {
        generateName: `${ms.metadata?.name ?? ''}-`,
        namespace: ms.metadata?.namespace ?? '',
        ...(template.metadata?.labels ? { labels: { ...template.metadata.labels } } : {}),
        ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
        ownerReferences: [ownerReference(setWithKind(ms), { controller: true, blockOwnerDeletion: true })],
      },
      spec: clone(template.spec ?? {}),
    };
    return this.mgr.api.create(mapoKinds.Machine, machine, { signal });
  }

  /**
   * Upstream's MachineAPIMigration gate: Paused=True and nothing else while another API is
   * authoritative; Paused=False once the field is set (or the set was ever paused). True when paused.
   */
  private async pausedOrResumed(
    ms: MachineSet,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<boolean> {
    const authority = ms.status?.authoritativeAPI;
    const paused = authority === 'ClusterAPI' || authority === 'Migrating';
    const wasPaused = ms.status?.conditions?.some((c) => c.type === MachineConditions.Paused) ?? false;
    if (!paused && authority === undefined && !wasPaused) return false;
    const draft = clone(ms);
    const conditions = draft.status?.conditions ? [...draft.status.conditions] : [];
    setMachineCondition(conditions, pausedCondition(paused ? authority : 'MachineAPI'), this.mgr.clock.now());
    draft.status = { ...draft.status, conditions };
    await patchStatus(this.mgr.api, mapoKinds.MachineSet, ms, draft, { signal });
    if (paused) ctx.log.info({ authoritativeAPI: authority }, 'paused: another API is authoritative');
    return paused;
  }
}

/** Cached objects of a CRD kind carry apiVersion and kind; an ownerReference needs both. */
function setWithKind(ms: MachineSet): MachineSet {
  return { ...ms, apiVersion: MACHINE_API_VERSION, kind: 'MachineSet' };
}

/**
 * The ReplicaSet controller's slowStartBatch: `count` calls in batches of 1, 2, 4, …, each batch
 * at once, stopping after the first batch with a failure (its first error is thrown). Calls of a
 * failed batch that succeeded still count.
 */
export async function slowStart(
  count: number,
  signal: AbortSignal,
  fn: (index: number) => Promise<void>,
): Promise<number> {
  let done = 0;
  for (let batch = 1; done < count; batch *= 2) {
    signal.throwIfAborted();
    const size = Math.min(batch, count - done);
    const results = await Promise.allSettled(Array.from({ length: size }, (_, i) => fn(done + i)));
    done += size;
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
  return done;
}
