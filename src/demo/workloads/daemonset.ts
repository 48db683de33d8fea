/**
 * The DaemonSet controller's two pure parts, for the one node the runner plays:
 *
 * - whether a daemon pod belongs on a Node (`daemon_controller.go` `predicates`): no other node
 *   named in `spec.nodeName`; the nodeSelector and the required node affinity match the Node
 *   (node-affinity.ts); and every NoSchedule and NoExecute taint of the Node is tolerated by the
 *   pod's tolerations plus those the controller adds to every daemon pod
 *   (`util.AddOrUpdateDaemonPodTolerations`: not-ready, unreachable, the pressure taints,
 *   unschedulable, and network-unavailable for host-network pods);
 * - the DaemonSet's status (`updateDaemonSetStatus`) from the pods that run.
 */
import type {
  V1DaemonSet,
  V1DaemonSetStatus,
  V1Node,
  V1PodSpec,
  V1Taint,
  V1Toleration,
} from '@kubernetes/client-node';
import { requiredAffinityMismatch } from './node-affinity.ts';

/** What the DaemonSet controller adds to every daemon pod (`AddOrUpdateDaemonPodTolerations`). */
function daemonTolerations(spec: V1PodSpec): V1Toleration[] {
  const exists = (key: string, effect: string): V1Toleration => ({ key, operator: 'Exists', effect });
  return [
    exists('node.kubernetes.io/not-ready', 'NoExecute'),
    exists('node.kubernetes.io/unreachable', 'NoExecute'),
    exists('node.kubernetes.io/disk-pressure', 'NoSchedule'),
    exists('node.kubernetes.io/memory-pressure', 'NoSchedule'),
    exists('node.kubernetes.io/pid-pressure', 'NoSchedule'),
    exists('node.kubernetes.io/unschedulable', 'NoSchedule'),
    ...(spec.hostNetwork ? [exists('node.kubernetes.io/network-unavailable', 'NoSchedule')] : []),
  ];
}

/** Whether `t` tolerates `taint`, as core/v1 `Toleration.ToleratesTaint`. */
export function tolerates(t: V1Toleration, taint: V1Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (t.key && t.key !== taint.key) return false;
  // An empty key with Exists tolerates everything.
  if (t.operator === 'Exists') return true;
  return (t.operator ?? 'Equal') === 'Equal' && (t.value ?? '') === (taint.value ?? '');
}

/** Why a daemon pod does not belong on `node`, or undefined when it does. */
export function notForNode(node: V1Node, spec: V1PodSpec): string | undefined {
  const name = node.metadata?.name ?? '';
  if (spec.nodeName && spec.nodeName !== name) return `the pod is bound to nodeName ${spec.nodeName}`;
  const affinity = requiredAffinityMismatch(node, spec);
  if (affinity) return affinity;
  const tolerations = [...(spec.tolerations ?? []), ...daemonTolerations(spec)];
  for (const taint of node.spec?.taints ?? []) {
    if (taint.effect === 'PreferNoSchedule') continue;
    if (!tolerations.some((t) => tolerates(t, taint))) {
      return `node ${name} has the taint ${taint.key}=${taint.value ?? ''}:${taint.effect} the pod does not tolerate`;
    }
  }
  return undefined;
}

export interface DaemonPodCounts {
  /** 1 when the pod belongs on the node, else 0. */
  desired: number;
  /** Pods running (not being stopped), of any template. */
  scheduled: number;
  /** Of those, the ones of the current template. */
  updated: number;
  ready: number;
  /** Ready for minReadySeconds. */
  available: number;
}

/** The status the DaemonSet controller writes for these counts. */
export function daemonSetStatus(ds: V1DaemonSet, c: DaemonPodCounts): V1DaemonSetStatus {
  return {
    ...(ds.status?.collisionCount !== undefined ? { collisionCount: ds.status.collisionCount } : {}),
    observedGeneration: ds.metadata?.generation ?? 0,
    desiredNumberScheduled: c.desired,
    currentNumberScheduled: Math.min(c.scheduled, c.desired),
    numberMisscheduled: Math.max(0, c.scheduled - c.desired),
    updatedNumberScheduled: c.updated,
    numberReady: c.ready,
    numberAvailable: c.available,
    numberUnavailable: Math.max(0, c.desired - c.available),
  };
}
