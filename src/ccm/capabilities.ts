/**
 * What a load balancer can be given on this cloud: the Octavia API version gates OCCM checks
 * (`IsOctaviaFeatureSupported` in `pkg/util/openstack/loadbalancer.go`: the current version is the
 * last one `GET /` lists, and a document without a version turns every gated feature off; unlike
 * OCCM, a document that could not be read at all is waited for, never taken for "no feature") and what
 * each provider driver accepts (protocols, algorithms, monitor types; from octavia's amphora driver
 * and ovn-octavia-provider). applyCapabilities turns a LoadBalancerSpec into what will actually be
 * asked for, and says what was left out and why, with OCCM's Event reason where it has one, so that a
 * provider's limit gives a Warning Event, never a failed create.
 */
import type { ApiVersion } from '../openstack/core/api-version.ts';
import { compareApiVersions } from '../openstack/core/api-version.ts';
import type { LbMethod } from './config/types.ts';
import { ShiftstackReason, UpstreamReason } from './events.ts';
import { Annotation, annotationField } from './service/annotations.ts';
import type { ListenerSpec, LoadBalancerSpec, ServiceProblem } from './service/types.ts';

export const OctaviaFeature = {
  Tags: 'tags',
  VipAcl: 'vip-acl',
  Flavors: 'flavors',
  Timeouts: 'timeouts',
  AvailabilityZones: 'availability-zones',
  HttpMonitorsOnUdp: 'http-monitors-on-udp',
} as const;
export type OctaviaFeatureName = (typeof OctaviaFeature)[keyof typeof OctaviaFeature];

/** The API version each feature needs, and whether OCCM allows it with `lb-provider = ovn`. */
export const FEATURE_GATES: Readonly<Record<OctaviaFeatureName, { minVersion: ApiVersion; ovn: boolean }>> = {
  tags: { minVersion: { major: 2, minor: 5 }, ovn: true },
  'vip-acl': { minVersion: { major: 2, minor: 12 }, ovn: false },
  flavors: { minVersion: { major: 2, minor: 6 }, ovn: false },
  timeouts: { minVersion: { major: 2, minor: 1 }, ovn: false },
  'availability-zones': { minVersion: { major: 2, minor: 14 }, ovn: false },
  'http-monitors-on-udp': { minVersion: { major: 2, minor: 16 }, ovn: false },
};

export interface OctaviaCapabilities {
  /** `[LoadBalancer] lb-provider`: OCCM compares it with "ovn" and nothing else. */
  provider: string;
  /** The current Octavia API version; undefined when it could not be read. */
  apiVersion: ApiVersion | undefined;
}

export function supportsFeature(caps: OctaviaCapabilities, feature: OctaviaFeatureName): boolean {
  const gate = FEATURE_GATES[feature];
  if (caps.provider === 'ovn' && !gate.ovn) return false;
  return caps.apiVersion !== undefined && compareApiVersions(caps.apiVersion, gate.minVersion) >= 0;
}

/** What a provider driver accepts. Unknown providers (vendor drivers) are assumed to accept everything. */
export interface ProviderProfile {
  family: 'amphora' | 'ovn' | 'other';
  listenerProtocols: readonly string[] | undefined;
  poolProtocols: readonly string[] | undefined;
  algorithms: readonly LbMethod[] | undefined;
  monitorTypes: readonly string[] | undefined;
  /** The algorithm used when the asked one is refused. */
  defaultAlgorithm: LbMethod | undefined;
}

const AMPHORA: ProviderProfile = {
  family: 'amphora',
  listenerProtocols: ['TCP', 'UDP', 'SCTP', 'HTTP', 'HTTPS', 'TERMINATED_HTTPS'],
  poolProtocols: ['TCP', 'UDP', 'SCTP', 'HTTP', 'HTTPS', 'PROXY', 'PROXYV2'],
  algorithms: ['ROUND_ROBIN', 'LEAST_CONNECTIONS', 'SOURCE_IP'],
  monitorTypes: ['HTTP', 'HTTPS', 'PING', 'TCP', 'TLS-HELLO', 'UDP-CONNECT', 'SCTP'],
  defaultAlgorithm: 'ROUND_ROBIN',
};

const OVN: ProviderProfile = {
  family: 'ovn',
  listenerProtocols: ['TCP', 'UDP', 'SCTP'],
  poolProtocols: ['TCP', 'UDP', 'SCTP'],
  algorithms: ['SOURCE_IP_PORT'],
  monitorTypes: ['TCP', 'UDP-CONNECT'],
  defaultAlgorithm: 'SOURCE_IP_PORT',
};

