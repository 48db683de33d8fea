/**
 * One emulated Kubernetes API server: registry of served resources, store, generic registry
 * logic, watches, the in-process controllers (GC, namespaces, CRDs), service allocators and
 * reactors. No module-level state: a test creates as many as it likes. The HTTP side lives in
 * server.ts; this class is also usable in-process.
 */
import type { Logger } from 'pino';
import { Auth } from './auth/auth.ts';
import { builtinResources } from './builtins/index.ts';
import { reviewResources } from './builtins/reviews.ts';
import { kubernetesService, ServiceAllocations } from './builtins/services.ts';
import { DEFAULT_VERSION, type VersionInfo } from './discovery.ts';
import { apiErrors } from './errors.ts';
import { WebhookConversions, type ConversionOptions, type ConversionStats } from './conversion.ts';
import { Controllers } from './gc.ts';
import type { Obj } from './json.ts';
import { asString, metaOf } from './json.ts';
import { Reactors } from './reactors.ts';
import { Registry } from './registry.ts';
import { Rest, type DeleteOptions, type ListQuery, type PatchType, type WriteResult } from './rest.ts';
import { Store } from './store.ts';
import { ServiceAccountTokens } from './tokens.ts';
import type { ResourceDef } from './types.ts';
import { WatchHub } from './watch.ts';

export interface KubeEmulatorOptions {
  /** Changes kept for watch resumption and paginated lists; older resourceVersions get 410. */
  historySize?: number;
  /** How often watches that asked for bookmarks get one (the real server: about a minute). */
  bookmarkIntervalMs?: number;
  /**
   * Delay before a terminating namespace's content is deleted (the real namespace controller's
   * discovery and listing take about as long); 0 deletes at once.
   */
  namespaceDeletionDelayMs?: number;
  /** A watch reader this far behind is cut off. */
  watchBufferBytes?: number;
  serviceCIDR?: string;
  nodePortRange?: [number, number];
  version?: VersionInfo;
  /** First resourceVersion minus one (a restart without state continues above the old one). */
  initialRv?: number;
  now?: () => Date;
  log?: Logger;
  /** CRD conversion webhooks: how a `clientConfig.service` is reached, the timeout. */
  conversion?: ConversionOptions;
}

const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];
const MANAGER = 'shiftstack-sim';

export class KubeEmulator {
  readonly registry = new Registry();
  readonly store: Store;
  readonly rest: Rest;
  /** The verbs of CRDs whose conversion strategy is Webhook (asynchronous: they call it). */
  readonly conversions: WebhookConversions;
  readonly watches: WatchHub;
  readonly controllers: Controllers;
  readonly reactors = new Reactors();
  readonly services: ServiceAllocations;
  /** Tokens, RBAC authorization of non-admin requests and their audit record. */
  readonly auth: Auth;
  /** Signs and verifies the JWTs `serviceaccounts/<name>/token` issues (`kubectl create token`). */
  readonly tokens = new ServiceAccountTokens();
  readonly version: VersionInfo;
  readonly log: Logger | undefined;
  readonly now: () => Date;

  constructor(options: KubeEmulatorOptions = {}) {
    this.log = options.log;
    this.now = options.now ?? (() => new Date());
    this.version = options.version ?? DEFAULT_VERSION;
    this.store = new Store({ historySize: options.historySize ?? 10_000, initialRv: options.initialRv ?? 0 });
    this.services = new ServiceAllocations({
      serviceCIDR: options.serviceCIDR ?? '10.96.0.0/12',
      nodePortRange: options.nodePortRange ?? [30000, 32767],
    });
    this.rest = new Rest({
      store: this.store,
      registry: this.registry,
      services: this.services,
      now: this.now,
    });
    this.conversions = new WebhookConversions(
      {
        rest: this.rest,
        store: this.store,
        serviceExists: (namespace, name) =>
          this.rest.getStored(this.resource('v1', 'services'), namespace, name) !== undefined,
      },
      options.conversion,
    );
    const rbac = (resource: string, namespace?: string) =>
      this.rest.list(this.resource('rbac.authorization.k8s.io/v1', resource), namespace, {}).items;
    this.auth = new Auth({
      rbac: { list: rbac },
      tokens: this.tokens,
      now: this.now,
      serviceAccount: (namespace, name) =>
        this.rest.getStored(this.resource('v1', 'serviceaccounts'), namespace, name),
    });
    for (const def of [...builtinResources(), ...reviewResources(this.auth)]) this.registry.add(def);
    this.watches = new WatchHub(this.store, {
      bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
      maxBufferedBytes: options.watchBufferBytes ?? 64 * 1024 * 1024,
    });
    this.controllers = new Controllers({
      store: this.store,
      registry: this.registry,
      rest: this.rest,
      now: this.now,
      namespaceDelayMs: options.namespaceDeletionDelayMs ?? 500,
      ...(this.log ? { log: this.log } : {}),
    });
    this.seed();
  }

