/**
 * machine.openshift.io/v1alpha1 OpenstackProviderSpec, the `spec.providerSpec.value` of an
 * OpenStack Machine (openshift/api `machine/v1alpha1/types_openstack.go`), as a zod schema whose
 * output is the typed spec. Every field upstream declares is here, the deprecated ones included
 * (upstream ignores them; decode.ts says so), so a MachineSet the installer wrote, in any release,
 * reads without an unknown key.
 *
 * Two builds of one declaration: `strict` refuses keys it does not know (to report them, with a
 * "did you mean"), `lenient` drops them (upstream's json.Unmarshal ignores them; so do we, after
 * saying so). OpenstackProviderStatus, which MAPO never wrote, is ours: see the end of the file.
 */
import { z } from 'zod';

export const PROVIDER_SPEC_KIND = 'OpenstackProviderSpec';
export const PROVIDER_STATUS_KIND = 'OpenstackProviderStatus';
export const PROVIDER_API_VERSION = 'machine.openshift.io/v1alpha1';
/** The group of the installer's providerSpec before OpenShift 4.2 (still in clusters upgraded since). */
export const LEGACY_PROVIDER_API_VERSION = 'openstackproviderconfig.openshift.io/v1alpha1';

const IPV6_MODES = ['slaac', 'dhcpv6-stateful', 'dhcpv6-stateless'] as const;
const BLOCK_DEVICE_TYPES = ['Local', 'Volume'] as const;

function build(mode: 'strict' | 'lenient') {
  const obj = <S extends z.core.$ZodLooseShape>(shape: S) =>
    mode === 'strict' ? z.strictObject(shape) : z.object(shape);
  const str = () => z.string().optional();
  const int = () => z.number().int().optional();
  const bool = () => z.boolean().optional();
  // An OpenStack id: any 8-4-4-4-12 hex string, as Neutron's is_uuid_like reads it (z.guid).
  const id = (what: string) => z.guid({ error: `set it to the UUID of the ${what}` });
  const uuid = (what: string) => id(what).optional();
  const required = (what: string) => z.string({ error: what }).min(1, { error: what });
  const secretRef = (what: string) =>
    obj({
      name: required(`set it to the name of the Secret holding ${what}`),
      namespace: str(),
    });
  /** Neutron's tag filters: comma-separated tags. */
  const tagFilters = { tags: str(), tagsAny: str(), notTags: str(), notTagsAny: str() };
  /** Query fields upstream dropped: accepted, ignored (decode.ts reports them). */
  const paging = { limit: int(), marker: str(), sortKey: str(), sortDir: str() };
  const stringMap = z.record(z.string(), z.string());

  const networkFilter = obj({
    id: uuid('network'),
    name: str(),
    description: str(),
    tenantId: str(),
    projectId: str(),
    ...tagFilters,
    status: str(),
    adminStateUp: bool(),
    shared: bool(),
    ...paging,
  });

  const subnetFilter = obj({
    id: uuid('subnet'),
    name: str(),
    description: str(),
    tenantId: str(),
    projectId: str(),
    ipVersion: z.union([z.literal(4), z.literal(6)], { error: 'set it to 4 or 6' }).optional(),
    gateway_ip: str(),
    cidr: str(),
    ipv6AddressMode: z.enum(IPV6_MODES).optional(),
    ipv6RaMode: z.enum(IPV6_MODES).optional(),
    subnetpoolId: str(),
    ...tagFilters,
    networkId: str(),
    enableDhcp: bool(),
    ...paging,
  });

  const subnetParam = obj({
    uuid: uuid('subnet'),
    filter: subnetFilter.optional(),
    portTags: z.array(z.string()).optional(),
    portSecurity: bool(),
  });

  const networkParam = obj({
    uuid: uuid('network'),
    fixedIp: str(),
    filter: networkFilter.optional(),
    subnets: z.array(subnetParam).optional(),
    noAllowedAddressPairs: bool(),
    portTags: z.array(z.string()).optional(),
    vnicType: str(),
    profile: stringMap.optional(),
    portSecurity: bool(),
  });

  const portOpts = obj({
    networkID: id('network the port is created in'),
    nameSuffix: str(),
    description: str(),
    adminStateUp: bool(),
    macAddress: str(),
    fixedIPs: z
      .array(
        obj({
          subnetID: id('subnet of the port’s network'),
          ipAddress: str(),
        }),
      )
      .optional(),
    tenantID: str(),
    projectID: str(),
    securityGroups: z.array(id('security group')).optional(),
    allowedAddressPairs: z.array(obj({ ipAddress: str(), macAddress: str() })).optional(),
    tags: z.array(z.string()).optional(),
    vnicType: str(),
    profile: stringMap.optional(),
    portSecurity: bool(),
    trunk: bool(),
    hostID: str(),
  });

  const securityGroupParam = obj({
    uuid: uuid('security group'),
    name: str(),
    filter: obj({
      id: uuid('security group'),
      name: str(),
      description: str(),
      tenantId: str(),
      projectId: str(),
      ...tagFilters,
      ...paging,
    }).optional(),
  });

  const rootVolume = obj({
    sourceUUID: str(),
    volumeType: str(),
    diskSize: z
      .number({ error: 'set it to the size of the root volume in GiB, e.g. 25' })
      .int()
      .min(1, { error: 'set it to the size of the root volume in GiB, e.g. 25' }),
    availabilityZone: str(),
    sourceType: str(),
    deviceType: str(),
  });

  const additionalBlockDevice = obj({
    name: required('name the block device, e.g. etcd'),
    sizeGiB: z
      .number({ error: 'set it to the size in GiB, e.g. 10' })
      .int()
      .min(1, { error: 'set it to the size in GiB, e.g. 10' }),
    storage: obj({
      type: z.enum(BLOCK_DEVICE_TYPES),
      volume: obj({ type: str(), availabilityZone: str() }).optional(),
    }),
  });

  return obj({
    apiVersion: str(),
    kind: str(),
    // Go's ObjectMeta, written by the installer as {creationTimestamp: null}; nothing reads it.
    metadata: z.looseObject({}).optional(),
    cloudsSecret: secretRef('clouds.yaml (the installer’s: openstack-cloud-credentials)'),
    cloudName: required('set it to the cloud of clouds.yaml to use (the installer’s: openstack)'),
    flavor: required('set it to the name of a Nova flavor, e.g. m1.large'),
    image: str(),
    keyName: str(),
    sshUserName: str(),
    networks: z.array(networkParam).optional(),
    ports: z.array(portOpts).optional(),
    floatingIP: str(),
    availabilityZone: str(),
    securityGroups: z.array(securityGroupParam).optional(),
    userDataSecret: secretRef('the user data (key userData)').optional(),
    trunk: bool(),
    tags: z.array(z.string()).optional(),
    serverMetadata: stringMap.optional(),
    configDrive: bool(),
    rootVolume: rootVolume.optional(),
    additionalBlockDevices: z.array(additionalBlockDevice).optional(),
    serverGroupID: uuid('server group'),
    serverGroupName: str(),
    primarySubnet: str(),
  });
}

