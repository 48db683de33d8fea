/** The last parameter of every resource function: `fn(sc, …args, options)`. */
export interface CallOptions {
  /** Aborts the call (and its retries and queueing); rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}
