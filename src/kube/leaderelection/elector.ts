/**
 * Leader election on a Lease, with client-go's algorithm and defaults (`tools/leaderelection`):
 *
 * - a candidate tries every `retryPeriodMs` (jittered ×1.2) to take the lease, which it may when
 *   the lease is free (released: empty holder) or has not changed for `leaseDurationMs` as seen on
 *   its own clock (never by comparing timestamps written by another machine's clock);
 * - the leader renews every `retryPeriodMs`; if no renewal succeeds for `renewDeadlineMs` it has
 *   lost, and `run` returns 'lost' — callers stop everything (fail-stop), since another process may
 *   lead `leaseDurationMs` after our last renewal;
 * - on a graceful stop the leader releases the lease (empty holder, 1 s duration) so a standby
 *   takes over at its next retry instead of waiting out the lease.
 *
 * Defaults 15 s / 10 s / 2 s; OpenShift's 137 s / 107 s / 26 s survive an API server outage of
 * about two minutes. The constructor refuses leaseDuration ≤ renewDeadline ≤ 1.2 × retryPeriod.
 */
import { createLogger, type Logger } from '../../lib/log.ts';
import type { Registry } from '../../lib/metrics.ts';
import type { KubeClient } from '../client.ts';
import { jitter, systemClock, timeoutSignal, type Clock } from '../../lib/clock.ts';
import { isAlreadyExists, isConflict } from '../errors.ts';
import { microTime } from '../time.ts';
import { gauge } from '../metrics.ts';
import { LeaseLock, type LeaderElectionRecord, type ObservedLease } from './lease-lock.ts';

export interface LeaderElectionConfig {
  leaseName: string;
  leaseNamespace: string;
  /** Unique per process: host name plus a random suffix, as client-go's callers do. */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Release the lease when stopped gracefully (default true). */
  releaseOnCancel?: boolean;
}

export interface LeaderCallbacks {
  /** Called on acquiring; `signal` aborts when leadership ends. */
  onStartedLeading(signal: AbortSignal): void;
  /** Called once leadership ended (lost or released). */
  onStoppedLeading(): void;
  /** Called when the observed holder changes (also for other holders). */
  onNewLeader?(identity: string): void;
}

export const LEADER_ELECTION_DEFAULTS = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
} as const;
/** client-go's `JitterFactor`. */
export const JITTER_FACTOR = 1.2;

export class LeaderElectionConfigError extends Error {
  override readonly name = 'LeaderElectionConfigError';
}

export class LeaderElectionLostError extends Error {
  override readonly name = 'LeaderElectionLostError';

  static is(err: unknown): err is LeaderElectionLostError {
    return err instanceof Error && err.name === 'LeaderElectionLostError';
  }
}

/** The checks of client-go's `NewLeaderElector`. */
export function validateLeaderElectionConfig(c: LeaderElectionConfig): Required<LeaderElectionConfig> {
  const full = { ...LEADER_ELECTION_DEFAULTS, releaseOnCancel: true, ...c };
  const problems: string[] = [];
  if (!full.leaseName) problems.push('leaseName must be set');
  if (!full.leaseNamespace) problems.push('leaseNamespace must be set');
  if (!full.identity) problems.push('identity must be set (unique per process)');
  if (!(full.leaseDurationMs > 0)) problems.push('leaseDurationMs must be greater than zero');
  if (!(full.renewDeadlineMs > 0)) problems.push('renewDeadlineMs must be greater than zero');
  if (!(full.retryPeriodMs > 0)) problems.push('retryPeriodMs must be greater than zero');
  if (!(full.leaseDurationMs > full.renewDeadlineMs)) {
    problems.push(
      `leaseDurationMs (${full.leaseDurationMs}) must be greater than renewDeadlineMs (${full.renewDeadlineMs})`,
    );
  }
  if (!(full.renewDeadlineMs > JITTER_FACTOR * full.retryPeriodMs)) {
    problems.push(
      `renewDeadlineMs (${full.renewDeadlineMs}) must be greater than ${JITTER_FACTOR} × retryPeriodMs (${full.retryPeriodMs})`,
    );
  }
  if (problems.length > 0)
    throw new LeaderElectionConfigError(`invalid leader election config: ${problems.join('; ')}`);
  return full;
}

