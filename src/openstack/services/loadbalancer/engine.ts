/**
 * The load-balancer engine: `ensure(desired)` and `remove(desired)`, level-based and non-blocking.
 *
 * Every call reads the world afresh, does at most ONE Octavia write (Octavia locks the load balancer
 * after each: a second write would be a 409) plus the floating IP's Neutron calls, and returns:
 *   Ready   — the load balancer is ACTIVE and matches, the floating IP is in place;
 *   Pending — call again after `retryAfterMs` (Octavia is PENDING_*, on the load balancer or on one
 *             of its children, or we just wrote); past `stuckAfterMs` its reason is LoadBalancerStuck;
 *   Failed  — nothing more will happen until the desired state or the cloud changes.
 * It never sleeps or polls, so a controller worker is free between calls, and a process killed
 * between any two calls is replaced by one that finds and adopts what exists: every object is
 * found by the identity's deterministic names, tags and the VIP port.
 *
 *   const engine = new LoadBalancerEngine(client, { backoff: { stuckAfterMs: 600_000 } });
 *   const r = await engine.ensure(desired, { signal });
 *   if (r.phase === 'Pending') queue.addAfter(key, r.retryAfterMs);
 *
 * Costs (Octavia writes): create = 1 whatever the members (fully populated), + 1 Neutron floating IP
 * create; a member change = 1 batch PUT per pool; steady state = 0 writes. Reads: a pool's members
 * are read again only once the pool has changed since they were last found as desired
 * (confirmed-members.ts), so a Node burst costs one member read per pool, after its update.
 */
import type { LoadBalancerApi } from './api.ts';
import { backoffPolicy, type BackoffPolicy } from './backoff.ts';
import { CONFIRMED_MEMBERS_MAX_AGE_MS, ConfirmedMembers } from './confirmed-members.ts';
import type { EngineContext } from './context.ts';
import { removeLoadBalancer } from './delete.ts';
import { ensureLoadBalancer } from './ensure.ts';
import { findLoadBalancer, type FindResult } from './find.ts';
import type { LoadBalancer } from '../../loadbalancer/v2/loadbalancers.ts';
import { ownership } from './ownership.ts';
import { readState, type CurrentState } from './read.ts';
import type {
  CallOptions,
  DesiredLoadBalancer,
  EnsureResult,
  LoadBalancerIdentity,
  RemoveResult,
} from './types.ts';

export interface EngineOptions {
  backoff?: Partial<BackoffPolicy> | undefined;
  /** The clock PENDING ages are measured with (tests). */
  now?: (() => number) | undefined;
  /**
   * How long a pool's members, once read and found as desired, are not read again while the pool
   * shows no change (confirmed-members.ts; 10 min); 0 reads them on every call.
   */
  confirmedMembersMaxAgeMs?: number | undefined;
}

export class LoadBalancerEngine {
  private readonly ctx: EngineContext;

  constructor(api: LoadBalancerApi, options: EngineOptions = {}) {
    const now = options.now ?? Date.now;
    const maxAge = options.confirmedMembersMaxAgeMs ?? CONFIRMED_MEMBERS_MAX_AGE_MS;
    this.ctx = {
      api,
      policy: backoffPolicy(options.backoff),
      now,
      members: maxAge > 0 ? new ConfirmedMembers(now, maxAge) : undefined,
    };
  }

  get policy(): BackoffPolicy {
    return this.ctx.policy;
  }

  /** One step towards `desired`; see the file comment. */
  ensure(desired: DesiredLoadBalancer, options: CallOptions = {}): Promise<EnsureResult> {
    return ensureLoadBalancer(this.ctx, desired, options);
  }

  /**
   * One step towards "gone": cascade delete (step by step in serial mode), floating IP released per
   * the rules, only this identity's listeners on a shared load balancer. Deleted once nothing is left.
   */
  remove(desired: DesiredLoadBalancer, options: CallOptions = {}): Promise<RemoveResult> {
    return removeLoadBalancer(this.ctx, desired, options);
  }

  /**
   * What `ensure` reads below a load balancer it owns: this identity's listeners, pools, members and
   * monitors, with their ids, for a caller that records them (Kuryr's KuryrLoadBalancer status).
   */
  read(desired: DesiredLoadBalancer, lb: LoadBalancer, options: CallOptions = {}): Promise<CurrentState> {
    return readState(this.ctx.api, lb, ownership(desired, true), options);
  }

  /** The lookup ensure and remove start with. */
  find(identity: LoadBalancerIdentity, options: CallOptions = {}): Promise<FindResult> {
    return findLoadBalancer(this.ctx.api, identity, options);
  }
}
