/**
 * One Service of type LoadBalancer, read once into a typed LoadBalancerSpec with OCCM's defaults and
 * precedence (checkService / makeSvcConf in `pkg/openstack/loadbalancer.go`), so the controllers never
 * look at an annotation again. Nothing here throws on user input: what OCCM would fail the sync for is
 * a fatal problem (and no spec), what it would log and default is a non-fatal one.
 *
 * Precedence, as OCCM applies it:
 * - floating network and subnet: the class (`loadbalancer.openstack.org/class`), then the
 *   annotations, then cloud.conf, then autodetection (left to the controller);
 * - VIP subnet and network: the annotation, then the class, then cloud.conf; but for an external
 *   Service the class's subnet-id / network-id win over the annotations when the load balancer is
 *   created (OCCM reads the class again there);
 * - member subnet: member-subnet-id (annotation, class, cloud.conf); else `[LoadBalancer] subnet-id`;
 *   else the VIP subnet;
 * - every other annotation over its cloud.conf key. An annotation that is present but empty still
 *   wins (an empty floating-network-id means "autodetect", not "use cloud.conf").
 */
import type { V1Service } from '@kubernetes/client-node';
import type { LoadBalancerClass, LoadBalancerOptions } from './config/types.ts';
import { LB_METHODS, type LbMethod } from './config/types.ts';
import { defined } from './defined.ts';
import { FrameworkReason, ShiftstackReason, UpstreamReason } from './events.ts';
import type { IpFamily } from './members.ts';
import { parseNodeSelector } from './node-selector.ts';
import { AnnotationReader } from './service/annotation-reader.ts';
import { Annotation, annotationField } from './service/annotations.ts';
import { floatingSubnetSpec, type FloatingSubnetSpec } from './service/floating-subnet.ts';
import { sourceRanges } from './service/source-ranges.ts';
import type {
  FloatingIpSpec,
  ListenerSpec,
  LoadBalancerSpec,
  ParsedService,
  ServiceProblem,
} from './service/types.ts';

export interface ServiceConfigOptions {
  loadBalancer: LoadBalancerOptions;
  loadBalancerClasses: ReadonlyMap<string, LoadBalancerClass>;
}

/**
 * The k8s.io/cloud-provider service controller's wantsLoadBalancer: type LoadBalancer, and no
 * `spec.loadBalancerClass` (a Service that names one belongs to another controller).
 */
export function wantsLoadBalancer(service: V1Service): boolean {
  return service.spec?.type === 'LoadBalancer' && !service.spec.loadBalancerClass;
}

const fatal = (field: string, message: string): ServiceProblem => ({
  reason: FrameworkReason.SyncLoadBalancerFailed,
  message,
  field,
  fatal: true,
});

