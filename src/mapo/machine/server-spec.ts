/**
 * A Machine API Machine's OpenstackProviderSpec → the spec of its OpenStackServer: MAPO's
 * `MachineToInstanceSpec` (pkg/machine/convert.go), aimed at CAPO's OpenStackServer instead of the
 * old synchronous `compute.InstanceSpec`. Pure: the caller reads the objects and resolves the
 * server group by name (server-group.ts); this decides, once, when the OpenStackServer is created.
 *
 * - image: `image`, else `rootVolume.sourceUUID` (the installer writes the image *name* there when
 *   booting from a volume); both by name, as MAPO reads them;
 * - ports: the `networks` first (the first one is the kubelet's network), then `ports` one to one.
 *   A network with no uuid and an empty filter gives one port per subnet, its network taken from
 *   the subnet (the server engine derives it, as CAPO does); otherwise one port with a fixed IP on
 *   each subnet. Network ports carry the Infrastructure's API and ingress VIPs as allowed address
 *   pairs, unless `noAllowedAddressPairs` or the load balancer is UserManaged;
 * - `portSecurity` → `disablePortSecurity` (inverted, unset stays unset); binding profile
 *   `capabilities: switchdev` → OVS hardware offload, `trusted: "true"` → trusted VF;
 * - tags: the spec's + `cluster-api-provider-openstack` + `<namespace>-<cluster id>`, sorted, each
 *   once (Nova refuses a repeated tag);
 * - identityRef: the `cloudsSecret` (which must be in the Machine's namespace: an OpenStackServer
 *   reads its Secret from its own) and `cloudName`; userDataRef: the Secret `<machine>-user-data`
 *   the actuator writes from `userDataSecret`.
 */
import type { OpenStackPlatformStatus } from '../../ccm-operator/api/index.ts';
import type { OpenStackServerSpec } from '../../capo/api/index.ts';
import type {
  Machine,
  NetworkParam,
  OpenstackProviderSpec,
  PortOpts,
  SecurityGroupParam,
} from '../api/index.ts';
import { Labels } from '../api/index.ts';

type ServerPort = OpenStackServerSpec['ports'][number];
type ServerSubnet = NonNullable<NonNullable<ServerPort['fixedIPs']>[number]['subnet']>;
type ServerSecurityGroup = NonNullable<OpenStackServerSpec['securityGroups']>[number];
type SubnetParam = NonNullable<NetworkParam['subnets']>[number];

/** The tag MAPO (and CAPO) put on every server it makes. */
export const PROVIDER_TAG = 'cluster-api-provider-openstack';

/** Where the actuator writes a Machine's user data for its OpenStackServer (key `value`). */
export function userDataSecretName(machineName: string): string {
  return `${machineName}-user-data`;
}

export interface ServerSpecInput {
  /** The decoded provider spec (decodeProviderSpec). */
  spec: OpenstackProviderSpec;
  machine: Machine;
  /** Infrastructure `cluster`'s status.platformStatus.openstack; undefined: no VIPs to allow. */
  platform: OpenStackPlatformStatus | undefined;
  /** The server group, by id: `serverGroupID`, or the one found or made for `serverGroupName`. */
  serverGroupID: string | undefined;
}

export type ServerSpecResult =
  | { ok: true; spec: OpenStackServerSpec }
  /** A field this Machine cannot get a server from, named with its path: InvalidConfiguration. */
  | { ok: false; path: string; message: string };

const WHERE = 'spec.providerSpec.value';

