/**
 * The ClusterOperator conditions and reasons upstream's operator reports (CCCMO
 * `pkg/controllers/status.go`, `cloud_config_sync_controller.go`,
 * `trusted_ca_bundle_controller.go`, `clusteroperator_controller.go`), and our Event reasons.
 */

export const Conditions = {
  Available: 'Available',
  Progressing: 'Progressing',
  Degraded: 'Degraded',
  Upgradeable: 'Upgradeable',
  CloudConfigControllerAvailable: 'CloudConfigControllerAvailable',
  CloudConfigControllerDegraded: 'CloudConfigControllerDegraded',
  // The doubled "Controller" is upstream's.
  TrustedCABundleControllerAvailable: 'TrustedCABundleControllerControllerAvailable',
  TrustedCABundleControllerDegraded: 'TrustedCABundleControllerControllerDegraded',
  /** Who runs the cloud loops: True once this operator's CCM does (the in-tree handshake). */
  CloudControllerOwner: 'CloudControllerOwner',
} as const;

export const Reasons = {
  AsExpected: 'AsExpected',
  Initializing: 'Initializing',
  SyncingResources: 'SyncingResources',
  SyncingFailed: 'SyncingFailed',
} as const;

export const EventReasons = {
  /** The cloud config cannot be transformed; the last good cloud-conf stays. */
  CloudConfigInvalid: 'CloudConfigInvalid',
  CloudConfigSynced: 'CloudConfigSynced',
  /** A CA bundle is not valid PEM; the trust bundle is built from the others. */
  TrustedCAInvalid: 'TrustedCAInvalid',
  /** An operand could not be applied or removed. */
  OperandFailed: 'OperandFailed',
  OperandsApplied: 'OperandsApplied',
  /** The previous platform's operands (or all of them, on a hand-back) were removed. */
  OperandsRemoved: 'OperandsRemoved',
  /** The cloud loops moved to this operator's CCM, or back to kube-controller-manager. */
  CloudControllerOwnerChanged: 'CloudControllerOwnerChanged',
} as const;
