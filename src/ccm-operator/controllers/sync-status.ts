/**
 * The status of a sync controller (cloud config, trusted CA) on the ClusterOperator, as upstream
 * reports it: `<Name>Available` and `<Name>Degraded`. A problem the user must fix degrades at once
 * (retrying cannot help; a watch wakes the controller when the input changes); any other failure
 * degrades only once failures have lasted the controller's threshold, and is retried meanwhile.
 */
import type { Manager } from '../../kube/index.ts';
import { Reasons } from '../api/index.ts';
import { FailureWindow } from '../status/failure-window.ts';
import { ClusterOperatorReporter } from '../status/reporter.ts';

/** A problem in what the user supplied: the message says what and the fix how. */
export interface UserProblem {
  problem: string;
  fix: string;
}

export interface SyncStatusOptions {
  /** Upstream's condition types. */
  available: string;
  degraded: string;
  /** `Cloud Config Controller`, as upstream's messages name it. */
  label: string;
  /** What it syncs, for messages: `cloud config`. */
  what: string;
  fieldManager: string;
  thresholdMs: number;
}

export class SyncStatus {
  private readonly opts: SyncStatusOptions;
  private readonly reporter: ClusterOperatorReporter;
  private readonly window: FailureWindow;

  constructor(mgr: Manager, opts: SyncStatusOptions) {
    this.opts = opts;
    this.reporter = new ClusterOperatorReporter({
      client: mgr.client,
      fieldManager: opts.fieldManager,
      clock: mgr.clock,
    });
    this.window = new FailureWindow(mgr.clock, opts.thresholdMs);
  }

  async ok(signal: AbortSignal): Promise<void> {
    this.window.clear();
    const message = `${this.opts.label} works as expected`;
    await this.reporter.report(
      {
        conditions: [
          { type: this.opts.available, status: 'True', reason: Reasons.AsExpected, message },
          { type: this.opts.degraded, status: 'False', reason: Reasons.AsExpected, message },
        ],
      },
      signal,
    );
  }

  /** Degrades now: the user has to change something. */
  async problem(p: UserProblem, signal: AbortSignal): Promise<void> {
    this.window.clear();
    await this.degrade(`${p.problem}. Fix: ${p.fix}`, signal);
  }

  /** Records a failure that may pass, degrading once they have lasted the threshold; rethrows it to retry. */
  async transient(err: unknown, signal: AbortSignal): Promise<never> {
    if (this.window.failed()) {
      const message = err instanceof Error ? err.message : String(err);
      await this.degrade(
        `${message} (failing for ${Math.round(this.opts.thresholdMs / 1000)} s or more)`,
        signal,
      ).catch(() => undefined);
    }
    throw err;
  }

  private async degrade(detail: string, signal: AbortSignal): Promise<void> {
    const message = `${this.opts.label} failed to sync ${this.opts.what}: ${detail}`;
    await this.reporter.report(
      {
        conditions: [
          { type: this.opts.available, status: 'False', reason: Reasons.SyncingFailed, message },
          { type: this.opts.degraded, status: 'True', reason: Reasons.SyncingFailed, message },
        ],
      },
      signal,
    );
  }
}
