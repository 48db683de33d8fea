/**
 * A KuryrLoadBalancer that could not be synced this time, already told in an Event: thrown so the
 * work queue retries it with its per-key back-off (reset by a success).
 */
export class LoadBalancerSyncError extends Error {
  override readonly name = 'KuryrLoadBalancerSyncError';
  /** `namespace/name` of the KuryrLoadBalancer (the Service's). */
  readonly klb: string;
  /** The engine's reason (InvalidRequest, Conflict, …). */
  readonly reason: string;

  constructor(klb: string, reason: string, message: string, options?: ErrorOptions) {
    super(`KuryrLoadBalancer ${klb}: ${reason}: ${message}`, options);
    this.klb = klb;
    this.reason = reason;
  }

  static is(this: void, err: unknown): err is LoadBalancerSyncError {
    return err instanceof Error && err.name === 'KuryrLoadBalancerSyncError';
  }
}
