/**
 * What the service controller throws for the work queue's per-key back-off (upstream's 5 s doubling
 * to 300 s): the Service it is about, the engine's reason, and a message fit for the log.
 */
export class LoadBalancerSyncError extends Error {
  override readonly name = 'LoadBalancerSyncError';
  /** `namespace/name` of the Service. */
  readonly service: string;
  /** The engine's reason (InvalidRequest, Conflict, …) or the controller's. */
  readonly reason: string;

  constructor(service: string, reason: string, message: string, options?: ErrorOptions) {
    super(`${service}: ${message}`, options);
    this.service = service;
    this.reason = reason;
  }

  static is(this: void, err: unknown): err is LoadBalancerSyncError {
    return err instanceof Error && err.name === 'LoadBalancerSyncError';
  }
}
