/**
 * The CCM's view of cloud.conf once validated: every section OCCM reads, with OCCM's defaults
 * applied. Unset optional strings are absent rather than empty (OCCM treats "" as unset too).
 */
import type { CloudConfig } from '../../openstack/config/types.ts';

/** Octavia's pool algorithms; OCCM passes `lb-method` through to Octavia unchecked. */
export const LB_METHODS = ['ROUND_ROBIN', 'LEAST_CONNECTIONS', 'SOURCE_IP', 'SOURCE_IP_PORT'] as const;
export type LbMethod = (typeof LB_METHODS)[number];

/** `k=v, k2` as OCCM's StringToMap reads it: a key alone (or `k=`) means "the label exists". */
export type NodeSelector = ReadonlyMap<string, string>;

export interface LoadBalancerOptions {
  /** false: the Service controller is not started (`LoadBalancer()` returns false upstream). */
  enabled: boolean;
  subnetId?: string;
  memberSubnetId?: string;
  networkId?: string;
  floatingNetworkId?: string;
  floatingSubnetId?: string;
  floatingSubnet?: string;
  floatingSubnetTags?: string;
  lbMethod: LbMethod;
  /** Passed to Octavia as is; only `ovn` changes what OCCM asks for. */
  lbProvider: string;
  createMonitor: boolean;
  /** Whole seconds, as OCCM sends them to Octavia (`int(d.Seconds())`, truncated). */
  monitorDelay: number;
  monitorTimeout: number;
  monitorMaxRetries: number;
  monitorMaxRetriesDown: number;
  manageSecurityGroups: boolean;
  internalLb: boolean;
  nodeSelector: NodeSelector;
  cascadeDelete: boolean;
  flavorId?: string;
  availabilityZone?: string;
  enableIngressHostname: boolean;
  ingressHostnameSuffix: string;
  defaultTlsContainerRef?: string;
  containerStore: string;
  maxSharedLb: number;
  providerRequiresSerialApiCalls: boolean;
}

/** `[LoadBalancerClass "name"]`: the values a Service picks with `loadbalancer.openstack.org/class`. */
export interface LoadBalancerClass {
  name: string;
  floatingNetworkId?: string;
  floatingSubnetId?: string;
  floatingSubnet?: string;
  floatingSubnetTags?: string;
  networkId?: string;
  subnetId?: string;
  memberSubnetId?: string;
}

export interface NetworkingOptions {
  ipv6SupportDisabled: boolean;
  /** Networks whose addresses are ExternalIP, in file order. */
  publicNetworkNames: readonly string[];
  /** When not empty, the only networks that give InternalIP. */
  internalNetworkNames: readonly string[];
  /** The CIDRs of `address-sort-order` that parse, in priority order (invalid ones are warned and skipped, as upstream). */
  addressSortOrder: readonly string[];
}

export interface RouteOptions {
  routerId?: string;
}

export type MetadataSource = 'configDrive' | 'metadataService';

export interface MetadataOptions {
  searchOrder: readonly MetadataSource[];
}

/** `[Global] secret-name` / `secret-namespace`: where the rest of the config lives (in-tree provider feature). */
export interface SecretRef {
  namespace: string;
  name: string;
}

export interface CcmConfig {
  /** The cloud.conf path. */
  file: string;
  /** `[Global]` (with clouds.yaml under use-clouds) and `[Metadata] request-timeout`. */
  cloud: CloudConfig;
  secret?: SecretRef;
  loadBalancer: LoadBalancerOptions;
  loadBalancerClasses: ReadonlyMap<string, LoadBalancerClass>;
  networking: NetworkingOptions;
  route: RouteOptions;
  metadata: MetadataOptions;
  /** OS_CCM_REGIONAL=true: providerIDs are written as openstack://<region>/<id>. */
  regionalProviderId: boolean;
  /** One line each, `file:line: key "…": text`, for the log and a startup Event. */
  warnings: string[];
}

/** Everything but `[Global]`: what the CCM reads itself. */
export type CcmSections = Omit<CcmConfig, 'file' | 'cloud' | 'warnings' | 'regionalProviderId'>;

/**
 * The effective config as it changes (the `[Global] secret-name` Secret is watched): controllers read
 * `current()` on every reconcile and re-queue what a change concerns from `onChange`, so a rotated
 * section takes effect without a restart. CcmConfigSource is one.
 */
export interface LiveConfig {
  current(): CcmConfig;
  /** Called after `current()` has changed; returns the remover. */
  onChange(fn: (next: CcmConfig, previous: CcmConfig) => void | Promise<void>): () => void;
}
