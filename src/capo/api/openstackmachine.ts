/**
 * OpenStackMachine and OpenStackMachineTemplate, infrastructure.cluster.x-k8s.io/v1beta1 (CAPO
 * v0.14 `openstackmachine_types.go`, `openstackmachinetemplate_types.go`).
 */
import {
  acceptedSpecStatus,
  additionalBlockDevice,
  conditions,
  identityRef,
  imageParam,
  initialization,
  instanceState,
  machineResources,
  nodeAddress,
  portOpts,
  resolvedMachineSpec,
  resourceList,
  rootVolume,
  schedulerHintAdditionalProperty,
  securityGroupParam,
  serverGroupParam,
  serverMetadata,
  typedLocalObjectReference,
} from './common.ts';
import { array, boolean, type Infer, object, string } from '../../kube/crd/schema.ts';

export const openStackMachineSpec = object(
  {
    providerID: string({
      description: 'openstack://<region>/<instance ID>; set by the controller once the server is ACTIVE.',
    }),
    flavor: string({ minLength: 1, description: 'The flavor name.' }),
    flavorID: string({ minLength: 1, description: 'The flavor ID; takes precedence over flavor.' }),
    image: imageParam.describe('The image of the server (or of its root volume).'),
    sshKeyName: string({ description: 'The Nova keypair to inject.' }),
    ports: array(portOpts, {
      description: 'Ports of the server; one port on the cluster network when empty.',
    }),
    securityGroups: array(securityGroupParam, {
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
  { required: ['image'], description: 'The desired state of an OpenStackMachine.' },
).rules({
  rule: 'has(self.flavor) || has(self.flavorID)',
  message: 'at least one of flavor or flavorID must be set',
});
export type OpenStackMachineSpec = Infer<typeof openStackMachineSpec>;

export const openStackMachineStatus = object({
  ready: boolean({ description: 'Deprecated: the machine infrastructure is ready.' }).default(false),
  initialization,
  instanceID: string({ description: 'The Nova server ID.' }),
  addresses: array(nodeAddress, { description: 'Addresses of the server.' }),
  instanceState,
  resolved: resolvedMachineSpec.describe('The spec with every reference resolved.'),
  resources: machineResources.describe('OpenStack resources created for the machine.'),
  failureReason: string({ description: 'Deprecated.' }),
  failureMessage: string({ description: 'Deprecated.' }),
  conditions,
  ...acceptedSpecStatus,
});
export type OpenStackMachineStatus = Infer<typeof openStackMachineStatus>;

export const openStackMachineTemplateSpec = object(
  {
    template: object(
      { spec: openStackMachineSpec.describe('The spec of the machines made from this template.') },
      { required: ['spec'] },
    ),
  },
  { required: ['template'] },
);
export type OpenStackMachineTemplateSpec = Infer<typeof openStackMachineTemplateSpec>;

export const openStackMachineTemplateStatus = object({
  conditions,
  capacity: resourceList.describe('Resources a machine from this template offers (autoscaling from zero).'),
  nodeInfo: object({ operatingSystem: string() }, { minProperties: 1 }),
});
export type OpenStackMachineTemplateStatus = Infer<typeof openStackMachineTemplateStatus>;
