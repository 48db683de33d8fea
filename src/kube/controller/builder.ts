/**
 * The controller builder (controller-runtime's `builder`), so the watch graph reads in one place:
 *
 *   mgr.controller()
 *     .for(kinds.Service, { predicates: [generationChanged()] })
 *     .owns(kinds.EndpointSlice)
 *     .watches(kinds.Node, (node) => servicesOn(node))
 *     .withOptions({ maxConcurrentReconciles: 4 })
 *     .complete(reconciler);
 *
 * Each source gets the shared informer of its kind; events pass the controller-wide filters and
 * the source's predicates, are mapped to requests and queued.
 */
import type { Logger } from '../../lib/log.ts';
import type { Registry } from '../../lib/metrics.ts';
import { byOwnerUid, OWNER_UID_INDEX } from '../cache/indexers.ts';
import type { SharedInformers } from '../cache/shared.ts';
import type { Clock } from '../../lib/clock.ts';
import { requestForObject, requestForOwner, type MapFunc } from '../handler.ts';
import type { Predicate } from '../predicate.ts';
import type { ReconcileFunc, Reconciler } from '../reconcile/types.ts';
import { keyOf, keyString, type KubernetesObject, type ResourceType } from '../resource.ts';
import type { Runnable } from '../runnable.ts';
import { Controller, type ControllerOptions } from './controller.ts';

/** What a builder needs from its manager. */
export interface ControllerHost {
  readonly informers: SharedInformers;
  readonly clock?: Clock | undefined;
  readonly log?: Logger | undefined;
  readonly registry?: Registry | undefined;
  add(runnable: Runnable): void;
}

export interface SourceOptions<T> {
  predicates?: Predicate<T>[];
  /**
   * Watch one namespace only, with an informer of its own: a controller that reads a kind in a
   * few namespaces (ConfigMaps in openshift-config) needs no cluster-wide list and watch. Read
   * what it caches with `client.get(type, key, { informer: { namespace } })`.
   */
  namespace?: string;
  /** Server-side filters of this source's informer (a separate informer from the unfiltered one). */
  labelSelector?: string;
  fieldSelector?: string;
}

export type BuilderOptions = Pick<
  ControllerOptions,
  | 'maxConcurrentReconciles'
  | 'reconcileTimeoutMs'
  | 'rateLimiter'
  | 'cacheSyncTimeoutMs'
  | 'needLeaderElection'
>;

interface Source {
  type: ResourceType;
  map: MapFunc<KubernetesObject>;
  predicates: Predicate<KubernetesObject>[];
  namespace: string | undefined;
  labelSelector: string | undefined;
  fieldSelector: string | undefined;
  ownerIndex: boolean;
}

export class ControllerBuilder {
  private readonly host: ControllerHost;
  private name: string | undefined;
  private primary: Source | undefined;
  private readonly secondary: Source[] = [];
  private readonly filters: Predicate<KubernetesObject>[] = [];
  private options: BuilderOptions = {};
  private built = false;

  constructor(host: ControllerHost, name?: string) {
    this.host = host;
    this.name = name;
  }

  /** The kind this controller reconciles: each event enqueues the object itself. */
  for<U extends KubernetesObject>(type: ResourceType<U>, opts: SourceOptions<U> = {}): this {
    if (this.primary) throw new Error(`controller ${this.name ?? ''}: for() called twice`);
    this.primary = source(type, requestForObject<U>(), opts, false);
    return this;
  }

  /** A kind this controller creates: each event enqueues the controlling owner of the primary kind. */
  owns<C extends KubernetesObject>(
    type: ResourceType<C>,
    opts: SourceOptions<C> & { onlyController?: boolean } = {},
  ): this {
    const owner = this.primary?.type;
    if (!owner) throw new Error('owns() needs for() first: it maps children to owners of that kind');
    const map = requestForOwner<C>(
      owner,
      opts.onlyController === undefined ? {} : { onlyController: opts.onlyController },
    );
    this.secondary.push(source(type, map, opts, true));
    return this;
  }

