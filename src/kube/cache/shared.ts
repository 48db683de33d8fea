/**
 * One informer per kind (and selection) for the whole process, shared by every controller and by
 * the cached client, as controller-runtime's cache does: N controllers watching Nodes open one
 * watch and hold one copy of each Node.
 */
import type { Logger } from '../../lib/log.ts';
import type { Registry } from '../../lib/metrics.ts';
import type { KubeClient } from '../client.ts';
import type { Clock } from '../../lib/clock.ts';
import type { KubernetesObject, ResourceType } from '../resource.ts';
import { Informer, type InformerOptions } from './informer.ts';
import type { IndexFunc } from './store.ts';

export interface InformerSelection<T> {
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  indexers?: Readonly<Record<string, IndexFunc<T>>>;
}

export type InformerDefaults = Pick<
  InformerOptions<KubernetesObject>,
  'pageSize' | 'resyncPeriodMs' | 'watchTimeoutSeconds' | 'stalenessMs' | 'backoff' | 'stripManagedFields'
>;

export interface SharedInformersOptions {
  client: KubeClient;
  /** Restricts every informer to one namespace (a namespaced operator). */
  namespace?: string | undefined;
  defaults?: InformerDefaults;
  clock?: Clock;
  log?: Logger;
  registry?: Registry;
}

export class SharedInformers {
  private readonly opts: SharedInformersOptions;
  private readonly informers = new Map<string, Informer<KubernetesObject>>();
  private readonly runs = new Set<Promise<void>>();
  private signal: AbortSignal | undefined;

  constructor(opts: SharedInformersOptions) {
    this.opts = opts;
  }

  /**
   * The informer for a kind and selection, created on first use (and started at once if the
   * factory already runs). Indexers asked for by later users are added to the shared one.
   */
  informerFor<T extends KubernetesObject>(
    type: ResourceType<T>,
    sel: InformerSelection<T> = {},
  ): Informer<T> {
    const namespace = sel.namespace ?? this.opts.namespace;
    const key = [
      type.apiVersion,
      type.plural,
      type.metadataOnly ? 'metadata' : '',
      namespace ?? '',
      sel.labelSelector ?? '',
      sel.fieldSelector ?? '',
    ].join('|');
    let informer = this.informers.get(key) as Informer<T> | undefined;
    if (!informer) {
      informer = new Informer<T>({
        ...this.opts.defaults,
        client: this.opts.client,
        type,
        namespace,
        labelSelector: sel.labelSelector,
        fieldSelector: sel.fieldSelector,
        ...(sel.indexers ? { indexers: sel.indexers } : {}),
        ...(this.opts.clock ? { clock: this.opts.clock } : {}),
        ...(this.opts.log ? { log: this.opts.log.child({ informer: type.plural }) } : {}),
        ...(this.opts.registry ? { registry: this.opts.registry } : {}),
      });
      this.informers.set(key, informer as unknown as Informer<KubernetesObject>);
      if (this.signal) this.run(informer);
    } else {
      for (const [name, fn] of Object.entries(sel.indexers ?? {})) informer.addIndexer(name, fn);
    }
    return informer;
  }

  all(): Informer<KubernetesObject>[] {
    return [...this.informers.values()];
  }

  /** Starts every informer, and those created later; resolves once all have stopped after `signal`. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.signal) throw new Error('shared informers already started');
    this.signal = signal;
    for (const informer of this.informers.values()) this.run(informer);
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
    });
    // Informers created while stopping start and stop at once; wait until none is left running.
    for (let i = 0; i < 10 && this.runs.size > 0; i++) await Promise.all([...this.runs]);
  }

  hasSynced(): boolean {
    for (const i of this.informers.values()) if (!i.hasSynced()) return false;
    return true;
  }

  /** Resolves when every informer created so far has its first list. */
  async waitForSync(signal?: AbortSignal): Promise<void> {
    await Promise.all([...this.informers.values()].map((i) => i.waitForSync(signal)));
  }

  private run(informer: { start(signal: AbortSignal): Promise<void> }): void {
    const signal = this.signal;
    if (!signal) return;
    const p = informer.start(signal).finally(() => this.runs.delete(p));
    this.runs.add(p);
  }
}
