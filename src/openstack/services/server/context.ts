/** What the steps of one ensure or remove call share. */
import type { ServerApi } from './api.ts';
import type { BackoffPolicy } from './backoff.ts';
import type { LookupCache } from './lookups.ts';
import type { Journal } from './outcome.ts';

/** The engine's, for all its calls: the API, the backoff policy and the clock waits are measured with. */
export interface EngineContext {
  api: ServerApi;
  policy: BackoffPolicy;
  now: () => number;
  /** The identity's resolve lookups, shared between its servers for a short time. */
  lookups?: LookupCache | undefined;
}

/** One call's: where its writes are noted, and its signal. */
export interface StepContext extends EngineContext {
  journal: Journal;
  signal: AbortSignal | undefined;
  /** The caller writes the result's state at once (CallOptions.recordsResult). */
  recordsResult: boolean;
}