  /** Any other kind, mapped to requests by `map` (e.g. Nodes → every LoadBalancer Service). */
  watches<W extends KubernetesObject>(
    type: ResourceType<W>,
    map: MapFunc<W>,
    opts: SourceOptions<W> = {},
  ): this {
    this.secondary.push(source(type, map, opts, false));
    return this;
  }

  /** Predicates applied to every source. */
  withEventFilter(...predicates: Predicate<KubernetesObject>[]): this {
    this.filters.push(...predicates);
    return this;
  }

  withOptions(options: BuilderOptions): this {
    this.options = { ...this.options, ...options };
    return this;
  }

  /** The controller's name (metrics label, log field, leader-migration name); default: the kind, lower case. */
  named(name: string): this {
    this.name = name;
    return this;
  }

  complete(reconciler: Reconciler | ReconcileFunc): Controller {
    if (this.built) throw new Error('complete() called twice');
    const sources = [...(this.primary ? [this.primary] : []), ...this.secondary];
    if (sources.length === 0) throw new Error('a controller needs for() or watches()');
    const name = this.name ?? this.primary?.type.kind.toLowerCase();
    if (!name) throw new Error('a controller without for() needs named()');
    this.built = true;
    const informers = sources.map((s) =>
      this.host.informers.informerFor(s.type, {
        namespace: s.namespace,
        labelSelector: s.labelSelector,
        fieldSelector: s.fieldSelector,
        ...(s.ownerIndex ? { indexers: { [OWNER_UID_INDEX]: byOwnerUid } } : {}),
      }),
    );
    const controller = new Controller({
      ...this.options,
      name,
      reconciler,
      waitForSync: async (signal) => {
        await Promise.all(informers.map((i) => i.waitForSync(signal)));
      },
      ...(this.host.clock ? { clock: this.host.clock } : {}),
      ...(this.host.log ? { log: this.host.log } : {}),
      ...(this.host.registry ? { registry: this.host.registry } : {}),
    });
    const log = this.host.log?.child({ controller: name });
    sources.forEach((s, i) => {
      const pass = [...this.filters, ...s.predicates];
      // One add per distinct request: a worker waiting in get() takes a key synchronously, so a
      // second add of the same key in the same event would count as a new change.
      const enqueue = (event: string, ...objs: KubernetesObject[]) => {
        const keys = new Set<string>();
        for (const obj of objs) for (const r of s.map(obj)) keys.add(keyString(r));
        for (const key of keys) {
          // Which event woke which key: the question to ask of a controller that reconciles too often.
          if (log?.isLevelEnabled('debug')) {
            log.debug({ key, source: s.type.kind, event, object: keyOf(objs[objs.length - 1]!) }, 'queued');
          }
          controller.queue.add(key);
        }
      };
      informers[i]?.addHandler({
        onAdd: (obj) => {
          if (pass.every((p) => p.create?.(obj) ?? true)) enqueue('create', obj);
        },
        onUpdate: (old, obj) => {
          if (pass.every((p) => p.update?.(old, obj) ?? true)) enqueue('update', old, obj);
        },
        onDelete: (obj) => {
          if (pass.every((p) => p.delete?.(obj) ?? true)) enqueue('delete', obj);
        },
      });
    });
    this.host.add(controller);
    return controller;
  }
}

function source<U extends KubernetesObject>(
  type: ResourceType<U>,
  map: MapFunc<U>,
  opts: SourceOptions<U>,
  ownerIndex: boolean,
): Source {
  return {
    type: type,
    map: map as MapFunc<KubernetesObject>,
    predicates: opts.predicates ?? [],
    namespace: opts.namespace,
    labelSelector: opts.labelSelector,
    fieldSelector: opts.fieldSelector,
    ownerIndex,
  };
}
