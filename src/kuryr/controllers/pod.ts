/**
 * The pod controller (upstream's VIFHandler, `controller/handlers/vif.py`): every scheduled pod on
 * the pod network — not hostNetwork — gets a KuryrPort named as the pod, labelled with its Node,
 * owned by the pod, with a finalizer on both; a pod deleted or completed lets its KuryrPort go, and
 * keeps its own finalizer until the KuryrPort (and so its port's release) is gone.
 *
 * A KuryrPort of the same name left by an earlier pod (another uid) is deleted first. Static (mirror)
 * pods get no finalizer: the API server does not let one be added, as upstream notes.
 */
import type { V1Pod } from '@kubernetes/client-node';
import {
  addFinalizer,
  hasFinalizer,
  isAlreadyExists,
  isDeleting,
  isNotFound,
  kinds,
  ownerReference,
  removeFinalizer,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import { Annotations, Finalizers, Labels } from '../api/names.ts';
import { kuryrKinds, type KuryrPort } from '../api/index.ts';
import type { KuryrContext } from '../context.ts';
import { vifStack } from '../vif/stack.ts';

export const POD_CONTROLLER = 'pod';

export interface PodControllerOptions {
  workers?: number;
}

export function registerPodController(
  mgr: Manager,
  ctx: KuryrContext,
  opts: PodControllerOptions = {},
): void {
  // The pools' recovery and recycling run with the controller that creates the ports' owners.
  vifStack(mgr, ctx);
  mgr
    .controller(POD_CONTROLLER)
    .for(kinds.Pod)
    .owns(kuryrKinds.KuryrPort)
    .withOptions({ maxConcurrentReconciles: opts.workers ?? 16 })
    .complete((req, signal, rctx) => reconcilePod(mgr, req, signal, rctx));
}

/** A pod that is done: its port is no longer needed (upstream: Succeeded and Failed). */
export function isCompleted(pod: V1Pod): boolean {
  return pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';
}

/** Kubelet's own static pods, mirrored in the API. */
export function isStatic(pod: V1Pod): boolean {
  const source = pod.metadata?.annotations?.[Annotations.ConfigSource];
  return source !== undefined && source !== 'api';
}

async function reconcilePod(
  mgr: Manager,
  req: Request,
  signal: AbortSignal,
  rctx: ReconcileContext,
): Promise<Result> {
  const pod = await mgr.client.get(kinds.Pod, req, { signal });
  if (!pod) return {};
  if (pod.spec?.hostNetwork) {
    if (hasFinalizer(pod, Finalizers.Pod)) await dropFinalizer(mgr, pod, signal);
    return {};
  }
  if (isDeleting(pod) || isCompleted(pod)) return letGo(mgr, pod, req, signal, rctx);
  const nodeName = pod.spec?.nodeName;
  if (!nodeName) return {};
  let current = pod;
  if (!isStatic(pod) && !hasFinalizer(pod, Finalizers.Pod))
    current = await addFinalizer(mgr.api, kinds.Pod, pod, Finalizers.Pod, { signal });
  const kp = await mgr.client.get(kuryrKinds.KuryrPort, req, { signal });
  if (kp) {
    if (kp.spec.podUid === current.metadata?.uid) return {};
    // An earlier pod's KuryrPort under this name: it goes first (its port back to the pools).
    if (!isDeleting(kp)) await mgr.api.delete(kuryrKinds.KuryrPort, req, { signal }).catch(ignoreNotFound);
    return {};
  }
  try {
    await mgr.api.create(kuryrKinds.KuryrPort, kuryrPortFor(current, nodeName), { signal });
    rctx.log.debug({ pod: `${req.namespace}/${req.name}`, node: nodeName }, 'KuryrPort created');
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
  return {};
}

export function kuryrPortFor(pod: V1Pod, nodeName: string): KuryrPort {
  return {
    apiVersion: kuryrKinds.KuryrPort.apiVersion,
    kind: kuryrKinds.KuryrPort.kind,
    metadata: {
      name: pod.metadata?.name ?? '',
      namespace: pod.metadata?.namespace ?? '',
      labels: { [Labels.KuryrPortNode]: nodeName },
      finalizers: [Finalizers.KuryrPort],
      ownerReferences: [ownerReference(pod, { controller: true })],
    },
    spec: { podUid: pod.metadata?.uid ?? '', podNodeName: nodeName, podStatic: isStatic(pod) },
  };
}

/** The pod is going or done: its KuryrPort goes, then the pod's finalizer once it is gone. */
async function letGo(
  mgr: Manager,
  pod: V1Pod,
  req: Request,
  signal: AbortSignal,
  rctx: ReconcileContext,
): Promise<Result> {
  let kp: KuryrPort | undefined;
  try {
    kp = await mgr.api.get(kuryrKinds.KuryrPort, req, { signal });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  if (kp && kp.spec.podUid === pod.metadata?.uid) {
    if (!isDeleting(kp)) {
      await mgr.api.delete(kuryrKinds.KuryrPort, req, { signal }).catch(ignoreNotFound);
      rctx.log.debug({ pod: `${req.namespace}/${req.name}` }, 'pod going: KuryrPort deleted');
    }
    // The KuryrPort's deletion wakes us again (owns): then the pod's finalizer goes.
    return {};
  }
  if (hasFinalizer(pod, Finalizers.Pod)) await dropFinalizer(mgr, pod, signal);
  return {};
}

async function dropFinalizer(mgr: Manager, pod: V1Pod, signal: AbortSignal): Promise<void> {
  await removeFinalizer(mgr.api, kinds.Pod, pod, Finalizers.Pod, { signal }).catch(ignoreNotFound);
}

function ignoreNotFound(err: unknown): undefined {
  if (isNotFound(err)) return undefined;
  throw err;
}
