/**
 * An OpenStackServer's v1alpha1 spec as the shared engine's ServerSpec. The shapes are close (the
 * engine was modelled on CAPO's); what differs is spelled out here: flavorID over flavor, metadata
 * and scheduler hints as lists of pairs, volume zones with a default `from: Name`. What the engine
 * cannot do (an ORC imageRef, a port QoS policy) is returned as problems, never dropped: a server
 * without the QoS policy its spec asks for is not the server asked for.
 */
import type {
  BlockDeviceSpec,
  FixedIPSpec,
  ImageParam,
  Ipv6Mode,
  NetworkParam,
  PortSpec,
  RootVolumeSpec,
  SchedulerHintValue,
  SecurityGroupParam,
  ServerGroupParam,
  ServerSpec,
  SubnetParam,
  VolumeAvailabilityZone,
} from '../../openstack/services/server/index.ts';
import type { OpenStackServerSpec } from '../api/index.ts';

type Spec = OpenStackServerSpec;
type CrdPort = Spec['ports'][number];

/** A spec field this implementation does not act on: shown as a condition and an Event. */
export interface Unsupported {
  path: string;
  message: string;
}

export type Translation =
  { spec: ServerSpec; unsupported: [] } | { spec: undefined; unsupported: Unsupported[] };

/**
 * `name` is the object's name (the server's, and the stem of its ports' and volumes'); `userData`
 * the bootstrap data already read from `userDataRef`.
 */
export function toServerSpec(name: string, spec: Spec, userData: string | undefined): Translation {
  const unsupported: Unsupported[] = [];
  const image = imageOf(spec.image, unsupported);
  spec.ports.forEach((p, i) => {
    if (p.qosPolicy)
      unsupported.push({
        path: `spec.ports[${i}].qosPolicy`,
        message: 'port QoS policies are not supported by shiftstack yet; remove qosPolicy',
      });
  });
  if (!image || unsupported.length > 0) return { spec: undefined, unsupported };

  const out: ServerSpec = {
    name,
    image,
    flavor: spec.flavorID ? { id: spec.flavorID } : { name: spec.flavor ?? '' },
    ports: spec.ports.map(portOf),
  };
  if (spec.serverGroup) out.serverGroup = serverGroupOf(spec.serverGroup);
  if (spec.availabilityZone) out.availabilityZone = spec.availabilityZone;
  if (spec.sshKeyName) out.sshKeyName = spec.sshKeyName;
  if (userData !== undefined) out.userData = userData;
  if (spec.serverMetadata?.length) {
    out.metadata = Object.fromEntries(spec.serverMetadata.map((m) => [m.key, m.value]));
  }
  if (spec.tags?.length) out.tags = [...spec.tags];
  if (spec.configDrive !== undefined) out.configDrive = spec.configDrive;
  if (spec.rootVolume) out.rootVolume = rootVolumeOf(spec.rootVolume);
  if (spec.additionalBlockDevices?.length)
    out.additionalBlockDevices = spec.additionalBlockDevices.map(blockDeviceOf);
  if (spec.schedulerHintAdditionalProperties?.length) {
    const hints: Record<string, SchedulerHintValue> = {};
    for (const h of spec.schedulerHintAdditionalProperties) {
      const v = h.value;
      const value = v.type === 'Bool' ? v.bool : v.type === 'Number' ? v.number : v.string;
      if (value !== undefined) hints[h.name] = value;
    }
    out.schedulerHints = hints;
  }
  if (spec.trunk !== undefined) out.trunk = spec.trunk;
  if (spec.securityGroups?.length) out.securityGroups = spec.securityGroups.map(securityGroupOf);
  return { spec: out, unsupported: [] };
}

function imageOf(image: Spec['image'], unsupported: Unsupported[]): ImageParam | undefined {
  if (image.id) return { id: image.id };
  if (image.filter) return { filter: { ...pick(image.filter, ['name', 'tags']) } };
  if (image.imageRef) {
    unsupported.push({
      path: 'spec.image.imageRef',
      message: `ORC Image references (imageRef ${image.imageRef.name}) are not supported by shiftstack; use image.id or image.filter`,
    });
  }
  return undefined;
}

function serverGroupOf(group: NonNullable<Spec['serverGroup']>): ServerGroupParam {
  return group.id ? { id: group.id } : { filter: { name: group.filter?.name ?? '' } };
}

type NeutronFilter = NonNullable<NonNullable<Spec['securityGroups']>[number]['filter']>;

