/**
 * The service controller's own Event reasons, for what OCCM does silently: it blocks a worker for
 * up to ~271 s on a load balancer stuck in PENDING_*, and deletes an ERROR one without a word.
 */
export const ServiceControllerReason = {
  /** Octavia has kept the load balancer, or a listener, pool, member or monitor of it (named), in PENDING_* past the threshold. */
  Stuck: 'LoadBalancerStuck',
  /** The load balancer landed in ERROR: it is deleted and created again (once per window). */
  Recreating: 'LoadBalancerRecreating',
} as const;
