/**
 * The pieces CAPO's kinds share (CAPO v0.14 `api/v1beta1/types.go`, `identity_types.go`): params
 * that name an OpenStack resource by ID or filter, ports, block devices, identity references,
 * the status records of resolved references and created resources, and Cluster API conditions.
 */
import {
  anyObject,
  array,
  boolean,
  enumOf,
  type Infer,
  integer,
  intOrString,
  map,
  object,
  string,
  type Schema,
} from '../../kube/crd/schema.ts';

/* ------------------------------------------------------------------ params */

/** A Neutron tag: not empty, no commas (they separate tags in a query). */
const neutronTag = string({ minLength: 1, pattern: '^[^,]+$' });

const tagSet = (what: string) => array(neutronTag, { listType: 'set', description: what });

/** Neutron's tag filters, inlined into every Neutron filter. */
const neutronTagFilters = {
  tags: tagSet('Only resources that carry all of these tags.'),
  tagsAny: tagSet('Only resources that carry at least one of these tags.'),
  notTags: tagSet('Excludes resources that carry all of these tags.'),
  notTagsAny: tagSet('Excludes resources that carry any of these tags.'),
};

const uuid = (what: string) => string({ format: 'uuid', description: what });

/** A param names exactly one resource: by `id`, or by a `filter` that must match exactly one. */
function param<F>(what: string, filter: Schema<F>) {
  return object(
    {
      id: uuid(`The UUID of the ${what}; used as is, without a lookup.`),
      filter: filter.describe(`A query that must match exactly one ${what}.`),
    },
    { minProperties: 1, maxProperties: 1, description: `A ${what}, by id or by filter (exactly one).` },
  );
}

const neutronFilter = (what: string) =>
  object(
    {
      name: string(),
      description: string(),
      projectID: string(),
      ...neutronTagFilters,
    },
    { minProperties: 1, description: `A query for a ${what}; at least one field must be set.` },
  );

export const networkFilter = neutronFilter('network');
export const networkParam = param('network', networkFilter);
export type NetworkParam = Infer<typeof networkParam>;

export const subnetFilter = object(
  {
    name: string(),
    description: string(),
    projectID: string(),
    ipVersion: integer(),
    gatewayIP: string(),
    cidr: string(),
    ipv6AddressMode: string(),
    ipv6RAMode: string(),
    ...neutronTagFilters,
  },
  { minProperties: 1, description: 'A query for a subnet; at least one field must be set.' },
);
export const subnetParam = param('subnet', subnetFilter);
export type SubnetParam = Infer<typeof subnetParam>;

export const routerParam = param('router', neutronFilter('router'));
export type RouterParam = Infer<typeof routerParam>;

export const securityGroupParam = param('security group', neutronFilter('security group'));
export type SecurityGroupParam = Infer<typeof securityGroupParam>;

export const qosPolicyParam = param(
  'QoS policy',
  object(
    {
      name: string(),
      description: string(),
      projectID: string(),
      shared: boolean(),
      isDefault: boolean(),
      ...neutronTagFilters,
    },
    { minProperties: 1, description: 'A query for a QoS policy; at least one field must be set.' },
  ),
);

export const serverGroupParam = param(
  'server group',
  object({ name: string({ description: 'The name of the server group.' }) }, { minProperties: 1 }),
);
export type ServerGroupParam = Infer<typeof serverGroupParam>;

const resourceReference = object(
  { name: string({ description: 'The name of the referenced object.' }) },
  { required: ['name'] },
);

export const imageFilter = object(
  {
    name: string({ description: 'The image name; with the tags it must match exactly one image.' }),
    tags: array(string(), { listType: 'set', description: 'Tags the image must carry.' }),
  },
  { minProperties: 1, description: 'A query for a Glance image; at least one field must be set.' },
);

export const imageParam = object(
  {
    id: uuid('The UUID of the image; used as is, without a lookup.'),
    filter: imageFilter.describe('A query that must match exactly one image.'),
    imageRef: resourceReference.describe(
      'An ORC Image object in the same namespace (shiftstack reports this as not supported).',
    ),
  },
  {
    minProperties: 1,
    maxProperties: 1,
    description: 'The Glance image: by id, by filter or by ORC imageRef (exactly one).',
  },
);
export type ImageParam = Infer<typeof imageParam>;

/* --------------------------------------------------------------- identity */

export const IDENTITY_TYPES = ['Secret', 'ClusterIdentity'] as const;

