/**
 * The names Kuryr puts on Kubernetes and OpenStack objects (KURYR `kuryr_kubernetes/constants.py`),
 * kept as upstream spells them so a cluster that ran upstream's controller is read the same way, and
 * the tags that mark what a cluster's kuryr created in the cloud.
 */
/** `KURYR_FQDN` upstream. */
export const KURYR_FQDN = 'kuryr.openstack.org';

export const Finalizers = {
  /** On a pod wired by kuryr: its port goes back to the pool before the pod goes. */
  Pod: `${KURYR_FQDN}/pod-finalizer`,
  KuryrPort: `${KURYR_FQDN}/kuryrport-finalizer`,
  KuryrNetwork: 'kuryrnetwork.finalizers.kuryr.openstack.org',
  KuryrLoadBalancer: 'kuryr.openstack.org/kuryrloadbalancer-finalizers',
  Service: 'kuryr.openstack.org/service-finalizer',
  NetworkPolicy: 'kuryr.openstack.org/networkpolicy-finalizer',
} as const;

export const Labels = {
  /** On a KuryrPort: the node its pod runs on; the CNI daemon of that node watches by it. */
  KuryrPortNode: `${KURYR_FQDN}/nodeName`,
} as const;

export const Annotations = {
  /** Upstream's annotation prefix (`openstack.org/kuryr`). */
  Prefix: 'openstack.org/kuryr',
  /** Set on a Service whose Endpoints are headless to kuryr. */
  HeadlessService: 'service.kubernetes.io/headless',
  /** A static (mirror) pod: kubelet's `kubernetes.io/config.source`. */
  ConfigSource: 'kubernetes.io/config.source',
} as const;

/**
 * A `spec.loadBalancerClass` that names kuryr: Kubernetes' cloud service controller (the ccm) leaves
 * a Service with any class alone, so a LoadBalancer Service carrying this one is kuryr's even where a
 * ccm with load balancers on runs beside it (the demo). Kuryr serves LoadBalancer Services with no
 * class too, as upstream does; on a Kuryr cluster the ccm runs with `[LoadBalancer] enabled = false`.
 */
export const KURYR_LOAD_BALANCER_CLASS = 'kuryr.openstack.org/octavia';

/** The name of a port waiting in a pool (`KURYR_PORT_NAME`); a port taken by a pod may be renamed after it. */
export const POOL_PORT_NAME = 'kuryr-pool-port';

/** Neutron device owners: what a nested pod port carries once it is a subport, and upstream's non-nested owner. */
export const DeviceOwners = {
  Subport: 'trunk:subport',
  Kuryr: 'compute:kuryr',
} as const;

/** The interface name of a pod's default VIF (`DEFAULT_IFNAME`). */
export const DEFAULT_IFNAME = 'eth0';

/** The tag kuryr puts on what it creates when `[neutron_defaults] resource_tags` is empty. */
export function clusterTag(clusterName: string): string {
  return `kuryr-cluster:${clusterName}`;
}

/**
 * The tags every Neutron and Octavia object kuryr creates carries: the user's `[neutron_defaults]
 * resource_tags` (OpenShift sets `openshiftClusterID=<infra id>`), or one naming the cluster. Upstream
 * tags nothing without resource_tags and its cleanups then do nothing; we always tag, so a crash
 * never leaves something nobody can tell is ours.
 */
export function ownerTags(owner: { resourceTags: readonly string[]; clusterName: string }): string[] {
  return owner.resourceTags.length > 0 ? [...owner.resourceTags] : [clusterTag(owner.clusterName)];
}