function neutronFilterOf(f: NeutronFilter) {
  return pick(f, ['name', 'description', 'projectID', 'tags', 'tagsAny', 'notTags', 'notTagsAny']);
}

function securityGroupOf(sg: NonNullable<Spec['securityGroups']>[number]): SecurityGroupParam {
  return sg.id ? { id: sg.id } : { filter: neutronFilterOf(sg.filter ?? {}) };
}

function networkOf(n: NonNullable<CrdPort['network']>): NetworkParam {
  return n.id ? { id: n.id } : { filter: neutronFilterOf(n.filter ?? {}) };
}

type CrdSubnet = NonNullable<NonNullable<CrdPort['fixedIPs']>[number]['subnet']>;

function subnetOf(s: CrdSubnet): SubnetParam {
  if (s.id) return { id: s.id };
  const f = s.filter ?? {};
  return {
    filter: {
      ...pick(f, [
        'name',
        'description',
        'projectID',
        'gatewayIP',
        'cidr',
        'tags',
        'tagsAny',
        'notTags',
        'notTagsAny',
      ]),
      ...(f.ipVersion === 4 || f.ipVersion === 6 ? { ipVersion: f.ipVersion } : {}),
      ...(f.ipv6AddressMode ? { ipv6AddressMode: f.ipv6AddressMode as Ipv6Mode } : {}),
      ...(f.ipv6RAMode ? { ipv6RAMode: f.ipv6RAMode as Ipv6Mode } : {}),
    },
  };
}

function portOf(p: CrdPort): PortSpec {
  const out: PortSpec = {
    ...pick(p, [
      'nameSuffix',
      'description',
      'trunk',
      'adminStateUp',
      'macAddress',
      'hostID',
      'vnicType',
      'propagateUplinkStatus',
    ]),
  };
  // CAPO's newer OpenStackServers say enablePortSecurity (v1beta2's port fields), older ones
  // disablePortSecurity; validation refuses the two contradicting each other.
  const disable = p.enablePortSecurity !== undefined ? !p.enablePortSecurity : p.disablePortSecurity;
  if (disable !== undefined) out.disablePortSecurity = disable;
  if (p.network) out.network = networkOf(p.network);
  if (p.fixedIPs) {
    out.fixedIPs = p.fixedIPs.map((ip): FixedIPSpec => ({
      ...(ip.subnet ? { subnet: subnetOf(ip.subnet) } : {}),
      ...(ip.ipAddress ? { ipAddress: ip.ipAddress } : {}),
    }));
  }
  if (p.securityGroups) out.securityGroups = p.securityGroups.map(securityGroupOf);
  if (p.tags) out.tags = [...p.tags];
  if (p.allowedAddressPairs) out.allowedAddressPairs = p.allowedAddressPairs.map((a) => ({ ...a }));
  if (p.profile) out.profile = { ...p.profile };
  if (p.valueSpecs) out.valueSpecs = p.valueSpecs.map((v) => ({ ...v }));
  return out;
}

type CrdZone = NonNullable<NonNullable<Spec['rootVolume']>['availabilityZone']>;

/** CAPO's VolumeAvailabilityZone: `from` defaults to Name; Name without a name is the machine's zone. */
function zoneOf(az: CrdZone | undefined): VolumeAvailabilityZone | undefined {
  if (!az) return undefined;
  if (az.from === 'Machine' || !az.name) return { from: 'Machine' };
  return { from: 'Name', name: az.name };
}

function rootVolumeOf(v: NonNullable<Spec['rootVolume']>): RootVolumeSpec {
  const zone = zoneOf(v.availabilityZone);
  return {
    sizeGiB: v.sizeGiB,
    ...(v.type ? { type: v.type } : {}),
    ...(zone ? { availabilityZone: zone } : {}),
  };
}

function blockDeviceOf(bd: NonNullable<Spec['additionalBlockDevices']>[number]): BlockDeviceSpec {
  if (bd.storage.type === 'Local') return { name: bd.name, sizeGiB: bd.sizeGiB, storage: { type: 'Local' } };
  const vol = bd.storage.volume;
  const zone = zoneOf(vol?.availabilityZone);
  return {
    name: bd.name,
    sizeGiB: bd.sizeGiB,
    storage: {
      type: 'Volume',
      volume: { ...(vol?.type ? { type: vol.type } : {}), ...(zone ? { availabilityZone: zone } : {}) },
    },
  };
}

/** The listed keys of `o` whose values are set. */
function pick<T extends object, K extends keyof T>(o: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (o[k] !== undefined && o[k] !== null) out[k] = o[k];
  return out;
}
