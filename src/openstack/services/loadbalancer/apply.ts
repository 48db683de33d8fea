/**
 * Applies one planned step: exactly one Octavia write. Octavia answers at once and locks the load
 * balancer (PENDING_UPDATE), so the engine returns Pending after it rather than waiting here.
 */
import type { HealthMonitorCreateOpts } from '../../loadbalancer/v2/healthmonitors.ts';
import type { ListenerCreateOpts } from '../../loadbalancer/v2/listeners.ts';
import type { PoolCreateOpts } from '../../loadbalancer/v2/pools.ts';
import type { LoadBalancerApi } from './api.ts';
import { actionOf, type Step } from './plan.ts';
import type { Action, CallOptions } from './types.ts';

export async function applyStep(
  api: LoadBalancerApi,
  step: Step,
  options: CallOptions = {},
): Promise<Action> {
  const o = { signal: options.signal };
  const octavia = api.loadBalancer;
  switch (step.op) {
    case 'updateLoadBalancer':
      await octavia.loadBalancers.update(step.id, step.body, o);
      return actionOf(step);
    case 'createListener':
      return actionOf(step, (await octavia.listeners.create(step.body as ListenerCreateOpts, o)).id);
    case 'updateListener':
      await octavia.listeners.update(step.id, step.body, o);
      return actionOf(step);
    case 'deleteListener':
      await octavia.listeners.delete(step.id, o);
      return actionOf(step);
    case 'createPool':
      return actionOf(step, (await octavia.pools.create(step.body as PoolCreateOpts, o)).id);
    case 'updatePool':
      await octavia.pools.update(step.id, step.body, o);
      return actionOf(step);
    case 'deletePool':
      await octavia.pools.delete(step.id, o);
      return actionOf(step);
    case 'replaceMembers':
      await octavia.members.replace(step.poolId, step.members, o);
      return actionOf(step);
    case 'createMember':
      return actionOf(step, (await octavia.members.create(step.poolId, step.body, o)).id);
    case 'updateMember':
      await octavia.members.update(step.poolId, step.id, step.body, o);
      return actionOf(step);
    case 'deleteMember':
      await octavia.members.delete(step.poolId, step.id, o);
      return actionOf(step);
    case 'createMonitor':
      return actionOf(
        step,
        (await octavia.healthMonitors.create(step.body as HealthMonitorCreateOpts, o)).id,
      );
    case 'updateMonitor':
      await octavia.healthMonitors.update(step.id, step.body, o);
      return actionOf(step);
    case 'deleteMonitor':
      await octavia.healthMonitors.delete(step.id, o);
      return actionOf(step);
  }
}
