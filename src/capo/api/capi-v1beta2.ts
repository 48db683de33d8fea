/**
 * Cluster API's cluster.x-k8s.io/v1beta2 Cluster and Machine (CAPI v1.11+, `api/core/v1beta2`), the
 * stand-ins' second served version: references are ContractVersionedObjectReferences (apiGroup,
 * kind, name: the version comes from the contract), readiness moved to `status.initialization`,
 * `status.conditions` are metav1.Conditions and v1beta1's conditions and failure fields live on
 * under `status.deprecated.v1beta1`. As for v1beta1, only the fields the conversion and our
 * controllers touch are declared; everything else is kept as is. Objects are stored as v1beta1
 * (capi-conversion.ts converts; the webhook serves it).
 */
import { defineKind, kubeObject } from '../../kube/crd/kind.ts';
import {
  array,
  boolean,
  type Infer,
  integer,
  map,
  object,
  openObject,
  string,
} from '../../kube/crd/schema.ts';
import { conditions as v1beta1Conditions, nodeAddress } from './common.ts';

/** A reference whose version the contract decides (the referenced CRD's `cluster.x-k8s.io/<contract>` label). */
export const contractVersionedObjectReference = object(
  {
    apiGroup: string({ minLength: 1, maxLength: 253, description: 'The group of the referenced object.' }),
    kind: string({ minLength: 1, maxLength: 63, description: 'The kind of the referenced object.' }),
    name: string({ minLength: 1, maxLength: 253, description: 'The name, in the same namespace.' }),
  },
  { required: ['apiGroup', 'kind', 'name'] },
);
export type ContractVersionedObjectReference = Infer<typeof contractVersionedObjectReference>;

/** metav1.Condition, the v1beta2 conditions. */
export const metaCondition = object(
  {
    type: string({ minLength: 1, maxLength: 316 }),
    status: string({ description: 'True, False or Unknown.' }),
    observedGeneration: integer({ format: 'int64', minimum: 0 }),
    lastTransitionTime: string({ format: 'date-time' }),
    reason: string({ maxLength: 1024 }),
    message: string({ maxLength: 32768 }),
  },
  { required: ['type', 'status', 'lastTransitionTime', 'reason'] },
);
const metaConditions = array(metaCondition, {
  listType: { map: ['type'] },
  maxItems: 32,
  description: 'The latest observations of the object (metav1.Conditions).',
});

const endpoint = object({
  host: string({ maxLength: 512, description: 'The hostname or IP of the API server.' }),
  port: integer({ format: 'int32', minimum: 1, maximum: 65535, description: 'The port of the API server.' }),
});

const deprecatedV1beta1 = (extra: string) =>
  openObject({
    v1beta1: openObject({
      conditions: v1beta1Conditions,
      failureReason: string(),
      failureMessage: string(),
    }).describe(
      `v1beta1's conditions, failureReason and failureMessage${extra}; to be removed with v1beta1.`,
    ),
  });

const replicaCounters = openObject({
  desiredReplicas: integer({ format: 'int32' }),
  replicas: integer({ format: 'int32' }),
  upToDateReplicas: integer({ format: 'int32' }),
  readyReplicas: integer({ format: 'int32' }),
  availableReplicas: integer({ format: 'int32' }),
});

export const clusterSpecV1beta2 = openObject({
  paused: boolean({ description: 'Controllers leave a paused cluster (and its objects) alone.' }),
  controlPlaneEndpoint: endpoint.describe('The API endpoint, copied from the infrastructure cluster.'),
  controlPlaneRef: contractVersionedObjectReference.describe('The control-plane provider object.'),
  infrastructureRef: contractVersionedObjectReference.describe(
    'The infrastructure object, e.g. an OpenStackCluster.',
  ),
  topology: openObject({
    classRef: object(
      {
        name: string({ minLength: 1, maxLength: 253 }),
        namespace: string({ minLength: 1, maxLength: 63 }),
      },
      { required: ['name'] },
    ).describe('The ClusterClass of a managed topology.'),
    version: string(),
  }),
});
export type ClusterSpecV1beta2 = Infer<typeof clusterSpecV1beta2>;

export const clusterStatusV1beta2 = openObject({
  phase: string({ description: 'Pending, Provisioning, Provisioned, Deleting or Failed.' }),
  initialization: object({
    infrastructureProvisioned: boolean({ description: 'The infrastructure object reported provisioned.' }),
    controlPlaneInitialized: boolean({ description: 'The control plane reported initialized.' }),
  }),
  conditions: metaConditions,
  controlPlane: replicaCounters,
  workers: replicaCounters,
  failureDomains: array(
    object(
      {
        name: string({ minLength: 1, maxLength: 256 }),
        controlPlane: boolean(),
        attributes: map(string()),
      },
      { required: ['name'] },
    ),
    { listType: { map: ['name'] }, description: 'Failure domains (Nova availability zones).' },
  ),
  observedGeneration: integer({ format: 'int64' }),
  deprecated: deprecatedV1beta1(''),
});
export type ClusterStatusV1beta2 = Infer<typeof clusterStatusV1beta2>;

