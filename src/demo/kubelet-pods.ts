/**
 * The demo kubelets' pod half, for a cluster on Kuryr. No container runs in the emulator, so this
 * stands in for what a node's kubelet does with a pod bound to it once its CNI ADD returned: the
 * CNI result's address becomes `status.podIP`, the containers are started, and the pod turns
 * Running and Ready. With Kuryr, the CNI plugin's result is the pod's VIF: the default VIF of its
 * KuryrPort (same namespace and name), which the kuryr controller writes and the CNI daemon waits
 * for until Neutron says the port is ACTIVE. So here: a pod bound to a Node (`spec.nodeName`), not
 * on the host network, whose KuryrPort's default VIF is active, gets that VIF's first fixed IP,
 * its Node's InternalIP as hostIP, phase Running and the Ready conditions, in one status write.
 *
 * Pods are bound by whoever creates them (the demo sets `spec.nodeName`): no scheduler runs. A pod
 * whose VIF is not there or not active yet stays Pending, as its sandbox would; the KuryrPort's
 * watch wakes it. Nothing here is imported by src/kuryr.
 */
import type { V1ContainerStatus, V1Pod, V1PodCondition } from '@kubernetes/client-node';
import {
  kinds,
  metaTime,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../kube/index.ts';
import { defaultVif, kuryrKinds, type KuryrPort } from '../kuryr/api/index.ts';

export const POD_KUBELET_CONTROLLER = 'demo-kubelet-pods';

/** The same namespace and name: a KuryrPort is its pod's. */
const samePod = (kp: KuryrPort) =>
  kp.metadata?.name ? [{ namespace: kp.metadata.namespace, name: kp.metadata.name }] : [];

export function registerPodKubelet(mgr: Manager): void {
  mgr
    .controller(POD_KUBELET_CONTROLLER)
    .for(kinds.Pod)
    .watches(kuryrKinds.KuryrPort, samePod)
    .withOptions({ maxConcurrentReconciles: 4 })
    .complete((req, signal, ctx) => reconcilePod(mgr, req, signal, ctx));
}

/** What the pod's status says once it runs; undefined while it does not yet. */
export function runningStatus(
  pod: V1Pod,
  kp: KuryrPort | undefined,
  hostIP: string | undefined,
  now: string,
): V1Pod['status'] | undefined {
  const vif = defaultVif(kp?.status?.vifs)?.vif;
  const podIP = vif?.network.subnets.flatMap((s) => s.ips)[0];
  if (!vif?.active || !podIP) return undefined;
  const condition = (type: string): V1PodCondition => ({
    type,
    status: 'True',
    lastProbeTime: null as never,
    lastTransitionTime: now as never,
  });
  const containers: V1ContainerStatus[] = (pod.spec?.containers ?? []).map((c) => ({
    name: c.name,
    image: c.image ?? '',
    imageID: c.image ?? '',
    containerID: `containerd://${pod.metadata?.uid ?? ''}-${c.name}`,
    ready: true,
    started: true,
    restartCount: 0,
    state: { running: { startedAt: now as never } },
  }));
  return {
    phase: 'Running',
    podIP,
    podIPs: vif.network.subnets.flatMap((s) => s.ips).map((ip) => ({ ip })),
    ...(hostIP ? { hostIP, hostIPs: [{ ip: hostIP }] } : {}),
    startTime: now as never,
    qosClass: 'BestEffort',
    conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(
      condition,
    ),
    containerStatuses: containers,
  };
}

async function reconcilePod(
  mgr: Manager,
  req: Request,
  signal: AbortSignal,
  ctx: ReconcileContext,
): Promise<Result> {
  const pod = await mgr.client.get(kinds.Pod, req, { signal });
  if (!pod || pod.metadata?.deletionTimestamp || pod.spec?.hostNetwork) return {};
  const nodeName = pod.spec?.nodeName;
  if (!nodeName || (pod.status?.phase === 'Running' && pod.status.podIP)) return {};
  const node = await mgr.client.get(kinds.Node, { name: nodeName }, { signal });
  if (!node) return {};
  const kp = await mgr.client.get<KuryrPort>(kuryrKinds.KuryrPort, req, { signal });
  const hostIP = node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address;
  const status = runningStatus(pod, kp, hostIP, metaTime(Date.now()));
  if (!status) return {};
  await mgr.api.patch(kinds.Pod, req, 'merge', { status }, { subresource: 'status', signal });
  ctx.log.info({ pod: `${req.namespace}/${req.name}`, node: nodeName, podIP: status.podIP }, 'pod running');
  return {};
}