export function parseService(service: V1Service, config: ServiceConfigOptions): ParsedService {
  const opts = config.loadBalancer;
  const r = new AnnotationReader(service);
  r.checkUnknown();
  const namespace = service.metadata?.namespace ?? 'default';
  const name = service.metadata?.name ?? '';
  const serviceName = `${namespace}/${name}`;
  const spec = service.spec ?? {};
  const ports = spec.ports ?? [];
  if (ports.length === 0) r.problem(fatal('spec.ports', 'no service ports provided'));

  const first = spec.ipFamilies?.[0];
  const ipFamily: IpFamily | undefined = first === 'IPv4' || first === 'IPv6' ? first : undefined;

  const internal = readInternal(r, opts);

  const tlsContainerRef =
    r.string(Annotation.TlsContainerRef, opts.defaultTlsContainerRef ?? '') || undefined;
  if (tlsContainerRef !== undefined && opts.containerStore === 'barbican') {
    const field = r.has(Annotation.TlsContainerRef)
      ? annotationField(Annotation.TlsContainerRef)
      : 'cloud.conf [LoadBalancer] default-tls-container-ref';
    const parts = tlsContainerRef.split('/');
    if (parts.length < 2) {
      r.problem(fatal(field, `invalid tlsContainerRef for service ${serviceName}`));
    } else if (!['containers', 'secrets'].includes(parts[parts.length - 2]!)) {
      r.problem(
        fatal(
          field,
          `failed to validate tlsContainerRef for service ${serviceName}: tlsContainerRef type ${parts[parts.length - 2]} unknown`,
        ),
      );
    }
  }

  const className = r.string(Annotation.Class) || undefined;
  const lbClass = className === undefined ? undefined : config.loadBalancerClasses.get(className);
  if (className !== undefined && !lbClass) {
    const known = [...config.loadBalancerClasses.keys()];
    r.problem(
      fatal(
        annotationField(Annotation.Class),
        `invalid loadbalancer class ${JSON.stringify(className)} (cloud.conf defines ${known.length > 0 ? known.map((k) => JSON.stringify(k)).join(', ') : 'none'})`,
      ),
    );
  }

  // getSubnetID / getNetworkID: annotation, then class, then cloud.conf.
  const lbSubnetId = r.string(Annotation.SubnetId) || lbClass?.subnetId || opts.subnetId;
  const lbNetworkId = r.string(Annotation.NetworkId) || lbClass?.networkId || opts.networkId;
  // createOctaviaLoadBalancer reads the class again, but OCCM only records it for external Services.
  const createClass = internal ? undefined : lbClass;
  const portId = r.string(Annotation.PortId) || undefined;
  const loadBalancerIP = spec.loadBalancerIP || undefined;
  const vip: LoadBalancerSpec['vip'] = portId
    ? { portId }
    : defined({
        subnetId: createClass?.subnetId || lbSubnetId,
        networkId: createClass?.networkId || lbNetworkId,
      });
  if (loadBalancerIP && (internal || ipFamily === 'IPv6')) vip.address = loadBalancerIP;
  const origins: LoadBalancerSpec['origins'] = defined({
    'vip.portId': portId ? annotationOrigin(Annotation.PortId) : undefined,
    'vip.subnetId': vipOrigin(r, Annotation.SubnetId, 'subnet-id', createClass, lbClass, opts.subnetId),
    'vip.networkId': vipOrigin(r, Annotation.NetworkId, 'network-id', createClass, lbClass, opts.networkId),
    'vip.address': vip.address ? 'spec.loadBalancerIP' : undefined,
    flavorId: r.string(Annotation.FlavorId, opts.flavorId ?? '')
      ? r.has(Annotation.FlavorId)
        ? annotationOrigin(Annotation.FlavorId)
        : confOrigin('flavor-id')
      : undefined,
    availabilityZone: r.string(Annotation.AvailabilityZone, opts.availabilityZone ?? '')
      ? r.has(Annotation.AvailabilityZone)
        ? annotationOrigin(Annotation.AvailabilityZone)
        : confOrigin('availability-zone')
      : undefined,
    provider: confOrigin('lb-provider'),
  });

  const memberOverride =
    r.string(Annotation.MemberSubnetId) || lbClass?.memberSubnetId || opts.memberSubnetId;
  const memberSubnetId = memberOverride || opts.subnetId || lbSubnetId;

  const floatingIp = internal
    ? undefined
    : readFloatingIp(r, opts, lbClass, loadBalancerIP, ipFamily, origins);

  const xForwardedFor = r.bool(Annotation.XForwardedFor, false);
  const proxyProtocol = readProxyProtocol(r);
  if (proxyProtocol && xForwardedFor) {
    r.problem(
      fatal(
        annotationField(Annotation.ProxyProtocol),
        `annotation ${Annotation.ProxyProtocol} and ${Annotation.XForwardedFor} cannot be used together`,
      ),
    );
  }

  const ranges = sourceRanges(
    spec.loadBalancerSourceRanges,
    r.string(Annotation.SourceRanges) || undefined,
    ipFamily,
  );
  if (!ranges.ok) {
    r.problem(
      fatal(
        ranges.fromSpec ? 'spec.loadBalancerSourceRanges' : annotationField(Annotation.SourceRanges),
        `failed to get source ranges for loadbalancer service ${serviceName}: ${ranges.invalid.map((i) => JSON.stringify(i)).join(', ')} ` +
          'is not a CIDR. Expecting a list of IP ranges, for example 10.0.0.0/24',
      ),
    );
  }

  const monitor = readMonitor(r, opts, spec);
  const timeoutNames = [
    Annotation.TimeoutClientData,
    Annotation.TimeoutMemberConnect,
    Annotation.TimeoutMemberData,
    Annotation.TimeoutTcpInspect,
  ];
  const timeouts = {
    clientData: r.int(Annotation.TimeoutClientData, 50000, { min: 0 }),
    memberConnect: r.int(Annotation.TimeoutMemberConnect, 5000, { min: 0 }),
    memberData: r.int(Annotation.TimeoutMemberData, 50000, { min: 0 }),
    tcpInspect: r.int(Annotation.TimeoutTcpInspect, 0, { min: 0 }),
  };

  const listeners = ports.map((port, index): ListenerSpec => {
    const protocol = port.protocol ?? 'TCP';
    const listenerProtocol = tlsContainerRef ? 'TERMINATED_HTTPS' : xForwardedFor ? 'HTTP' : protocol;
    const poolProtocol =
      proxyProtocol ??
      ((xForwardedFor || tlsContainerRef) && listenerProtocol !== 'HTTP' ? 'HTTP' : listenerProtocol);
    const monitorType =
      monitor.healthCheckNodePort !== undefined ? 'HTTP' : protocol === 'UDP' ? 'UDP-CONNECT' : protocol;
    return {
      index,
      ...(port.name ? { portName: port.name } : {}),
      protocol,
      port: port.port,
      nodePort: port.nodePort ?? 0,
      listenerProtocol,
      poolProtocol,
      monitorType,
    };
  });

  const problems = r.problems;
  if (problems.some((p) => p.fatal) || !ranges.ok) return { spec: undefined, problems };

  const result: LoadBalancerSpec = {
    service: { namespace, name, uid: service.metadata?.uid ?? '' },
    internal,
    provider: opts.lbProvider,
    vip,
    keepFloatingIp: r.bool(Annotation.KeepFloatingIp, false),
    listeners,
    connectionLimit: r.int(Annotation.ConnectionLimit, -1, { min: -1 }),
    lbMethod: readLbMethod(r, opts.lbMethod),
    xForwardedFor,
    timeouts,
    timeoutsSet: timeoutNames.some((n) => r.has(n)),
    sourceRanges: ranges.ranges,
    sourceRangesSet: ranges.set,
    monitor,
    nodeSelector: readNodeSelector(r, opts),
    origins,
    ...defined({
      loadBalancerId: r.string(Annotation.LoadBalancerId) || undefined,
      ipFamily,
      className,
      memberSubnetId,
      floatingIp,
      sessionPersistence: spec.sessionAffinity === 'ClientIP' ? ('SOURCE_IP' as const) : undefined,
      proxyProtocol,
      tlsContainerRef,
      flavorId: r.string(Annotation.FlavorId, opts.flavorId ?? '') || undefined,
      availabilityZone: r.string(Annotation.AvailabilityZone, opts.availabilityZone ?? '') || undefined,
      hostname: r.string(Annotation.Hostname) || undefined,
    }),
  };
  return { spec: result, problems: r.problems };
}

