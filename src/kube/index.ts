/** The controller runtime: see docs/kube-runtime.md. */
export {
  KubeClient,
  type KubeClientOptions,
  type ListPage,
  type PatchType,
  type WatchEvent,
  type JsonPatchOp,
} from './client.ts';
export { CachedClient, type CachedListOptions, type InformerScope } from './cached-client.ts';
export {
  Informer,
  StaleWatchError,
  type InformerHandler,
  type InformerOptions,
  type InformerState,
} from './cache/informer.ts';
export { SharedInformers, type InformerDefaults } from './cache/shared.ts';
export { Store, deepFreeze, type IndexFunc } from './cache/store.ts';
export { byNamespace, byOwnerUid, field, NAMESPACE_INDEX, OWNER_UID_INDEX } from './cache/indexers.ts';
export { Controller, type ControllerOptions } from './controller/controller.ts';
export { ControllerBuilder, type ControllerHost } from './controller/builder.ts';
export {
  KubeApiError,
  TerminalError,
  RetryAfterError,
  ignoreNotFound,
  ignoreAlreadyExists,
  isNotFound,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isGone,
  isTooManyRequests,
  errorSummary,
  type ErrorSummary,
  type StatusReason,
} from './errors.ts';
export { ANONYMOUS, delegatedAuth, type DelegatedAuthOptions } from './delegated-auth.ts';
export { EventRecorder, type EventType, type EventApi } from './events.ts';
export {
  addFinalizer,
  removeFinalizer,
  hasFinalizer,
  isDeleting,
  withFinalizer,
  type FinalizerHandlers,
} from './finalizer.ts';
export {
  setCondition,
  getCondition,
  isConditionTrue,
  removeCondition,
  type Condition,
  type ConditionInput,
} from './conditions.ts';
export { requestForObject, requestForOwner, type MapFunc } from './handler.ts';
export {
  LeaderElector,
  LeaderElectionLostError,
  LeaderElectionConfigError,
  validateLeaderElectionConfig,
  LEADER_ELECTION_DEFAULTS,
  type LeaderElectionConfig,
} from './leaderelection/elector.ts';
export {
  parseLeaderMigrationConfiguration,
  loadLeaderMigrationConfiguration,
  defaultLeaderMigrationConfiguration,
  leaderMigrationFilter,
  leaderMigrationSetup,
  type LeaderMigrationConfiguration,
  type LeaderMigrationFlags,
  type LeaderMigrationSetup,
} from './leaderelection/migration.ts';
export { loadKubeConfig, podNamespace, type KubeConfigLookup } from './kubeconfig.ts';
export { Manager, ShutdownIncompleteError, type ManagerOptions } from './manager/manager.ts';
export { shutdownSignal } from './manager/signals.ts';
export {
  ownerReference,
  setControllerReference,
  setOwnerReference,
  removeOwnerReference,
  getControllerOf,
  isControlledBy,
  AlreadyOwnedError,
} from './owner.ts';
export { clone, createMergePatch, mergePatch, patchStatus, StatusPatcher } from './patch.ts';
export {
  generationChanged,
  annotationChanged,
  labelChanged,
  labelSelector,
  resourceVersionChanged,
  specOrMetadataChanged,
  fieldsChanged,
  and,
  or,
  not,
  type Predicate,
} from './predicate.ts';
export { OwnWrites, type OwnWritesOptions } from './own-writes.ts';
export { RateLimitingQueue } from './queue/rate-limiting.ts';
export { Coalescer, type CoalesceOptions } from './queue/coalesce.ts';
export {
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  BucketRateLimiter,
  MaxOfRateLimiter,
  TokenBucket,
  type RateLimiter,
} from './ratelimit.ts';
export type { Reconciler, ReconcileFunc, ReconcileContext, Request, Result } from './reconcile/types.ts';
export { requeueCountedFrom } from './reconcile/requeue.ts';
export {
  kinds,
  metadataOnly,
  resourceType,
  keyOf,
  keyString,
  objectKey,
  parseKey,
  type ResourceType,
  type ObjectKey,
  type KubernetesObject,
  type PartialObjectMetadata,
} from './resource.ts';
export type { Runnable, RunContext } from './runnable.ts';
export { matchesLabelSelector, labelSelectorString, type LabelSelector } from './selector.ts';
export { metaTime, microTime, timeMs } from './time.ts';
