/**
 * Kubernetes Events, recorded the way client-go's recorders do:
 *
 * - `reason` is a CamelCase constant (`LoadBalancerPending`, `EnsuredLoadBalancer`), `message` one
 *   human sentence; type `Normal` or `Warning`. A reason that is not CamelCase throws: it is a bug
 *   in the caller, found by its first test.
 * - Repeats are aggregated: the same object, type, reason, action and message within
 *   `aggregationWindowMs` patch the existing Event's count (`series` in events.k8s.io/v1, `count`
 *   and `lastTimestamp` in core v1) instead of creating another object.
 * - Recording never blocks and never fails a reconcile: Events are written in the background,
 *   in order, with a bound on what waits; write failures are logged and dropped.
 *
 * core/v1 is the default, as client-go's `tools/record` writes for upstream OCCM (k8s.io/cloud-provider)
 * and controller-runtime (CAPO): only a core/v1 Event carries `firstTimestamp`, `lastTimestamp`,
 * `count` and `source`, which `kubectl get events --sort-by=.lastTimestamp` and most dashboards
 * read. An events.k8s.io/v1 Event cannot carry them: the API server refuses its
 * `deprecatedFirstTimestamp`, `deprecatedLastTimestamp`, `deprecatedCount` and `deprecatedSource`
 * on create ("needs to be unset") and keeps them immutable on update, and client-go's
 * `tools/events` leaves them empty. And upstream OCCM's RBAC grants Events in the core group
 * only. events.k8s.io/v1 (`api: 'events.k8s.io/v1'`) falls back to core/v1 — once, remembered,
 * with one log line — when the API server forbids it (403) or does not serve it (404), as
 * client-go's `EventBroadcasterAdapter` falls back when discovery lacks it.
 */
import { hostname } from 'node:os';
import { createLogger, type Logger } from '../lib/log.ts';
import type { KubeClient } from './client.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import { isAlreadyExists, isNotFound, KubeApiError } from './errors.ts';
import { kinds, type KubernetesObject, type ResourceType } from './resource.ts';
import { metaTime, microTime } from './time.ts';

export type EventType = 'Normal' | 'Warning';
export type EventApi = 'events.k8s.io/v1' | 'v1';

export interface EventRecorderOptions {
  client: KubeClient;
  /** reportingController / source.component, e.g. `shiftstack.io/ccm`. */
  component: string;
  /** reportingInstance / source.host; the host name by default. */
  instance?: string;
  /** Which Events API to write; core/v1 by default (see above). */
  api?: EventApi;
  /** Repeats closer than this are aggregated (client-go: 10 minutes). */
  aggregationWindowMs?: number;
  /** Aggregation keys remembered (LRU). */
  cacheSize?: number;
  /** Writes waiting beyond this are dropped (and counted). */
  maxPending?: number;
  clock?: Clock;
  log?: Logger;
}

interface Series {
  name: string;
  namespace: string;
  count: number;
  firstMs: number;
  lastMs: number;
  /** A count update is queued and will send the latest count when it runs. */
  patchQueued: boolean;
  created: boolean;
  /** The API the Event was created through; its count updates go there too. */
  api: EventApi;
}

/** Bodies are rendered when written, for the API in use then (a fallback changes it). */
type Job =
  | { kind: 'create'; series: Series; body: (api: EventApi) => Record<string, unknown> }
  | { kind: 'patch'; series: Series };

const REASON = /^[A-Z][A-Za-z0-9]*$/;
/** events.k8s.io/v1 `note` is at most 1 kB. */
const MAX_MESSAGE = 1024;

export class EventRecorder {
  readonly component: string;
  readonly instance: string;
  /** Events not written because too many were waiting. */
  dropped = 0;
  private readonly client: KubeClient;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly windowMs: number;
  private readonly cacheSize: number;
  private readonly maxPending: number;
  private readonly series = new Map<string, Series>();
  private readonly jobs: Job[] = [];
  private pumping: Promise<void> | undefined;
  private readonly stop = new AbortController();
  private currentApi: EventApi;
  /** Stands in for client-go's nanoseconds, so two Events in one millisecond get two names. */
  private seq = 0;

  constructor(opts: EventRecorderOptions) {
    this.client = opts.client;
    this.component = opts.component;
    this.instance = opts.instance ?? hostname();
    this.currentApi = opts.api ?? 'v1';
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log ?? createLogger({ level: 'silent' });
    this.windowMs = opts.aggregationWindowMs ?? 10 * 60_000;
    this.cacheSize = opts.cacheSize ?? 4096;
    this.maxPending = opts.maxPending ?? 1000;
  }

  /** The Events API written to: the one asked for, or core/v1 after a fallback. */
  get api(): EventApi {
    return this.currentApi;
  }

