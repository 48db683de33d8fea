/** The Service annotations OCCM reads and writes (`pkg/openstack/loadbalancer.go`), spelled exactly. */

export const ANNOTATION_PREFIX = 'loadbalancer.openstack.org/';

export const Annotation = {
  Internal: 'service.beta.kubernetes.io/openstack-internal-load-balancer',
  SourceRanges: 'service.beta.kubernetes.io/load-balancer-source-ranges',
  NodeSelector: 'loadbalancer.openstack.org/node-selector',
  ConnectionLimit: 'loadbalancer.openstack.org/connection-limit',
  FloatingNetworkId: 'loadbalancer.openstack.org/floating-network-id',
  FloatingSubnet: 'loadbalancer.openstack.org/floating-subnet',
  FloatingSubnetId: 'loadbalancer.openstack.org/floating-subnet-id',
  FloatingSubnetTags: 'loadbalancer.openstack.org/floating-subnet-tags',
  Class: 'loadbalancer.openstack.org/class',
  KeepFloatingIp: 'loadbalancer.openstack.org/keep-floatingip',
  PortId: 'loadbalancer.openstack.org/port-id',
  LbMethod: 'loadbalancer.openstack.org/lb-method',
  ProxyProtocol: 'loadbalancer.openstack.org/proxy-protocol',
  SubnetId: 'loadbalancer.openstack.org/subnet-id',
  NetworkId: 'loadbalancer.openstack.org/network-id',
  MemberSubnetId: 'loadbalancer.openstack.org/member-subnet-id',
  TimeoutClientData: 'loadbalancer.openstack.org/timeout-client-data',
  TimeoutMemberConnect: 'loadbalancer.openstack.org/timeout-member-connect',
  TimeoutMemberData: 'loadbalancer.openstack.org/timeout-member-data',
  TimeoutTcpInspect: 'loadbalancer.openstack.org/timeout-tcp-inspect',
  XForwardedFor: 'loadbalancer.openstack.org/x-forwarded-for',
  FlavorId: 'loadbalancer.openstack.org/flavor-id',
  AvailabilityZone: 'loadbalancer.openstack.org/availability-zone',
  EnableHealthMonitor: 'loadbalancer.openstack.org/enable-health-monitor',
  HealthMonitorDelay: 'loadbalancer.openstack.org/health-monitor-delay',
  HealthMonitorTimeout: 'loadbalancer.openstack.org/health-monitor-timeout',
  HealthMonitorMaxRetries: 'loadbalancer.openstack.org/health-monitor-max-retries',
  HealthMonitorMaxRetriesDown: 'loadbalancer.openstack.org/health-monitor-max-retries-down',
  Hostname: 'loadbalancer.openstack.org/hostname',
  TlsContainerRef: 'loadbalancer.openstack.org/default-tls-container-ref',
  /** Written by the CCM after the first reconcile; set by a user to share an existing load balancer. */
  LoadBalancerId: 'loadbalancer.openstack.org/load-balancer-id',
  /** Written by the CCM: the floating IP or VIP address. */
  LoadBalancerAddress: 'loadbalancer.openstack.org/load-balancer-address',
} as const;

export type AnnotationName = (typeof Annotation)[keyof typeof Annotation];

/** Every `loadbalancer.openstack.org/` annotation OCCM knows, for did-you-mean on typos. */
export const KNOWN_OPENSTACK_ANNOTATIONS: readonly string[] = Object.values(Annotation).filter((a) =>
  a.startsWith(ANNOTATION_PREFIX),
);

/** `metadata.annotations['…']`, the field path problems point at. */
export function annotationField(name: string): string {
  return `metadata.annotations['${name}']`;
}
