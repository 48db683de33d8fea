/**
 * OpenStackServer, infrastructure.cluster.x-k8s.io/v1alpha1 (CAPO v0.14
 * `api/v1alpha1/openstackserver_types.go`): one Nova server with its ports and volumes. The
 * OpenStackMachine and bastion controllers create these; the whole spec is immutable.
 */
import {
  acceptedSpecStatus,
  additionalBlockDevice,
  conditions,
  identityRef,
  imageParam,
  instanceState,
  localObjectReference,
  nodeAddress,
  portOpts,
  portStatus,
  resolvedPortSpec,
  resolvedVolumeSpec,
  rootVolume,
  schedulerHintAdditionalProperty,
  securityGroupParam,
  serverGroupParam,
  serverMetadata,
  typedLocalObjectReference,
  volumeStatus,
} from './common.ts';
import { array, boolean, type Infer, object, Schema, string } from '../../kube/crd/schema.ts';

/**
 * A server's port: v1beta1's PortOpts and, as CAPO's OpenStackServer now takes v1beta2's port
 * fields, `enablePortSecurity` beside the older `disablePortSecurity` (objects from either
 * release keep working; the two may not contradict each other).
 */
const serverPortOpts = new Schema<Infer<typeof portOpts> & { enablePortSecurity?: boolean }>({
  ...portOpts.node,
  properties: {
    ...portOpts.node.properties,
    enablePortSecurity: boolean({
      description: 'Port security on or off; inherits the network setting when unset.',
    }).node,
  },
});

export const openStackServerSpec = object(
  {
    additionalBlockDevices: array(additionalBlockDevice, {
      listType: { map: ['name'] },
      description: 'More block devices to attach.',
    }),
    availabilityZone: string({ description: 'The Nova availability zone of the server.' }),
    configDrive: boolean({ description: 'Attach a config drive.' }),
    flavor: string({ minLength: 1, description: 'The flavor name.' }),
    flavorID: string({ minLength: 1, description: 'The flavor ID; takes precedence over flavor.' }),
    floatingIPPoolRef: typedLocalObjectReference.describe(
      'An OpenStackFloatingIPPool to take a floating IP from (shiftstack reports this as not supported).',
    ),
    identityRef: identityRef.describe('The OpenStack credentials.'),
    image: imageParam.describe('The image of the server (or of its root volume).'),
    ports: array(serverPortOpts, { description: 'The ports of the server, in order; at least one.' }),
    rootVolume: rootVolume,
    sshKeyName: string({ description: 'The Nova keypair to inject.' }),
    securityGroups: array(securityGroupParam, { description: 'Security groups added to every port.' }),
    serverGroup: serverGroupParam.describe('The server group of the server.'),
    serverMetadata: array(serverMetadata, {
      listType: { map: ['key'] },
      description: 'Nova metadata of the server.',
    }),
    tags: array(string(), { listType: 'set', description: 'Tags of the server and its resources.' }),
    trunk: boolean({ description: 'Trunk ports by default.' }),
    userDataRef: localObjectReference.describe('A Secret whose key `value` holds the user data.'),
    schedulerHintAdditionalProperties: array(schedulerHintAdditionalProperty, {
      listType: { map: ['name'] },
      description: 'Extra Nova scheduler hints.',
    }),
  },
  { required: ['identityRef', 'image', 'ports'], description: 'The desired state of an OpenStackServer.' },
).rules({
  rule: 'has(self.flavor) || has(self.flavorID)',
  message: 'at least one of flavor or flavorID must be set',
});
export type OpenStackServerSpec = Infer<typeof openStackServerSpec>;

export const openStackServerStatus = object({
  ready: boolean({ description: 'The server is ACTIVE.' }).default(false),
  instanceID: string({ description: 'The Nova server ID.' }),
  instanceState,
  addresses: array(nodeAddress, { description: 'Addresses of the server.' }),
  resolved: object({
    serverGroupID: string(),
    imageID: string(),
    flavorID: string(),
    ports: array(resolvedPortSpec),
    volumes: array(resolvedVolumeSpec, {
      description:
        'The volumes to make for the server, root first (shiftstack only; CAPO derives them from the spec).',
    }),
  }).describe('The spec with every reference resolved; written once, before anything is created.'),
  resources: object({
    ports: array(portStatus),
    subports: array(portStatus, {
      description:
        "Ports detached from the server's trunks by a delete, deleted next (shiftstack only; CAPO has no such record).",
    }),
    volumes: array(volumeStatus, {
      description:
        'Volumes that may exist because of the server, recorded before each is created; a delete removes these and no other (shiftstack only).',
    }),
  }).describe('OpenStack resources created for the server.'),
  conditions,
  ...acceptedSpecStatus,
});
export type OpenStackServerStatus = Infer<typeof openStackServerStatus>;
