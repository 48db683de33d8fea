/**
 * Every kind the CAPO controllers serve or read, declared once: the object type (inferred from the
 * schema), the REST mapping (`capoKinds.X`, for KubeClient and controllers) and the CRD (generated
 * into deploy/capo/crds by `npm run gen:crds`).
 */
import { clusterSpec, clusterStatus, machineSpec, machineStatus } from './capi.ts';
import {
  customResourceDefinition,
  defineKind,
  kubeObject,
  type CustomResourceDefinition,
  type Kind,
  type PrinterColumn,
} from '../../kube/crd/kind.ts';
import { openStackClusterIdentitySpec } from './openstackclusteridentity.ts';
import {
  openStackClusterSpec,
  openStackClusterStatus,
  openStackClusterTemplateSpec,
} from './openstackcluster.ts';
import { openStackFloatingIPPoolSpec, openStackFloatingIPPoolStatus } from './openstackfloatingippool.ts';
import {
  openStackMachineSpec,
  openStackMachineStatus,
  openStackMachineTemplateSpec,
  openStackMachineTemplateStatus,
} from './openstackmachine.ts';
import { openStackServerSpec, openStackServerStatus } from './openstackserver.ts';
import type { Infer } from '../../kube/crd/schema.ts';

export const INFRASTRUCTURE_GROUP = 'infrastructure.cluster.x-k8s.io';
export const CLUSTER_API_GROUP = 'cluster.x-k8s.io';

/**
 * The labels clusterctl and Cluster API read on a provider's CRDs: which provider it is, and which
 * API version of the kind goes with Cluster API's v1beta1 contract.
 */
export function providerLabels(
  provider: string,
  version: string,
  contract = 'v1beta1',
): Record<string, string> {
  return { 'cluster.x-k8s.io/provider': provider, [`cluster.x-k8s.io/${contract}`]: version };
}

export const CATEGORIES = ['cluster-api'] as const;
export const age = (what: string) =>
  ({
    name: 'Age',
    type: 'date',
    jsonPath: '.metadata.creationTimestamp',
    description: `Time since the ${what} was created`,
  }) as const;
export const clusterColumn = (what: string) =>
  ({
    name: 'Cluster',
    type: 'string',
    jsonPath: '.metadata.labels.cluster\\.x-k8s\\.io/cluster-name',
    description: `The Cluster this ${what} belongs to`,
  }) as const;

/** Printer columns both CAPO versions show. */
export const NETWORK_COLUMN: PrinterColumn = {
  name: 'Network',
  type: 'string',
  jsonPath: '.status.network.id',
  description: 'The cluster network',
};
export const ENDPOINT_COLUMN: PrinterColumn = {
  name: 'Endpoint',
  type: 'string',
  jsonPath: '.spec.controlPlaneEndpoint.host',
  description: 'The API endpoint',
  priority: 1,
};
export const BASTION_IP_COLUMN: PrinterColumn = {
  name: 'Bastion IP',
  type: 'string',
  jsonPath: '.status.bastion.floatingIP',
  description: 'The address of the bastion',
};
export const PROVIDER_ID_COLUMN: PrinterColumn = {
  name: 'ProviderID',
  type: 'string',
  jsonPath: '.spec.providerID',
  description: 'The providerID',
};
export const MACHINE_COLUMN: PrinterColumn = {
  name: 'Machine',
  type: 'string',
  jsonPath: '.metadata.ownerReferences[?(@.kind=="Machine")].name',
  description: 'The Machine that owns this OpenStackMachine',
};

const infra = (version: string) => ({
  group: INFRASTRUCTURE_GROUP,
  version,
  categories: CATEGORIES,
  labels: providerLabels('infrastructure-openstack', version),
});

