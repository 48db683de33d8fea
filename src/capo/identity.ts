/**
 * identityRef → OpenStack client, as CAPO's scope cache (`--scope-cache-max-size`, PR #1688) does it.
 *
 * An identityRef names either a Secret in the object's namespace or a cluster-scoped
 * OpenStackClusterIdentity that lends a Secret of another namespace to the namespaces its
 * `namespaceSelector` allows. The Secret holds `clouds.yaml` (required) and `cacert` (optional, PEM).
 *
 * One client per (Secret content digest, cloudName, region), kept in a small LRU: a reconcile of the
 * same identity reuses the client, so the Keystone token (cached process-wide by auth request) is
 * asked for once, not once per reconcile (CAPO #1647). The digest is over the Secret's content, so a
 * rotated Secret yields a new client on the next reconcile while the old one finishes its calls.
 *
 * Each `scopeFor` is a lease: the caller releases it when its reconcile is done with the client. A
 * client evicted from the LRU (more identities than `--scope-cache-max-size`) or replaced by a
 * rotation is closed, connection pool and all, as soon as no lease holds it, so however many
 * identities pass through, at most `maxSize` idle pools stay open.
 *
 * Secrets are read with the reader given, which should not cache them (see ScopeCacheOptions): no
 * Secret is kept in memory beyond one read, as upstream CAPO disables its cache for Secrets. With
 * `secretVersion` (a metadata-only cache of Secrets: resourceVersions, never contents), an identity
 * Secret whose resourceVersion has not moved since it was read is not read again: its client is
 * reused. CAPO reads it on every reconcile (13 GETs per machine created); a rotated Secret changes
 * its resourceVersion, and the first reconcile after the watch brings that change reads it.
 */
import { createHash } from 'node:crypto';
import type { V1Namespace, V1Secret } from '@kubernetes/client-node';
import { ConfigError, type ConfigProblem } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import { redactText } from '../lib/redact.ts';
import {
  isNotFound,
  kinds,
  matchesLabelSelector,
  type KubeClient,
  type KubernetesObject,
  type LabelSelector,
  type ObjectKey,
  type ResourceType,
} from '../kube/index.ts';
import { OpenStackClient, type OpenStackClientOptions } from '../openstack/client.ts';
import { DEFAULT_CONCURRENCY } from '../openstack/core/transport.ts';
import { AuthenticationError } from '../openstack/core/errors.ts';
import { loadCloudsYamlText } from '../openstack/config/clouds-yaml.ts';
import type { CloudConfig } from '../openstack/config/types.ts';
import { capoKinds, type IdentityRef, type OpenStackClusterIdentity } from './api/index.ts';

export const DEFAULT_SCOPE_CACHE_MAX_SIZE = 10;

/**
 * Calls in flight per OpenStack service for one identity's client (the transport's limit, 16 by
 * default): one for each worker that may call at once, so a worker never waits for another's call
 * (gophercloud sets no bound at all). With 50 server workers and 16 slots, a call waited 42 ms on
 * average for a slot, Nova's create holding one 0.4 s.
 */
export function clientConcurrency(workers: number): number {
  return Math.max(DEFAULT_CONCURRENCY, workers);
}
export const CLOUDS_YAML_KEY = 'clouds.yaml';
export const CACERT_KEY = 'cacert';

export type IdentityErrorReason =
  | 'IdentityNotFound'
  | 'IdentityInvalid'
  | 'IdentityNotAllowed'
  /** Keystone refused the credentials (wrong password, unknown user or project, expired credential). */
  | 'OpenStackAuthenticationFailed';

/**
 * Why an identityRef gives no client. `message` and `fix` are meant for a condition message and a
 * Warning Event; neither carries a credential.
 */
export class IdentityError extends Error {
  override readonly name = 'IdentityError';
  readonly reason: IdentityErrorReason;
  readonly fix: string;

  constructor(reason: IdentityErrorReason, message: string, fix: string) {
    super(redactText(message));
    this.reason = reason;
    this.fix = redactText(fix);
  }

