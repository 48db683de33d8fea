/**
 * The shared server path (CAPO's OpenStackServer, OpenStackMachine and bastion; later MAPO): a
 * level-based, non-blocking ensure/remove engine over the OpenStack client. See engine.ts for the
 * contract, types.ts for the spec, the recorded state and the results.
 */
export type { ServerApi } from './api.ts';
export { backoffPolicy, type BackoffPolicy } from './backoff.ts';
export { ServerEngine, type EngineOptions } from './engine.ts';
export { DependencyError, type DependencyProblem } from './errors.ts';
export { LookupCache, type LookupCacheOptions } from './lookups.ts';
export { blockDeviceVolumeName, portName, rootVolumeName } from './names.ts';
export { portCreateBody } from './ports.ts';
export { resolveServerSpec, volumeSpecs } from './resolve.ts';
export { instanceAddresses, serverCreateRequest } from './server.ts';
export type * from './types.ts';
