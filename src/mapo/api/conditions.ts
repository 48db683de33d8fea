/**
 * The condition types on a Machine API Machine and the reasons more than one controller writes
 * (openshift/api `machine/v1beta1`, machine-api-operator): one vocabulary for the machine, drain
 * and migration controllers.
 */
export const MachineConditions = {
  /** machine-api-operator's: the instance exists in the cloud. */
  InstanceExists: 'InstanceExists',
  /** The drain controller's: False while preDrain hooks hold the drain. */
  Drainable: 'Drainable',
  /** The drain controller's: True once the Node is drained (or draining is skipped). */
  Drained: 'Drained',
  /** True while another API (or nobody, mid-handover) manages the Machine. */
  Paused: 'Paused',
  /** shiftstack's: True while a requested switch of spec.authoritativeAPI is refused. */
  MigrationRefused: 'MigrationRefused',
} as const;

/** The Paused condition's reasons (machine-api-operator's PausedConditionReason, NotPausedConditionReason). */
export const PausedReasons = {
  NotMachineAPI: 'AuthoritativeAPINotMachineAPI',
  MachineAPI: 'AuthoritativeAPIMachineAPI',
} as const;
