/**
 * The manager: one per process. It owns the API client (with its QPS/burst limit), the shared
 * informers, the cached client, the Event recorder, the health server and leader election, and
 * runs controllers and other runnables in controller-runtime's order:
 *
 *   health server → informers → runnables that need no leader → [leader lease] → controllers
 *   → [migration lease, KEP-2436] → migrated controllers
 *
 * Stopping (the `signal` of `start`, e.g. SIGTERM) is graceful: runnables stop taking work, those
 * in flight get until `gracefulShutdownTimeoutMs`, then their signals abort; only then is the
 * lease released, so a successor never overlaps with our last writes; then informers, Events and
 * the health server stop. A runnable still running after that (it ignored its signals) keeps the
 * lease from being released — it expires instead — and `start` rejects with
 * `ShutdownIncompleteError`: the process must exit to end that work. Losing a lease is fail-stop:
 * everything aborts at once and `start` rejects with `LeaderElectionLostError`, and the process
 * should exit (a new leader starts clean). Leader election runs on a client of its own, so the
 * controllers' queued calls never delay a renewal.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  startHealthServer,
  type HealthServer,
  type HealthServerOptions,
  type RequestGuard,
} from '../../lib/health-server.ts';
import type { ServingCert } from '../../lib/tls-cert.ts';
import { createLogger, type Logger } from '../../lib/log.ts';
import { createRegistry, type Registry } from '../../lib/metrics.ts';
import { SharedInformers, type InformerDefaults } from '../cache/shared.ts';
import { CachedClient } from '../cached-client.ts';
import { KubeClient } from '../client.ts';
import { abortReason, systemClock, type Clock } from '../../lib/clock.ts';
import { ControllerBuilder, type ControllerHost } from '../controller/builder.ts';
import { toError } from '../errors.ts';
import { EventRecorder, type EventApi } from '../events.ts';
import {
  LeaderElectionLostError,
  LeaderElector,
  validateLeaderElectionConfig,
  type LeaderElectionConfig,
} from '../leaderelection/elector.ts';
import { leaderMigrationFilter, type LeaderMigrationConfiguration } from '../leaderelection/migration.ts';
import type { Runnable } from '../runnable.ts';
import type { ResourceType } from '../resource.ts';

export interface ManagerLeaderElection extends Partial<LeaderElectionConfig> {
  /** Default: the manager's name. */
  leaseName?: string;
  /** Default: kube-system. */
  leaseNamespace?: string;
}

/** Where and how one of the manager's HTTP servers listens. */
export interface ServingOptions {
  port: number;
  host?: string;
  /** HTTPS with this certificate; plain HTTP without. */
  tls?: ServingCert;
  /** Authentication and authorization of every request (`delegatedAuth`); none lets everyone in. */
  guard?: RequestGuard;
}

export interface ManagerOptions {
  /** The component's name: Event reporter, default lease name, log field. */
  name: string;
  /** Where the cluster is; or an existing client. */
  kubeConfig?: KubeConfig;
  client?: KubeClient;
  /** Client QPS/burst (20/30 by default). */
  qps?: number;
  burst?: number;
  /** Restrict every cache to one namespace. */
  namespace?: string;
  informers?: InformerDefaults;
  /**
   * Kinds `client` reads from the API server, never from a cache (controller-runtime's
   * `CacheOptions.DisableFor`): Secrets, so credentials are not kept in memory.
   */
  disableCacheFor?: readonly ResourceType[];
  /** Serve /healthz, /readyz and (unless `metrics: false`) /metrics here; none when absent. */
  healthProbe?: ServingOptions & { metrics?: boolean; paths?: HealthServerOptions['paths'] };
  /** Serve /metrics alone here (controller-runtime's metrics server); none when absent. */
  metricsServer?: ServingOptions;
  /** Campaign for a Lease before running controllers; off when absent. */
  leaderElection?: ManagerLeaderElection;
  /** KEP-2436: which of this component's controllers run under the migration lease. */
  leaderMigration?: { config: LeaderMigrationConfiguration; component: string };
  /** How long in-flight work may take after a stop is asked for (default 30 s). */
  gracefulShutdownTimeoutMs?: number;
  events?: { api?: EventApi };
  log?: Logger;
  registry?: Registry;
  clock?: Clock;
}

interface Entry {
  runnable: Runnable;
  promise?: Promise<void>;
  /** Its `start` has settled: it can write no more. */
  done?: boolean;
}