const OTHER: ProviderProfile = {
  family: 'other',
  listenerProtocols: undefined,
  poolProtocols: undefined,
  algorithms: undefined,
  monitorTypes: undefined,
  defaultAlgorithm: undefined,
};

export function providerProfile(provider: string): ProviderProfile {
  if (provider === 'ovn') return OVN;
  if (provider === 'amphora' || provider === 'octavia' || provider === 'amphorav2') return AMPHORA;
  return OTHER;
}

/** Octavia's udp_connect_min_interval_health_monitor default: UDP-CONNECT monitors need a delay of at least this. */
export const UDP_CONNECT_MIN_DELAY = 3;

export interface LoadBalancerPlan {
  /** The spec with what the cloud cannot do taken out. */
  spec: LoadBalancerSpec;
  /** Record the Service's name as a tag on the load balancer and listeners (needed to share). */
  tags: boolean;
  /** Send the four listener timeouts. */
  timeouts: boolean;
  /** Listener allowed_cidrs (VIP ACL), when Octavia enforces the source ranges. */
  allowedCidrs?: string[];
  /** ovn with manage-security-groups: the member security group opens NodePorts to these ranges instead. */
  securityGroupRanges?: string[];
  degradations: ServiceProblem[];
}

/** OCCM's canUseHTTPMonitor for one port. */
export function canUseHttpMonitor(caps: OctaviaCapabilities, protocol: string): boolean {
  if (caps.provider === 'ovn') return false;
  if (protocol === 'UDP') return supportsFeature(caps, OctaviaFeature.HttpMonitorsOnUdp);
  return true;
}