export const identityRef = object(
  {
    type: enumOf(IDENTITY_TYPES, {
      description:
        'Secret: `name` is a Secret in the same namespace; ClusterIdentity: `name` is an OpenStackClusterIdentity.',
    }).default('Secret'),
    name: string({
      description:
        'The Secret (with key `clouds.yaml`, optionally `cacert`) or OpenStackClusterIdentity holding the credentials.',
    }),
    cloudName: string({ description: 'The clouds.yaml entry to use.' }),
    region: string({
      description:
        'Overrides the region of clouds.yaml; on a machine it becomes part of the providerID. Immutable.',
    }),
  },
  { required: ['name', 'cloudName'], description: 'The OpenStack credentials to use.' },
).rules(
  {
    rule: '(!has(self.region) && !has(oldSelf.region)) || self.region == oldSelf.region',
    message: 'region is immutable',
  },
  { rule: 'has(self.name)', message: 'name is required' },
  { rule: 'has(self.cloudName)', message: 'cloudName is required' },
);
export type IdentityRef = Infer<typeof identityRef>;

/* ------------------------------------------------------------------- ports */

export const fixedIP = object({
  subnet: subnetParam.describe('The subnet of the fixed IP; must be a subnet of the port network.'),
  ipAddress: string({ description: 'A specific address, in `subnet` or in any subnet of the network.' }),
});

export const addressPair = object(
  {
    ipAddress: string({ description: 'An IP address (or, where Neutron allows it, a CIDR).' }),
    macAddress: string({ description: 'Defaults to the MAC address of the port.' }),
  },
  { required: ['ipAddress'] },
);

export const valueSpec = object(
  {
    name: string({ description: 'Identifies the pair here; not sent to OpenStack.' }),
    key: string(),
    value: string(),
  },
  { required: ['name', 'key', 'value'] },
);

/** The port fields that need no lookup; shared by PortOpts and ResolvedPortSpec. */
const resolvedPortSpecFields = {
  adminStateUp: boolean({ description: 'Whether the port is created up (the default) or down.' }),
  macAddress: string({ description: 'The MAC address; generated when unset.' }),
  allowedAddressPairs: array(addressPair, {
    description: 'Addresses the port may send from besides its own.',
  }),
  hostID: string({ description: 'The host the port is bound to.' }),
  vnicType: string({ description: 'The vNIC type (normal, direct, macvtap, …); not validated here.' }),
  profile: object({ ovsHWOffload: boolean(), trustedVF: boolean() }).describe('Binding profile.'),
  disablePortSecurity: boolean({
    description: 'Port security off; inherits the network setting when unset.',
  }),
  propagateUplinkStatus: boolean(),
  valueSpecs: array(valueSpec, {
    listType: { map: ['name'] },
    description: 'Extra fields for the Neutron request.',
  }),
};

export const portOpts = object({
  network: networkParam.describe('The network of the port; the cluster network when unset.'),
  description: string(),
  nameSuffix: string({
    description: 'Appended to the server name to name the port; the port index when unset.',
  }),
  fixedIPs: array(fixedIP, { listType: 'atomic', description: 'Subnets and/or addresses of the port.' }),
  securityGroups: array(securityGroupParam, {
    listType: 'atomic',
    description: 'Security groups of the port.',
  }),
  tags: array(string(), {
    listType: 'set',
    description: 'Tags of the port and its trunk, besides the machine tags.',
  }),
  trunk: boolean({ description: 'A trunk on this port; inherits the machine value when unset.' }),
  qosPolicy: qosPolicyParam.describe('The QoS policy of the port.'),
  ...resolvedPortSpecFields,
});
export type PortOpts = Infer<typeof portOpts>;

export const resolvedFixedIP = object({ subnet: string({ description: 'Subnet ID.' }), ipAddress: string() });

export const resolvedPortSpec = object(
  {
    name: string(),
    description: string(),
    networkID: string(),
    tags: array(string(), { listType: 'set' }),
    trunk: boolean(),
    fixedIPs: array(resolvedFixedIP, { listType: 'atomic' }),
    securityGroups: array(string(), { listType: 'atomic', description: 'Security group IDs.' }),
    qosPolicyID: string(),
    ...resolvedPortSpecFields,
  },
  { required: ['name', 'description', 'networkID'], description: 'A port with every reference resolved.' },
);
export type ResolvedPortSpec = Infer<typeof resolvedPortSpec>;

