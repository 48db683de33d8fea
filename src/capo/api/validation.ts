/**
 * The rules CAPO v0.14 enforces on a spec beyond its structural schema — CEL rules in the CRDs
 * (`x-kubernetes-validations`) and its validating webhooks' create checks — as pure functions, one
 * per kind. A real API server evaluates the CEL rules before our controllers see an object; the
 * emulator does not, and shiftstack serves no webhook, so the controllers run these and refuse an
 * object that breaks them (condition SpecAccepted=False, reason InvalidSpec, and a Warning Event).
 * The structural bounds that every API server enforces (one of id/filter through
 * min/maxProperties, maxItems) are checked again here too: specs our controllers build themselves
 * (the bastion's OpenStackServer) never pass through an API server's validation first.
 */
import { IDENTITY_TYPES } from './common.ts';
import type {
  OpenStackCluster,
  OpenStackClusterIdentity,
  OpenStackClusterTemplate,
  OpenStackFloatingIPPool,
  OpenStackMachine,
  OpenStackMachineTemplate,
  OpenStackServer,
} from './kinds.ts';

/** One thing wrong with a spec, with what to do about it. */
export interface Problem {
  /** Field path, e.g. `spec.bastion.spec.image`. */
  path: string;
  message: string;
  fix: string;
}

export function formatProblem(p: Problem): string {
  return `${p.path}: ${p.message}. Fix: ${p.fix}`;
}

/** One line for a condition message or an Event. */
export function formatProblems(problems: readonly Problem[]): string {
  return problems.map(formatProblem).join('; ');
}