export interface LeaderElectorOptions {
  client: KubeClient;
  config: LeaderElectionConfig;
  callbacks: LeaderCallbacks;
  clock?: Clock;
  log?: Logger;
  registry?: Registry;
}

export type ElectionOutcome = 'stopped' | 'released' | 'lost';

export class LeaderElector {
  readonly config: Required<LeaderElectionConfig>;
  readonly lock: LeaseLock;
  private readonly callbacks: LeaderCallbacks;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly status: { set(v: number): void };
  private observed: ObservedLease | undefined;
  /** Local time at which `observed` was first seen. */
  private observedAt = 0;
  private leading = false;
  private reportedLeader: string | undefined;

  constructor(opts: LeaderElectorOptions) {
    if (
      typeof opts.callbacks?.onStartedLeading !== 'function' ||
      typeof opts.callbacks.onStoppedLeading !== 'function'
    ) {
      throw new LeaderElectionConfigError('onStartedLeading and onStoppedLeading callbacks are required');
    }
    this.config = validateLeaderElectionConfig(opts.config);
    this.lock = new LeaseLock(opts.client, this.config.leaseNamespace, this.config.leaseName);
    this.callbacks = opts.callbacks;
    this.clock = opts.clock ?? systemClock;
    this.log = (opts.log ?? createLogger({ level: 'silent' })).child({
      lease: this.lock.describe(),
      identity: this.config.identity,
    });
    const g = opts.registry
      ? gauge(
          opts.registry,
          'leader_election_master_status',
          'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
          ['name'],
        )
      : undefined;
    const name = this.config.leaseName;
    g?.set({ name }, 0);
    this.status = { set: (v) => g?.set({ name }, v) };
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** The holder last observed (ours included); undefined before the first read or when free. */
  leader(): string | undefined {
    return this.observed?.record.holderIdentity || undefined;
  }

  /**
   * Campaigns until leading, leads until `signal` aborts (then releases) or renewal fails (lost).
   * Resolves with how leadership ended; 'stopped' if it never started or the lease was left to
   * expire. `mayRelease`, asked when `signal` aborts, can veto the release: work that may still
   * write must not hand the lease to a successor, who would overlap with it.
   */
  async run(signal: AbortSignal, opts: { mayRelease?: () => boolean } = {}): Promise<ElectionOutcome> {
    if (!(await this.acquire(signal))) return 'stopped';
    const leadership = new AbortController();
    this.leading = true;
    this.status.set(1);
    this.log.info('became leader');
    try {
      this.callbacks.onStartedLeading(leadership.signal);
    } catch (err) {
      this.log.error({ err }, 'onStartedLeading threw');
    }
    const outcome = await this.renewLoop(signal);
    this.leading = false;
    this.status.set(0);
    leadership.abort(
      new LeaderElectionLostError(outcome === 'lost' ? 'leader lease lost' : 'leadership released'),
    );
    let released = false;
    if (outcome === 'lost') {
      this.log.error(
        { renewDeadlineMs: this.config.renewDeadlineMs },
        'leader lease lost: could not renew in time',
      );
    } else if (this.config.releaseOnCancel) {
      if (opts.mayRelease?.() ?? true) released = await this.release();
      else
        this.log.warn(
          { leaseDurationMs: this.config.leaseDurationMs },
          'not releasing the leader lease: work may still be writing; it expires on its own',
        );
    }
    this.callbacks.onStoppedLeading();
    return outcome === 'lost' ? 'lost' : released ? 'released' : 'stopped';
  }

  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.log.info('trying to acquire the leader lease');
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew(signal, this.config.renewDeadlineMs)) return true;
      try {
        await this.clock.sleep(jitter(this.config.retryPeriodMs, JITTER_FACTOR, this.clock), signal);
      } catch {
        return false;
      }
    }
    return false;
  }

  private async renewLoop(signal: AbortSignal): Promise<'stopped' | 'lost'> {
    let lastRenew = this.clock.now();
    for (;;) {
      try {
        await this.clock.sleep(this.config.retryPeriodMs, signal);
      } catch {
        return 'stopped';
      }
      const leftMs = this.config.renewDeadlineMs - (this.clock.now() - lastRenew);
      const ok = leftMs > 0 && (await this.tryAcquireOrRenew(signal, leftMs));
      if (signal.aborted) return 'stopped';
      if (ok) lastRenew = this.clock.now();
      else if (this.clock.now() - lastRenew >= this.config.renewDeadlineMs) return 'lost';
    }
  }

  /** One attempt; never throws (a failed attempt is `false`), bounded by `timeoutMs`. */
  private async tryAcquireOrRenew(signal: AbortSignal, timeoutMs: number): Promise<boolean> {
    const bound = timeoutSignal(
      this.clock,
      timeoutMs,
      signal,
      () => new Error(`lease call exceeded ${timeoutMs} ms`),
    );
    try {
      return await this.attempt(bound.signal);
    } catch (err) {
      if (!signal.aborted) this.log.warn({ err }, 'leader lease attempt failed');
      return false;
    } finally {
      bound.cancel();
    }
  }

  private async attempt(signal: AbortSignal): Promise<boolean> {
    const id = this.config.identity;
    const now = this.clock.now();
    const desired: LeaderElectionRecord = {
      holderIdentity: id,
      // Whole seconds on the wire; rounding up never advertises a shorter lease than configured.
      leaseDurationSeconds: Math.ceil(this.config.leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    const current = await this.lock.get(signal);
    if (!current) {
      try {
        this.observe(await this.lock.create(desired, signal));
        return true;
      } catch (err) {
        if (isAlreadyExists(err)) return false;
        throw err;
      }
    }
    this.observe(current);
    const r = current.record;
    if (
      r.holderIdentity &&
      r.holderIdentity !== id &&
      this.observedAt + r.leaseDurationSeconds * 1000 > now
    ) {
      return false;
    }
    if (r.holderIdentity === id) {
      desired.acquireTime = r.acquireTime || desired.acquireTime;
      desired.leaseTransitions = r.leaseTransitions;
    } else {
      desired.leaseTransitions = r.leaseTransitions + 1;
    }
    try {
      this.observe(await this.lock.update(desired, current.resourceVersion, signal));
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }

  /** Hands the lease back: an empty holder that any candidate may take at once. True once done. */
  private async release(): Promise<boolean> {
    const o = this.observed;
    if (!o || o.record.holderIdentity !== this.config.identity) return false;
    const now = this.clock.now();
    // The caller's signal has aborted by now; the release gets its own bound.
    const { signal, cancel } = timeoutSignal(this.clock, this.config.renewDeadlineMs);
    try {
      this.observe(
        await this.lock.update(
          {
            holderIdentity: '',
            leaseDurationSeconds: 1,
            acquireTime: microTime(now),
            renewTime: microTime(now),
            leaseTransitions: o.record.leaseTransitions,
          },
          o.resourceVersion,
          signal,
        ),
      );
      this.log.info('released the leader lease');
      return true;
    } catch (err) {
      this.log.warn({ err }, 'could not release the leader lease; it expires on its own');
      return false;
    } finally {
      cancel();
    }
  }

  private observe(o: ObservedLease): void {
    const prev = this.observed?.record;
    const r = o.record;
    const changed =
      !prev ||
      prev.holderIdentity !== r.holderIdentity ||
      prev.renewTime !== r.renewTime ||
      prev.acquireTime !== r.acquireTime ||
      prev.leaseTransitions !== r.leaseTransitions ||
      prev.leaseDurationSeconds !== r.leaseDurationSeconds;
    this.observed = o;
    if (changed) this.observedAt = this.clock.now();
    if (r.holderIdentity && r.holderIdentity !== this.reportedLeader) {
      this.reportedLeader = r.holderIdentity;
      this.log.info({ leader: r.holderIdentity }, 'new leader observed');
      try {
        this.callbacks.onNewLeader?.(r.holderIdentity);
      } catch (err) {
        this.log.error({ err }, 'onNewLeader threw');
      }
    }
  }
}