function readInternal(r: AnnotationReader, opts: LoadBalancerOptions): boolean {
  if (!opts.internalLb) return r.bool(Annotation.Internal, false);
  if (r.string(Annotation.Internal) === 'false') {
    r.problem({
      reason: ShiftstackReason.OptionIgnored,
      message: `annotation ${Annotation.Internal}="false" is overridden: cloud.conf [LoadBalancer] internal-lb = true makes every load balancer internal`,
      field: annotationField(Annotation.Internal),
      fatal: false,
    });
  }
  return true;
}

function readFloatingIp(
  r: AnnotationReader,
  opts: LoadBalancerOptions,
  lbClass: LoadBalancerClass | undefined,
  loadBalancerIP: string | undefined,
  ipFamily: IpFamily | undefined,
  origins: LoadBalancerSpec['origins'],
): FloatingIpSpec {
  const networkId =
    lbClass?.floatingNetworkId ||
    r.string(Annotation.FloatingNetworkId, opts.floatingNetworkId ?? '') ||
    undefined;
  if (networkId) {
    origins['floatingIp.networkId'] = lbClass?.floatingNetworkId
      ? classOrigin(lbClass, 'floating-network-id')
      : r.has(Annotation.FloatingNetworkId)
        ? annotationOrigin(Annotation.FloatingNetworkId)
        : confOrigin('floating-network-id');
  }

  const fromClass = {
    subnetId: lbClass?.floatingSubnetId,
    subnet: lbClass?.floatingSubnetId ? undefined : lbClass?.floatingSubnet,
    tags: lbClass?.floatingSubnetId ? undefined : lbClass?.floatingSubnetTags,
  };
  const annotationId = r.string(Annotation.FloatingSubnetId);
  const fromAnnotations = {
    subnetId: annotationId,
    subnet: annotationId ? undefined : r.string(Annotation.FloatingSubnet),
    tags: annotationId ? undefined : r.string(Annotation.FloatingSubnetTags),
  };
  const fromConfig = {
    subnetId: opts.floatingSubnetId,
    subnet: opts.floatingSubnetId ? undefined : opts.floatingSubnet,
    tags: opts.floatingSubnetId ? undefined : opts.floatingSubnetTags,
  };
  const configured = (s: {
    subnetId?: string | undefined;
    subnet?: string | undefined;
    tags?: string | undefined;
  }) => Boolean(s.subnetId || s.subnet || s.tags);
  const [chosen, field] = configured(fromClass)
    ? [fromClass, `cloud.conf [LoadBalancerClass ${JSON.stringify(lbClass?.name)}] floating-subnet`]
    : configured(fromAnnotations)
      ? [fromAnnotations, annotationField(Annotation.FloatingSubnet)]
      : [fromConfig, 'cloud.conf [LoadBalancer] floating-subnet'];
  if (chosen.subnetId) {
    origins['floatingIp.subnet'] =
      chosen === fromClass
        ? classOrigin(lbClass!, 'floating-subnet-id')
        : chosen === fromAnnotations
          ? annotationOrigin(Annotation.FloatingSubnetId)
          : confOrigin('floating-subnet-id');
  }

  let subnet: FloatingSubnetSpec | undefined;
  try {
    subnet = floatingSubnetSpec(chosen);
  } catch (err) {
    r.problem(fatal(field, (err as Error).message));
  }
  // OCCM never gives an IPv6 VIP a floating IP, and loadBalancerIP is then the VIP address.
  const address = loadBalancerIP && ipFamily !== 'IPv6' ? loadBalancerIP : undefined;
  if (address) origins['floatingIp.address'] = 'spec.loadBalancerIP';
  return defined({ networkId, subnet, address });
}

