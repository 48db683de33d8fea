/**
 * Finalizers, condition types and reasons of CAPO v0.14 (`api/v1beta1/conditions_consts.go`,
 * `api/v1alpha1/conditions_consts.go`, the `*_types.go` finalizer constants), spelled as CAPO
 * spells them so tools that read CAPO objects read ours; plus the few shiftstack adds.
 */

export const SERVER_FINALIZER = 'openstackserver.infrastructure.cluster.x-k8s.io';
export const MACHINE_FINALIZER = 'openstackmachine.infrastructure.cluster.x-k8s.io';
export const CLUSTER_FINALIZER = 'openstackcluster.infrastructure.cluster.x-k8s.io';
/** On an IPAddressClaim while a machine holds the floating IP it asked for. */
export const IP_CLAIM_MACHINE_FINALIZER = 'openstackmachine.infrastructure.cluster.x-k8s.io/ip-claim';
export const FLOATING_IP_POOL_FINALIZER = 'openstackfloatingippool.infrastructure.cluster.x-k8s.io';

export const Conditions = {
  /** The summary condition of every kind. */
  Ready: 'Ready',
  /** OpenStackMachine, OpenStackServer: the Nova server is ACTIVE. */
  InstanceReady: 'InstanceReady',
  /** OpenStackMachine (control plane): the load-balancer member or API floating IP is in place. CAPO's spelling. */
  APIServerIngressReady: 'APIServerIngressReadyCondition',
  /** OpenStackMachine, OpenStackServer: the floating IP from an OpenStackFloatingIPPool. */
  FloatingAddressFromPoolReady: 'FloatingAddressFromPoolReady',
  /** Every kind with an identityRef: the credentials work. */
  OpenStackAuthenticationSucceeded: 'OpenStackAuthenticationSucceeded',
  /** OpenStackCluster: network and subnets. */
  NetworkReady: 'NetworkReady',
  /** OpenStackCluster: router and its interfaces. */
  RouterReady: 'RouterReady',
  /** OpenStackCluster: managed security groups and rules. */
  SecurityGroupsReady: 'SecurityGroupsReady',
  /** OpenStackCluster: the control-plane endpoint. */
  APIEndpointReady: 'APIEndpointReady',
  /** OpenStackFloatingIPPool. CAPO's spelling. */
  FloatingIPPoolReady: 'OpenstackFloatingIPPoolReadyCondition',
  /**
   * shiftstack: False while the object carries a spec change the controller refused (an immutable
   * field changed, or the spec breaks a rule CAPO enforces by CEL or webhook); the controller keeps
   * acting on the last accepted spec. See immutability.ts.
   */
  SpecAccepted: 'SpecAccepted',
} as const;

export const Reasons = {
  WaitingForClusterInfrastructure: 'WaitingForClusterInfrastructure',
  WaitingForBootstrapData: 'WaitingForBootstrapData',
  InvalidMachineSpec: 'InvalidMachineSpec',
  InstanceCreateFailed: 'InstanceCreateFailed',
  InstanceNotFound: 'InstanceNotFound',
  InstanceStateError: 'InstanceStateError',
  InstanceDeleted: 'InstanceDeleted',
  InstanceNotReady: 'InstanceNotReady',
  InstanceStopFailed: 'InstanceStopFailed',
  InstanceDeleteFailed: 'InstanceDeleteFailed',
  OpenStackError: 'OpenStackError',
  DependencyFailed: 'DependencyFailed',
  LoadBalancerMemberError: 'LoadBalancerMemberError',
  FloatingIPError: 'FloatingIPError',
  WaitingForIPAMProvider: 'WaitingForIPAMProvider',
  UnableToFindFloatingIPNetwork: 'UnableToFindFloatingIPNetwork',
  PortCreateFailed: 'PortCreateFailed',
  OpenStackAuthenticationFailed: 'OpenStackAuthenticationFailed',
  NetworkCreateFailed: 'NetworkCreateFailed',
  SubnetCreateFailed: 'SubnetCreateFailed',
  RouterCreateFailed: 'RouterCreateFailed',
  SecurityGroupCreateFailed: 'SecurityGroupCreateFailed',
  APIEndpointConfigFailed: 'APIEndpointConfigFailed',
  MaxIPsReached: 'MaxIPsReached',
  UnableToFindNetwork: 'UnableToFindNetwork',
  /** shiftstack, SpecAccepted=True. */
  SpecAccepted: 'SpecAccepted',
  /** shiftstack, SpecAccepted=False: a change to a field CAPO's webhook keeps immutable. */
  ImmutableFieldChanged: 'ImmutableFieldChanged',
  /** shiftstack, SpecAccepted=False: the spec breaks a rule CAPO enforces by CEL or webhook. */
  InvalidSpec: 'InvalidSpec',
  /** shiftstack: a field or kind this implementation does not act on (OpenStackFloatingIPPool, imageRef). */
  NotSupported: 'NotSupported',
  /**
   * shiftstack: the cloud's catalog has no endpoint for a service the spec needs (block storage
   * for `rootVolume`); the credentials worked (OpenStackAuthenticationSucceeded stays True).
   */
  EndpointNotFound: 'EndpointNotFound',
} as const;

/** CAPO's message when a server disappears behind its back. */
export const SERVER_UNEXPECTEDLY_DELETED_MESSAGE = 'The server was unexpectedly deleted';

/** Event reasons for refusals (type Warning), so `kubectl describe` and `kubectl get events` show them. */
export const EventReasons = {
  SpecChangeRefused: 'SpecChangeRefused',
  InvalidSpec: 'InvalidSpec',
} as const;
