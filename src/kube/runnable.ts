/**
 * What a manager runs: controllers, and anything else with a lifetime (a periodic GC, a cloud
 * config watcher). `start` runs until `signal` aborts and resolves once fully stopped; a
 * rejection is fatal to the manager, as in controller-runtime.
 */
export interface RunContext {
  /**
   * Aborts when the graceful-shutdown deadline passes: work still in flight must stop then. Until
   * that moment, after `signal` aborts, a runnable takes no new work and finishes what it holds.
   */
  hardStop: AbortSignal;
}

export interface Runnable {
  readonly name: string;
  /** True (the default) runs it only while this process holds the leader lease. */
  readonly needLeaderElection?: boolean;
  start(signal: AbortSignal, ctx: RunContext): Promise<void>;
}
