/**
 * The client reconcilers use (controller-runtime's default client): reads come from the shared
 * informers' caches, writes go to the API server. A cached read is cheap and consistent with what
 * woke the reconcile, but may lag the reconcile's own last write by a moment: write with
 * optimistic concurrency (resourceVersion) and deterministic names, and read through `api` for the
 * rare read that must be fresh.
 *
 * Cached objects are frozen and shared: `clone` one before changing it.
 *
 * Kinds in `disableFor` (controller-runtime's `CacheOptions.DisableFor`) are read from the API
 * server on every call and never cached: Secrets, so no credential or bootstrap data stays in
 * memory, nor is every Secret of the cluster listed and watched for the few a controller reads.
 */
import type { DeleteOptions, KubeClient, PatchOptions, PatchType, WriteOptions } from './client.ts';
import type { SharedInformers } from './cache/shared.ts';
import { NAMESPACE_INDEX } from './cache/indexers.ts';
import { isNotFound } from './errors.ts';
import { keyString, type KubernetesObject, type ObjectKey, type ResourceType } from './resource.ts';
import { labelSelectorString, matchesLabelSelector, type LabelSelector } from './selector.ts';

/**
 * Which informer a cached read uses: by default the kind's cluster-wide one; or the informer of a
 * namespaced or label-selected watch (the builder's `namespace`, `labelSelector` source options),
 * so reading what such a watch caches starts no cluster-wide list.
 */
export interface InformerScope {
  namespace?: string | undefined;
  labelSelector?: string | undefined;
}

export interface CachedListOptions {
  namespace?: string | undefined;
  informer?: InformerScope | undefined;
  labelSelector?: LabelSelector | undefined;
  /** Objects of one index value, e.g. `{ name: 'providerID', value: 'openstack:///…' }`. */
  index?: { name: string; value: string } | undefined;
  signal?: AbortSignal | undefined;
}

export class CachedClient {
  /** Direct API access: writes, and reads that must not be served from the cache. */
  readonly api: KubeClient;
  private readonly informers: SharedInformers;
  /** `apiVersion/kind` of the kinds read uncached. */
  private readonly uncached: ReadonlySet<string>;

  constructor(api: KubeClient, informers: SharedInformers, disableFor: readonly ResourceType[] = []) {
    this.api = api;
    this.informers = informers;
    this.uncached = new Set(disableFor.map(kindKey));
  }

  /**
   * The cached object, or undefined if the cache has none. The first read of a kind starts its
   * informer (if the manager runs) and waits for its first list.
   */
  async get<T extends KubernetesObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    opts: { signal?: AbortSignal | undefined; informer?: InformerScope | undefined } = {},
  ): Promise<T | undefined> {
    if (this.uncached.has(kindKey(type))) {
      try {
        return await this.api.get(type, key, { signal: opts.signal });
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    }
    const informer = this.informers.informerFor(type, opts.informer ?? {});
    await informer.waitForSync(opts.signal);
    return informer.get(keyString(type.namespaced ? key : { name: key.name }));
  }

  async list<T extends KubernetesObject>(type: ResourceType<T>, opts: CachedListOptions = {}): Promise<T[]> {
    if (this.uncached.has(kindKey(type))) {
      if (opts.index) throw new Error(`${type.plural} are not cached: no index to list them by`);
      const page = await this.api.listAll(type, {
        namespace: opts.namespace,
        labelSelector: opts.labelSelector ? labelSelectorString(opts.labelSelector) : undefined,
        signal: opts.signal,
      });
      return page.items;
    }
    const informer = this.informers.informerFor(type, opts.informer ?? {});
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

/** A metadata-only view of a kind is not the kind: it may be cached where the kind is not. */
function kindKey(type: ResourceType): string {
  return `${type.apiVersion}/${type.kind}${type.metadataOnly ? '/metadata' : ''}`;
}
