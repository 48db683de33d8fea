/**
 * The pieces of CAPO's infrastructure.cluster.x-k8s.io/v1beta2 that differ from v1beta1 (CAPO
 * main `api/v1beta2/types.go`): a flavor param (id or filter) instead of flavor/flavorID,
 * `enablePortSecurity` instead of `disablePortSecurity` on ports, metav1.Condition instead of
 * Cluster API v1beta1 conditions, failure domains as a list. Everything unchanged is v1beta1's
 * (../common.ts), declared once.
 */
import {
  addressPair,
  additionalBlockDevice,
  fixedIP,
  identityRef,
  imageParam,
  machineResources,
  networkParam,
  qosPolicyParam,
  resolvedFixedIP,
  rootVolume,
  schedulerHintAdditionalProperty,
  securityGroupParam,
  serverGroupParam,
  serverMetadata,
  typedLocalObjectReference,
  valueSpec,
} from '../common.ts';
import { array, boolean, type Infer, integer, map, object, string } from '../../../kube/crd/schema.ts';

export const flavorParam = object(
  {
    id: string({ description: 'The ID of the flavor; used as is, without a lookup.' }),
    filter: object(
      { name: string({ description: 'The flavor name.' }) },
      { minProperties: 1, description: 'A query that must match exactly one flavor.' },
    ),
  },
  { minProperties: 1, maxProperties: 1, description: 'The Nova flavor: by id or by filter (exactly one).' },
);
export type FlavorParam = Infer<typeof flavorParam>;

/** v1beta1's port fields with `enablePortSecurity` for `disablePortSecurity`. */
const resolvedPortSpecFields = {
  adminStateUp: boolean({ description: 'Whether the port is created up (the default) or down.' }),
  macAddress: string({ description: 'The MAC address; generated when unset.' }),
  allowedAddressPairs: array(addressPair, {
    listType: 'atomic',
    description: 'Addresses the port may send from besides its own.',
  }),
  hostID: string({ description: 'The host the port is bound to.' }),
  vnicType: string({ description: 'The vNIC type (normal, direct, macvtap, …); not validated here.' }),
  profile: object({ ovsHWOffload: boolean(), trustedVF: boolean() }).describe('Binding profile.'),
  enablePortSecurity: boolean({
    description: 'Port security on or off; inherits the network setting when unset.',
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

export const resolvedMachineSpec = object({
  serverGroupID: string(),
  imageID: string(),
  flavorID: string(),
  ports: array(resolvedPortSpec, { listType: 'atomic' }),
});

export { machineResources };

/** metav1.Condition, as CAPO v1beta2 (and Cluster API v1beta2) write conditions. */
export const condition = object(
  {
    type: string({ minLength: 1, maxLength: 316 }),
    status: string({ description: 'True, False or Unknown.' }).with({ enum: ['True', 'False', 'Unknown'] }),
    observedGeneration: integer({ format: 'int64', minimum: 0 }),
    lastTransitionTime: string({ format: 'date-time' }),
    reason: string({ maxLength: 1024 }),
    message: string({ maxLength: 32768 }),
  },
  { required: ['type', 'status', 'lastTransitionTime'] },
);
export const conditions = array(condition, {
  listType: { map: ['type'] },
  description: 'Observations of the object state (metav1.Condition).',
});
export type MetaCondition = Infer<typeof condition>;

/** Cluster API v1beta2 FailureDomain: a list keyed by name, not v1beta1's map. */
export const failureDomains = array(
  object(
    {
      name: string({ minLength: 1, maxLength: 256, description: 'The failure domain (availability zone).' }),
      controlPlane: boolean({ description: 'Control-plane machines may use this failure domain.' }),
      attributes: map(string()),
    },
    { required: ['name'] },
  ),
  { listType: { map: ['name'] }, description: 'Failure domains (Nova availability zones), by name.' },
);

/** Cluster API v1beta2 APIEndpoint: host and port both optional. */
export const apiEndpoint = object({
  host: string({ maxLength: 512, description: 'The hostname or IP of the API server.' }),
  port: integer({ format: 'int32', minimum: 1, maximum: 65535, description: 'The port of the API server.' }),
});

export const openStackMachineSpec = object(
  {
    providerID: string({
      description: 'openstack://<region>/<instance ID>; set by the controller once the server is ACTIVE.',
    }),
    flavor: flavorParam,
    image: imageParam.describe('The image of the server (or of its root volume).'),
    sshKeyName: string({ description: 'The Nova keypair to inject.' }),
    ports: array(portOpts, {
      listType: 'atomic',
      description: 'Ports of the server; one port on the cluster network when empty.',
    }),
    securityGroups: array(securityGroupParam, {
      listType: 'atomic',
      description: 'Security groups added to every port.',
    }),
    trunk: boolean({ description: 'Trunk ports by default.' }),
    tags: array(string(), {
      listType: 'set',
      description: 'Tags of the server and its resources, besides the cluster tags (Nova 2.52+).',
    }),
    serverMetadata: array(serverMetadata, {
      listType: { map: ['key'] },
      description: 'Nova metadata of the server.',
    }),
    configDrive: boolean({ description: 'Attach a config drive.' }),
    rootVolume: rootVolume,
    additionalBlockDevices: array(additionalBlockDevice, {
      listType: { map: ['name'] },
      description: 'More block devices to attach.',
    }),
    serverGroup: serverGroupParam.describe('The server group of the server.'),
    identityRef: identityRef.describe('Credentials for this machine; the cluster credentials when unset.'),
    floatingIPPoolRef: typedLocalObjectReference.describe(
      'An OpenStackFloatingIPPool to take a floating IP from (shiftstack reports this as not supported).',
    ),
    schedulerHintAdditionalProperties: array(schedulerHintAdditionalProperty, {
      listType: { map: ['name'] },
      description: 'Extra Nova scheduler hints.',
    }),
  },
  { required: ['flavor', 'image'], description: 'The desired state of an OpenStackMachine.' },
);
export type OpenStackMachineSpecV1beta2 = Infer<typeof openStackMachineSpec>;
