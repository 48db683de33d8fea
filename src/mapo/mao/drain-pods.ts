/**
 * Which pods a Node's drain evicts, with the options the machine-api-operator gives kubectl's
 * drain helper (`drain.Helper{Force, IgnoreAllDaemonSets, DeleteEmptyDirData}`): every pod bound
 * to the Node but
 *
 * - mirror pods (annotation `kubernetes.io/config.mirror`): the kubelet's static pods, which the
 *   API cannot delete;
 * - pods a DaemonSet controls: the DaemonSet would put them back at once (it tolerates the
 *   cordon);
 * - on an unreachable Node, pods whose deletion started more than `skipWaitForDeleteSeconds`
 *   ago: no kubelet will ever confirm them gone (upstream: 1 s there, off otherwise).
 *
 * Pods without a controller and pods with emptyDir volumes go too (Force, DeleteEmptyDirData).
 * Pure: drain.ts lists the pods and evicts.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { timeMs } from '../../kube/index.ts';
import { readyCondition } from './machineset-status.ts';

export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

export type SkipReason = 'mirror' | 'daemonset' | 'deletion-timed-out';

export interface PodSelection {
  evict: V1Pod[];
  skipped: { pod: V1Pod; reason: SkipReason }[];
}

/** kubectl drain's unreachable test as upstream uses it: the Node's Ready condition is Unknown. */
export function isNodeUnreachable(node: V1Node): boolean {
  return readyCondition(node)?.status === 'Unknown';
}

export function podsToEvict(
  pods: readonly V1Pod[],
  opts: { skipWaitForDeleteSeconds: number; nowMs: number },
): PodSelection {
  const selection: PodSelection = { evict: [], skipped: [] };
  for (const pod of pods) {
    const reason = skipReason(pod, opts);
    if (reason) selection.skipped.push({ pod, reason });
    else selection.evict.push(pod);
  }
  return selection;
}

function skipReason(
  pod: V1Pod,
  opts: { skipWaitForDeleteSeconds: number; nowMs: number },
): SkipReason | undefined {
  if (pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) return 'mirror';
  const controller = pod.metadata?.ownerReferences?.find((r) => r.controller);
  if (controller?.kind === 'DaemonSet' && controller.apiVersion.startsWith('apps/')) return 'daemonset';
  const deleting = timeMs(pod.metadata?.deletionTimestamp);
  if (
    opts.skipWaitForDeleteSeconds > 0 &&
    deleting !== undefined &&
    opts.nowMs - deleting > opts.skipWaitForDeleteSeconds * 1000
  ) {
    return 'deletion-timed-out';
  }
  return undefined;
}

export const podName = (p: V1Pod) => `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`;