/**
 * `start` ended with runnables still running (they ignored even the hard stop). The lease was not
 * released; the caller must end the process, or their writes go on past the lease's expiry.
 */
export class ShutdownIncompleteError extends Error {
  override readonly name = 'ShutdownIncompleteError';
  static is(err: unknown): err is ShutdownIncompleteError {
    return err instanceof Error && err.name === 'ShutdownIncompleteError';
  }
}

const DEFAULT_GRACEFUL_SHUTDOWN_MS = 30_000;
/** After the hard stop, how long we still wait for runnables that ignore their signal. */
const HARD_STOP_GRACE_MS = 5_000;

export class Manager implements ControllerHost {
  readonly name: string;
  readonly api: KubeClient;
  readonly client: CachedClient;
  readonly informers: SharedInformers;
  readonly events: EventRecorder;
  readonly log: Logger;
  readonly registry: Registry;
  readonly clock: Clock;
  /** The health server's URL once started. */
  healthUrl: string | undefined;
  /** The metrics server's URL once started. */
  metricsUrl: string | undefined;
  private readonly opts: ManagerOptions;
  private readonly leaseConfig: LeaderElectionConfig | undefined;
  /** Leader election's own client: its rate limiter never has the controllers' writes in front of a renewal. */
  private readonly electionClient: KubeClient | undefined;
  /** The Events' own client, when this manager built its client (see the constructor). */
  private readonly eventsClient: KubeClient | undefined;
  private readonly runnables: Entry[] = [];
  private readonly names = new Set<string>();
  private started = false;
  private fatal: Error | undefined;
  private readonly leading = new Set<string>();

  constructor(opts: ManagerOptions) {
    this.opts = opts;
    this.name = opts.name;
    this.log = (opts.log ?? createLogger({ level: 'silent' })).child({ manager: opts.name });
    this.registry = opts.registry ?? createRegistry({ defaultMetrics: false });
    this.clock = opts.clock ?? systemClock;
    if (opts.client) this.api = opts.client;
    else if (opts.kubeConfig) {
      this.api = new KubeClient(opts.kubeConfig, {
        userAgent: `shiftstack-${opts.name}`,
        fieldManager: opts.name,
        registry: this.registry,
        log: this.log,
        clock: this.clock,
        ...(opts.qps !== undefined ? { qps: opts.qps } : {}),
        ...(opts.burst !== undefined ? { burst: opts.burst } : {}),
      });
    } else throw new Error('a manager needs kubeConfig or client');
    this.informers = new SharedInformers({
      client: this.api,
      namespace: opts.namespace,
      ...(opts.informers ? { defaults: opts.informers } : {}),
      clock: this.clock,
      log: this.log,
      registry: this.registry,
    });
    this.client = new CachedClient(this.api, this.informers, opts.disableCacheFor);
    // Events get a rate limiter of their own, as controller-runtime's recorder provider and
    // kube-controller-manager's per-controller clients give them: a thousand Services' Events would
    // otherwise take a third of the controllers' budget, and queue their status writes behind them.
    this.eventsClient = opts.client
      ? undefined
      : this.api.fork({ userAgent: `${this.api.userAgent}/events` });
    this.events = new EventRecorder({
      client: this.eventsClient ?? this.api,
      component: opts.name,
      clock: this.clock,
      log: this.log,
      ...(opts.events?.api ? { api: opts.events.api } : {}),
    });
    if (opts.leaderElection) {
      this.leaseConfig = validateLeaderElectionConfig({
        leaseName: opts.name,
        leaseNamespace: 'kube-system',
        identity: `${hostname()}_${randomUUID()}`,
        ...opts.leaderElection,
      });
      // As controller-runtime builds a separate client for leader election: a few hundred queued
      // controller or Event calls would otherwise push a renewal past the renew deadline.
      this.electionClient = this.api.fork({ userAgent: `${this.api.userAgent}/leader-election` });
    } else if (opts.leaderMigration) {
      throw new Error('leader migration needs leader election: set leaderElection');
    }
  }

  /** A controller builder bound to this manager. */
  controller(name?: string): ControllerBuilder {
    return new ControllerBuilder(this, name);
  }

