/**
 * The CAPO API: CAPO's kinds (v1beta1 OpenStackCluster, OpenStackClusterTemplate,
 * OpenStackMachine, OpenStackMachineTemplate, stored and used by our controllers, and the same
 * four in v1beta2 (./v1beta2) with their conversions (./conversion); v1alpha1 OpenStackServer,
 * OpenStackFloatingIPPool, OpenStackClusterIdentity) and the Cluster API Cluster and Machine the
 * controllers read, each declared once in code (see docs/capo.md#api).
 */
export {
  capoKinds,
  customResourceDefinitions,
  ALL_KINDS,
  INFRASTRUCTURE_GROUP,
  CLUSTER_API_GROUP,
  openStackCluster,
  openStackClusterTemplate,
  openStackMachine,
  openStackMachineTemplate,
  openStackServer,
  openStackFloatingIPPool,
  openStackClusterIdentity,
  cluster,
  machine,
  type OpenStackCluster,
  type OpenStackClusterTemplate,
  type OpenStackMachine,
  type OpenStackMachineTemplate,
  type OpenStackServer,
  type OpenStackFloatingIPPool,
  type OpenStackClusterIdentity,
  type Cluster,
  type Machine,
} from './kinds.ts';
export type {
  OpenStackClusterSpec,
  OpenStackClusterStatus,
  Bastion,
  SecurityGroupRuleSpec,
} from './openstackcluster.ts';
export type {
  OpenStackMachineSpec,
  OpenStackMachineStatus,
  OpenStackMachineTemplateSpec,
  OpenStackMachineTemplateStatus,
} from './openstackmachine.ts';
export type { OpenStackServerSpec, OpenStackServerStatus } from './openstackserver.ts';
export type {
  OpenStackFloatingIPPoolSpec,
  OpenStackFloatingIPPoolStatus,
} from './openstackfloatingippool.ts';
export type { OpenStackClusterIdentitySpec } from './openstackclusteridentity.ts';
export {
  CLUSTER_NAME_LABEL,
  CONTROL_PLANE_LABEL,
  PAUSED_ANNOTATION,
  type ClusterSpec,
  type ClusterStatus,
  type MachineSpec,
  type MachineStatus,
} from './capi.ts';
export {
  INSTANCE_STATES,
  type AdditionalBlockDevice,
  type APIEndpoint,
  type CapiCondition,
  type IdentityRef,
  type ImageParam,
  type InstanceState,
  type NetworkParam,
  type ObjectReference,
  type PortOpts,
  type ResolvedPortSpec,
  type SecurityGroupParam,
  type ServerGroupParam,
  type SubnetParam,
} from './common.ts';
export {
  CLUSTER_FINALIZER,
  MACHINE_FINALIZER,
  SERVER_FINALIZER,
  IP_CLAIM_MACHINE_FINALIZER,
  FLOATING_IP_POOL_FINALIZER,
  Conditions,
  Reasons,
  EventReasons,
  SERVER_UNEXPECTEDLY_DELETED_MESSAGE,
} from './conditions.ts';
export {
  formatProblem,
  formatProblems,
  specValidators,
  validateOpenStackClusterSpec,
  validateOpenStackClusterTemplateSpec,
  validateOpenStackClusterIdentitySpec,
  validateOpenStackFloatingIPPoolSpec,
  validateOpenStackMachineSpec,
  validateOpenStackMachineTemplateSpec,
  validateOpenStackServerSpec,
  type Problem,
} from './validation.ts';
export {
  immutableChanges,
  reviewSpec,
  changedPaths,
  type ClusterStatusContext,
  type ImmutableSpecs,
  type SpecReview,
} from './immutability.ts';
export {
  customResourceDefinition,
  type CustomResourceDefinition,
  type Kind,
  type ObjectOfKind,
} from '../../kube/crd/kind.ts';
export {
  capoCrdFiles,
  capoCrds,
  crdFiles,
  CRD_DIR,
  STORAGE_VERSION,
  type CapoCrdOptions,
  type CrdFile,
  type WebhookConversion,
} from './files.ts';
export {
  capoKindsV1beta2,
  openStackClusterV1beta2,
  openStackClusterTemplateV1beta2,
  openStackMachineV1beta2,
  openStackMachineTemplateV1beta2,
  V1BETA2,
  V1BETA2_KINDS,
  type OpenStackClusterV1beta2,
  type OpenStackClusterTemplateV1beta2,
  type OpenStackMachineV1beta2,
  type OpenStackMachineTemplateV1beta2,
} from './v1beta2/kinds.ts';
export { CAPO_CONVERSIONS, CONVERSION_DATA_ANNOTATION } from './conversion/index.ts';
export type { Infer } from '../../kube/crd/schema.ts';