export function machineToServerSpec(input: ServerSpecInput): ServerSpecResult {
  const { spec, machine } = input;
  const namespace = machine.metadata?.namespace ?? 'default';
  const secretNamespace = spec.cloudsSecret.namespace;
  if (secretNamespace && secretNamespace !== namespace) {
    return {
      ok: false,
      path: `${WHERE}.cloudsSecret.namespace`,
      message: `the clouds Secret ${secretNamespace}/${spec.cloudsSecret.name} is not in the Machine's namespace ${namespace}: the OpenStackServer reads its credentials from its own namespace; copy the Secret to ${namespace} and name it there`,
    };
  }
  const clusterID = machine.metadata?.labels?.[Labels.Cluster];
  if (!clusterID) {
    return {
      ok: false,
      path: `metadata.labels['${Labels.Cluster}']`,
      message: `the Machine has no label ${Labels.Cluster}: set it to the cluster's infrastructure name`,
    };
  }
  const image = spec.image || spec.rootVolume?.sourceUUID;
  if (!image) {
    return { ok: false, path: `${WHERE}.image`, message: 'no image: set image (or rootVolume.sourceUUID)' };
  }
  const vips = allowedVIPs(input.platform);
  const trunk = spec.trunk ?? false;
  const ports = [
    ...(spec.networks ?? []).flatMap((n) => networkPorts(n, vips, trunk)),
    ...(spec.ports ?? []).map(explicitPort),
  ];
  if (ports.length === 0) {
    return {
      ok: false,
      path: `${WHERE}.networks`,
      message: 'no networks and no ports: give the machine at least one network or port',
    };
  }

  const out: OpenStackServerSpec = {
    identityRef: { type: 'Secret', name: spec.cloudsSecret.name, cloudName: spec.cloudName },
    image: { filter: { name: image } },
    flavor: spec.flavor,
    ports,
    tags: [...new Set([...(spec.tags ?? []), PROVIDER_TAG, `${namespace}-${clusterID}`])].sort(),
    trunk,
  };
  if (spec.availabilityZone) out.availabilityZone = spec.availabilityZone;
  if (spec.keyName) out.sshKeyName = spec.keyName;
  if (spec.configDrive !== undefined) out.configDrive = spec.configDrive;
  if (input.serverGroupID) out.serverGroup = { id: input.serverGroupID };
  if (spec.securityGroups?.length) out.securityGroups = spec.securityGroups.map(securityGroup);
  if (spec.serverMetadata && Object.keys(spec.serverMetadata).length > 0) {
    out.serverMetadata = Object.entries(spec.serverMetadata)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key, value]) => ({ key, value }));
  }
  if (spec.userDataSecret) out.userDataRef = { name: userDataSecretName(machine.metadata?.name ?? '') };
  if (spec.rootVolume) {
    const rv = spec.rootVolume;
    out.rootVolume = {
      sizeGiB: rv.diskSize,
      ...(rv.volumeType ? { type: rv.volumeType } : {}),
      // Unset: the machine's zone, as MAPO's CAPO did.
      ...(rv.availabilityZone ? { availabilityZone: { from: 'Name', name: rv.availabilityZone } } : {}),
    };
  }
  if (spec.additionalBlockDevices?.length) {
    out.additionalBlockDevices = spec.additionalBlockDevices.map((bd) => ({
      name: bd.name,
      sizeGiB: bd.sizeGiB,
      storage:
        bd.storage.type === 'Local'
          ? { type: 'Local' }
          : {
              type: 'Volume',
              volume: {
                ...(bd.storage.volume?.type ? { type: bd.storage.volume.type } : {}),
                ...(bd.storage.volume?.availabilityZone
                  ? { availabilityZone: { from: 'Name', name: bd.storage.volume.availabilityZone } }
                  : {}),
              },
            },
    }));
  }
  return { ok: true, spec: out };
}

/**
 * The VIPs every network port may carry: the API's and the ingress's (both families), unless the
 * user runs the load balancer. The singular fields are the older installers'.
 */
export function allowedVIPs(platform: OpenStackPlatformStatus | undefined): string[] {
  if (!platform || platform.loadBalancer?.type === 'UserManaged') return [];
  const api = platform.apiServerInternalIPs?.length
    ? platform.apiServerInternalIPs
    : [platform.apiServerInternalIP ?? ''];
  const ingress = platform.ingressIPs?.length ? platform.ingressIPs : [platform.ingressIP ?? ''];
  return [...new Set([...api, ...ingress].filter((ip) => ip !== ''))];
}

function networkPorts(net: NetworkParam, vips: readonly string[], trunk: boolean): ServerPort[] {
  const common: ServerPort = {
    trunk,
    ...portSecurity(net.portSecurity),
    ...(net.vnicType ? { vnicType: net.vnicType } : {}),
    ...profile(net.profile),
    ...(!net.noAllowedAddressPairs && vips.length > 0
      ? { allowedAddressPairs: vips.map((ipAddress) => ({ ipAddress })) }
      : {}),
  };
  const networkID = net.uuid || net.filter?.id;
  const filter = networkFilter(net.filter);
  const subnets = net.subnets ?? [];
  if (!networkID && !filter) {
    // No network named: one port per subnet, on the subnet's network.
    return subnets.map((s) => ({
      ...common,
      fixedIPs: [{ subnet: subnetParam(s) }],
      ...tags([...(net.portTags ?? []), ...(s.portTags ?? [])]),
    }));
  }
  return [
    {
      ...common,
      network: networkID ? { id: networkID } : { filter: filter! },
      ...(subnets.length > 0 ? { fixedIPs: subnets.map((s) => ({ subnet: subnetParam(s) })) } : {}),
      ...tags([...(net.portTags ?? []), ...subnets.flatMap((s) => s.portTags ?? [])]),
    },
  ];
}

