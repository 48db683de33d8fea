/**
 * The client reconcilers use (controller-runtime's default client): reads come from the shared
 * informers' caches, writes go to the API server. A cached read is cheap and consistent with what
 * woke the reconcile, but may lag the reconcile's own last write by a moment: write with
 * optimistic concurrency (resourceVersion) and deterministic names, and read through `api` for the
 * rare read that must be fresh.
 *
 * Cached objects are frozen and shared: `clone` one before changing it.
 */
import type { DeleteOptions, KubeClient, PatchOptions, PatchType, WriteOptions } from './client.ts';
import type { SharedInformers } from './cache/shared.ts';
import { NAMESPACE_INDEX } from './cache/indexers.ts';
import { keyString, type KubernetesObject, type ObjectKey, type ResourceType } from './resource.ts';
import { matchesLabelSelector, type LabelSelector } from './selector.ts';

export interface CachedListOptions {
  namespace?: string | undefined;
  labelSelector?: LabelSelector | undefined;
  /** Objects of one index value, e.g. `{ name: 'providerID', value: 'openstack:///…' }`. */
  index?: { name: string; value: string } | undefined;
  signal?: AbortSignal | undefined;
}

export class CachedClient {
  /** Direct API access: writes, and reads that must not be served from the cache. */
  readonly api: KubeClient;
  private readonly informers: SharedInformers;

  constructor(api: KubeClient, informers: SharedInformers) {
    this.api = api;
    this.informers = informers;
  }

  /**
   * The cached object, or undefined if the cache has none. The first read of a kind starts its
   * informer (if the manager runs) and waits for its first list.
   */
  async get<T extends KubernetesObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    opts: { signal?: AbortSignal | undefined } = {},
  ): Promise<T | undefined> {
    const informer = this.informers.informerFor(type);
    await informer.waitForSync(opts.signal);
    return informer.get(keyString(type.namespaced ? key : { name: key.name }));
  }

  async list<T extends KubernetesObject>(type: ResourceType<T>, opts: CachedListOptions = {}): Promise<T[]> {
    const informer = this.informers.informerFor(type);
    await informer.waitForSync(opts.signal);
    let items = opts.index
      ? informer.byIndex(opts.index.name, opts.index.value)
      : opts.namespace !== undefined
        ? informer.byIndex(NAMESPACE_INDEX, opts.namespace)
        : informer.list();
    if (opts.index && opts.namespace !== undefined)
      items = items.filter((o) => o.metadata?.namespace === opts.namespace);
    const sel = opts.labelSelector;
    return sel ? items.filter((o) => matchesLabelSelector(sel, o.metadata?.labels)) : items;
  }

  create<T extends KubernetesObject>(type: ResourceType<T>, obj: T, opts?: WriteOptions): Promise<T> {
    return this.api.create(type, obj, opts);
  }

  update<T extends KubernetesObject>(type: ResourceType<T>, obj: T, opts?: WriteOptions): Promise<T> {
    return this.api.update(type, obj, opts);
  }

  updateStatus<T extends KubernetesObject>(type: ResourceType<T>, obj: T, opts?: WriteOptions): Promise<T> {
    return this.api.updateStatus(type, obj, opts);
  }

  patch<T extends KubernetesObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    patchType: PatchType,
    patch: unknown,
    opts?: PatchOptions,
  ): Promise<T> {
    return this.api.patch(type, key, patchType, patch, opts);
  }

  delete<T extends KubernetesObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    opts?: DeleteOptions,
  ): Promise<T | undefined> {
    return this.api.delete(type, key, opts);
  }
}