/**
 * A volume the server engine is to make before the server, with its name (`<server>-root`,
 * `<server>-<device>`): the plan, written before anything exists. Not in CAPO's
 * ResolvedServerSpec. What a removal deletes is `resources.volumes` (see volumeStatus).
 */
export const resolvedVolumeSpec = object(
  {
    name: string({ description: 'The volume name: `<server>-root` or `<server>-<device name>`.' }),
    root: boolean({ description: 'The boot volume, made from the image.' }),
    sizeGiB: integer({ minimum: 1, description: 'Size in GiB.' }),
    type: string({ description: 'The Cinder volume type; the cloud default when unset.' }),
    availabilityZone: string({ description: 'The Cinder availability zone; the cloud default when unset.' }),
    tag: string({ description: "Nova's block device tag (the device name); none on the root volume." }),
  },
  { required: ['name', 'root', 'sizeGiB'], description: 'A volume of the server, with its derived name.' },
);
export type ResolvedVolumeSpec = Infer<typeof resolvedVolumeSpec>;

export const portStatus = object(
  { id: string({ description: 'The Neutron port ID.' }) },
  { required: ['id'] },
);

/**
 * A Cinder volume the server engine may have made, by name: written before its create (or when a
 * volume of that name is adopted), so a removal deletes exactly these and derives no name. Not CAPO's.
 */
export const volumeStatus = object(
  { name: string({ description: 'The volume name: `<server>-root` or `<server>-<device name>`.' }) },
  { required: ['name'] },
);

/* ----------------------------------------------------------- block devices */

const volumeAvailabilityZone = object({
  from: enumOf(['Name', 'Machine'] as const, {
    description: 'Name: use `name`; Machine: the failure domain of the machine.',
  }).default('Name'),
  name: string({ minLength: 1, pattern: '^[^ ]+$', description: 'A volume availability zone (no spaces).' }),
}).rules({
  rule: "!has(self.from) || self.from == 'Name' ? has(self.name) : !has(self.name)",
  message: "name is required when from is 'Name' or default",
});

const blockDeviceVolume = object({
  type: string({ description: 'The Cinder volume type; the cloud default when unset.' }),
  availabilityZone: volumeAvailabilityZone.describe('Where the volume is created.'),
});

export const rootVolume = object(
  {
    sizeGiB: integer({ minimum: 1, description: 'Size in GiB.' }),
    type: string({ description: 'The Cinder volume type; the cloud default when unset.' }),
    availabilityZone: volumeAvailabilityZone.describe('Where the volume is created.'),
  },
  { required: ['sizeGiB'], description: 'Boot from a volume made from the image.' },
);

export const BLOCK_DEVICE_TYPES = ['Local', 'Volume'] as const;

export const additionalBlockDevice = object(
  {
    name: string({
      description: 'Names the device (and the volume `<server>-<name>`); `root` is reserved.',
    }),
    sizeGiB: integer({ minimum: 1, description: 'Size in GiB.' }),
    storage: object(
      {
        type: enumOf(BLOCK_DEVICE_TYPES, { description: 'Local (ephemeral) or Volume (Cinder).' }),
        volume: blockDeviceVolume.describe('Options of a Volume device.'),
      },
      { required: ['type'], description: 'Where the device is stored.' },
    ),
  },
  { required: ['name', 'sizeGiB', 'storage'] },
);
export type AdditionalBlockDevice = Infer<typeof additionalBlockDevice>;

/* ---------------------------------------------------------------- machines */

export const serverMetadata = object(
  { key: string({ maxLength: 255 }), value: string({ maxLength: 255 }) },
  { required: ['key', 'value'] },
);

export const SCHEDULER_HINT_TYPES = ['Bool', 'String', 'Number'] as const;

export const schedulerHintAdditionalProperty = object(
  {
    name: string({ minLength: 1, description: 'The scheduler hint name.' }),
    value: object(
      {
        type: enumOf(SCHEDULER_HINT_TYPES),
        bool: boolean(),
        number: integer(),
        string: string({ minLength: 1, maxLength: 255 }),
      },
      { required: ['type'], description: 'The value; `type` says which field holds it.' },
    ).rules(
      {
        rule: "has(self.type) && self.type == 'Bool' ? has(self.bool) : !has(self.bool)",
        message: 'bool is required when type is Bool, and forbidden otherwise',
      },
      {
        rule: "has(self.type) && self.type == 'Number' ? has(self.number) : !has(self.number)",
        message: 'number is required when type is Number, and forbidden otherwise',
      },
      {
        rule: "has(self.type) && self.type == 'String' ? has(self.string) : !has(self.string)",
        message: 'string is required when type is String, and forbidden otherwise',
      },
    ),
  },
  { required: ['name', 'value'] },
);