export const openStackCluster = defineKind({
  ...infra('v1beta1'),
  kind: 'OpenStackCluster',
  plural: 'openstackclusters',
  scope: 'Namespaced',
  shortNames: ['osc'],
  statusSubresource: true,
  printerColumns: [
    clusterColumn('OpenStackCluster'),
    { name: 'Ready', type: 'string', jsonPath: '.status.ready', description: 'The infrastructure is ready' },
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
export type OpenStackCluster = Infer<typeof openStackCluster.schema>;

export const openStackClusterTemplate = defineKind({
  ...infra('v1beta1'),
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
export type OpenStackClusterTemplate = Infer<typeof openStackClusterTemplate.schema>;

export const openStackMachine = defineKind({
  ...infra('v1beta1'),
  kind: 'OpenStackMachine',
  plural: 'openstackmachines',
  scope: 'Namespaced',
  shortNames: ['osm'],
  statusSubresource: true,
  printerColumns: [
    clusterColumn('OpenStackMachine'),
    {
      name: 'InstanceState',
      type: 'string',
      jsonPath: '.status.instanceState',
      description: 'The Nova server status',
    },
    { name: 'Ready', type: 'string', jsonPath: '.status.ready', description: 'The machine is ready' },
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
export type OpenStackMachine = Infer<typeof openStackMachine.schema>;

export const openStackMachineTemplate = defineKind({
  ...infra('v1beta1'),
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
export type OpenStackMachineTemplate = Infer<typeof openStackMachineTemplate.schema>;

export const openStackServer = defineKind({
  ...infra('v1alpha1'),
  kind: 'OpenStackServer',
  plural: 'openstackservers',
  scope: 'Namespaced',
  shortNames: ['oss'],
  statusSubresource: true,
  printerColumns: [
    {
      name: 'InstanceState',
      type: 'string',
      jsonPath: '.status.instanceState',
      description: 'The Nova server status',
    },
    { name: 'Ready', type: 'string', jsonPath: '.status.ready', description: 'The server is ready' },
    { name: 'InstanceID', type: 'string', jsonPath: '.status.instanceID', description: 'The Nova server ID' },
    age('OpenStackServer'),
  ],
  schema: kubeObject({
    description: 'One Nova server with its ports and volumes; its spec is immutable.',
    spec: openStackServerSpec,
    status: openStackServerStatus,
  }),
});
export type OpenStackServer = Infer<typeof openStackServer.schema>;

export const openStackFloatingIPPool = defineKind({
  ...infra('v1alpha1'),
  kind: 'OpenStackFloatingIPPool',
  plural: 'openstackfloatingippools',
  scope: 'Namespaced',
  statusSubresource: true,
  schema: kubeObject({
    description:
      'A pool of floating IPs handed to machines through IPAddressClaims (not supported by shiftstack).',
    spec: openStackFloatingIPPoolSpec,
    status: openStackFloatingIPPoolStatus,
  }),
});
export type OpenStackFloatingIPPool = Infer<typeof openStackFloatingIPPool.schema>;

export const openStackClusterIdentity = defineKind({
  ...infra('v1alpha1'),
  kind: 'OpenStackClusterIdentity',
  plural: 'openstackclusteridentities',
  scope: 'Cluster',
  shortNames: ['osci'],
  statusSubresource: false,
  schema: kubeObject({
    description: 'OpenStack credentials in one namespace, lent to the namespaces its selector allows.',
    spec: openStackClusterIdentitySpec,
  }),
});
export type OpenStackClusterIdentity = Infer<typeof openStackClusterIdentity.schema>;

const capi = {
  group: CLUSTER_API_GROUP,
  version: 'v1beta1',
  categories: CATEGORIES,
  labels: providerLabels('cluster-api', 'v1beta1'),
};

export const cluster = defineKind({
  ...capi,
  kind: 'Cluster',
  plural: 'clusters',
  scope: 'Namespaced',
  shortNames: ['cl'],
  statusSubresource: true,
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'The cluster phase' },
    age('Cluster'),
    {
      name: 'Version',
      type: 'string',
      jsonPath: '.spec.topology.version',
      description: 'The Kubernetes version of a ClusterClass cluster',
    },
  ],
  schema: kubeObject({
    description: 'A Cluster API cluster (the fields the CAPO controllers use; the rest are kept as is).',
    spec: clusterSpec,
    status: clusterStatus,
    specRequired: false,
  }),
});
export type Cluster = Infer<typeof cluster.schema>;

export const machine = defineKind({
  ...capi,
  kind: 'Machine',
  plural: 'machines',
  scope: 'Namespaced',
  shortNames: ['ma'],
  statusSubresource: true,
  printerColumns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'The Cluster' },
    { name: 'NodeName', type: 'string', jsonPath: '.status.nodeRef.name', description: 'The Node' },
    PROVIDER_ID_COLUMN,
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'The machine phase' },
    age('Machine'),
    { name: 'Version', type: 'string', jsonPath: '.spec.version', description: 'The Kubernetes version' },
  ],
  schema: kubeObject({
    description: 'A Cluster API machine (the fields the CAPO controllers use; the rest are kept as is).',
    spec: machineSpec,
    status: machineStatus,
  }),
});
export type Machine = Infer<typeof machine.schema>;

/** The REST mappings, for KubeClient, informers and controllers. */
export const capoKinds = {
  OpenStackCluster: openStackCluster.resource,
  OpenStackClusterTemplate: openStackClusterTemplate.resource,
  OpenStackMachine: openStackMachine.resource,
  OpenStackMachineTemplate: openStackMachineTemplate.resource,
  OpenStackServer: openStackServer.resource,
  OpenStackFloatingIPPool: openStackFloatingIPPool.resource,
  OpenStackClusterIdentity: openStackClusterIdentity.resource,
  Cluster: cluster.resource,
  Machine: machine.resource,
} as const;

/** Every kind, CAPO's first and then Cluster API's, in the order the CRD files are written. */
export const ALL_KINDS: readonly Kind<object>[] = [
  openStackCluster,
  openStackClusterTemplate,
  openStackMachine,
  openStackMachineTemplate,
  openStackServer,
  openStackFloatingIPPool,
  openStackClusterIdentity,
  cluster,
  machine,
];

/** The CRDs of every kind. */
export function customResourceDefinitions(): CustomResourceDefinition[] {
  return ALL_KINDS.map((kind) => customResourceDefinition(kind));
}
