/**
 * Waiting for a load balancer: ACTIVE after a write, or gone after a delete. Waiting is on the load
 * balancer's `provisioning_status` (not a child's), the one status Octavia drives on every write.
 *
 * These block, so they are for scripts, tests and the CLI. A controller never waits inside a
 * reconcile: it reads the status, and requeues while it is PENDING_*.
 */
import { waitFor, waitForDeletion, type WaiterOptions } from '../../core/wait.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { getLoadBalancer, type LoadBalancer } from './loadbalancers.ts';

export type { WaiterOptions };

/** Amphora boots take minutes on a busy cloud; OCCM waits about 5 min, this a little longer. */
export const LOAD_BALANCER_TIMEOUT_MS = 10 * 60_000;

const failed = (lb: LoadBalancer) =>
  lb.provisioning_status === 'ERROR' ? { status: lb.provisioning_status } : undefined;

/**
 * Polls until `provisioning_status` is ACTIVE and returns the load balancer. ERROR ends the wait at
 * once with ResourceErrorStateError; the deadline with WaitTimeoutError (naming the last status).
 */
export function waitForLoadBalancerActive(
  sc: ServiceClient,
  id: string,
  options: WaiterOptions = {},
): Promise<LoadBalancer> {
  return waitFor<LoadBalancer>({
    get: (signal) => getLoadBalancer(sc, id, { signal }),
    done: (lb) => lb.provisioning_status === 'ACTIVE',
    failed,
    statusOf: (lb) => lb.provisioning_status,
    describe: `load balancer ${id} to become ACTIVE`,
    resourceId: id,
    ...options,
    timeoutMs: options.timeoutMs ?? LOAD_BALANCER_TIMEOUT_MS,
  });
}

/** Polls until the load balancer answers 404. ERROR (a failed delete) ends the wait at once. */
export function waitForLoadBalancerDeleted(
  sc: ServiceClient,
  id: string,
  options: WaiterOptions = {},
): Promise<void> {
  return waitForDeletion<LoadBalancer>({
    get: (signal) => getLoadBalancer(sc, id, { signal }),
    failed,
    statusOf: (lb) => lb.provisioning_status,
    describe: `load balancer ${id} to be deleted`,
    resourceId: id,
    ...options,
    timeoutMs: options.timeoutMs ?? LOAD_BALANCER_TIMEOUT_MS,
  });
}
