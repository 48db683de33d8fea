/**
 * CAPO's four kinds in infrastructure.cluster.x-k8s.io/v1beta2, served beside v1beta1 (which stays
 * the storage version and the one our controllers use: ../kinds.ts). Objects read or written in
 * v1beta2 are converted by the conversion webhook (../conversion). Printer columns as CAPO's
 * v1beta2 declares them (no Ready column: readiness is the Ready condition).
 */
import { defineKind, kubeObject, type Kind } from '../../../kube/crd/kind.ts';
import type { Infer } from '../../../kube/crd/schema.ts';
import {
  age,
  BASTION_IP_COLUMN,
  CATEGORIES,
  clusterColumn,
  ENDPOINT_COLUMN,
  INFRASTRUCTURE_GROUP,
  MACHINE_COLUMN,
  NETWORK_COLUMN,
  PROVIDER_ID_COLUMN,
  providerLabels,
} from '../kinds.ts';
import {
  openStackClusterSpec,
  openStackClusterStatus,
  openStackClusterTemplateSpec,
} from './openstackcluster.ts';
import {
  openStackMachineSpec,
  openStackMachineStatus,
  openStackMachineTemplateSpec,
  openStackMachineTemplateStatus,
} from './openstackmachine.ts';

export const V1BETA2 = 'v1beta2';

const infra = {
  group: INFRASTRUCTURE_GROUP,
  version: V1BETA2,
  categories: CATEGORIES,
  labels: providerLabels('infrastructure-openstack', V1BETA2, V1BETA2),
};

export const openStackClusterV1beta2 = defineKind({
  ...infra,
  kind: 'OpenStackCluster',
  plural: 'openstackclusters',
  scope: 'Namespaced',
  shortNames: ['osc'],
  statusSubresource: true,
  printerColumns: [
    clusterColumn('OpenStackCluster'),
    NETWORK_COLUMN,
    ENDPOINT_COLUMN,
    BASTION_IP_COLUMN,
    age('OpenStackCluster'),
  ],
  schema: kubeObject({
    description: 'The OpenStack infrastructure of a Cluster API cluster.',
    spec: openStackClusterSpec,
    status: openStackClusterStatus,
  }),
});
export type OpenStackClusterV1beta2 = Infer<typeof openStackClusterV1beta2.schema>;

export const openStackClusterTemplateV1beta2 = defineKind({
  ...infra,
  kind: 'OpenStackClusterTemplate',
  plural: 'openstackclustertemplates',
  scope: 'Namespaced',
  shortNames: ['osct'],
  statusSubresource: false,
  schema: kubeObject({
    description: 'A template of OpenStackClusters (ClusterClass).',
    spec: openStackClusterTemplateSpec,
  }),
});
export type OpenStackClusterTemplateV1beta2 = Infer<typeof openStackClusterTemplateV1beta2.schema>;

export const openStackMachineV1beta2 = defineKind({
  ...infra,
  kind: 'OpenStackMachine',
  plural: 'openstackmachines',
  scope: 'Namespaced',
  shortNames: ['osm'],
  statusSubresource: true,
  printerColumns: [
    clusterColumn('OpenStackMachine'),
    PROVIDER_ID_COLUMN,
    MACHINE_COLUMN,
    age('OpenStackMachine'),
  ],
  schema: kubeObject({
    description: 'The OpenStack server of a Cluster API Machine.',
    spec: openStackMachineSpec,
    status: openStackMachineStatus,
  }),
});
export type OpenStackMachineV1beta2 = Infer<typeof openStackMachineV1beta2.schema>;

export const openStackMachineTemplateV1beta2 = defineKind({
  ...infra,
  kind: 'OpenStackMachineTemplate',
  plural: 'openstackmachinetemplates',
  scope: 'Namespaced',
  shortNames: ['osmt'],
  statusSubresource: true,
  schema: kubeObject({
    description: 'A template of OpenStackMachines (MachineDeployments, control planes).',
    spec: openStackMachineTemplateSpec,
    status: openStackMachineTemplateStatus,
  }),
});
export type OpenStackMachineTemplateV1beta2 = Infer<typeof openStackMachineTemplateV1beta2.schema>;

/** The REST mappings of the v1beta2 kinds (for clients that read or write v1beta2). */
export const capoKindsV1beta2 = {
  OpenStackCluster: openStackClusterV1beta2.resource,
  OpenStackClusterTemplate: openStackClusterTemplateV1beta2.resource,
  OpenStackMachine: openStackMachineV1beta2.resource,
  OpenStackMachineTemplate: openStackMachineTemplateV1beta2.resource,
} as const;

/** The v1beta2 kinds, in the order of ../kinds.ts's ALL_KINDS. */
export const V1BETA2_KINDS: readonly Kind<object>[] = [
  openStackClusterV1beta2,
  openStackClusterTemplateV1beta2,
  openStackMachineV1beta2,
  openStackMachineTemplateV1beta2,
];
