/**
 * Event reasons the CCM puts on Services and Nodes. Users alert and search on these strings, so the
 * upstream ones are spelled exactly as OCCM (`pkg/openstack/events.go`, source component
 * `cloud-provider-openstack`) and the k8s.io/cloud-provider service controller write them. The few
 * that are ours cover cases where upstream stays silent or fails the whole sync instead.
 */

/** The `source.component` of the Events OCCM writes. */
export const EVENT_SOURCE_COMPONENT = 'cloud-provider-openstack';

/** OCCM's own reasons, all of type Warning. */
export const UpstreamReason = {
  /** No floating network could be found: the Service gets the VIP address only. */
  ForcedInternal: 'LoadBalancerForcedInternal',
  /** Autodetecting the floating network failed. */
  ExternalNetworkSearchFailed: 'LoadBalancerExternalNetworkSearchFailed',
  /** loadBalancerSourceRanges cannot be enforced (no VIP ACL, no managed security group). */
  SourceRangesIgnored: 'LoadBalancerSourceRangesIgnored',
  /** Availability zones need Octavia API 2.14 and a provider other than ovn. */
  AvailabilityZonesIgnored: 'LoadBalancerAvailabilityZonesIgnored',
  /** IPv6 VIPs never get a floating IP. */
  FloatingIPSkipped: 'LoadBalancerFloatingIPSkipped',
  /** The load balancer carried an old cluster name and was renamed. */
  Rename: 'LoadBalancerRename',
  /** The pool algorithm could not be applied. */
  LbMethodUnknown: 'LoadBalancerLbMethodUnknown',
} as const;

/** Reasons of the k8s.io/cloud-provider service controller, which OCCM runs inside. */
export const FrameworkReason = {
  EnsuringLoadBalancer: 'EnsuringLoadBalancer',
  EnsuredLoadBalancer: 'EnsuredLoadBalancer',
  /** Any error of EnsureLoadBalancer, with the error text as the message. */
  SyncLoadBalancerFailed: 'SyncLoadBalancerFailed',
  UpdatedLoadBalancer: 'UpdatedLoadBalancer',
  UpdateLoadBalancerFailed: 'UpdateLoadBalancerFailed',
  DeletingLoadBalancer: 'DeletingLoadBalancer',
  DeletedLoadBalancer: 'DeletedLoadBalancer',
  DeleteLoadBalancerFailed: 'DeleteLoadBalancerFailed',
  /** No eligible node is left for the members. */
  UnAvailableLoadBalancer: 'UnAvailableLoadBalancer',
} as const;

/**
 * shiftstack's reasons, for what OCCM does silently (falls back to a default, drops a setting) or
 * turns into a failed create (a provider refusing an option with a 501).
 */
export const ShiftstackReason = {
  /** An annotation value could not be read; the documented default was used instead. */
  AnnotationInvalid: 'LoadBalancerAnnotationInvalid',
  /** externalTrafficPolicy: Local without a health monitor sends traffic to nodes without endpoints. */
  LocalTrafficWithoutMonitor: 'LoadBalancerLocalTrafficWithoutMonitor',
  /** The provider or Octavia version cannot do an HTTP monitor; a TCP/UDP one is used. */
  HealthMonitorDowngraded: 'LoadBalancerHealthMonitorDowngraded',
  /** A setting the provider or Octavia version does not support was left out. */
  OptionIgnored: 'LoadBalancerOptionIgnored',
} as const;

export type UpstreamEventReason = (typeof UpstreamReason)[keyof typeof UpstreamReason];
export type FrameworkEventReason = (typeof FrameworkReason)[keyof typeof FrameworkReason];
export type ShiftstackEventReason = (typeof ShiftstackReason)[keyof typeof ShiftstackReason];
export type EventReason = UpstreamEventReason | FrameworkEventReason | ShiftstackEventReason;

/**
 * Node reasons of the k8s.io/cloud-provider node controllers: `Synced` once the cloud-node
 * controller initialized a Node; `DeletingNode` from the lifecycle controller before it deletes a
 * Node whose server is gone; `RemovingNode` as kube-controller-manager's node lifecycle controller
 * records a Node leaving.
 */
export const NodeReason = {
  Synced: 'Synced',
  DeletingNode: 'DeletingNode',
  RemovingNode: 'RemovingNode',
} as const;

/**
 * shiftstack's Node reasons, where upstream only logs and retries: no server, or several servers,
 * answer the Node's providerID or name, so the Node stays uninitialized.
 */
export const ShiftstackNodeReason = {
  InstanceNotFound: 'NodeInstanceNotFound',
  InstanceAmbiguous: 'NodeInstanceAmbiguous',
  InstanceNotReady: 'NodeInstanceNotReady',
} as const;
