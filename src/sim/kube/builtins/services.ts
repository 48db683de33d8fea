/**
 * Services: defaults, validation and the allocations the real apiserver performs in its
 * service REST storage — ClusterIPs from the service CIDR, NodePorts from the node-port range
 * (NodePort and LoadBalancer types unless `allocateLoadBalancerNodePorts: false`), and the
 * healthCheckNodePort of LoadBalancer services with `externalTrafficPolicy: Local`. Requested
 * values are checked (in range, not taken); a taken NodePort is rejected as the real server
 * rejects it; everything is released on delete or type change.
 */
import { isIPv4, parseIp } from '../../../lib/cidr.ts';
import { field, type FieldError } from '../errors.ts';
import { asArray, asNumber, asObj, asString, type Obj } from '../json.ts';
import { CONDITIONS, keyed } from '../patch/hints.ts';
import { AGE_COLUMN, col, mapText } from '../table.ts';
import type { ResourceDef, ServiceAllocator } from '../types.ts';
import { builtin, keepOldStatus, statusOnly } from './common.ts';

const TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];

export interface ServiceRanges {
  /** IPv4 service CIDR; the real default of kubeadm is 10.96.0.0/12. */
  serviceCIDR: string;
  nodePortRange: [number, number];
}

/** An IPv4 address (as the API server's net.ParseIP reads it) as a number, for the allocator's arithmetic. */
function ipToInt(ip: string): number | undefined {
  const parsed = isIPv4(ip) ? parseIp(ip) : undefined;
  if (!parsed) return undefined;
  return parsed.bytes.slice(12).reduce((n, b) => n * 256 + b, 0);
}