type Json = Record<string, unknown>;

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function set(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

class Collector {
  readonly problems: Problem[] = [];
  add(path: string, message: string, fix: string): void {
    this.problems.push({ path, message, fix });
  }
}

/** A param (NetworkParam, SubnetParam, …): exactly one of its keys, and a filter that says something. */
function param(
  c: Collector,
  value: unknown,
  path: string,
  what: string,
  keys: readonly string[] = ['id', 'filter'],
) {
  if (!set(value)) return;
  if (!isObj(value)) {
    c.add(path, `must be an object naming the ${what}`, `set one of ${keys.join(', ')}`);
    return;
  }
  const given = keys.filter((k) => set(value[k]));
  if (given.length === 0) {
    c.add(path, `names no ${what}`, `set exactly one of ${keys.join(', ')}`);
  } else if (given.length > 1) {
    c.add(
      path,
      `sets ${given.join(' and ')}; exactly one is allowed`,
      `keep only one of ${given.join(', ')}`,
    );
  }
  const filter = value.filter;
  if (isObj(filter) && Object.keys(filter).length === 0) {
    c.add(
      `${path}.filter`,
      `an empty filter would match any ${what}`,
      `give the filter a name, tags or other field, or use id`,
    );
  }
}

function identityRef(c: Collector, ref: unknown, path: string): void {
  if (!isObj(ref)) return;
  if (!ref.name)
    c.add(`${path}.name`, 'is required', 'name the Secret (or OpenStackClusterIdentity) holding clouds.yaml');
  if (!ref.cloudName)
    c.add(`${path}.cloudName`, 'is required', 'name the clouds.yaml entry to use, e.g. openstack');
  if (set(ref.type) && !(IDENTITY_TYPES as readonly unknown[]).includes(ref.type)) {
    c.add(`${path}.type`, `unknown type ${JSON.stringify(ref.type)}`, `use ${IDENTITY_TYPES.join(' or ')}`);
  }
}

function volumeAvailabilityZone(c: Collector, az: unknown, path: string): void {
  if (!isObj(az)) return;
  const from = az.from ?? 'Name';
  if (from === 'Name' && !set(az.name)) {
    c.add(`${path}.name`, "is required when from is 'Name' (the default)", 'set name, or set from: Machine');
  } else if (from !== 'Name' && set(az.name)) {
    c.add(
      `${path}.name`,
      `is forbidden when from is ${JSON.stringify(from)}`,
      'remove name, or set from: Name',
    );
  }
}

function schedulerHints(c: Collector, hints: unknown, path: string): void {
  list(hints).forEach((h, i) => {
    if (!isObj(h) || !isObj(h.value)) return;
    const v = h.value;
    for (const [type, key] of [
      ['Bool', 'bool'],
      ['Number', 'number'],
      ['String', 'string'],
    ] as const) {
      const p = `${path}[${i}].value.${key}`;
      if (v.type === type && !set(v[key])) c.add(p, `is required when type is ${type}`, `set ${key}`);
      if (v.type !== type && set(v[key]))
        c.add(p, `is forbidden when type is ${String(v.type)}`, `remove ${key}, or set type: ${type}`);
    }
  });
}

function ports(c: Collector, value: unknown, path: string): void {
  list(value).forEach((port, i) => {
    if (!isObj(port)) return;
    const p = `${path}[${i}]`;
    param(c, port.network, `${p}.network`, 'network');
    list(port.fixedIPs).forEach((f, j) => {
      if (isObj(f)) param(c, f.subnet, `${p}.fixedIPs[${j}].subnet`, 'subnet');
    });
    list(port.securityGroups).forEach((sg, j) => param(c, sg, `${p}.securityGroups[${j}]`, 'security group'));
    param(c, port.qosPolicy, `${p}.qosPolicy`, 'QoS policy');
    const { disablePortSecurity: disable, enablePortSecurity: enable } = port;
    if (typeof disable === 'boolean' && typeof enable === 'boolean' && disable === enable) {
      c.add(
        `${p}.enablePortSecurity`,
        `contradicts disablePortSecurity: ${String(disable)}`,
        'keep only enablePortSecurity (CAPO’s newer spelling)',
      );
    }
    if ((disable === true || enable === false) && list(port.securityGroups).length > 0) {
      c.add(
        `${p}.securityGroups`,
        'a port without port security cannot have security groups',
        'remove securityGroups, or disablePortSecurity',
      );
    }
  });
}

/** The fields OpenStackMachineSpec and OpenStackServerSpec share. */
function serverLike(c: Collector, spec: Json, path: string): void {
  if (!set(spec.flavor) && !set(spec.flavorID)) {
    c.add(
      `${path}.flavor`,
      'at least one of flavor or flavorID must be set',
      'set flavor (a name) or flavorID',
    );
  }
  if (!set(spec.image)) c.add(`${path}.image`, 'is required', 'set image.id, image.filter or image.imageRef');
  param(c, spec.image, `${path}.image`, 'image', ['id', 'filter', 'imageRef']);
  ports(c, spec.ports, `${path}.ports`);
  list(spec.securityGroups).forEach((sg, i) =>
    param(c, sg, `${path}.securityGroups[${i}]`, 'security group'),
  );
  param(c, spec.serverGroup, `${path}.serverGroup`, 'server group');
  if (set(spec.identityRef)) identityRef(c, spec.identityRef, `${path}.identityRef`);
  if (isObj(spec.rootVolume)) {
    volumeAvailabilityZone(c, spec.rootVolume.availabilityZone, `${path}.rootVolume.availabilityZone`);
  }
  const names = new Set<unknown>();
  list(spec.additionalBlockDevices).forEach((d, i) => {
    if (!isObj(d)) return;
    const p = `${path}.additionalBlockDevices[${i}]`;
    if (d.name === 'root' && set(spec.rootVolume)) {
      c.add(`${p}.name`, '"root" is reserved for the root volume', 'give the device another name');
    }
    if (names.has(d.name))
      c.add(`${p}.name`, `duplicate device name ${JSON.stringify(d.name)}`, 'give each device its own name');
    names.add(d.name);
    if (isObj(d.storage))
      volumeAvailabilityZone(
        c,
        isObj(d.storage.volume) ? d.storage.volume.availabilityZone : undefined,
        `${p}.storage.volume.availabilityZone`,
      );
  });
  schedulerHints(c, spec.schedulerHintAdditionalProperties, `${path}.schedulerHintAdditionalProperties`);
}

function machineSpec(c: Collector, spec: unknown, path: string): void {
  if (!isObj(spec)) {
    c.add(path, 'is required', 'give the machine a flavor and an image');
    return;
  }
  serverLike(c, spec, path);
}

function securityGroupRules(c: Collector, rules: unknown, path: string): void {
  list(rules).forEach((r, i) => {
    if (!isObj(r)) return;
    const remotes = ['remoteGroupID', 'remoteIPPrefix', 'remoteManagedGroups'].filter((k) => set(r[k]));
    if (remotes.length > 1) {
      c.add(
        `${path}[${i}]`,
        `${remotes.join(' and ')} cannot be used together`,
        `keep one of ${remotes.join(', ')}`,
      );
    }
    if (
      typeof r.portRangeMin === 'number' &&
      typeof r.portRangeMax === 'number' &&
      r.portRangeMin > r.portRangeMax
    ) {
      c.add(
        `${path}[${i}].portRangeMin`,
        'is greater than portRangeMax',
        'swap portRangeMin and portRangeMax',
      );
    }
  });
}

export function validateOpenStackClusterSpec(
  spec: OpenStackCluster['spec'] | undefined,
  path = 'spec',
): Problem[] {
  const c = new Collector();
  if (!isObj(spec)) {
    c.add(path, 'is required', 'set at least spec.identityRef');
    return c.problems;
  }
  const s = spec as Json;
  if (!set(s.identityRef))
    c.add(`${path}.identityRef`, 'is required', 'reference the Secret holding clouds.yaml');
  identityRef(c, s.identityRef, `${path}.identityRef`);
  if (s.disableExternalNetwork === true && s.disableAPIServerFloatingIP !== true) {
    c.add(
      `${path}.disableAPIServerFloatingIP`,
      'cannot be false when disableExternalNetwork is true',
      'set disableAPIServerFloatingIP: true (and reach the API through the load balancer VIP or apiServerFixedIP)',
    );
  }
  const b = s.bastion;
  if (isObj(b)) {
    if (s.disableExternalNetwork === true && set(b.floatingIP)) {
      c.add(
        `${path}.bastion.floatingIP`,
        'cannot be set when disableExternalNetwork is true',
        'remove bastion.floatingIP',
      );
    }
    if (b.enabled !== false && !set(b.spec)) {
      c.add(
        `${path}.bastion.spec`,
        'is required while the bastion is enabled',
        'give the bastion a spec, or set bastion.enabled: false',
      );
    }
    if (set(b.spec)) machineSpec(c, b.spec, `${path}.bastion.spec`);
  }
  const managed = list(s.managedSubnets);
  if (managed.length > 1) {
    c.add(
      `${path}.managedSubnets`,
      `has ${managed.length} subnets; at most 1 is supported`,
      'keep one subnet',
    );
  }
  managed.forEach((m, i) => {
    if (isObj(m) && !m.cidr)
      c.add(`${path}.managedSubnets[${i}].cidr`, 'is required', 'set the subnet CIDR, e.g. 10.6.0.0/24');
  });
  const subnets = list(s.subnets);
  if (subnets.length > 2 && !set(s.primarySubnet)) {
    c.add(
      `${path}.subnets`,
      `has ${subnets.length} subnets; at most 2 (one IPv4, one IPv6) without a primarySubnet`,
      'keep at most one subnet per IP version, or name the one the API load balancer uses in primarySubnet',
    );
  }
  param(c, s.primarySubnet, `${path}.primarySubnet`, 'subnet');
  subnets.forEach((sn, i) => param(c, sn, `${path}.subnets[${i}]`, 'subnet'));
  param(c, s.router, `${path}.router`, 'router');
  param(c, s.network, `${path}.network`, 'network');
  param(c, s.externalNetwork, `${path}.externalNetwork`, 'network');
  list(s.externalRouterIPs).forEach((e, i) => {
    if (isObj(e)) param(c, e.subnet, `${path}.externalRouterIPs[${i}].subnet`, 'subnet');
  });
  if (isObj(s.apiServerLoadBalancer)) {
    const lb = s.apiServerLoadBalancer;
    param(c, lb.network, `${path}.apiServerLoadBalancer.network`, 'network');
    list(lb.subnets).forEach((sn, i) =>
      param(c, sn, `${path}.apiServerLoadBalancer.subnets[${i}]`, 'subnet'),
    );
  }
  if (isObj(s.managedSecurityGroups)) {
    for (const k of [
      'allNodesSecurityGroupRules',
      'controlPlaneNodesSecurityGroupRules',
      'workerNodesSecurityGroupRules',
    ]) {
      securityGroupRules(c, s.managedSecurityGroups[k], `${path}.managedSecurityGroups.${k}`);
    }
  }
  return c.problems;
}

export function validateOpenStackMachineSpec(
  spec: OpenStackMachine['spec'] | undefined,
  path = 'spec',
): Problem[] {
  const c = new Collector();
  machineSpec(c, spec, path);
  return c.problems;
}

export function validateOpenStackServerSpec(
  spec: OpenStackServer['spec'] | undefined,
  path = 'spec',
): Problem[] {
  const c = new Collector();
  if (!isObj(spec)) {
    c.add(path, 'is required', 'give the server identityRef, flavor, image and ports');
    return c.problems;
  }
  const s = spec as Json;
  serverLike(c, s, path);
  if (!set(s.identityRef))
    c.add(`${path}.identityRef`, 'is required', 'reference the Secret holding clouds.yaml');
  if (list(s.ports).length === 0)
    c.add(`${path}.ports`, 'needs at least one port', 'add a port, e.g. on the cluster network');
  return c.problems;
}

export function validateOpenStackMachineTemplateSpec(
  spec: OpenStackMachineTemplate['spec'] | undefined,
): Problem[] {
  const template = isObj(spec) && isObj(spec.template) ? spec.template : undefined;
  return validateOpenStackMachineSpec(template?.spec, 'spec.template.spec');
}

export function validateOpenStackClusterTemplateSpec(
  spec: OpenStackClusterTemplate['spec'] | undefined,
): Problem[] {
  const template = isObj(spec) && isObj(spec.template) ? spec.template : undefined;
  return validateOpenStackClusterSpec(template?.spec, 'spec.template.spec');
}

export function validateOpenStackFloatingIPPoolSpec(
  spec: OpenStackFloatingIPPool['spec'] | undefined,
): Problem[] {
  const c = new Collector();
  if (!isObj(spec)) return [{ path: 'spec', message: 'is required', fix: 'set spec.identityRef' }];
  identityRef(c, spec.identityRef, 'spec.identityRef');
  param(c, spec.floatingIPNetwork, 'spec.floatingIPNetwork', 'network');
  return c.problems;
}

export function validateOpenStackClusterIdentitySpec(
  spec: OpenStackClusterIdentity['spec'] | undefined,
): Problem[] {
  const c = new Collector();
  const ref = isObj(spec) ? spec.secretRef : undefined;
  if (!isObj(ref)) {
    c.add('spec.secretRef', 'is required', 'name the Secret (and its namespace) holding clouds.yaml');
    return c.problems;
  }
  if (!ref.name) c.add('spec.secretRef.name', 'is required', 'name the Secret holding clouds.yaml');
  if (!ref.namespace) c.add('spec.secretRef.namespace', 'is required', 'give the namespace of the Secret');
  return c.problems;
}

/** The kinds with spec rules, by kind name. */
export const specValidators = {
  OpenStackCluster: (o: OpenStackCluster) => validateOpenStackClusterSpec(o.spec),
  OpenStackClusterTemplate: (o: OpenStackClusterTemplate) => validateOpenStackClusterTemplateSpec(o.spec),
  OpenStackMachine: (o: OpenStackMachine) => validateOpenStackMachineSpec(o.spec),
  OpenStackMachineTemplate: (o: OpenStackMachineTemplate) => validateOpenStackMachineTemplateSpec(o.spec),
  OpenStackServer: (o: OpenStackServer) => validateOpenStackServerSpec(o.spec),
  OpenStackFloatingIPPool: (o: OpenStackFloatingIPPool) => validateOpenStackFloatingIPPoolSpec(o.spec),
  OpenStackClusterIdentity: (o: OpenStackClusterIdentity) => validateOpenStackClusterIdentitySpec(o.spec),
} as const;