export const machineSpecV1beta2 = openObject(
  {
    clusterName: string({ minLength: 1, maxLength: 63, description: 'The Cluster this machine belongs to.' }),
    bootstrap: openObject({
      configRef: contractVersionedObjectReference.describe('The bootstrap provider object.'),
      dataSecretName: string({ description: 'The Secret holding the bootstrap data (key `value`).' }),
    }).describe('Where the bootstrap data comes from.'),
    infrastructureRef: contractVersionedObjectReference.describe(
      'The infrastructure object, e.g. an OpenStackMachine.',
    ),
    version: string({ description: 'The Kubernetes version of the node.' }),
    providerID: string({ description: 'The providerID of the node, copied from the infrastructure object.' }),
    failureDomain: string({ description: 'The failure domain (availability zone) of the machine.' }),
    minReadySeconds: integer({ format: 'int32', minimum: 0 }),
    deletion: openObject({
      nodeDrainTimeoutSeconds: integer({ format: 'int32', minimum: 0 }),
      nodeVolumeDetachTimeoutSeconds: integer({ format: 'int32', minimum: 0 }),
      nodeDeletionTimeoutSeconds: integer({ format: 'int32', minimum: 0 }),
    }),
  },
  { required: ['clusterName', 'bootstrap', 'infrastructureRef'] },
);
export type MachineSpecV1beta2 = Infer<typeof machineSpecV1beta2>;

export const machineStatusV1beta2 = openObject({
  phase: string({ description: 'Pending, Provisioning, Provisioned, Running, Deleting, Deleted or Failed.' }),
  initialization: object({
    bootstrapDataSecretCreated: boolean(),
    infrastructureProvisioned: boolean(),
  }),
  addresses: array(nodeAddress),
  nodeRef: object({ name: string({ minLength: 1, maxLength: 253 }) }, { required: ['name'] }),
  conditions: metaConditions,
  observedGeneration: integer({ format: 'int64' }),
  deprecated: deprecatedV1beta1(''),
});
export type MachineStatusV1beta2 = Infer<typeof machineStatusV1beta2>;

const capiV1beta2 = {
  // kinds.ts's CLUSTER_API_GROUP; not imported, as kinds.ts lists these kinds.
  group: 'cluster.x-k8s.io',
  version: 'v1beta2',
  categories: ['cluster-api'],
  // Cluster API's contract labels: v1beta2 is this kind's version under the v1beta2 contract.
  labels: { 'cluster.x-k8s.io/provider': 'cluster-api', 'cluster.x-k8s.io/v1beta2': 'v1beta2' },
} as const;

const ageColumn = (what: string) =>
  ({
    name: 'Age',
    type: 'date',
    jsonPath: '.metadata.creationTimestamp',
    description: `Time since the ${what} was created`,
  }) as const;
const conditionColumn = (type: string) =>
  ({
    name: type,
    type: 'string',
    jsonPath: `.status.conditions[?(@.type=="${type}")].status`,
    description: `The ${type} condition`,
  }) as const;

export const clusterV1beta2 = defineKind({
  ...capiV1beta2,
  kind: 'Cluster',
  plural: 'clusters',
  scope: 'Namespaced',
  shortNames: ['cl'],
  statusSubresource: true,
  printerColumns: [
    {
      name: 'ClusterClass',
      type: 'string',
      jsonPath: '.spec.topology.classRef.name',
      description: 'The ClusterClass of the cluster',
    },
    conditionColumn('Available'),
    {
      name: 'Paused',
      type: 'boolean',
      jsonPath: '.spec.paused',
      description: 'Reconciliation is paused',
      priority: 10,
    },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'The cluster phase' },
    ageColumn('Cluster'),
    {
      name: 'Version',
      type: 'string',
      jsonPath: '.spec.topology.version',
      description: 'The Kubernetes version',
    },
  ],
  schema: kubeObject({
    description: 'A Cluster API cluster (the fields the CAPO controllers use; the rest are kept as is).',
    spec: clusterSpecV1beta2,
    status: clusterStatusV1beta2,
    specRequired: false,
  }),
});
export type ClusterV1beta2 = Infer<typeof clusterV1beta2.schema>;

export const machineV1beta2 = defineKind({
  ...capiV1beta2,
  kind: 'Machine',
  plural: 'machines',
  scope: 'Namespaced',
  shortNames: ['ma'],
  statusSubresource: true,
  printerColumns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'The Cluster' },
    { name: 'Node Name', type: 'string', jsonPath: '.status.nodeRef.name', description: 'The Node' },
    { name: 'Provider ID', type: 'string', jsonPath: '.spec.providerID', description: 'The providerID' },
    conditionColumn('Ready'),
    conditionColumn('Available'),
    { name: 'Phase', type: 'string', jsonPath: '.status.phase', description: 'The machine phase' },
    ageColumn('Machine'),
    { name: 'Version', type: 'string', jsonPath: '.spec.version', description: 'The Kubernetes version' },
  ],
  schema: kubeObject({
    description: 'A Cluster API machine (the fields the CAPO controllers use; the rest are kept as is).',
    spec: machineSpecV1beta2,
    status: machineStatusV1beta2,
  }),
});
export type MachineV1beta2 = Infer<typeof machineV1beta2.schema>;
