/**
 * Who owns the cloud loops, the OpenShift way (cluster-kube-controller-manager-operator and
 * cluster-cloud-controller-manager-operator, 4.12 to 4.15): the condition `CloudControllerOwner` on
 * the KubeControllerManager `cluster` (operator.openshift.io/v1). While it is not False,
 * kube-controller-manager's in-tree provider owns them; once KCM runs with
 * `--cloud-provider=external`, its operator sets it False, and only then does the CCM operator
 * deploy a cloud controller manager (and say so with `CloudControllerOwner=True` on its
 * ClusterOperator `cloud-controller-manager`).
 *
 * The stand-in is KCM and its operator in one process, so this runnable plays the operator's part
 * (on the leader, under the main Lease) and the gate is KCM's: the cloud loops act only while it is
 * open. Objects are read unstructured: the stand-in needs a group, a kind and one condition, not the
 * operator's API. Where there is no KubeControllerManager `cluster` (plain Kubernetes, or its CRD
 * not installed), the in-tree provider owns the loops, as upstream.
 *
 * - `--cloud-provider=external`, or the annotation `shiftstack.io/cloud-provider: external` on the
 *   KubeControllerManager (KCMO's decision, standing in for the Infrastructure and FeatureGate it
 *   reads): the gate closes, work in flight stops, then the condition goes False.
 * - No annotation: the condition decides; False closes the gate (whoever set it), anything else
 *   opens it.
 * - `shiftstack.io/cloud-provider: openstack` while it is False (going back, which upstream never
 *   did): the loops resume only once no ClusterOperator `cloud-controller-manager` claims
 *   `CloudControllerOwner=True`; the condition goes True, then the gate opens.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Clock } from '../../lib/clock.ts';
import type { Logger } from '../../lib/log.ts';
import {
  errorSummary,
  getCondition,
  isNotFound,
  setCondition,
  type Condition,
  type KubeClient,
  type ResourceType,
  type Runnable,
} from '../../kube/index.ts';

export const CLOUD_CONTROLLER_OWNER = 'CloudControllerOwner';
/** The stand-in's switch on the KubeControllerManager: `external`, or `openstack` to take the loops back. */
export const CLOUD_PROVIDER_ANNOTATION = 'shiftstack.io/cloud-provider';
/** The runnable's name: not a controller a LeaderMigrationConfiguration migrates, so it runs under the main Lease. */
export const CLOUD_OWNER_RUNNABLE = 'kube-controller-manager-operator';

/** What the handshake reads of either kind: a status with conditions (the spec is the operators'). */
export interface OperatorObject extends KubernetesObject {
  spec?: Record<string, unknown>;
  status?: { conditions?: Condition[] };
}

export const KUBE_CONTROLLER_MANAGER: ResourceType<OperatorObject> = Object.freeze({
  apiVersion: 'operator.openshift.io/v1',
  kind: 'KubeControllerManager',
  plural: 'kubecontrollermanagers',
  namespaced: false,
});
export const CLUSTER_OPERATOR: ResourceType<OperatorObject> = Object.freeze({
  apiVersion: 'config.openshift.io/v1',
  kind: 'ClusterOperator',
  plural: 'clusteroperators',
  namespaced: false,
});
const CLUSTER = { name: 'cluster' };
const CCM_OPERATOR = { name: 'cloud-controller-manager' };

/**
 * KCM's side: the cloud loops run their work through `run`, which skips it while closed and hands
 * it a signal that aborts when the gate closes, so a long in-tree sync stops between two calls.
 */
export class CloudLoopsGate {
  private isOpen = false;
  private stop = new AbortController();
  private inFlight = 0;
  private drained: (() => void)[] = [];
  private readonly opened = new Set<() => void>();

  get open(): boolean {
    return this.isOpen;
  }

  /** `fn` when open (undefined otherwise), with a signal that aborts on close as well as with `signal`. */
  async run<T>(signal: AbortSignal, fn: (signal: AbortSignal) => Promise<T>): Promise<T | undefined> {
    if (!this.isOpen) return undefined;
    this.inFlight++;
    try {
      return await fn(AbortSignal.any([signal, this.stop.signal]));
    } finally {
      if (--this.inFlight === 0) for (const done of this.drained.splice(0)) done();
    }
  }

  /** Called each time the gate opens: a loop re-queues what it skipped. Returns the remover. */
  onOpen(fn: () => void): () => void {
    this.opened.add(fn);
    return () => this.opened.delete(fn);
  }

  openGate(): void {
    if (this.isOpen) return;
    this.isOpen = true;
    this.stop = new AbortController();
    for (const fn of this.opened) fn();
  }

  /** Closes, aborts work in flight, and resolves once none is left. */
  async close(): Promise<void> {
    if (this.isOpen) {
      this.isOpen = false;
      this.stop.abort(new Error('the cloud loops are handed over: kube-controller-manager stops them'));
    }
    if (this.inFlight === 0) return;
    await new Promise<void>((resolve) => this.drained.push(resolve));
  }
}

