/**
 * `[LoadBalancer]`: every key of OCCM's LoadBalancerOpts with the defaults ReadConfig sets, and the
 * checks OCCM makes at startup (lb-version, lb-provider, container-store), plus the ones Octavia would
 * make later on every Service (monitor ranges, algorithm names) so a typo fails once, at startup,
 * instead of on every load balancer.
 */
import { parseNodeSelector } from '../node-selector.ts';
import { defined } from '../defined.ts';
import type { SectionReader } from './section-reader.ts';
import { LB_METHODS, type LoadBalancerOptions } from './types.ts';

const KEYS = [
  'enabled',
  'lb-version',
  'subnet-id',
  'member-subnet-id',
  'network-id',
  'floating-network-id',
  'floating-subnet-id',
  'floating-subnet',
  'floating-subnet-tags',
  'lb-method',
  'lb-provider',
  'create-monitor',
  'monitor-delay',
  'monitor-timeout',
  'monitor-max-retries',
  'monitor-max-retries-down',
  'manage-security-groups',
  'internal-lb',
  'node-selector',
  'cascade-delete',
  'flavor-id',
  'availability-zone',
  'enable-ingress-hostname',
  'ingress-hostname-suffix',
  'default-tls-container-ref',
  'container-store',
  'max-shared-lb',
  'provider-requires-serial-api-calls',
];

const RETIRED = {
  'use-octavia': 'removed in OCCM v1.26 (Octavia is the only load balancer service)',
};

/** OCCM's supportedLBProvider; any other name is only warned about and passed to Octavia. */
export const KNOWN_LB_PROVIDERS = ['amphora', 'octavia', 'ovn', 'f5', 'amphorav2'];
const CONTAINER_STORES = ['barbican', 'external'];

export const LOAD_BALANCER_DEFAULTS: LoadBalancerOptions = {
  enabled: true,
  lbMethod: 'ROUND_ROBIN',
  lbProvider: 'amphora',
  createMonitor: false,
  monitorDelay: 5,
  monitorTimeout: 3,
  monitorMaxRetries: 1,
  monitorMaxRetriesDown: 3,
  manageSecurityGroups: false,
  internalLb: false,
  nodeSelector: new Map(),
  cascadeDelete: true,
  enableIngressHostname: false,
  ingressHostnameSuffix: 'nip.io',
  containerStore: 'barbican',
  maxSharedLb: 2,
  providerRequiresSerialApiCalls: false,
};

const RETRIES_FIX = 'Octavia accepts 1 to 10 checks';

