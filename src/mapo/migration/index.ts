/**
 * Live migration of Machines between the Machine API and Cluster API (OpenShift's
 * MachineAPIMigration, `spec.authoritativeAPI`): the Machine's OpenStackServer changes controller,
 * nothing in OpenStack changes. See docs/mapo.md#migration-to-cluster-api-and-back.
 */
export { registerMigrationController, type MigrationControllerOptions } from './controller.ts';
export {
  MIGRATION_CONTROLLER,
  MigrationEventReasons,
  PAUSED_ANNOTATION,
  RefusalReasons,
  type RefusalReason,
} from './names.ts';
export { deriveClusterAPIMachine, type ClusterAPIMachine, type Derived, type Refusal } from './derive.ts';
