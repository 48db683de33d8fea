/**
 * Building results, and turning what the cloud answered into one. Every answer with a status is a
 * result (a 409 means "someone else wrote, look again", a 400 means "the request cannot work as
 * asked"); only aborts and failures without an answer (connection, timeout, 5xx after the
 * transport's retries) are thrown, for the caller's ordinary error backoff.
 */
import { OpenStackHttpError } from '../../core/errors.ts';
import type { LoadBalancer } from '../../loadbalancer/v2/loadbalancers.ts';
import type { BackoffPolicy } from './backoff.ts';
import type { Action, Failed, FailedReason, Pending, PendingReason, RefusedInput, Warning } from './types.ts';

/** What one call has done so far: its writes and warnings, and the load balancer once known. */
export class Journal {
  readonly actions: Action[] = [];
  readonly warnings: Warning[] = [];
  loadBalancer: LoadBalancer | undefined;
  owned: boolean | undefined;

  pending(reason: PendingReason, retryAfterMs: number, message: string): Pending {
    return { phase: 'Pending', reason, retryAfterMs, message, ...this.common() };
  }

  failed(
    reason: FailedReason,
    message: string,
    extra: Pick<Failed, 'recreate' | 'refused' | 'cloudMessage'> = {},
  ): Failed {
    return {
      phase: 'Failed',
      reason,
      message,
      ...(extra.recreate !== undefined ? { recreate: extra.recreate } : {}),
      ...(extra.refused !== undefined ? { refused: extra.refused } : {}),
      ...(extra.cloudMessage !== undefined ? { cloudMessage: extra.cloudMessage } : {}),
      ...this.common(),
    };
  }

  common() {
    return {
      actions: this.actions,
      warnings: this.warnings,
      loadBalancer: this.loadBalancer,
      ...(this.owned !== undefined ? { owned: this.owned } : {}),
    };
  }
}

/**
 * An OpenStack answer as a result; anything else is rethrown. `refused` tells which desired input a
 * refusal (400) names, for the caller's message.
 */
export function fromError(
  err: unknown,
  journal: Journal,
  policy: BackoffPolicy,
  refused?: (said: string) => RefusedInput | undefined,
): Pending | Failed {
  if (!OpenStackHttpError.is(err)) throw err;
  const said = err.serviceMessage || err.message;
  switch (err.status) {
    case 404:
    case 409:
      // A 404: an object planned from the last read went away (a second writer). A 409: Octavia's "immutable": the load balancer went PENDING under us (another writer, or a
      // write of ours the previous, killed, process made). Re-read shortly.
      return journal.pending('Conflict', policy.initialMs, `${err.method} refused while busy: ${said}`);
    case 429:
    case 503:
      return journal.pending('RateLimited', err.retryAfterMs ?? policy.maxMs, said);
    case 400:
    case 422:
      return journal.failed('InvalidRequest', `${err.method} ${err.url}: ${said}`, {
        refused: refused?.(said),
        cloudMessage: said,
      });
    case 401:
    case 403:
      return journal.failed('Forbidden', `${err.method} ${err.url}: ${said}`);
    case 501:
      return journal.failed('ProviderUnsupported', said);
    default:
      throw err;
  }
}