export interface CloudOwnershipOptions {
  api: KubeClient;
  gate: CloudLoopsGate;
  /** `--cloud-provider=external`: the loops never run, and the condition says so. */
  external: boolean;
  /** How often the objects are read again (upstream's operators watch; a poll keeps this small). */
  pollMs: number;
  clock: Clock;
  log: Logger;
}

type Decision = 'external' | 'run' | 'wait';

/** KCMO's part: keeps the gate and the condition in step with what is asked. */
export class CloudOwnership implements Runnable {
  readonly name = CLOUD_OWNER_RUNNABLE;
  private readonly opts: CloudOwnershipOptions;
  private said: string | undefined;

  constructor(opts: CloudOwnershipOptions) {
    this.opts = opts;
  }

  async start(signal: AbortSignal): Promise<void> {
    const { clock, pollMs, log } = this.opts;
    let delay = pollMs;
    while (!signal.aborted) {
      try {
        await this.tick(signal);
        delay = pollMs;
      } catch (err) {
        if (signal.aborted) break;
        // Kept as it is until the API answers again; the back-off is capped at 30 s.
        log.warn({ err: errorSummary(err) }, 'cannot read who owns the cloud loops; trying again');
        delay = Math.min(delay * 2, Math.max(pollMs, 30_000));
      }
      await clock.sleep(delay, signal).catch(() => undefined);
    }
    // Not leading any more: the loops stop with it.
    await this.opts.gate.close();
  }

  /** One look at the objects. */
  private async tick(signal: AbortSignal): Promise<void> {
    const { api, gate } = this.opts;
    const kcm = await get(api, KUBE_CONTROLLER_MANAGER, CLUSTER, signal);
    const decision = await this.decide(kcm, signal);
    if (decision === 'external') {
      await gate.close();
      if (kcm) await this.setOwner(kcm, 'False', signal);
      this.say('kube-controller-manager runs external: its cloud loops are stopped');
      return;
    }
    if (decision === 'wait') {
      await gate.close();
      this.say(
        'the cloud loops were handed to a cloud controller manager; taking them back once its ClusterOperator no longer claims CloudControllerOwner',
      );
      return;
    }
    if (kcm && getCondition(kcm.status?.conditions, CLOUD_CONTROLLER_OWNER)?.status === 'False')
      await this.setOwner(kcm, 'True', signal);
    gate.openGate();
    this.say('kube-controller-manager owns the cloud loops');
  }

  private async decide(kcm: OperatorObject | undefined, signal: AbortSignal): Promise<Decision> {
    if (this.opts.external) return 'external';
    if (!kcm) return 'run';
    const asked = kcm.metadata?.annotations?.[CLOUD_PROVIDER_ANNOTATION];
    if (asked === 'external') return 'external';
    const owner = getCondition(kcm.status?.conditions, CLOUD_CONTROLLER_OWNER)?.status;
    if (owner !== 'False') return 'run';
    if (asked !== 'openstack') return 'wait';
    const co = await get(this.opts.api, CLUSTER_OPERATOR, CCM_OPERATOR, signal);
    const claimed = getCondition(co?.status?.conditions, CLOUD_CONTROLLER_OWNER)?.status === 'True';
    return claimed ? 'wait' : 'run';
  }

  private async setOwner(kcm: OperatorObject, status: 'True' | 'False', signal: AbortSignal): Promise<void> {
    const conditions = [...(kcm.status?.conditions ?? [])].map((c) => ({ ...c }));
    const changed = setCondition(
      conditions,
      status === 'False'
        ? {
            type: CLOUD_CONTROLLER_OWNER,
            status,
            reason: 'ExternalCloudProvider',
            message: 'kube-controller-manager runs no cloud loop: a cloud controller manager may take them',
          }
        : {
            type: CLOUD_CONTROLLER_OWNER,
            status,
            reason: 'InTreeCloudProvider',
            message: "kube-controller-manager runs the in-tree provider's cloud loops",
          },
      this.opts.clock.now(),
    );
    if (!changed) return;
    // A PUT with the read resourceVersion: a concurrent writer makes it a 409, and the next tick retries.
    await this.opts.api.updateStatus(
      KUBE_CONTROLLER_MANAGER,
      { ...kcm, status: { ...kcm.status, conditions } },
      { signal },
    );
  }

  private say(text: string): void {
    if (this.said === text) return;
    this.said = text;
    this.opts.log.info(text);
  }
}

async function get(
  api: KubeClient,
  type: ResourceType<OperatorObject>,
  key: { name: string },
  signal: AbortSignal,
): Promise<OperatorObject | undefined> {
  try {
    return await api.get(type, key, { signal });
  } catch (err) {
    // No object, or no such kind at all (the CRD is not installed): nobody asks anything.
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