export const strictProviderSpec = build('strict');
export const lenientProviderSpec = build('lenient');

export type OpenstackProviderSpec = z.output<typeof lenientProviderSpec>;
export type NetworkParam = NonNullable<OpenstackProviderSpec['networks']>[number];
export type SubnetParam = NonNullable<NetworkParam['subnets']>[number];
export type PortOpts = NonNullable<OpenstackProviderSpec['ports']>[number];
export type SecurityGroupParam = NonNullable<OpenstackProviderSpec['securityGroups']>[number];
export type RootVolume = NonNullable<OpenstackProviderSpec['rootVolume']>;
export type AdditionalBlockDevice = NonNullable<OpenstackProviderSpec['additionalBlockDevices']>[number];

/**
 * `status.providerStatus` of an OpenStack Machine. Upstream MAPO writes none; ours records what
 * the actuator found, the way other Machine API providers do (instanceId, instanceState,
 * conditions), and the OpenStackServer that carries the instance.
 */
export interface OpenstackProviderStatus {
  apiVersion: typeof PROVIDER_API_VERSION;
  kind: typeof PROVIDER_STATUS_KIND;
  /** The Nova server's id. */
  instanceId?: string;
  /** Nova's status of the server (ACTIVE, BUILD, ERROR, …). */
  instanceState?: string;
  /** The OpenStackServer (same namespace) the actuator owns for this Machine. */
  serverRef?: { name: string };
  /** What the spec's names resolved to, once, before anything was created. */
  resolved?: { imageID?: string; flavorID?: string; serverGroupID?: string };
  /** The server's ports, in the spec's order: name, network and (once created) id. */
  ports?: { name: string; networkID: string; id?: string }[];
  conditions?: {
    type: string;
    status: 'True' | 'False' | 'Unknown';
    reason?: string;
    message?: string;
    lastProbeTime?: string;
    lastTransitionTime?: string;
  }[];
}
