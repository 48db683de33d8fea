/**
 * The cluster as the policy rules read it (rules.ts `PolicyWorld`), from Kubernetes objects: which
 * pods count (on the pod network, scheduled, not finished), each pod's address (its VIF's, which
 * Kuryr knows before the kubelet reports `status.podIP`), its container ports, each namespace's
 * subnet and each Service's VIP and ports. The caller supplies the lookups into its caches.
 */
import type { V1Namespace, V1Pod, V1Service } from '@kubernetes/client-node';
import type { ContainerPort, PolicyNamespace, PolicyPod, PolicyService, PolicyWorld } from './rules.ts';

export interface WorldLookups {
  /** The address of the pod's default VIF, if Kuryr gave it one. */
  vifIp(pod: V1Pod): string | undefined;
  /** The namespace's own subnet (its KuryrNetwork's `status.subnetCIDR`), if it has one. */
  namespaceCidr(namespace: string): string | undefined;
}

/** Whether a pod has, or will have, a port of its own on the pod network. */
export function onPodNetwork(pod: V1Pod): boolean {
  if (pod.spec?.hostNetwork) return false;
  if (!pod.spec?.nodeName) return false;
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed';
}

export function policyPod(pod: V1Pod, lookups: WorldLookups): PolicyPod {
  const ports: ContainerPort[] = [];
  for (const c of pod.spec?.containers ?? []) {
    for (const p of c.ports ?? [])
      ports.push({ name: p.name, containerPort: p.containerPort, protocol: p.protocol });
  }
  return {
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    labels: pod.metadata?.labels ?? {},
    ip: lookups.vifIp(pod) ?? pod.status?.podIP,
    ports,
  };
}

export function policyNamespace(ns: V1Namespace, lookups: WorldLookups): PolicyNamespace {
  const name = ns.metadata?.name ?? '';
  return { name, labels: ns.metadata?.labels ?? {}, cidr: lookups.namespaceCidr(name) };
}

export function policyService(svc: V1Service): PolicyService {
  return {
    namespace: svc.metadata?.namespace ?? '',
    name: svc.metadata?.name ?? '',
    clusterIP: svc.spec?.clusterIP,
    selector: svc.spec?.selector,
    ports: (svc.spec?.ports ?? []).map((p) => ({
      port: p.port,
      protocol: p.protocol,
      targetPort: p.targetPort,
    })),
    deleting: Boolean(svc.metadata?.deletionTimestamp),
  };
}

export function policyWorld(
  objects: { pods: readonly V1Pod[]; namespaces: readonly V1Namespace[]; services: readonly V1Service[] },
  lookups: WorldLookups,
): PolicyWorld {
  return {
    pods: objects.pods.filter(onPodNetwork).map((p) => policyPod(p, lookups)),
    namespaces: objects.namespaces.map((n) => policyNamespace(n, lookups)),
    services: objects.services.map(policyService),
  };
}

/**
 * What of a pod the rules of other policies read: a change elsewhere (its status conditions, an
 * annotation) re-renders nothing.
 */
export function podFacts(pod: V1Pod): unknown {
  return {
    labels: pod.metadata?.labels,
    onNetwork: onPodNetwork(pod),
    ip: pod.status?.podIP,
    ports: pod.spec?.containers?.map((c) => c.ports),
  };
}

export function serviceFacts(svc: V1Service): unknown {
  const s = policyService(svc);
  return { ...s, name: undefined, namespace: undefined };
}