export const typedLocalObjectReference = object(
  {
    apiGroup: string({ description: 'The group of the referenced kind; the core group when unset.' }),
    kind: string(),
    name: string(),
  },
  { required: ['kind', 'name'], atomic: true },
);

export const localObjectReference = object({ name: string() }, { atomic: true });

export const INSTANCE_STATES = [
  'BUILD',
  'ACTIVE',
  'ERROR',
  'STOPPED',
  'SHUTOFF',
  'DELETED',
  'SOFT_DELETED',
  '',
] as const;
export type InstanceState = (typeof INSTANCE_STATES)[number];
/** Nova reports more states than CAPO names (MIGRATING, REBUILD, …): the status field is a plain string. */
export const instanceState = string({ description: 'The Nova status of the server (ACTIVE, BUILD, …).' });

export const nodeAddress = object(
  {
    type: string({ description: 'Hostname, ExternalIP, InternalIP, ExternalDNS or InternalDNS.' }),
    address: string(),
  },
  { required: ['type', 'address'] },
);

export const resolvedMachineSpec = object({
  serverGroupID: string(),
  imageID: string(),
  flavorID: string(),
  ports: array(resolvedPortSpec),
});

export const machineResources = object({ ports: array(portStatus) });

/* -------------------------------------------------------- Cluster API bits */

/**
 * A Cluster API v1beta1 condition (`severity` as CAPI has it) that also keeps `observedGeneration`,
 * which metav1.Condition writers set, so either kind of writer round-trips.
 */
export const condition = object(
  {
    type: string({ minLength: 1 }),
    status: string({ minLength: 1, description: 'True, False or Unknown.' }),
    severity: string({ description: 'Error, Warning or Info; only when status is False.' }),
    lastTransitionTime: string({ format: 'date-time' }),
    reason: string(),
    message: string(),
    observedGeneration: integer({ format: 'int64', minimum: 0 }),
  },
  { required: ['type', 'status', 'lastTransitionTime'] },
);
export const conditions = array(condition, { description: 'Observations of the object state.' });
export type CapiCondition = Infer<typeof condition>;

/** Set once the infrastructure is provisioned (Cluster API v1beta2 contract). */
export const initialization = object({ provisioned: boolean() });

/**
 * Cluster API's APIEndpoint. Neither field is required (as in Cluster API v1beta2, whose objects
 * are stored as v1beta1): a host without a port gets the API server port (`apiServerPort`, 6443)
 * from the controller.
 */
export const apiEndpoint = object({
  host: string({ description: 'The hostname or IP of the API server.' }),
  port: integer({
    format: 'int32',
    description: 'The port of the API server; the API server port when unset.',
  }),
});
export type APIEndpoint = Infer<typeof apiEndpoint>;

export const failureDomains = map(
  object({
    controlPlane: boolean({ description: 'Control-plane machines may use this failure domain.' }),
    attributes: map(string()),
  }),
  { description: 'Failure domains (Nova availability zones) by name.' },
);

export const objectReference = object(
  {
    apiVersion: string(),
    kind: string(),
    name: string(),
    namespace: string(),
    uid: string(),
    resourceVersion: string(),
    fieldPath: string(),
  },
  { atomic: true },
);
export type ObjectReference = Infer<typeof objectReference>;

export const labelSelector = object(
  {
    matchLabels: map(string()),
    matchExpressions: array(
      object(
        { key: string(), operator: string(), values: array(string(), { listType: 'atomic' }) },
        { required: ['key', 'operator'] },
      ),
      { listType: 'atomic' },
    ),
  },
  { atomic: true },
);

/** A ResourceList: quantities by resource name. */
export const resourceList = map(
  intOrString({
    pattern:
      '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
  }),
);

/**
 * What our controllers record about the spec they accepted (see immutability.ts): additions to
 * CAPO's status, under names CAPO does not use.
 */
export const acceptedSpecStatus = {
  acceptedSpec: anyObject({
    description:
      'shiftstack: the last spec the controller accepted and acts on; a later change to an immutable field is refused.',
  }),
  acceptedGeneration: integer({
    format: 'int64',
    description: 'shiftstack: the metadata.generation of the accepted spec.',
  }),
};