export function readLoadBalancerSection(r: SectionReader): LoadBalancerOptions {
  const d = LOAD_BALANCER_DEFAULTS;
  r.checkKeys(KEYS, { retired: RETIRED });

  const lbVersion = r.text('lb-version');
  if (lbVersion !== undefined && lbVersion !== 'v2') {
    r.problem(
      r.entry('lb-version')!,
      lbVersion,
      'only LBaaS v2 (Octavia) exists',
      'remove lb-version, or set lb-version = v2',
    );
  }

  const lbProvider = r.text('lb-provider') ?? d.lbProvider;
  const providerEntry = r.entry('lb-provider');
  if (providerEntry && !KNOWN_LB_PROVIDERS.includes(lbProvider)) {
    r.warn(
      providerEntry,
      `"${lbProvider}" is not a provider OCCM knows (${KNOWN_LB_PROVIDERS.join(', ')}); it is passed to Octavia as is`,
    );
  }

  const lbMethod = r.oneOf('lb-method', d.lbMethod, LB_METHODS, 'load balancing algorithm');
  if (lbProvider === 'ovn' && lbMethod !== 'SOURCE_IP_PORT') {
    const at = r.entry('lb-method') ?? providerEntry!;
    r.warn(
      at,
      `the ovn provider supports only SOURCE_IP_PORT, not ${lbMethod}; set lb-method = SOURCE_IP_PORT ` +
        '(until then SOURCE_IP_PORT is used, with a LoadBalancerLbMethodUnknown Event)',
    );
  }

  const containerStore = r.text('container-store') ?? d.containerStore;
  if (!CONTAINER_STORES.includes(containerStore)) {
    r.warn(
      r.entry('container-store')!,
      `"${containerStore}" is not a container store OCCM knows (${CONTAINER_STORES.join(', ')})`,
    );
  }
  const defaultTlsContainerRef = r.text('default-tls-container-ref');
  if (defaultTlsContainerRef !== undefined && containerStore === 'barbican') {
    r.warn(
      r.entry('default-tls-container-ref')!,
      'not supported yet: the reference is not looked up in Barbican before use (OCCM does); ' +
        'Octavia still checks it when it creates the listener',
    );
  }

  const suffixEntry = r.entry('ingress-hostname-suffix');
  const ingressHostnameSuffix = r.text('ingress-hostname-suffix');
  if (suffixEntry && !suffixEntry.implicit && ingressHostnameSuffix === undefined) {
    r.warn(suffixEntry, `empty; ${d.ingressHostnameSuffix} is used`);
  }

  const nodeSelectorText = r.text('node-selector');
  const nodeSelector = nodeSelectorText === undefined ? undefined : parseNodeSelector(nodeSelectorText);
  if (nodeSelector && nodeSelector.suspicious.length > 0) {
    r.warn(
      r.entry('node-selector')!,
      `${nodeSelector.suspicious.map((p) => JSON.stringify(p)).join(', ')} cannot match a node label as written ` +
        '(OCCM keeps the blanks around "="); write key=value without blanks',
    );
  }

  const opts = {
    enabled: r.bool('enabled', d.enabled),
    lbMethod,
    lbProvider,
    createMonitor: r.bool('create-monitor', d.createMonitor),
    monitorDelay: seconds(r, 'monitor-delay', d.monitorDelay),
    monitorTimeout: seconds(r, 'monitor-timeout', d.monitorTimeout),
    monitorMaxRetries: r.integer('monitor-max-retries', d.monitorMaxRetries, {
      min: 1,
      max: 10,
      fix: RETRIES_FIX,
    }),
    monitorMaxRetriesDown: r.integer('monitor-max-retries-down', d.monitorMaxRetriesDown, {
      min: 1,
      max: 10,
      fix: RETRIES_FIX,
    }),
    manageSecurityGroups: r.bool('manage-security-groups', d.manageSecurityGroups),
    internalLb: r.bool('internal-lb', d.internalLb),
    nodeSelector: nodeSelector?.selector ?? d.nodeSelector,
    cascadeDelete: r.bool('cascade-delete', d.cascadeDelete),
    enableIngressHostname: r.bool('enable-ingress-hostname', d.enableIngressHostname),
    ingressHostnameSuffix: ingressHostnameSuffix ?? d.ingressHostnameSuffix,
    containerStore,
    maxSharedLb: r.integer('max-shared-lb', d.maxSharedLb, {
      min: 0,
      fix: 'use the number of Services one load balancer may serve; 1 (or 0) turns sharing off',
    }),
    providerRequiresSerialApiCalls: r.bool(
      'provider-requires-serial-api-calls',
      d.providerRequiresSerialApiCalls,
    ),
  };
  return {
    ...opts,
    ...defined({
      subnetId: r.text('subnet-id'),
      memberSubnetId: r.text('member-subnet-id'),
      networkId: r.text('network-id'),
      floatingNetworkId: r.text('floating-network-id'),
      floatingSubnetId: r.text('floating-subnet-id'),
      floatingSubnet: r.subnetPattern('floating-subnet'),
      floatingSubnetTags: r.text('floating-subnet-tags'),
      flavorId: r.text('flavor-id'),
      availabilityZone: r.text('availability-zone'),
      defaultTlsContainerRef,
    }),
  };
}

/** Octavia takes whole seconds and OCCM truncates (`int(d.Seconds())`); say so when that drops a fraction. */
function seconds(r: SectionReader, key: string, fallback: number): number {
  const ms = r.duration(key, fallback * 1000, `${fallback}s`);
  const whole = Math.trunc(ms / 1000);
  if (ms !== whole * 1000) r.warn(r.entry(key)!, `Octavia takes whole seconds; ${whole}s is used`);
  return whole;
}