  static is(err: unknown): err is IdentityError {
    return (
      err instanceof Error && err.name === 'IdentityError' && typeof (err as IdentityError).fix === 'string'
    );
  }
}

/**
 * Reads objects, undefined when absent: the manager's CachedClient fits as is; `apiReader` adapts a
 * KubeClient (no cache, for tools and tests).
 */
export interface ObjectReader {
  get<T extends KubernetesObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    opts?: { signal?: AbortSignal | undefined },
  ): Promise<T | undefined>;
}

export function apiReader(api: KubeClient): ObjectReader {
  return {
    async get(type, key, opts = {}) {
      try {
        return await api.get(type, key, { signal: opts.signal });
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
  };
}

/** What a client was built from, and what a controller reports about it. */
interface BuiltScope {
  client: OpenStackClient;
  /** The config the client was built from (after the identityRef's region override). */
  config: CloudConfig;
  cloudName: string;
  /** The identityRef's region, else clouds.yaml's; part of a machine's providerID. */
  region: string | undefined;
  /** Where the credentials came from, e.g. `Secret ns/name` (for messages). */
  source: string;
}

/**
 * A working identity, leased: the client stays open until `release()` (call it once the reconcile
 * is done with the client, in a `finally`; calling it again does nothing).
 */
export interface Scope extends BuiltScope {
  release(): void;
}

export interface ScopeCacheOptions {
  /**
   * Reads OpenStackClusterIdentities, Namespaces and Secrets. It should not cache Secrets: the
   * manager's client with `CAPO_UNCACHED_KINDS` (src/capo/cache.ts), or `apiReader`.
   */
  reader: ObjectReader;
  /** CAPO's `--scope-cache-max-size`; default 10. */
  maxSize?: number;
  /** Passed to every client built (registry, log, retry, token cache, …). */
  client?: Omit<OpenStackClientOptions, 'signal'>;
  log?: Logger;
  /**
   * The CA bundle (PEM) for a Secret without `cacert`, read each time one is used: the Machine
   * API's `openshift-config/cloud-provider-config` key `ca-bundle.pem` (MAPO's fallback). Undefined
   * or resolving to undefined: the system's trust store.
   */
  caFallback?: (signal: AbortSignal | undefined) => Promise<string | undefined>;
  /**
   * The resourceVersion of a Secret as a metadata-only cache holds it, undefined while it is not
   * there (not synced, or absent). An identity Secret (identityRef type Secret) read before whose
   * version has not changed is not read again. Not used with `caFallback`, whose CA is read anew.
   */
  secretVersion?: (key: ObjectKey) => string | undefined;
}

export interface ScopeRequest {
  /** The namespace of the object whose identityRef this is. */
  namespace: string;
  identityRef: IdentityRef;
  signal?: AbortSignal | undefined;
}

interface Credentials {
  cloudsYaml: string;
  caPem: string | undefined;
  /** `Secret ns/name`, or `Secret ns/name (OpenStackClusterIdentity x)`. */
  source: string;
  /** The Secret's, as read. */
  resourceVersion: string | undefined;
}

/** One client in the cache, and the leases on it. */
interface Entry {
  scope: Promise<BuiltScope>;
  /** Leases not released yet. */
  users: number;
  /** Out of the cache (evicted, replaced, failed, or the cache closed): closed once unused. */
  retired: boolean;
}

export class ScopeCache {
  readonly maxSize: number;
  private readonly reader: ObjectReader;
  private readonly clientOptions: Omit<OpenStackClientOptions, 'signal'>;
  private readonly log: Logger | undefined;
  private readonly caFallback: ScopeCacheOptions['caFallback'];
  /** In LRU order, oldest first: a hit moves its entry to the end. */
  private readonly entries = new Map<string, Entry>();
  /** identity (kind, namespace, name, cloud, region) → the entry key its current content maps to. */
  private readonly current = new Map<string, string>();
  /** Clients built and not closed: the cached ones, and retired ones still leased. */
  private readonly open = new Set<OpenStackClient>();
  private readonly secretVersion: ScopeCacheOptions['secretVersion'];
  /** identity → the resourceVersion of its Secret when last read, and the entry key it gave. */
  private readonly readAt = new Map<string, { resourceVersion: string; key: string }>();

  constructor(opts: ScopeCacheOptions) {
    const max = opts.maxSize ?? DEFAULT_SCOPE_CACHE_MAX_SIZE;
    if (!Number.isInteger(max) || max < 1) throw new Error(`scope cache size must be ≥ 1, got ${max}`);
    this.maxSize = max;
    this.reader = opts.reader;
    this.clientOptions = opts.client ?? {};
    this.log = opts.log;
    this.caFallback = opts.caFallback;
    this.secretVersion = opts.caFallback ? undefined : opts.secretVersion;
  }

  /** Clients cached now. */
  get size(): number {
    return this.entries.size;
  }

  /** Clients with an open connection pool: at most `maxSize`, plus evicted ones a reconcile still holds. */
  get openClients(): number {
    return this.open.size;
  }

  /**
   * A lease on the client for an identityRef; throws IdentityError when the identity cannot be
   * used. Release it when done.
   */
  async scopeFor(req: ScopeRequest): Promise<Scope> {
    const { identityRef: ref, namespace, signal } = req;
    const region = ref.region || undefined;
    const identity = JSON.stringify([
      ref.type ?? 'Secret',
      ref.type === 'ClusterIdentity' ? '' : namespace,
      ref.name,
      ref.cloudName,
      region ?? null,
    ]);
    const unchanged = this.unchangedEntry(identity, namespace, ref);
    if (unchanged) return this.lease(unchanged);

    const creds = await this.credentials(namespace, ref, signal);
    const digest = createHash('sha256')
      .update(JSON.stringify([creds.cloudsYaml, creds.caPem ?? null]))
      .digest('hex');
    const key = JSON.stringify([digest, ref.cloudName, region ?? null]);
    if (creds.resourceVersion !== undefined)
      this.readAt.set(identity, { resourceVersion: creds.resourceVersion, key });
    else this.readAt.delete(identity);

    const previous = this.current.get(identity);
    if (previous !== undefined && previous !== key && this.entries.has(previous)) {
      this.log?.info({ identity: creds.source, cloudName: ref.cloudName }, 'credentials changed; new client');
      this.retire(previous);
    }
    this.current.set(identity, key);

    let entry = this.entries.get(key);
    if (entry) {
      this.touch(key, entry);
    } else {
      const built: Entry = { scope: this.build(creds, ref.cloudName, region), users: 0, retired: false };
      entry = built;
      this.entries.set(key, built);
      // A failure is not cached: the next reconcile reads the Secret again.
      built.scope.catch(() => {
        if (this.entries.get(key) === built) this.entries.delete(key);
        built.retired = true;
      });
      while (this.entries.size > this.maxSize) this.retire(this.entries.keys().next().value as string);
    }
    return this.lease(entry);
  }

  /**
   * `scopeFor`, then a Keystone token for the scope's client, so a controller that reports the
   * identity as authenticated has seen Keystone accept it: building a client calls nothing. The
   * token cache makes this free after the first reconcile. Keystone refusing the credentials is an
   * IdentityError (`OpenStackAuthenticationFailed`); a Keystone that does not answer is thrown as
   * it is (the caller's retry, not a user's fix).
   */
  async authenticatedScopeFor(req: ScopeRequest): Promise<Scope> {
    const scope = await this.scopeFor(req);
    try {
      await scope.client.session.token(req.signal);
    } catch (err) {
      scope.release();
      if (!AuthenticationError.is(err)) throw err;
      const status = err.status !== undefined ? ` (${err.status})` : '';
      throw new IdentityError(
        'OpenStackAuthenticationFailed',
        `Keystone at ${err.authUrl} refused the credentials of ${scope.source}, cloud ${scope.cloudName}, for ${err.identity}${status}: ${err.serviceMessage.replace(/\.\s*$/, '')}`,
        `${err.fix.replace(/^Fix:\s*/, '').replace(/\.\s*$/, '')} (${CLOUDS_YAML_KEY} of ${scope.source})`,
      );
    }
    return scope;
  }

  /**
   * The cached entry of an identity Secret whose resourceVersion (in the metadata cache) is the one
   * it was read at, moved to the LRU's end; undefined when it must be read.
   */
  private unchangedEntry(identity: string, namespace: string, ref: IdentityRef): Entry | undefined {
    if (!this.secretVersion || (ref.type ?? 'Secret') !== 'Secret') return undefined;
    const seen = this.readAt.get(identity);
    if (!seen || this.current.get(identity) !== seen.key) return undefined;
    const version = this.secretVersion({ namespace, name: ref.name });
    if (version === undefined || version !== seen.resourceVersion) return undefined;
    const entry = this.entries.get(seen.key);
    if (!entry || entry.retired) return undefined;
    this.touch(seen.key, entry);
    return entry;
  }

  /** Moves an entry to the LRU's end (a Map iterates in insertion order). */
  private touch(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
  }

  /** `fn` with a lease on the identity's client, released when it settles. */
  async use<T>(req: ScopeRequest, fn: (scope: Scope) => Promise<T>): Promise<T> {
    const scope = await this.scopeFor(req);
    try {
      return await fn(scope);
    } finally {
      scope.release();
    }
  }

  /** Closes every client built (at shutdown; a reconcile still using one fails its next call). */
  async close(): Promise<void> {
    for (const entry of this.entries.values()) entry.retired = true;
    this.entries.clear();
    this.current.clear();
    this.readAt.clear();
    const clients = [...this.open];
    this.open.clear();
    await Promise.all(clients.map((c) => c.close()));
  }

  /** Counts a user of the entry until its lease is released (the build may still be running). */
  private async lease(entry: Entry): Promise<Scope> {
    entry.users++;
    let built: BuiltScope;
    try {
      built = await entry.scope;
    } catch (err) {
      entry.users--;
      throw err;
    }
    let released = false;
    return {
      ...built,
      release: () => {
        if (released) return;
        released = true;
        entry.users--;
        if (entry.retired && entry.users === 0) this.closeEntry(built);
      },
    };
  }

  /** Takes an entry out of the cache; its client closes now if unused, else at its last release. */
  private retire(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    entry.retired = true;
    if (entry.users > 0) return;
    // Unused: no lease is waiting on the build either, so the client goes as soon as it exists.
    entry.scope.then((built) => this.closeEntry(built)).catch(() => {});
  }

  private closeEntry(built: BuiltScope): void {
    if (!this.open.delete(built.client)) return;
    built.client
      .close()
      .catch((err: unknown) => this.log?.warn({ err }, 'closing an OpenStack client failed'));
  }

  private async build(
    creds: Credentials,
    cloudName: string,
    region: string | undefined,
  ): Promise<BuiltScope> {
    let config: CloudConfig;
    try {
      const loaded = await loadCloudsYamlText(
        { env: {}, homedir: '/nonexistent', cwd: '/nonexistent' },
        {
          text: creds.cloudsYaml,
          origin: `${creds.source} key ${CLOUDS_YAML_KEY}`,
          cloud: cloudName,
          caPem: creds.caPem,
        },
      );
      config = loaded.config;
      for (const w of loaded.warnings) this.log?.warn({ identity: creds.source }, w);
    } catch (err) {
      if (ConfigError.is(err)) throw invalid(err.problems);
      throw err;
    }
    if (region !== undefined) config = { ...config, regionName: region };
    const client = await OpenStackClient.fromConfig(config, this.clientOptions);
    this.open.add(client);
    return { client, config, cloudName, region: config.regionName, source: creds.source };
  }

  private async credentials(
    namespace: string,
    ref: IdentityRef,
    signal: AbortSignal | undefined,
  ): Promise<Credentials> {
    if ((ref.type ?? 'Secret') === 'Secret') {
      return this.secret({ namespace, name: ref.name }, `Secret ${namespace}/${ref.name}`, signal);
    }
    const identity = await this.reader.get<OpenStackClusterIdentity>(
      capoKinds.OpenStackClusterIdentity,
      { name: ref.name },
      { signal },
    );
    if (!identity) {
      throw new IdentityError(
        'IdentityNotFound',
        `OpenStackClusterIdentity ${ref.name} not found`,
        `create the OpenStackClusterIdentity ${ref.name}, or correct identityRef.name`,
      );
    }
    const secretRef = identity.spec.secretRef;
    if (!secretRef?.name || !secretRef.namespace) {
      throw new IdentityError(
        'IdentityInvalid',
        `OpenStackClusterIdentity ${ref.name} has no spec.secretRef name and namespace`,
        'set spec.secretRef.name and spec.secretRef.namespace',
      );
    }
    const selector: LabelSelector | undefined = identity.spec.namespaceSelector;
    if (selector) {
      const ns = await this.reader.get<V1Namespace>(kinds.Namespace, { name: namespace }, { signal });
      let allowed: boolean;
      try {
        allowed = matchesLabelSelector(selector, ns?.metadata?.labels);
      } catch (err) {
        throw new IdentityError(
          'IdentityInvalid',
          `OpenStackClusterIdentity ${ref.name}: spec.namespaceSelector: ${(err as Error).message}`,
          'use the operators In, NotIn, Exists or DoesNotExist',
        );
      }
      if (!allowed) {
        throw new IdentityError(
          'IdentityNotAllowed',
          `OpenStackClusterIdentity ${ref.name} may not be used from namespace ${namespace}: its spec.namespaceSelector does not match the namespace's labels`,
          `label namespace ${namespace} to match the selector, or widen spec.namespaceSelector of OpenStackClusterIdentity ${ref.name}`,
        );
      }
    }
    return this.secret(
      { namespace: secretRef.namespace, name: secretRef.name },
      `Secret ${secretRef.namespace}/${secretRef.name} (OpenStackClusterIdentity ${ref.name})`,
      signal,
    );
  }

  private async secret(
    key: ObjectKey,
    source: string,
    signal: AbortSignal | undefined,
  ): Promise<Credentials> {
    const secret = await this.reader.get<V1Secret>(kinds.Secret, key, { signal });
    if (!secret) {
      throw new IdentityError(
        'IdentityNotFound',
        `${source} not found`,
        `create the Secret ${key.namespace}/${key.name} with key ${CLOUDS_YAML_KEY}, or correct the identityRef`,
      );
    }
    const cloudsYaml = secretValue(secret, CLOUDS_YAML_KEY);
    if (cloudsYaml === undefined || cloudsYaml.trim() === '') {
      throw new IdentityError(
        'IdentityInvalid',
        `${source} has no key ${CLOUDS_YAML_KEY}` +
          (Object.keys(secret.data ?? {}).length > 0
            ? ` (it has ${Object.keys(secret.data ?? {}).join(', ')})`
            : ''),
        `put the clouds.yaml document under the key ${CLOUDS_YAML_KEY} of Secret ${key.namespace}/${key.name}`,
      );
    }
    const caPem = secretValue(secret, CACERT_KEY) || ((await this.caFallback?.(signal)) ?? undefined);
    return {
      cloudsYaml,
      caPem: caPem || undefined,
      source,
      resourceVersion: secret.metadata?.resourceVersion,
    };
  }
}

/** A Secret's value as text: `data` (base64) as the API server returns it, else `stringData`. */
export function secretValue(secret: V1Secret, key: string): string | undefined {
  const data = secret.data?.[key];
  if (data !== undefined) return Buffer.from(data, 'base64').toString('utf8');
  return secret.stringData?.[key];
}

function invalid(problems: readonly ConfigProblem[]): IdentityError {
  const message = problems
    .map((p) => {
      const where = p.key ? `${p.file}: key "${p.key}"` : p.file;
      const value = p.value === undefined ? '' : ` (value ${JSON.stringify(p.value)})`;
      return `${where}${value}: ${p.problem}`;
    })
    .join('; ');
  return new IdentityError('IdentityInvalid', message, problems.map((p) => p.fix).join('; '));
}
