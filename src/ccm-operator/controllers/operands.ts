/**
 * The operands controller (upstream CCCMO's CloudOperatorReconciler): renders the platform's cloud
 * controller manager from the Infrastructure, Proxy, FeatureGate and images, applies every object
 * server-side with the operator's field manager, removes what it applied before and no longer
 * renders, and reports the operator's ClusterOperator conditions.
 *
 * In order, each step stopping the reconcile when it says so:
 *  1. no Infrastructure, no platformStatus, or a platform without a CCM (None, External, …):
 *     nothing is deployed (what was is removed), Available;
 *  2. the in-tree handshake (gate.ts): while kube-controller-manager runs the cloud loops, nothing
 *     is deployed and what was is removed — the hand-back — then CloudControllerOwner=False;
 *  3. the sync controllers must have synced (their Available True); one Degraded makes the
 *     operator Degraded and Upgradeable=False, and the operands stay as they are;
 *  4. render, apply (each workload's pod template carries the hash of the synced ConfigMaps it
 *     mounts, so a new cloud-conf rolls the CCM), prune, then Progressing until the workloads
 *     have rolled out, Available and CloudControllerOwner=True after.
 *
 * Every applied object is watched (label-selected informers of the operand kinds): an edit or a
 * delete is put right by the next apply. A problem the user must fix (images, a render error)
 * degrades at once with an Event; other failures are retried and degrade only after the
 * aggregated threshold.
 */
import type { V1ConfigMap } from '@kubernetes/client-node';
import {
  isNotFound,
  kinds,
  type KubernetesObject,
  type Manager,
  type Request,
  type Result,
} from '../../kube/index.ts';
import {
  CLOUD_CONF_NAME,
  CLUSTER,
  CLUSTER_OPERATOR_NAME,
  CONFIG_GROUP,
  Conditions,
  EventReasons,
  IMAGES_CONFIGMAP,
  TRUSTED_CA_NAME,
  operatorKinds,
  type ClusterOperator,
  type RelatedObject,
} from '../api/index.ts';
import { cloudLoopsOwner } from '../gate.ts';
import { ConfigError } from '../../lib/config.ts';
import {
  imagesFromConfigMap,
  readImagesFile,
  unknownImageKeysWarnings,
  type Images,
  type ImagesRead,
} from '../images.ts';
import { DEFAULT_IMAGES } from '../operands/images.ts';
import { withConfigHash } from '../inventory/config-hash.ts';
import {
  INVENTORY_SELECTOR,
  OPERAND_KINDS,
  describeObject,
  operandKind,
  objectId,
} from '../inventory/kinds.ts';
import { planPrune, stamp } from '../inventory/plan.ts';
import { rolloutOf } from '../inventory/rollout.ts';
import { operandPlatform, renderInput } from '../render-input.ts';
import { OPERATOR_FIELD_MANAGER, type OperatorSettings } from '../settings.ts';
import { findCondition } from '../status/conditions.ts';
import { AGGREGATED_TRANSIENT_DEGRADED_THRESHOLD_MS, FailureWindow } from '../status/failure-window.ts';
import { operatorStatus, type OperandsOutcome } from '../status/operator.ts';
import { ClusterOperatorReporter } from '../status/reporter.ts';

export const OPERANDS_CONTROLLER = 'cloud-operator';
/** How often a rollout in progress is looked at again (upstream: 30 s), besides the workloads' own events. */
export const PROGRESSING_REQUEUE_MS = 30_000;

const KEY: Request = { name: CLUSTER_OPERATOR_NAME };
const toKey = () => [KEY];
const INVENTORY = { labelSelector: INVENTORY_SELECTOR };

export interface OperandsControllerOptions {
  /** While a rollout is in progress, look again this often (default 30 s). */
  progressingRequeueMs?: number;
}

export function registerOperandsController(
  mgr: Manager,
  settings: OperatorSettings,
  opts: OperandsControllerOptions = {},
): void {
  const r = new OperandsReconciler(mgr, settings, opts.progressingRequeueMs ?? PROGRESSING_REQUEUE_MS);
  let b = mgr
    .controller(OPERANDS_CONTROLLER)
    .watches(operatorKinds.ClusterOperator, (co: ClusterOperator) =>
      co.metadata?.name === CLUSTER_OPERATOR_NAME ? [KEY] : [],
    )
    .watches(operatorKinds.Infrastructure, toKey)
    .watches(operatorKinds.Proxy, toKey)
    .watches(operatorKinds.FeatureGate, toKey)
    .watches(operatorKinds.KubeControllerManager, toKey)
    // The images ConfigMap, and the synced ConfigMaps whose hash the workloads carry.
    .watches(kinds.ConfigMap, toKey, { namespace: settings.operatorNamespace })
    .watches(kinds.ConfigMap, toKey, { namespace: settings.managedNamespace });
  // Drift: every applied object, by the inventory label.
  for (const kind of OPERAND_KINDS) b = b.watches(kind, toKey, INVENTORY);
  b.complete((_req, signal) => r.reconcile(signal));
}

