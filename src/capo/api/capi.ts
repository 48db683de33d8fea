/**
 * The Cluster API objects the CAPO controllers read and write, cluster.x-k8s.io/v1beta1 Cluster and
 * Machine. Only the fields our controllers use are declared; spec and status keep every other
 * field (`x-kubernetes-preserve-unknown-fields`) so real CAPI manifests are accepted as they are.
 * These CRDs stand in for the Cluster API core provider in tests and the demo; on a real
 * management cluster CAPI installs its own.
 */
import { apiEndpoint, conditions, failureDomains, nodeAddress, objectReference } from './common.ts';
import { array, boolean, type Infer, integer, openObject, string } from '../../kube/crd/schema.ts';

/** Labels, not fields: CAPI puts them on every object of a cluster. */
export const CLUSTER_NAME_LABEL = 'cluster.x-k8s.io/cluster-name';
export const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';
/** Cluster API's annotation that pauses the reconciliation of one object (any value). */
export const PAUSED_ANNOTATION = 'cluster.x-k8s.io/paused';

export const clusterSpec = openObject({
  paused: boolean({ description: 'Controllers leave a paused cluster (and its objects) alone.' }),
  controlPlaneEndpoint: apiEndpoint.describe('The API endpoint, copied from the infrastructure cluster.'),
  controlPlaneRef: objectReference.describe('The control-plane provider object.'),
  infrastructureRef: objectReference.describe('The infrastructure object, e.g. an OpenStackCluster.'),
});
export type ClusterSpec = Infer<typeof clusterSpec>;

export const clusterStatus = openObject({
  phase: string({ description: 'Pending, Provisioning, Provisioned, Deleting or Failed.' }),
  infrastructureReady: boolean({ description: 'The infrastructure object reported ready.' }).default(false),
  controlPlaneReady: boolean({ description: 'The control plane reported ready.' }).default(false),
  failureDomains,
  conditions,
  observedGeneration: integer({ format: 'int64' }),
});
export type ClusterStatus = Infer<typeof clusterStatus>;

export const machineSpec = openObject(
  {
    clusterName: string({ minLength: 1, maxLength: 63, description: 'The Cluster this machine belongs to.' }),
    bootstrap: openObject({
      configRef: objectReference.describe('The bootstrap provider object.'),
      dataSecretName: string({ description: 'The Secret holding the bootstrap data (key `value`).' }),
    }).describe('Where the bootstrap data comes from.'),
    infrastructureRef: objectReference.describe('The infrastructure object, e.g. an OpenStackMachine.'),
    version: string({ description: 'The Kubernetes version of the node.' }),
    providerID: string({ description: 'The providerID of the node, copied from the infrastructure object.' }),
    failureDomain: string({ description: 'The failure domain (availability zone) of the machine.' }),
  },
  { required: ['clusterName', 'bootstrap', 'infrastructureRef'] },
);
export type MachineSpec = Infer<typeof machineSpec>;

export const machineStatus = openObject({
  phase: string({ description: 'Pending, Provisioning, Provisioned, Running, Deleting, Deleted or Failed.' }),
  bootstrapReady: boolean().default(false),
  infrastructureReady: boolean().default(false),
  addresses: array(nodeAddress),
  nodeRef: objectReference,
  failureReason: string(),
  failureMessage: string(),
  conditions,
  observedGeneration: integer({ format: 'int64' }),
});
export type MachineStatus = Infer<typeof machineStatus>;
