/**
 * The request-to-object step of the writes below a load balancer: the object and its parents are
 * looked up in Octavia's order (the first missing one is the 404), then the caller must own the
 * load balancer's project. Also what member and monitor writes lock besides the load balancer.
 */
import type { SimRequest } from '../core/types.ts';
import { authorize } from './context.ts';
import type { LoadBalancerRecord, PoolRecord, Provisioned } from './model.ts';
import type { OctaviaStore } from './store.ts';

/** Octavia authorizes a child write against the project of the load balancer it changes. */
function owned(req: SimRequest, lb: LoadBalancerRecord): LoadBalancerRecord {
  authorize(req, lb.project_id);
  return lb;
}

export function listenerTarget(store: OctaviaStore, req: SimRequest, id: string) {
  const listener = store.listener(id);
  return { listener, lb: owned(req, store.lbOfListener(listener)) };
}

export function poolTarget(store: OctaviaStore, req: SimRequest, id: string) {
  const pool = store.pool(id);
  return { pool, lb: owned(req, store.lbOfPool(pool)) };
}

export function memberTarget(store: OctaviaStore, req: SimRequest) {
  const pool = store.pool(req.params.pool_id!);
  const member = store.memberIn(pool, req.params.member_id!);
  return { pool, member, lb: owned(req, store.lbOfPool(pool)) };
}

export function healthMonitorTarget(store: OctaviaStore, req: SimRequest) {
  const hm = store.healthmonitor(req.params.healthmonitor_id!);
  const pool = store.pool(hm.pool_id);
  return { hm, pool, lb: owned(req, store.lbOfPool(pool)) };
}

export function policyTarget(store: OctaviaStore, req: SimRequest) {
  const policy = store.l7policy(req.params.l7policy_id!);
  const listener = store.listener(policy.listener_id);
  return { policy, listener, lb: owned(req, store.lbOfListener(listener)) };
}

export function ruleTarget(store: OctaviaStore, req: SimRequest) {
  const policy = store.l7policy(req.params.l7policy_id!);
  const rule = store.ruleIn(policy, req.params.l7rule_id!);
  const listener = store.listener(policy.listener_id);
  return { policy, rule, listener, lb: owned(req, store.lbOfListener(listener)) };
}

/** A member or monitor write locks its pool and the listeners sending traffic to it. */
export function poolLocks(store: OctaviaStore, pool: PoolRecord): Provisioned[] {
  return [...store.listenersOfPool(pool), pool];
}
