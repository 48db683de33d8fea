/** What the engine's calls share: the API, the backoff policy and the clock; and two helpers. */
import { ApiVersionError } from '../../core/errors.ts';
import type { LoadBalancer } from '../../loadbalancer/v2/loadbalancers.ts';
import type { LoadBalancerApi } from './api.ts';
import { pendingHint, type BackoffPolicy } from './backoff.ts';
import type { ConfirmedMembers } from './confirmed-members.ts';
import type { Journal } from './outcome.ts';
import type { CallOptions, Pending } from './types.ts';

/** What ensure.ts and delete.ts share. */
export interface EngineContext {
  api: LoadBalancerApi;
  policy: BackoffPolicy;
  now: () => number;
  /** Pools whose members need not be read again (none: every call reads them). */
  members?: ConfirmedMembers | undefined;
}

/** Whether Octavia takes tags (API 2.5). Read once per endpoint by the client's discovery cache. */
export async function tagsSupported(api: LoadBalancerApi, options: CallOptions): Promise<boolean> {
  try {
    return await api.loadBalancer.supports('2.5', { signal: options.signal });
  } catch (err) {
    // A version document we cannot read: names alone still find everything.
    if (ApiVersionError.is(err)) return false;
    throw err;
  }
}

/** Pending for a load balancer Octavia is working on, or Stuck when it has been too long. */
export function pendingFor(ctx: EngineContext, journal: Journal, lb: LoadBalancer, what: string): Pending {
  const hint = pendingHint(lb, ctx.now(), ctx.policy, lb.provisioning_status);
  if (hint.stuck)
    return journal.pending(
      'LoadBalancerStuck',
      hint.retryAfterMs,
      `load balancer ${lb.id} has been ${lb.provisioning_status} for ${Math.round(hint.ageMs / 1000)} s; Octavia may need an operator (failover or a status reset)`,
    );
  return journal.pending(
    'LoadBalancerPending',
    hint.retryAfterMs,
    `load balancer ${lb.id} is ${lb.provisioning_status}${what}`,
  );
}
