/**
 * The shared load-balancer path (CCM Service controller, Kuryr): a level-based, non-blocking
 * ensure/remove engine over the OpenStack client. See engine.ts for the contract, types.ts for
 * the desired state and the results.
 */
export type { LoadBalancerApi } from './api.ts';
export { AMPHORA_PHASES, backoffPolicy, type BackoffPolicy, type PhaseDurations } from './backoff.ts';
export { createBody, identityTags } from './build.ts';
export { LoadBalancerEngine, type EngineOptions } from './engine.ts';
export { findLoadBalancer, type FindResult } from './find.ts';
export { isOurs as isOurFloatingIp } from './floating-ip.ts';
export { planChanges, planRemoval, type Plan, type PlanContext, type Step } from './plan.ts';
export type { CurrentState } from './read.ts';
export { RecreateWindow } from './recreate.ts';
export type * from './types.ts';