/** Something the user must fix before the operands can be rendered; `about` gets the Event. */
class OperandProblem extends Error {
  override readonly name = 'OperandProblem';
  readonly about: KubernetesObject | undefined;
  constructor(message: string, about?: KubernetesObject) {
    super(message);
    this.about = about;
  }
}

class OperandsReconciler {
  private readonly mgr: Manager;
  private readonly settings: OperatorSettings;
  private readonly requeueMs: number;
  private readonly reporter: ClusterOperatorReporter;
  private readonly window: FailureWindow;
  /** The images' warnings last logged, so a reconcile repeats none. */
  private imageWarnings = '';

  constructor(mgr: Manager, settings: OperatorSettings, requeueMs: number) {
    this.mgr = mgr;
    this.settings = settings;
    this.requeueMs = requeueMs;
    this.reporter = new ClusterOperatorReporter({
      client: mgr.client,
      fieldManager: OPERATOR_FIELD_MANAGER,
      clock: mgr.clock,
    });
    this.window = new FailureWindow(mgr.clock, AGGREGATED_TRANSIENT_DEGRADED_THRESHOLD_MS);
  }

  async reconcile(signal: AbortSignal): Promise<Result> {
    let outcome: OperandsOutcome;
    try {
      outcome = await this.sync(signal);
      this.window.clear();
    } catch (err) {
      if (!(err instanceof OperandProblem)) {
        if (this.window.failed()) {
          await this.report(
            { state: 'degraded', why: `${errorText(err)} (failing for 150 s or more)` },
            signal,
          ).catch(() => undefined);
        }
        throw err;
      }
      this.window.clear();
      this.mgr.log.warn({ controller: OPERANDS_CONTROLLER }, err.message);
      const co = await this.reporter.get(signal);
      this.mgr.events.event(err.about ?? co, 'Warning', EventReasons.OperandFailed, err.message);
      outcome = { state: 'degraded', why: err.message };
    }
    await this.report(outcome, signal);
    // A rollout is also looked at on a timer, as upstream does.
    // After a change too: the controller's own writes do not wake it, and Progressing goes back to
    // False only on a look that finds nothing to write.
    return outcome.state === 'deployed' && (outcome.rollout.length > 0 || outcome.changed)
      ? { requeueAfterMs: this.requeueMs }
      : {};
  }

  private async report(outcome: OperandsOutcome, signal: AbortSignal): Promise<void> {
    const co = await this.reporter.get(signal);
    const before = findCondition(co.status?.conditions, Conditions.CloudControllerOwner)?.status;
    const status = operatorStatus(outcome, co, this.settings.releaseVersion);
    await this.reporter.report(
      {
        conditions: status.conditions,
        ...(status.versions ? { versions: status.versions } : {}),
        relatedObjects: this.relatedObjects(),
      },
      signal,
    );
    const after = status.conditions.find((c) => c.type === Conditions.CloudControllerOwner);
    if (after && after.status !== before && (after.status === 'True' || before === 'True')) {
      const message =
        after.status === 'True'
          ? "the cloud loops run in this operator's cloud controller manager"
          : `the cloud loops are handed back to kube-controller-manager: ${after.message ?? ''}`;
      this.mgr.events.event(co, 'Normal', EventReasons.CloudControllerOwnerChanged, message);
      this.mgr.log.info({ controller: OPERANDS_CONTROLLER }, message);
    }
  }

  /** Upstream's three (both namespaces, the ClusterOperator). */
  private relatedObjects(): RelatedObject[] {
    return [
      { group: '', resource: 'namespaces', name: this.settings.operatorNamespace },
      { group: CONFIG_GROUP, resource: 'clusteroperators', name: CLUSTER_OPERATOR_NAME },
      { group: '', resource: 'namespaces', name: this.settings.managedNamespace },
    ];
  }

