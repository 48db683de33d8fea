/** Event reasons of the Service and KuryrLoadBalancer controllers (CamelCase, as kube wants them). */
export const LbReason = {
  EnsuringLoadBalancer: 'EnsuringLoadBalancer',
  EnsuredLoadBalancer: 'EnsuredLoadBalancer',
  UpdatedLoadBalancer: 'UpdatedLoadBalancer',
  SyncLoadBalancerFailed: 'SyncLoadBalancerFailed',
  /** Octavia left the load balancer or a child PENDING_* past `lbaas_activation_timeout` (300 s). */
  LoadBalancerStuck: 'LoadBalancerStuck',
  /** In ERROR: deleted to be created again. */
  RecreatingLoadBalancer: 'RecreatingLoadBalancer',
  /** amphora ↔ ovn: released to be created with the new provider. */
  ProviderChanged: 'ProviderChanged',
  DeletingLoadBalancer: 'DeletingLoadBalancer',
  DeletedLoadBalancer: 'DeletedLoadBalancer',
  DeleteLoadBalancerFailed: 'DeleteLoadBalancerFailed',
  /** L2 member mode: an endpoint whose subnet is not known yet is not a member yet. */
  MemberSubnetUnknown: 'MemberSubnetUnknown',
  /** A Service port or annotation kuryr cannot use. */
  ServiceSpecIgnored: 'ServiceSpecIgnored',
  /** The cloud provider's service controller serves the Service: kuryr leaves it alone. */
  ServedByCloudProvider: 'ServedByCloudProvider',
} as const;