function intToIp(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

function needsNodePorts(spec: Obj): boolean {
  const type = asString(spec.type) ?? 'ClusterIP';
  return type === 'NodePort' || (type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
}

function needsHealthCheck(spec: Obj): boolean {
  return asString(spec.type) === 'LoadBalancer' && asString(spec.externalTrafficPolicy) === 'Local';
}

function ports(spec: Obj): Obj[] {
  return (asArray(spec.ports) ?? []).map(asObj).filter((p): p is Obj => !!p);
}

function portKey(p: Obj): string {
  return `${asNumber(p.port) ?? ''}/${asString(p.protocol) ?? 'TCP'}`;
}

/** The allocator state of one emulator: which IPs and ports are taken. */
export class ServiceAllocations implements ServiceAllocator {
  private readonly ips = new Set<number>();
  private readonly nodePorts = new Set<number>();
  private readonly base: number;
  private readonly size: number;
  private ipCursor = 1;
  private portCursor: number;

  private readonly ranges: ServiceRanges;

  constructor(ranges: ServiceRanges) {
    this.ranges = ranges;
    const [addr = '', bits = '32'] = ranges.serviceCIDR.split('/');
    const start = ipToInt(addr);
    const prefix = Number(bits);
    if (start === undefined || !(prefix >= 8 && prefix <= 30))
      throw new Error(`bad service CIDR ${ranges.serviceCIDR}`);
    this.size = 2 ** (32 - prefix);
    this.base = start - (start % this.size);
    this.portCursor = ranges.nodePortRange[0];
  }

  /** The first address of the range (10.96.0.1), which the `kubernetes` service takes. */
  firstIP(): string {
    return intToIp(this.base + 1);
  }

  private inRange(ip: number): boolean {
    // Network and broadcast addresses are never handed out.
    return ip > this.base && ip < this.base + this.size - 1;
  }

  private nextIP(): number | undefined {
    for (let i = 0; i < this.size; i++) {
      const off = ((this.ipCursor + i - 1) % (this.size - 2)) + 1;
      const ip = this.base + off;
      if (!this.ips.has(ip)) {
        this.ipCursor = off + 1;
        return ip;
      }
    }
    return undefined;
  }

  private nextPort(): number | undefined {
    const [lo, hi] = this.ranges.nodePortRange;
    const n = hi - lo + 1;
    for (let i = 0; i < n; i++) {
      const p = lo + ((this.portCursor - lo + i) % n);
      if (!this.nodePorts.has(p)) {
        this.portCursor = p + 1;
        return p;
      }
    }
    return undefined;
  }

  private portRangeText(): string {
    return `${this.ranges.nodePortRange[0]}-${this.ranges.nodePortRange[1]}`;
  }

  allocate(svc: Obj, old: Obj | undefined, dryRun: boolean): FieldError[] {
    const spec = asObj(svc.spec) ?? {};
    const oldSpec = asObj(old?.spec) ?? {};
    const errs: FieldError[] = [];
    const takenIPs: number[] = [];
    const takenPorts: number[] = [];
    const type = asString(spec.type) ?? 'ClusterIP';

    // ClusterIP: kept from the old object, requested, or allocated.
    const oldIP = asString(oldSpec.clusterIP);
    if (type === 'ExternalName') {
      // ExternalName services get no ClusterIP.
    } else if (oldIP && oldIP !== 'None') {
      spec.clusterIP ??= oldIP;
      spec.clusterIPs ??= [oldIP];
    } else {
      const want = asString(spec.clusterIP) ?? '';
      if (want === 'None') {
        spec.clusterIPs = ['None'];
      } else if (want) {
        const n = ipToInt(want);
        if (n === undefined || !this.inRange(n)) {
          errs.push(
            field.invalid(
              'spec.clusterIPs',
              [want],
              `failed to allocate IP ${want}: the provided IP (${want}) is not in the valid range. The range of valid IPs is ${this.ranges.serviceCIDR}`,
            ),
          );
        } else if (this.ips.has(n)) {
          errs.push(
            field.invalid(
              'spec.clusterIPs',
              [want],
              `failed to allocate IP ${want}: provided IP is already allocated`,
            ),
          );
        } else {
          this.ips.add(n);
          takenIPs.push(n);
          spec.clusterIPs = [want];
        }
      } else {
        const n = this.nextIP();
        if (n === undefined)
          errs.push(field.invalid('spec.clusterIPs', [], 'failed to allocate IP: range is full'));
        else {
          this.ips.add(n);
          takenIPs.push(n);
          spec.clusterIP = intToIp(n);
          spec.clusterIPs = [intToIp(n)];
        }
      }
    }

    // NodePorts: old ones carried over by port/protocol unless the request changes them.
    const oldPorts = new Map(ports(oldSpec).map((p) => [portKey(p), asNumber(p.nodePort)]));
    const oldHeld = new Set([...oldPorts.values()].filter((p): p is number => p !== undefined));
    if (needsNodePorts(spec)) {
      const seen = new Set<number>();
      ports(spec).forEach((p, i) => {
        let np = asNumber(p.nodePort);
        if (np === undefined || np === 0) {
          const carried = oldPorts.get(portKey(p));
          if (carried !== undefined) {
            p.nodePort = carried;
            seen.add(carried);
            return;
          }
          const next = this.nextPort();
          if (next === undefined) {
            errs.push(
              field.invalid(`spec.ports[${i}].nodePort`, 0, 'failed to allocate a nodePort: range is full'),
            );
            return;
          }
          this.nodePorts.add(next);
          takenPorts.push(next);
          p.nodePort = next;
          seen.add(next);
          return;
        }
        np = Math.trunc(np);
        if (seen.has(np)) {
          errs.push(field.duplicate(`spec.ports[${i}].nodePort`, String(np)));
          return;
        }
        seen.add(np);
        if (oldHeld.has(np)) return;
        const [lo, hi] = this.ranges.nodePortRange;
        if (np < lo || np > hi) {
          errs.push(
            field.invalid(
              `spec.ports[${i}].nodePort`,
              np,
              `provided port is not in the valid range. The range of valid ports is ${this.portRangeText()}`,
            ),
          );
        } else if (this.nodePorts.has(np)) {
          errs.push(field.invalid(`spec.ports[${i}].nodePort`, np, 'provided port is already allocated'));
        } else {
          this.nodePorts.add(np);
          takenPorts.push(np);
        }
      });
    }

    if (needsHealthCheck(spec)) {
      const want = asNumber(spec.healthCheckNodePort);
      const had = asNumber(oldSpec.healthCheckNodePort);
      if (!want && had) spec.healthCheckNodePort = had;
      else if (!want) {
        const next = this.nextPort();
        if (next === undefined)
          errs.push(
            field.invalid('spec.healthCheckNodePort', 0, 'failed to allocate a nodePort: range is full'),
          );
        else {
          this.nodePorts.add(next);
          takenPorts.push(next);
          spec.healthCheckNodePort = next;
        }
      } else if (want !== had) {
        if (this.nodePorts.has(want)) {
          errs.push(field.invalid('spec.healthCheckNodePort', want, 'provided port is already allocated'));
        } else {
          this.nodePorts.add(want);
          takenPorts.push(want);
        }
      }
    }

    if (errs.length || dryRun) {
      for (const n of takenIPs) this.ips.delete(n);
      for (const p of takenPorts) this.nodePorts.delete(p);
      return errs;
    }
    // A successful update frees what the old object held and the new one no longer does.
    if (old) this.releaseDropped(old, svc);
    return [];
  }

  private held(svc: Obj): { ips: number[]; ports: number[] } {
    const spec = asObj(svc.spec) ?? {};
    const ips: number[] = [];
    for (const ip of asArray(spec.clusterIPs) ?? [spec.clusterIP]) {
      const n = typeof ip === 'string' ? ipToInt(ip) : undefined;
      if (n !== undefined && this.inRange(n)) ips.push(n);
    }
    const ps: number[] = [];
    for (const p of ports(spec)) {
      const np = asNumber(p.nodePort);
      if (np) ps.push(np);
    }
    const hc = asNumber(spec.healthCheckNodePort);
    if (hc) ps.push(hc);
    return { ips, ports: ps };
  }

  private releaseDropped(old: Obj, now: Obj): void {
    const before = this.held(old);
    const after = this.held(now);
    for (const n of before.ips) if (!after.ips.includes(n)) this.ips.delete(n);
    for (const p of before.ports) if (!after.ports.includes(p)) this.nodePorts.delete(p);
  }

  release(svc: Obj): void {
    const h = this.held(svc);
    for (const n of h.ips) this.ips.delete(n);
    for (const p of h.ports) this.nodePorts.delete(p);
  }

  rebuild(services: Iterable<Obj>): void {
    this.ips.clear();
    this.nodePorts.clear();
    for (const s of services) {
      const h = this.held(s);
      for (const n of h.ips) this.ips.add(n);
      for (const p of h.ports) this.nodePorts.add(p);
    }
  }
}

function defaultService(obj: Obj): void {
  const spec = asObj(obj.spec) ?? {};
  obj.spec = spec;
  spec.type ??= 'ClusterIP';
  const type = spec.type;
  if (type !== 'ExternalName') {
    spec.sessionAffinity ??= 'None';
    spec.ipFamilies ??= ['IPv4'];
    spec.ipFamilyPolicy ??= 'SingleStack';
    spec.internalTrafficPolicy ??= 'Cluster';
  }
  if (type === 'NodePort' || type === 'LoadBalancer') spec.externalTrafficPolicy ??= 'Cluster';
  if (type === 'LoadBalancer') spec.allocateLoadBalancerNodePorts ??= true;
  for (const p of ports(spec)) {
    p.protocol ??= 'TCP';
    if (p.targetPort === undefined && asNumber(p.port) !== undefined) p.targetPort = p.port;
  }
}

/**
 * Type changes drop what the new type cannot have when the request left it as it was
 * (the real strategy's `dropTypeDependentFields`), so `kubectl patch -p '{"spec":{"type":"ClusterIP"}}'`
 * on a NodePort service works.
 */
function dropTypeDependentFields(obj: Obj, old: Obj): void {
  const spec = asObj(obj.spec) ?? {};
  const oldSpec = asObj(old.spec) ?? {};
  if (!needsNodePorts(spec) && needsNodePorts(oldSpec)) {
    const oldPorts = new Map(ports(oldSpec).map((p) => [portKey(p), asNumber(p.nodePort)]));
    for (const p of ports(spec)) if (asNumber(p.nodePort) === oldPorts.get(portKey(p))) delete p.nodePort;
  }
  if (!needsHealthCheck(spec) && spec.healthCheckNodePort === oldSpec.healthCheckNodePort)
    delete spec.healthCheckNodePort;
  if (asString(spec.type) === 'ExternalName' && asString(oldSpec.type) !== 'ExternalName') {
    if (spec.clusterIP === oldSpec.clusterIP) delete spec.clusterIP;
    delete spec.clusterIPs;
  }
}

function validateService(obj: Obj, old: Obj | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const spec = asObj(obj.spec) ?? {};
  const type = asString(spec.type) ?? 'ClusterIP';
  if (!TYPES.includes(type)) errs.push(field.notSupported('spec.type', type, TYPES));
  const ps = ports(spec);
  if (type !== 'ExternalName' && ps.length === 0 && asString(spec.clusterIP) !== 'None') {
    errs.push(field.required('spec.ports'));
  }
  if (type === 'ExternalName' && !asString(spec.externalName)) errs.push(field.required('spec.externalName'));
  const seen = new Set<string>();
  ps.forEach((p, i) => {
    const path = `spec.ports[${i}]`;
    const port = asNumber(p.port);
    if (port === undefined) errs.push(field.required(`${path}.port`));
    else if (port < 1 || port > 65535)
      errs.push(field.invalid(`${path}.port`, port, 'must be between 1 and 65535, inclusive'));
    const proto = asString(p.protocol) ?? 'TCP';
    if (!PROTOCOLS.includes(proto)) errs.push(field.notSupported(`${path}.protocol`, proto, PROTOCOLS));
    if (ps.length > 1 && !asString(p.name)) errs.push(field.required(`${path}.name`));
    const key = portKey(p);
    if (seen.has(key)) errs.push(field.duplicate(path, { port, protocol: proto }));
    seen.add(key);
    if (type === 'ClusterIP' && asNumber(p.nodePort)) {
      errs.push(field.forbidden(`${path}.nodePort`, "may not be used when `type` is 'ClusterIP'"));
    }
  });
  if (asNumber(spec.healthCheckNodePort) && !needsHealthCheck(spec)) {
    errs.push(
      field.invalid(
        'spec.healthCheckNodePort',
        spec.healthCheckNodePort,
        "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
      ),
    );
  }
  if (old) {
    const oldIP = asString(asObj(old.spec)?.clusterIP);
    const newIP = asString(spec.clusterIP);
    if (
      oldIP &&
      newIP &&
      oldIP !== newIP &&
      asString(asObj(old.spec)?.type) !== 'ExternalName' &&
      type !== 'ExternalName'
    ) {
      errs.push(field.invalid('spec.clusterIPs[0]', newIP, 'may not change once set'));
    }
  }
  return errs;
}

function portsText(o: Obj): string {
  const spec = asObj(o.spec) ?? {};
  const list = ports(spec).map((p) => {
    const np = asNumber(p.nodePort);
    return `${asNumber(p.port) ?? ''}${np ? `:${np}` : ''}/${asString(p.protocol) ?? 'TCP'}`;
  });
  return list.length ? list.join(',') : '<none>';
}

function externalIP(o: Obj): string {
  const spec = asObj(o.spec) ?? {};
  const type = asString(spec.type);
  if (type === 'ExternalName') return asString(spec.externalName) ?? '<none>';
  const ips = (asArray(asObj(asObj(o.status)?.loadBalancer)?.ingress) ?? [])
    .map((i) => asString(asObj(i)?.ip) ?? asString(asObj(i)?.hostname))
    .filter((x): x is string => !!x);
  const external = (asArray(spec.externalIPs) ?? []).filter((x): x is string => typeof x === 'string');
  const all = [...ips, ...external];
  if (all.length) return all.join(',');
  return type === 'LoadBalancer' ? '<pending>' : '<none>';
}

export const services: ResourceDef = builtin({
  resource: 'services',
  kind: 'Service',
  namespaced: true,
  shortNames: ['svc'],
  categories: ['all'],
  subresources: ['status'],
  hints: {
    'spec.ports': keyed('port', ['port', 'protocol'], false, { protocol: 'TCP' }),
    'status.conditions': CONDITIONS,
    'spec.externalIPs': { list: { type: 'atomic' } },
  },
  fields: {
    'spec.clusterIP': (o) => asString(asObj(o.spec)?.clusterIP) ?? '',
    'spec.type': (o) => asString(asObj(o.spec)?.type) ?? '',
  },
  columns: [
    col('Type', (o) => asString(asObj(o.spec)?.type) ?? '', { description: 'The type of the service' }),
    col('Cluster-IP', (o) => asString(asObj(o.spec)?.clusterIP) ?? '<none>', {
      description: 'The cluster IP of the service',
    }),
    col('External-IP', externalIP, { description: 'The external IP of the service' }),
    col('Port(s)', portsText, { description: 'The ports of the service' }),
    AGE_COLUMN,
    col('Selector', (o) => mapText(asObj(o.spec)?.selector), {
      priority: 1,
      description: 'The selector of the service',
    }),
  ],
  strategy: {
    statusSubresource: true,
    returnDeletedObject: true,
    nameRule: 'label1035',
    prepareForCreate(_ctx, obj) {
      obj.status = { loadBalancer: {} };
      defaultService(obj);
    },
    prepareForUpdate(_ctx, obj, old) {
      keepOldStatus(obj, old);
      defaultService(obj);
      dropTypeDependentFields(obj, old);
    },
    prepareForStatusUpdate(_ctx, obj, old) {
      statusOnly(obj, old, true);
    },
    validate: (_ctx, obj) => validateService(obj, undefined),
    validateUpdate: (_ctx, obj, old) => validateService(obj, old),
    allocate: (ctx, obj, old) => ctx.services.allocate(obj, old, ctx.dryRun),
    release: (ctx, obj) => ctx.services.release(obj),
  },
});

/** The `default/kubernetes` service every cluster has, pointing at the API server. */
export function kubernetesService(clusterIP: string, port: number): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: 'kubernetes',
      namespace: 'default',
      labels: { component: 'apiserver', provider: 'kubernetes' },
    },
    spec: {
      type: 'ClusterIP',
      clusterIP,
      clusterIPs: [clusterIP],
      ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: port }],
      sessionAffinity: 'None',
    },
  };
}
