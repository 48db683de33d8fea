/**
 * OpenStackMachine and OpenStackMachineTemplate, infrastructure.cluster.x-k8s.io/v1beta2 (CAPO
 * main `openstackmachine_types.go`, `openstackmachinetemplate_types.go`): the spec is in
 * ./common.ts (the bastion shares it); the status has no ready/failureReason/failureMessage.
 */
import { acceptedSpecStatus, initialization, instanceState, nodeAddress, resourceList } from '../common.ts';
import { conditions, machineResources, openStackMachineSpec, resolvedMachineSpec } from './common.ts';
import { array, object, string } from '../../../kube/crd/schema.ts';

export { openStackMachineSpec };

export const openStackMachineStatus = object({
  conditions,
  initialization,
  instanceID: string({ description: 'The Nova server ID.' }),
  addresses: array(nodeAddress, { listType: 'atomic', description: 'Addresses of the server.' }),
  instanceState,
  resolved: resolvedMachineSpec.describe('The spec with every reference resolved.'),
  resources: machineResources.describe('OpenStack resources created for the machine.'),
  ...acceptedSpecStatus,
});

export const openStackMachineTemplateSpec = object(
  {
    template: object(
      { spec: openStackMachineSpec.describe('The spec of the machines made from this template.') },
      { required: ['spec'] },
    ),
  },
  { required: ['template'] },
);

export const openStackMachineTemplateStatus = object({
  conditions,
  capacity: resourceList.describe('Resources a machine from this template offers (autoscaling from zero).'),
  nodeInfo: object({ operatingSystem: string() }, { minProperties: 1 }),
});