function readProxyProtocol(r: AnnotationReader): 'PROXY' | 'PROXYV2' | undefined {
  const v = r.string(Annotation.ProxyProtocol, 'false');
  if (v === 'true' || v === 'v1') return 'PROXY';
  if (v === 'v2') return 'PROXYV2';
  if (v !== 'false')
    r.invalid(Annotation.ProxyProtocol, v, 'not one of true, v1, v2, false', 'no PROXY protocol');
  return undefined;
}

function readLbMethod(r: AnnotationReader, fallback: LbMethod): LbMethod {
  const v = r.string(Annotation.LbMethod);
  if (v === '') return fallback;
  if ((LB_METHODS as readonly string[]).includes(v)) return v as LbMethod;
  r.problem({
    reason: UpstreamReason.LbMethodUnknown,
    message: `annotation ${Annotation.LbMethod}=${JSON.stringify(v)} is not an Octavia algorithm (${LB_METHODS.join(', ')}); using ${fallback}`,
    field: annotationField(Annotation.LbMethod),
    fatal: false,
  });
  return fallback;
}

function readNodeSelector(r: AnnotationReader, opts: LoadBalancerOptions): LoadBalancerSpec['nodeSelector'] {
  if (!r.has(Annotation.NodeSelector)) return opts.nodeSelector;
  const parsed = parseNodeSelector(r.string(Annotation.NodeSelector));
  if (parsed.suspicious.length > 0) {
    r.invalid(
      Annotation.NodeSelector,
      r.string(Annotation.NodeSelector),
      `holding ${parsed.suspicious.map((p) => JSON.stringify(p)).join(', ')}, which cannot match a node label as written`,
      'it as written (write key=value without blanks)',
    );
  }
  return parsed.selector;
}

