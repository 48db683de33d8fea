/**
 * Which Cluster API Cluster an OpenStackCluster belongs to (CAPI's util.GetOwnerCluster): the
 * ownerReference of kind Cluster that Cluster API's core sets, else the `cluster.x-k8s.io/cluster-name`
 * label clusterctl's templates carry. Pure.
 */
import type { KubernetesObject } from '../../kube/index.ts';
import {
  CLUSTER_API_GROUP,
  PAUSED_ANNOTATION,
  CLUSTER_NAME_LABEL,
  type Cluster,
  type OpenStackCluster,
} from '../api/index.ts';

const groupOf = (apiVersion: string | undefined) => (apiVersion ?? '').split('/')[0] ?? '';

export function ownerClusterName(osc: OpenStackCluster): string | undefined {
  const ref = (osc.metadata?.ownerReferences ?? []).find(
    (r) => r.kind === 'Cluster' && groupOf(r.apiVersion) === CLUSTER_API_GROUP,
  );
  return ref?.name || osc.metadata?.labels?.[CLUSTER_NAME_LABEL] || undefined;
}

/** The name CAPO derives resource names from: the Cluster's, else the OpenStackCluster's own. */
export function clusterNameOf(osc: OpenStackCluster): string {
  return ownerClusterName(osc) ?? osc.metadata?.name ?? '';
}

export function isPaused(cluster: Cluster | undefined, obj: KubernetesObject): boolean {
  return cluster?.spec?.paused === true || obj.metadata?.annotations?.[PAUSED_ANNOTATION] !== undefined;
}

export { PAUSED_ANNOTATION };
