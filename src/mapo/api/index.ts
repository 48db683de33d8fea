/**
 * The mapo API: OpenShift's Machine API kinds (machine.openshift.io/v1beta1 Machine and
 * MachineSet, with their CRDs for clusters without OpenShift), the labels and annotations around
 * them, and the OpenStack provider spec (machine.openshift.io/v1alpha1 OpenstackProviderSpec) with
 * its decoder. See docs/mapo.md#api.
 */
export { ALL_KINDS, machine, machineSet, mapoKinds, type Machine, type MachineSet } from './kinds.ts';
export {
  AUTHORITATIVE_APIS,
  MACHINE_API_VERSION,
  MACHINE_GROUP,
  type AuthoritativeAPI,
  type AuthorityState,
  type Condition,
  type LifecycleHook,
  type NodeAddress,
  type Taint,
} from './common.ts';
export {
  MACHINE_ERROR_REASONS,
  MACHINE_PHASES,
  type MachineErrorReason,
  type MachinePhase,
  type MachineSpec,
  type MachineStatus,
} from './machine.ts';
export {
  DELETE_POLICIES,
  type DeletePolicy,
  type MachineSetSpec,
  type MachineSetStatus,
} from './machineset.ts';
export * from './names.ts';
export * from './conditions.ts';
export {
  PROVIDER_API_VERSION,
  PROVIDER_SPEC_KIND,
  PROVIDER_STATUS_KIND,
  type OpenstackProviderSpec,
  type OpenstackProviderStatus,
  type NetworkParam,
  type SubnetParam,
  type PortOpts,
  type SecurityGroupParam,
  type RootVolume,
  type AdditionalBlockDevice,
} from './providerspec.ts';
export {
  decodeProviderSpec,
  errorMessageOf,
  formatProviderSpecProblem,
  IGNORED,
  NOT_SUPPORTED_YET,
  ProviderSpecEventReasons,
  type DecodedProviderSpec,
  type ProviderSpecProblem,
} from './decode.ts';
export { CRD_DIR, crdFiles } from './files.ts';
