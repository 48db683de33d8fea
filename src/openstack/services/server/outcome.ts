/**
 * Building results, and turning what the cloud answered into one. Every answer with a status is a
 * result (a 409 means "look again shortly", a 400 means "the request cannot work as asked"); only
 * aborts and failures without an answer (connection, timeout, 5xx after the transport's retries)
 * are thrown, for the caller's ordinary error backoff.
 */
import type { Server, ServerStatus } from '../../compute/v2/servers.ts';
import { ApiVersionError, OpenStackHttpError } from '../../core/errors.ts';
import type { BackoffPolicy } from './backoff.ts';
import type { EngineContext, StepContext } from './context.ts';
import { DependencyError } from './errors.ts';
import { copyState } from './state.ts';
import type {
  Action,
  CallOptions,
  Failed,
  FailedReason,
  Pending,
  PendingReason,
  ServerState,
} from './types.ts';

/** Thrown inside a step to end the call with a Failed result. */
export class StepFailure extends Error {
  override readonly name = 'StepFailure';
  readonly reason: FailedReason;
  readonly terminal: boolean;

  constructor(reason: FailedReason, message: string, terminal: boolean) {
    super(message);
    this.reason = reason;
    this.terminal = terminal;
  }
}

/** A step that cannot finish in this call: the caller is to look again after `retryAfterMs`. */
export interface Wait {
  reason: PendingReason;
  retryAfterMs: number;
  /** When `retryAfterMs` began (the engine's clock), if before the call's end: see Pending. */
  since?: number;
  message: string;
}

/** What one call has done so far: its writes, and the state as last recorded. */
export class Journal {
  readonly actions: Action[] = [];
  state: ServerState;

  constructor(state: ServerState) {
    this.state = state;
  }

  pending(
    wait: Wait,
    extra: { instanceState?: ServerStatus | undefined; server?: Server | undefined } = {},
  ): Pending {
    return { phase: 'Pending', ...wait, ...extra, actions: this.actions, state: this.state };
  }

  failed(
    reason: FailedReason,
    message: string,
    terminal: boolean,
    extra: { instanceState?: ServerStatus | undefined; server?: Server | undefined } = {},
  ): Failed {
    const { instanceState } = extra;
    return {
      phase: 'Failed',
      reason,
      message,
      terminal,
      ...(instanceState !== undefined ? { instanceState } : {}),
      actions: this.actions,
      state: this.state,
    };
  }
}

/** Neutron's 409s for a network or project without room (neutron-lib's exception names). */
const NO_ROOM = new Set(['IpAddressGenerationFailure', 'OverQuota']);

/** A typed failure or an OpenStack answer as a result; anything else is rethrown. */
export function fromError(err: unknown, journal: Journal, policy: BackoffPolicy): Pending | Failed {
  if (err instanceof StepFailure) return journal.failed(err.reason, err.message, err.terminal);
  if (DependencyError.is(err)) return journal.failed('DependencyError', err.message, err.terminal);
  if (ApiVersionError.is(err)) return journal.failed('InvalidRequest', err.message, true);
  if (!OpenStackHttpError.is(err)) throw err;
  const said = err.serviceMessage || err.message;
  // A 409 that another look will not cure: retried with back-off, and said where the user looks.
  if (err.status === 409 && NO_ROOM.has(err.errorType ?? ''))
    return journal.failed('OutOfCapacity', `${err.method} ${err.url}: ${said}`, false);
  switch (err.status) {
    case 404:
    case 409:
      // Something read a moment ago went away, or a second writer got there first: re-read.
      return journal.pending({
        reason: 'Conflict',
        retryAfterMs: policy.initialMs,
        message: `${err.method} ${err.url}: ${said}`,
      });
    case 429:
    case 503:
      return journal.pending({
        reason: 'RateLimited',
        retryAfterMs: err.retryAfterMs ?? policy.maxMs,
        message: said,
      });
    case 400:
    case 422:
      return journal.failed('InvalidRequest', `${err.method} ${err.url}: ${said}`, true);
    case 401:
    case 403:
      // Quotas are 403s in Nova: not terminal, a freed quota lets the next try through.
      return journal.failed('Forbidden', `${err.method} ${err.url}: ${said}`, false);
    default:
      throw err;
  }
}

/**
 * One ensure or remove call: a fresh journal over a copy of the recorded state, `record` handing
 * the caller a copy of it after each step that created or found something (never two at once),
 * and typed failures turned into results.
 */
export async function runCall<R>(
  engine: EngineContext,
  recorded: ServerState,
  options: CallOptions,
  steps: (ctx: StepContext, state: ServerState, record: () => Promise<void>) => Promise<R>,
): Promise<R | Pending | Failed> {
  const state = copyState(recorded);
  const journal = new Journal(state);
  const ctx: StepContext = {
    ...engine,
    journal,
    signal: options.signal,
    recordsResult: options.recordsResult === true,
  };
  // One record at a time, in the order asked (steps running side by side, the ports beside the
  // volumes, both record): each is handed the state as it is when its turn comes.
  let last: Promise<void> = Promise.resolve();
  const record = (): Promise<void> => {
    const mine = last.catch(() => {}).then(() => options.record?.(copyState(state)));
    last = mine;
    return mine;
  };
  try {
    return await steps(ctx, state, record);
  } catch (err) {
    return fromError(err, journal, engine.policy);
  }
}

/**
 * Both results once both have settled (never one still writing after the call returned); the
 * first failure, if any, thrown.
 */
export async function settled<A, B>(a: Promise<A>, b: Promise<B>): Promise<[A, B]> {
  const [ra, rb] = await Promise.allSettled([a, b]);
  if (ra.status === 'rejected') throw ra.reason;
  if (rb.status === 'rejected') throw rb.reason;
  return [ra.value, rb.value];
}
