/**
 * machine.openshift.io/v1beta1 Machine's spec and status (openshift/api
 * `machine/v1beta1/types_machine.go`, with the MachineAPIMigration fields). Structural as
 * OpenShift's CRD is: only `spec.providerSpec.value` and `status.providerStatus` keep fields the
 * schema does not declare, since each provider has its own (ours: providerspec.ts).
 */
import { array, type Infer, integer, object, string } from '../../kube/crd/schema.ts';
import {
  authorityState,
  authoritativeAPI,
  conditions,
  lifecycleHooks,
  nodeAddress,
  objectMeta,
  objectReference,
  rawExtension,
  synchronizedAPI,
  taint,
} from './common.ts';

/** The phases the machine controller writes (status.phase). */
export const MACHINE_PHASES = ['Provisioning', 'Provisioned', 'Running', 'Deleting', 'Failed'] as const;
export type MachinePhase = (typeof MACHINE_PHASES)[number];

/** status.errorReason values (MachineStatusError). */
export const MACHINE_ERROR_REASONS = [
  'InvalidConfiguration',
  'UnsupportedChange',
  'InsufficientResources',
  'CreateError',
  'UpdateError',
  'DeleteError',
  'JoinClusterTimeoutError',
  'IPAddressInvalid',
] as const;
export type MachineErrorReason = (typeof MACHINE_ERROR_REASONS)[number];

const seconds = (description: string) => integer({ format: 'int32', minimum: 0, description });

export const providerSpec = object({
  value: rawExtension(
    'The provider’s configuration of the instance; for OpenStack an OpenstackProviderSpec (machine.openshift.io/v1alpha1).',
  ),
}).describe('Provider-specific configuration used to create the instance.');

export const machineSpec = object({
  metadata: objectMeta.describe('Labels and annotations for the Node of this Machine.'),
  lifecycleHooks,
  taints: array(taint, {
    listType: 'atomic',
    description: 'Taints added to the Node (others on it are left alone).',
  }),
  providerSpec,
  providerID: string({
    description: 'The instance’s id as the Node carries it (openstack:///<server id>); set by the actuator.',
  }),
  authoritativeAPI,
  nodeDrainTimeoutSeconds: seconds('Total time to drain the Node across attempts; 0 or unset: no limit.'),
  nodeVolumeDetachTimeoutSeconds: seconds('Time to wait for volumes to detach; unset: no wait.'),
  nodeDeletionTimeoutSeconds: seconds('Time to retry deleting the Node; unset: one attempt.'),
});
export type MachineSpec = Infer<typeof machineSpec>;

export const lastOperation = object({
  description: string(),
  lastUpdated: string({ format: 'date-time' }),
  state: string({ description: 'Processing, Failed, Successful, …' }),
  type: string({ description: 'Create, Delete, Update, …' }),
}).describe('The last operation of the machine controller on this Machine.');
export type LastOperation = Infer<typeof lastOperation>;

export const machineStatus = object({
  nodeRef: objectReference.describe('The Node of this Machine, once it registered.'),
  lastUpdated: string({ format: 'date-time', description: 'When this status was last observed.' }),
  errorReason: string({
    description:
      'A terminal problem, for machines (InvalidConfiguration, CreateError, …); not for transient ones.',
  }),
  errorMessage: string({ description: 'The terminal problem, for humans.' }),
  providerStatus: rawExtension('The provider’s status; for OpenStack an OpenstackProviderStatus.'),
  addresses: array(nodeAddress, { listType: 'atomic', description: 'The instance’s addresses.' }),
  lastOperation,
  phase: string({ description: 'Provisioning, Provisioned, Running, Deleting or Failed.' }),
  conditions,
  authoritativeAPI: authorityState,
  synchronizedAPI,
  synchronizedGeneration: integer({ format: 'int64', minimum: 0 }),
  deletion: object({ nodeDrainStartTime: string({ format: 'date-time' }) }),
});
export type MachineStatus = Infer<typeof machineStatus>;
