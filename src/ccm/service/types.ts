/** What parseService makes of a Service: one typed, validated load balancer spec and its problems. */
import type { RefusedInput } from '../../openstack/services/loadbalancer/index.ts';
import type { LbMethod, NodeSelector } from '../config/types.ts';
import type { EventReason } from '../events.ts';
import type { IpFamily } from '../members.ts';
import type { FloatingSubnetSpec } from './floating-subnet.ts';

export interface ServiceProblem {
  /** The Event reason: OCCM's where it has one (see events.ts). */
  reason: EventReason;
  message: string;
  /** The Service field at fault: `metadata.annotations['…']`, `spec.ports[1].protocol`, … */
  field: string;
  /**
   * true: OCCM would fail the sync (the Service cannot be reconciled until fixed); false: a default
   * or a degraded setting is used and the Service is reconciled anyway.
   */
  fatal: boolean;
}

export interface ListenerSpec {
  /** The index in spec.ports, which OCCM puts in the listener, pool and monitor names. */
  index: number;
  portName?: string;
  /** The Service port protocol (TCP, UDP, SCTP). */
  protocol: string;
  port: number;
  /** 0 when allocateLoadBalancerNodePorts is false: the pool gets no members and no SG rule. */
  nodePort: number;
  /** TERMINATED_HTTPS with a TLS ref, HTTP with X-Forwarded-For, else the Service protocol. */
  listenerProtocol: string;
  /** PROXY / PROXYV2 with proxy-protocol, HTTP with X-Forwarded-For or TLS, else the listener's. */
  poolProtocol: string;
  /**
   * The health monitor type when monitors are enabled: HTTP (GET /healthz on healthCheckNodePort,
   * which members then carry as monitor_port) for ETP=Local, else TCP, UDP-CONNECT or the protocol.
   * Absent when the provider cannot monitor this protocol.
   */
  monitorType?: string;
}

export interface HealthMonitorSpec {
  enabled: boolean;
  /** Seconds. */
  delay: number;
  timeout: number;
  maxRetries: number;
  maxRetriesDown: number;
  /** Set when enabled, externalTrafficPolicy is Local and the Service has a healthCheckNodePort. */
  healthCheckNodePort?: number;
}

export interface ListenerTimeouts {
  /** Milliseconds, Octavia's listener fields timeout_client_data etc. */
  clientData: number;
  memberConnect: number;
  memberData: number;
  tcpInspect: number;
}

export interface FloatingIpSpec {
  /** Undefined: the first external network with subnets is autodetected. */
  networkId?: string;
  subnet?: FloatingSubnetSpec;
  /** spec.loadBalancerIP: an existing floating IP to take, or the address to create. */
  address?: string;
}

export interface LoadBalancerSpec {
  service: { namespace: string; name: string; uid: string };
  /** The load-balancer-id annotation: the load balancer to use (ours, or one to share). */
  loadBalancerId?: string;
  /** spec.ipFamilies[0]; one load balancer per Service, so dual-stack uses the first family. */
  ipFamily?: IpFamily;
  internal: boolean;
  className?: string;
  /** [LoadBalancer] lb-provider. */
  provider: string;
  vip: { portId?: string; networkId?: string; subnetId?: string; address?: string };
  /** Undefined: the VIP subnet (autodetected from the first member node when that is unknown too). */
  memberSubnetId?: string;
  /** Absent for internal Services. */
  floatingIp?: FloatingIpSpec;
  keepFloatingIp: boolean;
  listeners: ListenerSpec[];
  connectionLimit: number;
  lbMethod: LbMethod;
  sessionPersistence?: 'SOURCE_IP';
  proxyProtocol?: 'PROXY' | 'PROXYV2';
  xForwardedFor: boolean;
  tlsContainerRef?: string;
  timeouts: ListenerTimeouts;
  /** Any timeout annotation was given (not just the defaults). */
  timeoutsSet: boolean;
  /** CIDRs as Go prints them (network address, no duplicates); allow-all of the family when none are given. */
  sourceRanges: string[];
  /** The user gave ranges (spec or annotation), as opposed to the allow-all default. */
  sourceRangesSet: boolean;
  flavorId?: string;
  availabilityZone?: string;
  monitor: HealthMonitorSpec;
  nodeSelector: NodeSelector;
  /** The hostname annotation: reported in status instead of the IP. */
  hostname?: string;
  /**
   * Where each value the cloud may refuse came from (`annotation loadbalancer.openstack.org/flavor-id`,
   * `cloud.conf [LoadBalancer] subnet-id`), so a refusal names what the user must fix.
   */
  origins: Partial<Record<RefusedInput, string>>;
}

export interface ParsedService {
  /** Undefined when a fatal problem stops the reconcile. */
  spec: LoadBalancerSpec | undefined;
  problems: ServiceProblem[];
}
