/**
 * The names the migration controller writes: its controller name, the Machine API conditions and
 * their reasons, the Event reasons, and Cluster API's pause annotation.
 */

/** The work-queue and metrics name (the mapo conventions). */
export const MIGRATION_CONTROLLER = 'migration';

/**
 * Cluster API's annotation that pauses one object: CAPO's OpenStackMachine controller and the
 * Cluster API core stand-in leave an object carrying it alone.
 */
export { PAUSED_ANNOTATION } from '../../capo/api/index.ts';

/** Why a switch is refused: the MigrationRefused condition's reason. */
export const RefusalReasons = {
  MachineDeleting: 'MachineDeleting',
  MachineFailed: 'MachineFailed',
  NoOpenStackServer: 'NoOpenStackServer',
  OpenStackServerNotOwned: 'OpenStackServerNotOwned',
  ClusterNotFound: 'ClusterNotFound',
  OpenStackClusterNotFound: 'OpenStackClusterNotFound',
  /** A field of the OpenStackServer that has no place, or no valid one, on the Cluster API side. */
  FieldNotCarriedOver: 'FieldNotCarriedOver',
  /** A Cluster API Machine or OpenStackMachine of the name exists and is not this Machine's counterpart. */
  NameTaken: 'ClusterAPIObjectConflict',
} as const;
export type RefusalReason = (typeof RefusalReasons)[keyof typeof RefusalReasons];

/** Event reasons on the Machine API Machine. */
export const MigrationEventReasons = {
  Refused: 'MigrationRefused',
  Started: 'MigrationStarted',
  Migrated: 'Migrated',
} as const;
