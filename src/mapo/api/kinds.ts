/**
 * Machine and MachineSet declared once: the object types (inferred from the schemas), the REST
 * mappings (`mapoKinds.X`) and the CRDs (deploy/mapo/crds, `npm run gen:crds`). On OpenShift the
 * machine-api-operator installs its own CRDs and ours are not applied; they serve plain
 * Kubernetes and the demo, with OpenShift's names, subresources and printer columns, so real
 * OpenShift objects go in unchanged and `kubectl get machines` reads the same.
 */
import { defineKind, kubeObject, type Kind, type PrinterColumn } from '../../kube/crd/kind.ts';
import type { Infer } from '../../kube/crd/schema.ts';
import { MACHINE_GROUP, MACHINE_VERSION } from './common.ts';
import { machineSpec, machineStatus } from './machine.ts';
import { machineSetSpec, machineSetStatus } from './machineset.ts';
import { Annotations, Labels } from './names.ts';

/** `.metadata.labels['machine\.openshift\.io/region']`: the dots of a key escaped, as OpenShift's columns have them. */
const metadataKey = (field: 'labels' | 'annotations', key: string) =>
  `.metadata.${field}['${key.replaceAll('.', '\\.')}']`;

const age = (description: string): PrinterColumn => ({
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description,
});

const common = {
  group: MACHINE_GROUP,
  version: MACHINE_VERSION,
  scope: 'Namespaced',
  statusSubresource: true,
} as const;

export const machine = defineKind({
  ...common,
  kind: 'Machine',
  plural: 'machines',
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'Phase of machine' },
    {
      name: 'Type',
      type: 'string',
      jsonPath: metadataKey('labels', Labels.InstanceType),
      description: 'Type of instance',
    },
    {
      name: 'Region',
      type: 'string',
      jsonPath: metadataKey('labels', Labels.Region),
      description: 'Region associated with machine',
    },
    {
      name: 'Zone',
      type: 'string',
      jsonPath: metadataKey('labels', Labels.Zone),
      description: 'Zone associated with machine',
    },
    age('Machine age'),
    {
      name: 'Node',
      type: 'string',
      jsonPath: '.status.nodeRef.name',
      description: 'Node associated with machine',
      priority: 1,
    },
    {
      name: 'ProviderID',
      type: 'string',
      jsonPath: '.spec.providerID',
      description: 'Provider ID of machine created in cloud provider',
      priority: 1,
    },
    {
      name: 'State',
      type: 'string',
      jsonPath: metadataKey('annotations', Annotations.InstanceState),
      description: 'State of instance',
      priority: 1,
    },
  ],
  schema: kubeObject({
    description:
      'A machine of the cluster: one instance in the cloud (for OpenStack a Nova server, through spec.providerSpec.value) and the Node it registers.',
    spec: machineSpec,
    status: machineStatus,
    specRequired: false,
  }),
});
export type Machine = Infer<typeof machine.schema>;

export const machineSet = defineKind({
  ...common,
  kind: 'MachineSet',
  plural: 'machinesets',
  scaleSubresource: {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.replicas',
    labelSelectorPath: '.status.labelSelector',
  },
  printerColumns: [
    { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas', description: 'Desired Replicas' },
    { name: 'Current', type: 'integer', jsonPath: '.status.replicas', description: 'Current Replicas' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyReplicas', description: 'Ready Replicas' },
    {
      // A string column, as OpenShift's CRD has it.
      name: 'Available',
      type: 'string',
      jsonPath: '.status.availableReplicas',
      description: 'Observed number of available replicas',
    },
    age('Machineset age'),
  ],
  schema: kubeObject({
    description: 'Keeps a number of Machines made from one template running.',
    spec: machineSetSpec,
    status: machineSetStatus,
    specRequired: false,
  }),
});
export type MachineSet = Infer<typeof machineSet.schema>;

/** The REST mappings, for KubeClient, informers and controllers. */
export const mapoKinds = {
  Machine: machine.resource,
  MachineSet: machineSet.resource,
} as const;

/** Every kind, in the order the CRD files are written. */
export const ALL_KINDS: readonly Kind<object>[] = [machine, machineSet];
