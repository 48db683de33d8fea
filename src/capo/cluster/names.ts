/**
 * The names CAPO v0.14 gives what an OpenStackCluster creates, so a cluster CAPO built is found and
 * adopted, and so a restarted controller finds its own work by name instead of creating it twice.
 * CAPO's "cluster resource name" is `<namespace>-<name>` of the OpenStackCluster.
 */

export type ManagedSecurityGroupRole = 'controlplane' | 'worker' | 'bastion';

export const SECURITY_GROUP_ROLES: readonly ManagedSecurityGroupRole[] = [
  'controlplane',
  'worker',
  'bastion',
];

/** `<namespace>-<name>`: unique per management cluster, as CAPO's `names.ClusterResourceName`. */
export function clusterResourceName(namespace: string, name: string): string {
  return `${namespace}-${name}`;
}

/** The managed network, its subnet and its router share one name. */
export function networkName(resourceName: string): string {
  return `k8s-clusterapi-cluster-${resourceName}`;
}

export function securityGroupName(resourceName: string, role: ManagedSecurityGroupRole): string {
  return `k8s-cluster-${resourceName}-secgroup-${role}`;
}

export function loadBalancerName(resourceName: string): string {
  return `${networkName(resourceName)}-kubeapi`;
}

/** The listener, pool and monitor of one API port. */
export function loadBalancerPortName(resourceName: string, port: number): string {
  return `${loadBalancerName(resourceName)}-${port}`;
}

/** A pool member: CAPO names it after the port objects and the OpenStackMachine. */
export function loadBalancerMemberName(resourceName: string, port: number, machine: string): string {
  return `${loadBalancerPortName(resourceName, port)}-${machine}`;
}

/**
 * The description CAPO writes on networks, subnets, routers, load balancers and floating IPs. It
 * also marks the floating IPs this controller may delete: any other is only detached.
 */
export function resourceDescription(resourceName: string): string {
  return `Created by cluster-api-provider-openstack cluster ${resourceName}`;
}

/** CAPO's description of the security groups it manages. */
export const SECURITY_GROUP_DESCRIPTION = 'Cluster API managed group';

/** CAPO's bastion OpenStackServer: `<cluster>-bastion` (the OpenStackCluster's name). */
export function bastionServerName(clusterName: string): string {
  return `${clusterName}-bastion`;
}

/** The Kubernetes API port when spec.apiServerPort is unset. */
export const DEFAULT_API_SERVER_PORT = 6443;