  private async sync(signal: AbortSignal): Promise<OperandsOutcome> {
    const { mgr, settings } = this;
    const infra = await mgr.client.get(operatorKinds.Infrastructure, { name: CLUSTER }, { signal });
    const platform = operandPlatform(infra);
    if (!infra || !platform) {
      await this.prune([], signal);
      const type = infra?.status?.platformStatus?.type;
      const why = !infra
        ? 'there is no Infrastructure cluster'
        : type
          ? `platform ${type} has no cloud controller manager to deploy`
          : 'Infrastructure cluster has no status.platformStatus';
      return { state: 'idle', why };
    }

    const kcm = await mgr.client.get(operatorKinds.KubeControllerManager, { name: CLUSTER }, { signal });
    const loops = cloudLoopsOwner(kcm);
    if (loops.owner === 'in-tree') {
      // The hand-back (or not yet handed over): our CCM goes before we say it has.
      await this.prune([], signal);
      return { state: 'idle', why: loops.why, cloudLoops: 'in-tree' };
    }

    const co = await this.reporter.get(signal);
    const sub = subControllers(co);
    if (sub) return sub;

    const images = await this.images(signal);
    const [proxy, featureGate] = await Promise.all([
      mgr.client.get(operatorKinds.Proxy, { name: CLUSTER }, { signal }),
      mgr.client.get(operatorKinds.FeatureGate, { name: CLUSTER }, { signal }),
    ]);
    const input = renderInput({
      infrastructure: infra,
      platform,
      proxy,
      featureGate,
      images,
      openstackCcm: settings.openstackCcm,
      namespace: settings.managedNamespace,
      releaseVersion: settings.releaseVersion,
    });
    let rendered: KubernetesObject[];
    try {
      rendered = settings.render(input).objects;
    } catch (err) {
      throw new OperandProblem(
        `the operands of platform ${platform} cannot be rendered: ${errorText(err)}`,
        infra,
      );
    }
    const synced = await this.syncedConfigMaps(signal);
    const desired = rendered.map((o) => withConfigHash(stamp(o, platform), synced));
    for (const o of desired) {
      if (!operandKind(o)) {
        throw new OperandProblem(
          `the renderer of platform ${platform} returned ${o.apiVersion}/${o.kind} ${describeObject(o)}, a kind the operator does not apply`,
        );
      }
    }

    let changed = false;
    const applied: KubernetesObject[] = [];
    for (const o of desired) {
      const r = await this.apply(o, signal);
      changed ||= r.changed;
      applied.push(r.object);
    }
    const removed = await this.prune(desired, signal);
    changed ||= removed > 0;
    const rollout: string[] = [];
    for (const o of applied) {
      const state = rolloutOf(o);
      if (!state || state.state === 'done') continue;
      if (state.state === 'failed') throw new OperandProblem(state.message, o);
      rollout.push(state.message);
    }
    return { state: 'deployed', changed, rollout };
  }

  /** Applies one object; `changed` when the server wrote something (its resourceVersion moved). */
  private async apply(
    obj: KubernetesObject,
    signal: AbortSignal,
  ): Promise<{ object: KubernetesObject; changed: boolean }> {
    const kind = operandKind(obj)!;
    const key = { namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '' };
    const before = await this.mgr.client.get(kind, key, { signal, informer: INVENTORY });
    let written: KubernetesObject;
    try {
      written = await this.mgr.api.patch(kind, key, 'apply', obj, {
        fieldManager: OPERATOR_FIELD_MANAGER,
        force: true,
        signal,
      });
    } catch (err) {
      this.mgr.events.event(
        before ?? obj,
        'Warning',
        EventReasons.OperandFailed,
        `apply failed: ${errorText(err)}`,
      );
      throw err;
    }
    const changed = wroteSomething(before, written, obj);
    if (changed) {
      this.mgr.log.info(
        { controller: OPERANDS_CONTROLLER, object: objectId(obj) },
        `${before ? 'updated' : 'created'} ${describeObject(obj)}`,
      );
    }
    return { object: written, changed };
  }