  /** What every cluster starts with: the system namespaces and the `kubernetes` service. */
  private seed(): void {
    const ns = this.resource('v1', 'namespaces');
    for (const name of SYSTEM_NAMESPACES) {
      this.rest.create(ns, '', { metadata: { name } }, { manager: 'kube-apiserver' });
    }
    const svc = this.resource('v1', 'services');
    this.rest.create(svc, 'default', kubernetesService(this.services.firstIP(), 6443), {
      manager: 'kube-apiserver',
    });
  }

  /** The served resource for an apiVersion and a plural resource name or kind. */
  resource(apiVersion: string, resourceOrKind: string): ResourceDef {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const def =
      this.registry.get(group, version, resourceOrKind) ?? this.registry.byKind(apiVersion, resourceOrKind);
    if (!def) throw apiErrors.notFound({ group, resource: resourceOrKind }, '');
    return def;
  }

  /* In-process access for tests and the demo wiring. Reactors intercept HTTP requests only. */

  get(apiVersion: string, resource: string, namespace: string, name: string): Obj {
    return this.rest.get(this.resource(apiVersion, resource), namespace, name);
  }

  list(apiVersion: string, resource: string, namespace?: string, query: ListQuery = {}): Obj[] {
    return this.rest.list(this.resource(apiVersion, resource), namespace, query).items;
  }

  create(obj: Obj, opts: { dryRun?: boolean } = {}): Obj {
    const def = this.resource(asString(obj.apiVersion) ?? '', asString(obj.kind) ?? '');
    return this.rest.create(def, asString(metaOf(obj).namespace) ?? '', obj, { manager: MANAGER, ...opts })
      .object;
  }

  update(obj: Obj, subresource = ''): Obj {
    const def = this.resource(asString(obj.apiVersion) ?? '', asString(obj.kind) ?? '');
    const m = metaOf(obj);
    return this.rest.update(def, asString(m.namespace) ?? '', asString(m.name) ?? '', obj, {
      manager: MANAGER,
      subresource,
    }).object;
  }

  patch(
    apiVersion: string,
    resource: string,
    namespace: string,
    name: string,
    type: PatchType,
    patch: unknown,
    opts: { subresource?: string; fieldManager?: string; force?: boolean } = {},
  ): WriteResult {
    const def = this.resource(apiVersion, resource);
    const raw = typeof patch === 'string' ? patch : JSON.stringify(patch);
    return this.rest.patch(def, namespace, name, type, raw, {
      manager: opts.fieldManager ?? MANAGER,
      ...(opts.fieldManager ? { fieldManager: opts.fieldManager } : {}),
      ...(opts.force !== undefined ? { force: opts.force } : {}),
      subresource: opts.subresource ?? '',
    });
  }

  delete(
    apiVersion: string,
    resource: string,
    namespace: string,
    name: string,
    opts: DeleteOptions = {},
  ): Obj {
    return this.rest.delete(this.resource(apiVersion, resource), namespace, name, opts).body;
  }

  /** Forgets all history: every resourceVersion older than now answers 410 Expired. */
  compact(): void {
    this.store.compact();
  }

  /** Waits until the in-process controllers (GC, namespaces, CRDs) have nothing left to do. */
  settle(timeoutMs?: number): Promise<void> {
    return this.controllers.settle(timeoutMs);
  }

  /** Counts for benchmarks and `/metrics`-like inspection. */
  stats(): {
    objects: number;
    watches: number;
    resourceVersion: number;
    conversion: ConversionStats;
    /** Requests served by HTTP version (`1.1`, `2.0`). */
    http: Record<string, number>;
  } {
    let objects = 0;
    for (const d of this.registry.storages()) objects += this.store.count(d.storageKey);
    return {
      objects,
      watches: this.watches.count,
      resourceVersion: this.store.currentRv(),
      conversion: { ...this.conversions.stats },
      http: { ...this.requestsByHttpVersion },
    };
  }

  private readonly requestsByHttpVersion: Record<string, number> = {};

  /** The HTTP server tells each request's version (`1.1`, `2.0`), for `stats().http`. */
  countRequest(httpVersion: string): void {
    this.requestsByHttpVersion[httpVersion] = (this.requestsByHttpVersion[httpVersion] ?? 0) + 1;
  }

  /** Ends watches and controllers; the store stays readable (a restart may reuse it). */
  close(): void {
    this.watches.closeAll();
  }

  dispose(): void {
    this.watches.dispose();
    this.controllers.stop();
  }
}