function explicitPort(p: PortOpts): ServerPort {
  return {
    network: { id: p.networkID },
    ...(p.nameSuffix ? { nameSuffix: p.nameSuffix } : {}),
    ...(p.description ? { description: p.description } : {}),
    ...(p.adminStateUp !== undefined ? { adminStateUp: p.adminStateUp } : {}),
    ...(p.macAddress ? { macAddress: p.macAddress } : {}),
    ...(p.fixedIPs?.length
      ? {
          fixedIPs: p.fixedIPs.map((ip) => ({
            subnet: { id: ip.subnetID },
            ...(ip.ipAddress ? { ipAddress: ip.ipAddress } : {}),
          })),
        }
      : {}),
    ...(p.securityGroups ? { securityGroups: p.securityGroups.map((id) => ({ id })) } : {}),
    ...(p.allowedAddressPairs?.length
      ? {
          allowedAddressPairs: p.allowedAddressPairs
            .filter((a) => a.ipAddress)
            .map((a) => ({ ipAddress: a.ipAddress!, ...(a.macAddress ? { macAddress: a.macAddress } : {}) })),
        }
      : {}),
    ...tags(p.tags ?? []),
    ...(p.vnicType ? { vnicType: p.vnicType } : {}),
    ...profile(p.profile),
    ...portSecurity(p.portSecurity),
    ...(p.trunk !== undefined ? { trunk: p.trunk } : {}),
  };
}

/** MAPO's portSecurity is the opposite of CAPO's disablePortSecurity; unset stays unset (the network's). */
function portSecurity(enabled: boolean | undefined): Pick<ServerPort, 'disablePortSecurity'> {
  return enabled === undefined ? {} : { disablePortSecurity: !enabled };
}

/** The binding-profile keys MAPO carries (decodeProviderSpec refuses others). */
function profile(p: Record<string, string> | undefined): Pick<ServerPort, 'profile'> {
  if (!p) return {};
  const out: NonNullable<ServerPort['profile']> = {};
  if (p.capabilities?.includes('switchdev')) out.ovsHWOffload = true;
  if (p.trusted === 'true') out.trustedVF = true;
  return Object.keys(out).length > 0 ? { profile: out } : {};
}

function tags(list: readonly string[]): Pick<ServerPort, 'tags'> {
  const unique = [...new Set(list)];
  return unique.length > 0 ? { tags: unique } : {};
}

/** Neutron's comma-separated tag filters as lists. */
function tagFilters(f: { tags?: string; tagsAny?: string; notTags?: string; notTagsAny?: string }) {
  const split = (v: string | undefined) =>
    v
      ?.split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
  const out: { tags?: string[]; tagsAny?: string[]; notTags?: string[]; notTagsAny?: string[] } = {};
  for (const key of ['tags', 'tagsAny', 'notTags', 'notTagsAny'] as const) {
    const list = split(f[key]);
    if (list?.length) out[key] = list;
  }
  return out;
}

type NetworkFilter = NonNullable<NetworkParam['filter']>;

/** The fields of a network filter that select (the deprecated ones are ignored, as upstream). */
function networkFilter(f: NetworkFilter | undefined) {
  if (!f) return undefined;
  const out = {
    ...(f.name ? { name: f.name } : {}),
    ...(f.description ? { description: f.description } : {}),
    ...(f.projectId || f.tenantId ? { projectID: f.projectId || f.tenantId } : {}),
    ...tagFilters(f),
  };
  return Object.keys(out).length > 0 ? out : undefined;
}

function subnetParam(s: SubnetParam): ServerSubnet {
  const id = s.uuid || s.filter?.id;
  if (id) return { id };
  const f = s.filter ?? {};
  return {
    filter: {
      ...(f.name ? { name: f.name } : {}),
      ...(f.description ? { description: f.description } : {}),
      ...(f.projectId || f.tenantId ? { projectID: f.projectId || f.tenantId } : {}),
      ...(f.ipVersion ? { ipVersion: f.ipVersion } : {}),
      ...(f.gateway_ip ? { gatewayIP: f.gateway_ip } : {}),
      ...(f.cidr ? { cidr: f.cidr } : {}),
      ...(f.ipv6AddressMode ? { ipv6AddressMode: f.ipv6AddressMode } : {}),
      ...(f.ipv6RaMode ? { ipv6RAMode: f.ipv6RaMode } : {}),
      ...tagFilters(f),
    },
  };
}

function securityGroup(sg: SecurityGroupParam): ServerSecurityGroup {
  const id = sg.uuid || sg.filter?.id;
  if (id) return { id };
  const f = sg.filter ?? {};
  return {
    filter: {
      // MAPO's `name` is the filter's name.
      ...(sg.name || f.name ? { name: sg.name || f.name } : {}),
      ...(f.description ? { description: f.description } : {}),
      ...(f.projectId || f.tenantId ? { projectID: f.projectId || f.tenantId } : {}),
      ...tagFilters(f),
    },
  };
}
