/**
 * How an OpenStackMachine finds the objects it works for, as Cluster API's `util` does: the
 * Machine that owns it (ownerReference of kind Machine in cluster.x-k8s.io), the Cluster named by
 * the Machine's `cluster.x-k8s.io/cluster-name` label, and the OpenStackCluster the Cluster's
 * `infrastructureRef` names. Pure functions over objects the caller has read.
 */
import {
  CLUSTER_API_GROUP,
  PAUSED_ANNOTATION,
  CLUSTER_NAME_LABEL,
  CONTROL_PLANE_LABEL,
  INFRASTRUCTURE_GROUP,
  type Cluster,
  type Machine,
} from '../api/index.ts';
import type { KubernetesObject } from '../../kube/index.ts';

const groupOf = (apiVersion: string | undefined) => (apiVersion ?? '').split('/')[0] ?? '';

/** The name of the Machine that owns `obj` (util.GetOwnerMachine), if any. */
export function ownerMachineName(obj: KubernetesObject): string | undefined {
  const ref = (obj.metadata?.ownerReferences ?? []).find(
    (r) => r.kind === 'Machine' && groupOf(r.apiVersion) === CLUSTER_API_GROUP,
  );
  return ref?.name;
}

/** The name of the Cluster a Machine belongs to: its label, else `spec.clusterName`. */
export function clusterNameOf(machine: Machine): string | undefined {
  return machine.metadata?.labels?.[CLUSTER_NAME_LABEL] || machine.spec.clusterName || undefined;
}

/** util.IsControlPlaneMachine: the label is there, whatever its value. */
export function isControlPlaneMachine(obj: KubernetesObject): boolean {
  return obj.metadata?.labels?.[CONTROL_PLANE_LABEL] !== undefined;
}

/** The OpenStackCluster a Cluster names in `spec.infrastructureRef`, if it names one. */
export function infraClusterName(cluster: Cluster): string | undefined {
  const ref = cluster.spec?.infrastructureRef;
  if (!ref?.name) return undefined;
  if (ref.kind !== undefined && ref.kind !== 'OpenStackCluster') return undefined;
  if (ref.apiVersion !== undefined && groupOf(ref.apiVersion) !== INFRASTRUCTURE_GROUP) return undefined;
  return ref.name;
}

/** annotations.IsPaused: the Cluster is paused, or the object carries the paused annotation. */
export function isPaused(cluster: Cluster | undefined, obj: KubernetesObject): boolean {
  return cluster?.spec?.paused === true || obj.metadata?.annotations?.[PAUSED_ANNOTATION] !== undefined;
}

export { PAUSED_ANNOTATION };