  /** Adds a runnable (controllers add themselves through the builder). */
  add(runnable: Runnable): void {
    if (this.started) throw new Error(`cannot add ${runnable.name}: the manager has started`);
    if (this.names.has(runnable.name)) throw new Error(`a runnable named ${runnable.name} exists already`);
    this.names.add(runnable.name);
    this.runnables.push({ runnable });
  }

  /** This process's identity in leader election. */
  get identity(): string | undefined {
    return this.leaseConfig?.identity;
  }

  /** True while holding the main lease (always true without leader election, once started). */
  isLeader(): boolean {
    return this.leaseConfig ? this.leading.has('main') : this.started;
  }

  /** Runs until `signal` aborts (graceful) or a lease is lost / a runnable fails (rejects). */
  async start(signal: AbortSignal): Promise<void> {
    if (this.started) throw new Error('a manager starts once');
    this.started = true;
    const fatalStop = new AbortController();
    const informersStop = new AbortController();
    const runnablesStop = new AbortController();
    const electionsStop = new AbortController();
    const hardStop = new AbortController();
    const fail = (err: Error, immediate: boolean) => {
      this.fatal ??= err;
      if (immediate) hardStop.abort(err);
      fatalStop.abort(err);
    };

    let health: HealthServer | undefined;
    if (this.opts.healthProbe) {
      health = await startHealthServer({
        ...serving(this.opts.healthProbe),
        serve: { metrics: this.opts.healthProbe.metrics ?? true, health: true },
        ...(this.opts.healthProbe.paths ? { paths: this.opts.healthProbe.paths } : {}),
        registry: this.registry,
        log: this.log,
        healthz: [{ name: 'ping', check: () => {} }],
        readyz: [
          {
            name: 'informer-sync',
            check: () => {
              const pending = this.informers.all().filter((i) => !i.hasSynced());
              if (pending.length > 0)
                throw new Error(`not synced: ${pending.map((i) => i.type.plural).join(', ')}`);
            },
          },
        ],
      });
      this.healthUrl = health.url;
    }
    let metrics: HealthServer | undefined;
    if (this.opts.metricsServer) {
      try {
        metrics = await startHealthServer({
          ...serving(this.opts.metricsServer),
          serve: { metrics: true, health: false },
          registry: this.registry,
          log: this.log,
        });
      } catch (err) {
        // A taken port: nothing of ours stays open.
        await health?.close();
        throw err;
      }
      this.metricsUrl = metrics.url;
    }

    const informersDone = this.informers.start(informersStop.signal);
    const launch = (entries: Entry[], stop: AbortSignal) => {
      // A lease won while stopping starts nothing.
      if (stop.aborted) return;
      for (const e of entries) {
        e.promise = e.runnable
          .start(stop, { hardStop: hardStop.signal })
          .catch((err: unknown) => {
            const e2 = toError(err);
            this.log.error({ err: e2, runnable: e.runnable.name }, 'runnable failed; stopping the manager');
            fail(e2, false);
          })
          .finally(() => (e.done = true));
      }
    };

    const always = this.runnables.filter((e) => e.runnable.needLeaderElection === false);
    const leaderOnly = this.runnables.filter((e) => e.runnable.needLeaderElection !== false);
    launch(always, runnablesStop.signal);

    const stillRunning = () => this.runnables.filter((e) => e.promise && !e.done).map((e) => e.runnable.name);
    const elections: Promise<void>[] = [];
    if (!this.leaseConfig) {
      launch(leaderOnly, runnablesStop.signal);
    } else {
      const filter = this.opts.leaderMigration
        ? leaderMigrationFilter(this.opts.leaderMigration.config, this.opts.leaderMigration.component)
        : () => 'nonMigrated' as const;
      const main = leaderOnly.filter((e) => filter(e.runnable.name) === 'nonMigrated');
      const migrated = leaderOnly.filter((e) => filter(e.runnable.name) === 'migrated');
      for (const e of leaderOnly.filter((x) => filter(x.runnable.name) === 'unowned')) {
        this.log.info(
          { runnable: e.runnable.name },
          'not run here: leader migration assigns it to another component',
        );
      }
      const campaign = (id: string, config: LeaderElectionConfig, entries: Entry[], then?: () => void) => {
        const elector = new LeaderElector({
          client: this.electionClient ?? this.api,
          config,
          clock: this.clock,
          log: this.log,
          registry: this.registry,
          callbacks: {
            onStartedLeading: () => {
              this.leading.add(id);
              launch(entries, runnablesStop.signal);
              then?.();
            },
            onStoppedLeading: () => this.leading.delete(id),
          },
        });
        elections.push(
          elector
            .run(electionsStop.signal, { mayRelease: () => stillRunning().length === 0 })
            .then((outcome) => {
              if (outcome === 'lost')
                fail(
                  new LeaderElectionLostError(`leader election lost: lease ${elector.lock.describe()}`),
                  true,
                );
            }),
        );
      };
      const migration = this.opts.leaderMigration;
      campaign('main', this.leaseConfig, main, () => {
        // Upstream's MigrationReady: the migration lease is sought only once the main lease is held.
        if (migration) {
          campaign(
            'migration',
            { ...this.leaseConfig, leaseName: migration.config.leaderName } as LeaderElectionConfig,
            migrated,
          );
        }
      });
    }

    await new Promise<void>((resolve) => {
      const done = () => resolve();
      if (signal.aborted || fatalStop.signal.aborted) return resolve();
      signal.addEventListener('abort', done, { once: true });
      fatalStop.signal.addEventListener('abort', done, { once: true });
    });
    this.log.info({ reason: (this.fatal ?? abortReason(signal)).message }, 'stopping');

    // 1. Stop taking work; give in-flight work until the deadline.
    runnablesStop.abort(this.fatal ?? abortReason(signal));
    const deadlineMs = this.opts.gracefulShutdownTimeoutMs ?? DEFAULT_GRACEFUL_SHUTDOWN_MS;
    const cancelDeadline = this.clock.setTimer(deadlineMs, () => {
      this.log.warn({ deadlineMs }, 'graceful shutdown deadline passed; aborting work in flight');
      hardStop.abort(new Error(`graceful shutdown exceeded ${deadlineMs} ms`));
    });
    const runnablesDone = Promise.all(this.runnables.flatMap((e) => (e.promise ? [e.promise] : [])));
    // After the hard stop, a runnable that ignores its signal gets a short grace, then is left behind.
    let cancelGrace = () => {};
    await Promise.race([
      runnablesDone,
      new Promise<void>((resolve) => {
        const graceThenGo = () => (cancelGrace = this.clock.setTimer(HARD_STOP_GRACE_MS, resolve));
        if (hardStop.signal.aborted) graceThenGo();
        else hardStop.signal.addEventListener('abort', graceThenGo, { once: true });
      }),
    ]);
    cancelGrace();
    cancelDeadline();
    // 2. Only now hand the lease over, and only if nothing of ours can still write: a runnable
    // that ignored even the hard stop keeps the lease from being released (it expires on its
    // own), and the process must exit so that its writes end before a successor's begin.
    const stuck = stillRunning();
    if (stuck.length > 0) {
      this.log.error(
        { runnables: stuck, graceMs: HARD_STOP_GRACE_MS },
        'runnables still running after the hard stop; the lease is left to expire, not released',
      );
    }
    electionsStop.abort(new Error('manager stopped'));
    await Promise.all(elections);
    // 3. Then the rest.
    await this.within(Math.min(deadlineMs, 5_000), this.events.flush());
    this.events.close();
    informersStop.abort(new Error('manager stopped'));
    await informersDone;
    await health?.close();
    await metrics?.close();
    if (!this.opts.client) await this.api.close();
    await this.eventsClient?.close();
    await this.electionClient?.close();
    this.log.info('stopped');
    if (this.fatal) throw this.fatal;
    if (stuck.length > 0) {
      throw new ShutdownIncompleteError(
        `runnables did not stop within ${deadlineMs} ms plus ${HARD_STOP_GRACE_MS} ms after their hard stop: ${stuck.join(', ')}; exit the process to end them`,
      );
    }
  }

  /** Waits for `p`, at most `ms` (its timer never outlives the wait). */
  private async within(ms: number, p: Promise<void>): Promise<void> {
    let cancel = () => {};
    await Promise.race([p, new Promise<void>((resolve) => (cancel = this.clock.setTimer(ms, resolve)))]);
    cancel();
  }
}

function serving(o: ServingOptions) {
  return {
    port: o.port,
    // '' is every address (`--health-addr=:9440`), not the loopback default.
    ...(o.host !== undefined ? { host: o.host } : {}),
    ...(o.tls ? { tls: o.tls } : {}),
    ...(o.guard ? { guard: o.guard } : {}),
  };
}