export function applyCapabilities(
  input: LoadBalancerSpec,
  caps: OctaviaCapabilities,
  options: { manageSecurityGroups: boolean },
): LoadBalancerPlan {
  const spec: LoadBalancerSpec = structuredClone(input);
  const profile = providerProfile(caps.provider);
  const degradations: ServiceProblem[] = [];
  const degrade = (reason: ServiceProblem['reason'], field: string, message: string) =>
    degradations.push({ reason, field, message, fatal: false });
  const version = caps.apiVersion ? `${caps.apiVersion.major}.${caps.apiVersion.minor}` : 'unknown';
  const why = (feature: OctaviaFeatureName) =>
    caps.provider === 'ovn' && !FEATURE_GATES[feature].ovn
      ? 'the ovn provider does not support it'
      : `it needs Octavia API ${FEATURE_GATES[feature].minVersion.major}.${FEATURE_GATES[feature].minVersion.minor} (this cloud: ${version})`;

  const timeouts = supportsFeature(caps, OctaviaFeature.Timeouts);
  if (!timeouts && spec.timeoutsSet) {
    degrade(
      ShiftstackReason.OptionIgnored,
      annotationField(Annotation.TimeoutClientData),
      `listener timeouts are not set: ${why(OctaviaFeature.Timeouts)}`,
    );
  }

  if (spec.flavorId !== undefined && !supportsFeature(caps, OctaviaFeature.Flavors)) {
    degrade(
      ShiftstackReason.OptionIgnored,
      annotationField(Annotation.FlavorId),
      `flavor ${spec.flavorId} is not used: ${why(OctaviaFeature.Flavors)}`,
    );
    delete spec.flavorId;
  }

  if (spec.availabilityZone !== undefined && !supportsFeature(caps, OctaviaFeature.AvailabilityZones)) {
    degrade(
      UpstreamReason.AvailabilityZonesIgnored,
      annotationField(Annotation.AvailabilityZone),
      `LoadBalancer Availability Zones aren't supported (${why(OctaviaFeature.AvailabilityZones)}); availability zone ${spec.availabilityZone} is not used`,
    );
    delete spec.availabilityZone;
  }

  let allowedCidrs: string[] | undefined;
  let securityGroupRanges: string[] | undefined;
  if (supportsFeature(caps, OctaviaFeature.VipAcl)) {
    allowedCidrs = spec.sourceRanges;
  } else if (caps.provider === 'ovn' && options.manageSecurityGroups) {
    securityGroupRanges = spec.sourceRanges;
  } else if (spec.sourceRangesSet) {
    // OCCM sends this Event on every sync, ranges or not; we send it only when ranges were asked for.
    degrade(
      UpstreamReason.SourceRangesIgnored,
      'spec.loadBalancerSourceRanges',
      `LoadBalancerSourceRanges are ignored for Service ${spec.service.namespace}/${spec.service.name}: ${why(OctaviaFeature.VipAcl)}` +
        (caps.provider === 'ovn'
          ? ' (set manage-security-groups = true to enforce them with a security group)'
          : ''),
    );
  }

  if (profile.algorithms && !profile.algorithms.includes(spec.lbMethod)) {
    const used = profile.defaultAlgorithm!;
    degrade(
      UpstreamReason.LbMethodUnknown,
      annotationField(Annotation.LbMethod),
      `the ${caps.provider} provider does not support the ${spec.lbMethod} algorithm; ${used} is used`,
    );
    spec.lbMethod = used;
  }

  if (spec.proxyProtocol && profile.poolProtocols && !profile.poolProtocols.includes(spec.proxyProtocol)) {
    degrade(
      ShiftstackReason.OptionIgnored,
      annotationField(Annotation.ProxyProtocol),
      `the ${caps.provider} provider does not support ${spec.proxyProtocol} pools; the PROXY protocol is not used`,
    );
    delete spec.proxyProtocol;
    for (const l of spec.listeners) l.poolProtocol = l.listenerProtocol;
  }

  if (profile.listenerProtocols && (spec.tlsContainerRef !== undefined || spec.xForwardedFor)) {
    const refused = spec.listeners.filter((l) => !profile.listenerProtocols!.includes(l.listenerProtocol));
    if (refused.length > 0) {
      const field =
        spec.tlsContainerRef !== undefined ? Annotation.TlsContainerRef : Annotation.XForwardedFor;
      degrade(
        ShiftstackReason.OptionIgnored,
        annotationField(field),
        `the ${caps.provider} provider does not support ${refused[0]!.listenerProtocol} listeners; ` +
          `${spec.tlsContainerRef !== undefined ? 'TLS termination' : 'X-Forwarded-For'} is not used`,
      );
      delete spec.tlsContainerRef;
      spec.xForwardedFor = false;
      for (const l of spec.listeners) {
        l.listenerProtocol = l.protocol;
        l.poolProtocol = spec.proxyProtocol ?? l.protocol;
      }
    }
  }

  const downgraded = spec.listeners.filter(
    (l) => l.monitorType === 'HTTP' && !canUseHttpMonitor(caps, l.protocol),
  );
  for (const l of downgraded) l.monitorType = baseMonitorType(l);
  if (downgraded.length > 0) {
    degrade(
      ShiftstackReason.HealthMonitorDowngraded,
      'spec.externalTrafficPolicy',
      `an HTTP health monitor on the health check node port is not possible for ${downgraded.map((l) => `${l.protocol} port ${l.port}`).join(', ')} ` +
        `(${caps.provider === 'ovn' ? 'the ovn provider has no HTTP monitors' : why(OctaviaFeature.HttpMonitorsOnUdp)}); ` +
        'a connection monitor on the node port is used, so nodes without a ready endpoint still get traffic',
    );
  }

  const unmonitored = spec.monitor.enabled
    ? spec.listeners.filter(
        (l) => l.monitorType && profile.monitorTypes && !profile.monitorTypes.includes(l.monitorType),
      )
    : [];
  for (const l of unmonitored) {
    degrade(
      ShiftstackReason.OptionIgnored,
      annotationField(Annotation.EnableHealthMonitor),
      `the ${caps.provider} provider has no ${l.monitorType!} health monitor; ${l.protocol} port ${l.port} gets none`,
    );
    delete l.monitorType;
  }

  if (
    spec.monitor.enabled &&
    spec.monitor.delay < UDP_CONNECT_MIN_DELAY &&
    spec.listeners.some((l) => l.monitorType === 'UDP-CONNECT')
  ) {
    degrade(
      ShiftstackReason.OptionIgnored,
      annotationField(Annotation.HealthMonitorDelay),
      `UDP-CONNECT health monitors need a delay of at least ${UDP_CONNECT_MIN_DELAY}s; ${UDP_CONNECT_MIN_DELAY}s is used instead of ${spec.monitor.delay}s`,
    );
    spec.monitor.delay = UDP_CONNECT_MIN_DELAY;
  }

  return {
    spec,
    tags: supportsFeature(caps, OctaviaFeature.Tags),
    timeouts,
    ...(allowedCidrs ? { allowedCidrs } : {}),
    ...(securityGroupRanges ? { securityGroupRanges } : {}),
    degradations,
  };
}

/** The monitor OCCM uses without HTTP: UDP-CONNECT for UDP, else the port's protocol (TCP, SCTP). */
function baseMonitorType(l: ListenerSpec): string {
  return l.protocol === 'UDP' ? 'UDP-CONNECT' : l.protocol;
}