function readMonitor(
  r: AnnotationReader,
  opts: LoadBalancerOptions,
  spec: NonNullable<V1Service['spec']>,
): LoadBalancerSpec['monitor'] {
  const enabled = r.bool(Annotation.EnableHealthMonitor, opts.createMonitor);
  const local = spec.externalTrafficPolicy === 'Local';
  const hcnp = spec.healthCheckNodePort ?? 0;
  if (local && !enabled) {
    r.problem({
      reason: ShiftstackReason.LocalTrafficWithoutMonitor,
      message:
        'externalTrafficPolicy is Local but no health monitor is enabled, so nodes without a ready endpoint still get traffic; ' +
        `set the annotation ${Annotation.EnableHealthMonitor}: "true" or cloud.conf [LoadBalancer] create-monitor = true`,
      field: 'spec.externalTrafficPolicy',
      fatal: false,
    });
  }
  return {
    enabled,
    delay: r.int(Annotation.HealthMonitorDelay, opts.monitorDelay, { min: 0 }),
    timeout: r.int(Annotation.HealthMonitorTimeout, opts.monitorTimeout, { min: 0 }),
    maxRetries: r.int(Annotation.HealthMonitorMaxRetries, opts.monitorMaxRetries, { min: 1, max: 10 }),
    maxRetriesDown: r.int(Annotation.HealthMonitorMaxRetriesDown, opts.monitorMaxRetriesDown, {
      min: 1,
      max: 10,
    }),
    ...(enabled && local && hcnp > 0 ? { healthCheckNodePort: hcnp } : {}),
  };
}

const annotationOrigin = (name: string) => `annotation ${name}`;
const confOrigin = (key: string) => `cloud.conf [LoadBalancer] ${key}`;
const classOrigin = (c: LoadBalancerClass, key: string) =>
  `cloud.conf [LoadBalancerClass ${JSON.stringify(c.name)}] ${key}`;

/** Where the VIP subnet or network came from, with OCCM's precedence (see the file comment). */
function vipOrigin(
  r: AnnotationReader,
  annotation: string,
  key: 'subnet-id' | 'network-id',
  createClass: LoadBalancerClass | undefined,
  lbClass: LoadBalancerClass | undefined,
  configured: string | undefined,
): string | undefined {
  const field = key === 'subnet-id' ? 'subnetId' : 'networkId';
  if (createClass?.[field]) return classOrigin(createClass, key);
  if (r.string(annotation)) return annotationOrigin(annotation);
  if (lbClass?.[field]) return classOrigin(lbClass, key);
  return configured ? confOrigin(key) : undefined;
}