  /** Removes what the operator applied and `desired` lacks; returns how many. */
  private async prune(desired: readonly KubernetesObject[], signal: AbortSignal): Promise<number> {
    const inventory: KubernetesObject[] = [];
    for (const kind of OPERAND_KINDS) {
      inventory.push(...(await this.mgr.client.list(kind, { informer: INVENTORY, signal })));
    }
    const gone = planPrune(desired, inventory, OPERATOR_FIELD_MANAGER);
    for (const o of gone) {
      const kind = operandKind(o)!;
      try {
        await this.mgr.api.delete(
          kind,
          { namespace: o.metadata?.namespace, name: o.metadata?.name ?? '' },
          {
            signal,
            propagationPolicy: 'Background',
            // Only the object we saw: one recreated by someone else since is not ours.
            ...(o.metadata?.uid ? { preconditions: { uid: o.metadata.uid } } : {}),
          },
        );
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    if (gone.length > 0) {
      const message = `removed ${gone.map(describeObject).join(', ')}`;
      this.mgr.log.info({ controller: OPERANDS_CONTROLLER }, message);
      const co = await this.reporter.get(signal);
      this.mgr.events.event(co, 'Normal', EventReasons.OperandsRemoved, message);
    }
    return gone.length;
  }

  /**
   * The images: upstream's images.json (the file, or the ConfigMap), read as `shiftstack
   * ccm-operator render` reads it (images.ts), so both run the same images for the same document.
   * A missing ConfigMap means the defaults; a document that is not a JSON object of image
   * references is a problem to fix; keys no operand uses are logged, once per change.
   */
  private async images(signal: AbortSignal): Promise<Images> {
    const { settings } = this;
    let read: ImagesRead;
    let where: string;
    if (settings.imagesFile) {
      where = `--images-json ${settings.imagesFile}`;
      try {
        read = await readImagesFile(settings.imagesFile, { flag: '--images-json', signal });
      } catch (err) {
        if (!ConfigError.is(err)) throw err;
        throw new OperandProblem(err.message);
      }
    } else {
      const namespace = settings.operatorNamespace;
      const cm = await this.mgr.client.get(
        kinds.ConfigMap,
        { namespace, name: IMAGES_CONFIGMAP },
        { signal, informer: { namespace } },
      );
      if (!cm) return DEFAULT_IMAGES;
      where = `ConfigMap ${namespace}/${IMAGES_CONFIGMAP}`;
      try {
        read = imagesFromConfigMap(cm.data, where);
      } catch (err) {
        if (!ConfigError.is(err)) throw err;
        throw new OperandProblem(err.message, cm);
      }
    }
    const warnings = unknownImageKeysWarnings(read, where);
    const said = warnings.join('\n');
    if (said !== this.imageWarnings) {
      this.imageWarnings = said;
      for (const w of warnings) this.mgr.log.warn({ controller: OPERANDS_CONTROLLER }, w);
    }
    return read.images;
  }

  /** cloud-conf and ccm-trusted-ca, as the sync controllers wrote them. */
  private async syncedConfigMaps(signal: AbortSignal): Promise<Map<string, V1ConfigMap>> {
    const namespace = this.settings.managedNamespace;
    const out = new Map<string, V1ConfigMap>();
    for (const name of [CLOUD_CONF_NAME, TRUSTED_CA_NAME]) {
      const cm = await this.mgr.client.get(
        kinds.ConfigMap,
        { namespace, name },
        { signal, informer: { namespace } },
      );
      if (cm) out.set(name, cm);
    }
    return out;
  }
}

/**
 * Upstream's gate on the sync controllers: one Degraded stops the operator (Degraded, with its
 * message); one not yet Available makes it wait.
 */
function subControllers(co: ClusterOperator): OperandsOutcome | undefined {
  const conditions = co.status?.conditions;
  for (const type of [
    Conditions.CloudConfigControllerDegraded,
    Conditions.TrustedCABundleControllerDegraded,
  ]) {
    const c = findCondition(conditions, type);
    if (c?.status === 'True') return { state: 'degraded', why: `${type}: ${c.message ?? ''}` };
  }
  for (const type of [
    Conditions.CloudConfigControllerAvailable,
    Conditions.TrustedCABundleControllerAvailable,
  ]) {
    const c = findCondition(conditions, type);
    if (c?.status !== 'True') return { state: 'waiting', why: `waiting for ${type}=True` };
  }
  return undefined;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Whether an apply changed the object. The cached copy may lag behind writes of others, such as a
 * Deployment's controller recording its status and revision: for objects with a generation
 * (Deployments, DaemonSets) only the spec (generation) and the labels and annotations this
 * operator applies count, never a resourceVersion moved by someone else's write.
 */
function wroteSomething(
  before: KubernetesObject | undefined,
  written: KubernetesObject,
  applied: KubernetesObject,
): boolean {
  if (!before) return true;
  const b = before.metadata ?? {};
  const w = written.metadata ?? {};
  if (w.generation === undefined) return b.resourceVersion !== w.resourceVersion;
  const ours = (field: 'labels' | 'annotations') =>
    Object.keys(applied.metadata?.[field] ?? {}).every((k) => b[field]?.[k] === w[field]?.[k]);
  return b.generation !== w.generation || !ours('labels') || !ours('annotations');
}
