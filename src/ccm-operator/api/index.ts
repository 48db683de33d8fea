/**
 * The ccm-operator API: the OpenShift kinds it reads and writes (config.openshift.io/v1
 * Infrastructure, Proxy, FeatureGate, ClusterOperator; operator.openshift.io/v1
 * KubeControllerManager), the names upstream's operator uses, and its conditions and reasons.
 */
export {
  ALL_KINDS,
  clusterOperator,
  featureGate,
  infrastructure,
  kubeControllerManager,
  operatorKinds,
  proxy,
  type ClusterOperator,
  type FeatureGate,
  type Infrastructure,
  type KubeControllerManager,
  type Proxy,
} from './kinds.ts';
export { CONFIG_GROUP, OPERATOR_GROUP, type ConditionStatus, type OpenShiftCondition } from './common.ts';
export type { OperandVersion, RelatedObject } from './clusteroperator.ts';
export { LOAD_BALANCER_TYPES, type OpenStackPlatformStatus, type PlatformStatus } from './infrastructure.ts';
export { Conditions, EventReasons, Reasons } from './conditions.ts';
export * from './names.ts';
export { CRD_DIR, crdFiles } from './files.ts';