  /** Records an Event about `obj` (a cached object is fine: it is only read). */
  event(obj: KubernetesObject, type: EventType, reason: string, message: string, action?: string): void {
    if (!REASON.test(reason)) throw new TypeError(`event reason ${JSON.stringify(reason)} is not CamelCase`);
    if (this.stop.signal.aborted) return;
    const m = obj.metadata;
    if (!m?.name) throw new TypeError('an Event needs an object with metadata.name');
    const note = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 1)}…` : message;
    const namespace = m.namespace || 'default';
    const key = [m.uid ?? `${obj.kind}/${namespace}/${m.name}`, type, reason, action ?? '', note].join(
      '\u0000',
    );
    const now = this.clock.now();
    const seen = this.series.get(key);
    if (seen && now - seen.lastMs < this.windowMs) {
      seen.count++;
      seen.lastMs = now;
      // Most recently used goes last, so the map's first key is the one to evict.
      this.series.delete(key);
      this.series.set(key, seen);
      if (!seen.patchQueued) {
        seen.patchQueued = true;
        this.enqueue({ kind: 'patch', series: seen });
      }
      return;
    }
    const series: Series = {
      // client-go's naming: the object's name and the time in hex nanoseconds.
      name: `${m.name}.${(BigInt(now) * 1_000_000n + BigInt(this.seq++ % 1_000_000)).toString(16)}`,
      namespace,
      count: 1,
      firstMs: now,
      lastMs: now,
      patchQueued: false,
      created: false,
      api: this.currentApi,
    };
    this.series.delete(key);
    this.series.set(key, series);
    if (this.series.size > this.cacheSize) {
      const oldest = this.series.keys().next();
      if (!oldest.done) this.series.delete(oldest.value);
    }
    this.enqueue({
      kind: 'create',
      series,
      body: (api) => this.createBody(api, obj, series, type, reason, note, action),
    });
  }

  /** Resolves once everything recorded so far is written (or given up). */
  async flush(): Promise<void> {
    while (this.pumping) await this.pumping;
  }

  /** Stops recording; what waits is dropped, the write in progress is aborted. */
  close(): void {
    this.stop.abort(new Error('event recorder closed'));
    this.jobs.length = 0;
  }

  private enqueue(job: Job): void {
    if (this.jobs.length >= this.maxPending) {
      this.dropped++;
      return;
    }
    this.jobs.push(job);
    this.pumping ??= this.pump().finally(() => {
      this.pumping = undefined;
    });
  }

  private async pump(): Promise<void> {
    for (let job = this.jobs.shift(); job; job = this.jobs.shift()) {
      try {
        await this.write(job);
      } catch (err) {
        if (this.stop.signal.aborted) return;
        this.log.warn({ err, event: job.series.name }, 'could not write Event');
      }
    }
  }

  private async write(job: Job): Promise<void> {
    const signal = this.stop.signal;
    const series = job.series;
    if (job.kind === 'create') {
      for (;;) {
        const api = this.currentApi;
        try {
          await this.client.create(eventType(api), job.body(api), { signal });
        } catch (err) {
          if (this.fallBack(err, 'create')) continue;
          if (!isAlreadyExists(err)) throw err;
        }
        series.api = api;
        series.created = true;
        return;
      }
    }
    series.patchQueued = false;
    if (!series.created) return;
    try {
      await this.client.patch(
        eventType(series.api),
        { namespace: series.namespace, name: series.name },
        'merge',
        this.countPatch(series),
        { signal },
      );
    } catch (err) {
      // The Event expired (the API server keeps them an hour) or was deleted, or its API is now
      // refused: the next repeat starts a new one.
      if (!isNotFound(err) && !this.fallBack(err, 'patch')) throw err;
      series.lastMs = Number.NEGATIVE_INFINITY;
    }
  }

  /**
   * Switches to core/v1 for good when events.k8s.io/v1 is forbidden (403) or, on create, not served
   * (a 404 that names no object: a missing namespace names one). True when the caller should go on
   * through core/v1.
   */
  private fallBack(err: unknown, verb: 'create' | 'patch'): boolean {
    if (this.currentApi !== 'events.k8s.io/v1' || !KubeApiError.is(err)) return false;
    const notServed = verb === 'create' && err.code === 404 && !err.status?.details?.name;
    if (err.code !== 403 && !notServed) return false;
    this.currentApi = 'v1';
    this.log.warn(
      { code: err.code, reason: err.reason, error: err.message },
      `events.k8s.io/v1 Events are ${notServed ? 'not served' : 'forbidden'}; falling back to core/v1 Events (RBAC: create and patch on events in the "" group)`,
    );
    return true;
  }

  private countPatch(s: Series): Record<string, unknown> {
    return s.api === 'v1'
      ? { count: s.count, lastTimestamp: metaTime(s.lastMs) }
      : { series: { count: s.count, lastObservedTime: microTime(s.lastMs) } };
  }

  private createBody(
    api: EventApi,
    obj: KubernetesObject,
    s: Series,
    type: EventType,
    reason: string,
    note: string,
    action: string | undefined,
  ): Record<string, unknown> {
    const m = obj.metadata ?? {};
    const ref = {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      name: m.name,
      ...(m.namespace ? { namespace: m.namespace } : {}),
      ...(m.uid ? { uid: m.uid } : {}),
      ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
    };
    if (api === 'v1') {
      const t = metaTime(s.firstMs);
      return {
        metadata: { name: s.name, namespace: s.namespace },
        involvedObject: ref,
        reason,
        message: note,
        type,
        source: { component: this.component, host: this.instance },
        firstTimestamp: t,
        lastTimestamp: t,
        count: 1,
        reportingComponent: this.component,
        reportingInstance: this.instance,
        ...(action ? { action } : {}),
      };
    }
    return {
      metadata: { name: s.name, namespace: s.namespace },
      eventTime: microTime(s.firstMs),
      reportingController: this.component,
      reportingInstance: this.instance,
      // Required by events.k8s.io/v1; the reason is the closest thing when none is given.
      action: action ?? reason,
      reason,
      note,
      type,
      regarding: ref,
    };
  }
}

function eventType(api: EventApi): ResourceType {
  return api === 'v1' ? kinds.Event : kinds.EventsV1Event;
}
