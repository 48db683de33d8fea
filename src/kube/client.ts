/**
 * The API client of the runtime: typed CRUD, paged lists and watches over any resource, with
 * client-go's QPS/burst token bucket (20/30 by default) in front of every call and
 * `rest_client_*` metrics.
 *
 * It builds on @kubernetes/client-node's `KubeConfig` for everything about reaching a cluster —
 * kubeconfig loading, in-cluster config, TLS material, bearer tokens, exec and OIDC plugins — and
 * uses its model types. It does not go through client-node's generated API classes: those are one
 * class per kind (a controller runtime needs any kind, CRDs included), take no AbortSignal, and
 * build a new HTTP agent, hence a new TLS connection, for every request. This client keeps one
 * keep-alive dispatcher and asks the KubeConfig for fresh credentials on each request.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { RequestContext } from '@kubernetes/client-node';
import { STATUS_CODES } from 'node:http';
import type { AgentOptions } from 'node:https';
import { Agent, ProxyAgent, request as undiciRequest, type Dispatcher } from 'undici';
import type { Logger } from '../lib/log.ts';
import type { Registry } from '../lib/metrics.ts';
import { abortReason, systemClock, timeoutSignal, type Clock } from '../lib/clock.ts';
import { KubeApiError, type Status } from './errors.ts';
import { counter, histogram, REQUEST_BUCKETS } from './metrics.ts';
import { TokenBucket } from './ratelimit.ts';
import {
  objectKey,
  resourcePath,
  resourceType,
  toPartialObjectMetadata,
  type KubernetesObject,
  type ObjectKey,
  type ResourceType,
} from './resource.ts';

export interface KubeClientOptions {
  /** Requests per second after the burst (client-go's default 20; OpenShift operators often 50). */
  qps?: number;
  burst?: number;
  /** Bound on every call but watches (their end is the server's `timeoutSeconds`). */
  requestTimeoutMs?: number;
  userAgent?: string;
  /** The `fieldManager` of every write that does not name one. */
  fieldManager?: string;
  clock?: Clock;
  /** Where `rest_client_*` metrics go; none without it. */
  registry?: Registry;
  log?: Logger;
}

export interface CallOptions {
  signal?: AbortSignal | undefined;
}

export interface WriteOptions extends CallOptions {
  fieldManager?: string;
  dryRun?: boolean;
}

export interface ListOptions extends CallOptions {
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  limit?: number | undefined;
  continue?: string | undefined;
  resourceVersion?: string | undefined;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan' | undefined;
}

export interface ListPage<T> {
  items: T[];
  resourceVersion: string;
  /** Set when more pages follow. */
  continue: string | undefined;
}

export interface WatchOptions extends CallOptions {
  namespace?: string | undefined;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  resourceVersion?: string | undefined;
  allowWatchBookmarks?: boolean | undefined;
  /** The server ends the watch after this long; the caller resumes from the last resourceVersion. */
  timeoutSeconds?: number | undefined;
}

export type WatchEvent<T> =
  { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T } | { type: 'BOOKMARK'; resourceVersion: string };

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

const PATCH_CONTENT_TYPE: Readonly<Record<PatchType, string>> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

export interface PatchOptions extends WriteOptions {
  subresource?: string;
  /** Server-side apply: take fields other managers own. */
  force?: boolean;
}

export interface DeleteOptions extends CallOptions {
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  gracePeriodSeconds?: number;
  /** Delete only if the object still has this uid / resourceVersion. */
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

/** A JSON Patch operation (RFC 6902). */
export interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

interface RequestInit {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined> | undefined;
  body?: unknown;
  contentType?: string;
  /** Default `application/json`. */
  accept?: string;
  signal?: AbortSignal | undefined;
}

/** A 2xx answer: its body is read by the caller (whole, or as a watch's stream). */
interface KubeResponse {
  status: number;
  body: Dispatcher.ResponseData['body'];
}

/** The whole body as text; an abort while reading is reported as its reason. */
async function readText(
  body: Dispatcher.ResponseData['body'],
  signal: AbortSignal | undefined,
): Promise<string> {
  try {
    return await body.text();
  } catch (err) {
    if (signal?.aborted) throw abortReason(signal);
    throw err;
  }
}

/** What a metadata-only read accepts: PartialObjectMetadata, nothing else. */
const PARTIAL_OBJECT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const PARTIAL_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';

const DEFAULT_QPS = 20;
const DEFAULT_BURST = 30;
const DEFAULT_TIMEOUT_MS = 30_000;

/** Kubernetes API client; one per process, shared by every informer and controller. */
export class KubeClient {
  readonly server: string;
  readonly fieldManager: string;
  /** The QPS/burst limit every call waits on. */
  readonly limiter: TokenBucket;
  private readonly kc: KubeConfig;
  private readonly options: KubeClientOptions;
  readonly userAgent: string;
  private readonly requestTimeoutMs: number;
  private readonly log: Logger | undefined;
  private readonly host: string;
  private readonly clock: Clock;
  private dispatcher: Dispatcher | undefined;
  private dispatcherReady: Promise<void> | undefined;
  private readonly metrics:
    | {
        requests: ReturnType<typeof counter<'code' | 'method' | 'host'>>;
        latency: ReturnType<typeof histogram<'verb' | 'host'>>;
        limiter: ReturnType<typeof histogram<'verb' | 'host'>>;
      }
    | undefined;

  constructor(kubeConfig: KubeConfig, options: KubeClientOptions = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster: set current-context');
    this.kc = kubeConfig;
    this.options = options;
    this.server = cluster.server.replace(/\/+$/, '');
    this.host = new URL(this.server).host;
    this.userAgent = options.userAgent ?? 'shiftstack';
    this.fieldManager = options.fieldManager ?? this.userAgent.split('/')[0] ?? 'shiftstack';
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.log = options.log;
    this.clock = options.clock ?? systemClock;
    this.limiter = new TokenBucket(options.qps ?? DEFAULT_QPS, options.burst ?? DEFAULT_BURST, this.clock);
    this.metrics = options.registry
      ? {
          requests: counter(
            options.registry,
            'rest_client_requests_total',
            'Number of HTTP requests, partitioned by status code, method, and host.',
            ['code', 'method', 'host'],
          ),
          latency: histogram(
            options.registry,
            'rest_client_request_duration_seconds',
            'Request latency in seconds, by verb and host (watches excluded).',
            ['verb', 'host'],
            REQUEST_BUCKETS,
          ),
          limiter: histogram(
            options.registry,
            'rest_client_rate_limiter_duration_seconds',
            'Client-side rate limiter latency in seconds, by verb and host.',
            ['verb', 'host'],
            REQUEST_BUCKETS,
          ),
        }
      : undefined;
  }

  /**
   * A client for the same cluster and credentials with a rate limiter and connection pool of its
   * own (and `overrides` applied): what controller-runtime does for leader election, so that
   * calls that must not wait (a Lease renewal) never queue behind a controller's burst of writes.
   */
  fork(overrides: KubeClientOptions = {}): KubeClient {
    return new KubeClient(this.kc, { ...this.options, ...overrides });
  }

  /* Reads. */

  async get<T extends KubernetesObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    opts: CallOptions = {},
  ): Promise<T> {
    const obj = (await this.request({
      method: 'GET',
      path: resourcePath(type, key),
      ...(type.metadataOnly ? { accept: PARTIAL_OBJECT } : {}),
      signal: opts.signal,
    })) as T;
    return type.metadataOnly ? (toPartialObjectMetadata(obj) as T) : obj;
  }

  /** One page of a list; `listAll` follows continue tokens. */
  async list<T extends KubernetesObject>(
    type: ResourceType<T>,
    opts: ListOptions = {},
  ): Promise<ListPage<T>> {
    const body = (await this.request({
      method: 'GET',
      path: resourcePath(type, { namespace: opts.namespace }),
      query: {
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        limit: opts.limit,
        continue: opts.continue,
        resourceVersion: opts.resourceVersion,
        resourceVersionMatch: opts.resourceVersionMatch,
      },
      ...(type.metadataOnly ? { accept: PARTIAL_LIST } : {}),
      signal: opts.signal,
    })) as { items?: T[]; metadata?: { resourceVersion?: string; continue?: string } };
    const items = type.metadataOnly
      ? (body.items ?? []).map((o) => toPartialObjectMetadata(o) as T)
      : (body.items ?? []);
    // Built-in list items carry no kind/apiVersion; callers (and Events about them) need both.
    for (const item of items) {
      item.apiVersion ??= type.apiVersion;
      item.kind ??= type.kind;
    }
    const cont = body.metadata?.continue;
    return {
      items,
      resourceVersion: body.metadata?.resourceVersion ?? '',
      continue: cont ? cont : undefined,
    };
  }

  /** Every page of a list, `pageSize` items at a time, at one consistent resourceVersion. */
  async listAll<T extends KubernetesObject>(
    type: ResourceType<T>,
    opts: Omit<ListOptions, 'continue' | 'limit'> & { pageSize?: number; maxPages?: number } = {},
  ): Promise<ListPage<T>> {
    const items: T[] = [];
    let cont: string | undefined;
    const maxPages = opts.maxPages ?? 100_000;
    for (let page = 0; page < maxPages; page++) {
      const p = await this.list(type, { ...opts, limit: opts.pageSize ?? 500, continue: cont });
      items.push(...p.items);
      cont = p.continue;
      if (!cont) return { items, resourceVersion: p.resourceVersion, continue: undefined };
    }
    throw new Error(`list of ${type.plural} did not end after ${maxPages} pages`);
  }

  /**
   * A watch as an async iterable of events. It ends when the server ends the stream; an ERROR
   * event (e.g. 410 Expired) is thrown as a KubeApiError; breaking out of the loop or aborting
   * `signal` closes the connection.
   */
  async *watch<T extends KubernetesObject>(
    type: ResourceType<T>,
    opts: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>, void, undefined> {
    const path = resourcePath(type, { namespace: opts.namespace });
    const controller = new AbortController();
    const onAbort = () => controller.abort(abortReason(opts.signal));
    if (opts.signal?.aborted) throw abortReason(opts.signal);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await this.send({
        method: 'GET',
        path,
        query: {
          watch: true,
          labelSelector: opts.labelSelector,
          fieldSelector: opts.fieldSelector,
          resourceVersion: opts.resourceVersion,
          allowWatchBookmarks: opts.allowWatchBookmarks,
          timeoutSeconds: opts.timeoutSeconds,
        },
        ...(type.metadataOnly ? { accept: PARTIAL_OBJECT } : {}),
        signal: controller.signal,
      });
      const decoder = new TextDecoder();
      let buf = '';
      for await (const chunk of res.body) {
        buf += decoder.decode(chunk as Uint8Array, { stream: true });
        let nl = buf.indexOf('\n');
        while (nl >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          nl = buf.indexOf('\n');
          if (!line) continue;
          const event = JSON.parse(line) as { type?: string; object?: unknown };
          switch (event.type) {
            case 'ADDED':
            case 'MODIFIED':
            case 'DELETED': {
              const object = (
                type.metadataOnly ? toPartialObjectMetadata(event.object as T) : event.object
              ) as T;
              object.apiVersion ??= type.apiVersion;
              object.kind ??= type.kind;
              yield { type: event.type, object };
              break;
            }
            case 'BOOKMARK':
              yield {
                type: 'BOOKMARK',
                resourceVersion: (event.object as KubernetesObject).metadata?.resourceVersion ?? '',
              };
              break;
            case 'ERROR': {
              const status = event.object as Status;
              throw new KubeApiError({ code: status.code ?? 500, method: 'WATCH', path, status });
            }
            default:
              // An unknown event type means a protocol we do not speak: end rather than guess.
              throw new Error(`watch ${path}: unknown event type ${JSON.stringify(event.type)}`);
          }
        }
      }
    } finally {
      opts.signal?.removeEventListener('abort', onAbort);
      controller.abort(new Error('watch closed'));
    }
  }

  /* Writes. */

  async create<T extends KubernetesObject>(
    type: ResourceType<T>,
    obj: T,
    opts: WriteOptions = {},
  ): Promise<T> {
    const path = resourcePath(type, { namespace: obj.metadata?.namespace });
    return this.writeObject('POST', path, type, obj, opts);
  }

  /**
   * POST to a subresource of an object and resolve to the answer, of the subresource's own kind:
   * a ServiceAccount's `token` (TokenRequest), client-go's `SubResource(name).Create`.
   */
  async createSubresource<R>(
    type: ResourceType,
    key: ObjectKey,
    subresource: string,
    body: object,
    opts: WriteOptions = {},
  ): Promise<R> {
    return (await this.request({
      method: 'POST',
      path: resourcePath(type, { ...key, subresource }),
      query: this.writeQuery(opts),
      body,
      signal: opts.signal,
    })) as R;
  }

  /** PUT: fails with 409 Conflict when `metadata.resourceVersion` is not the latest. */
  async update<T extends KubernetesObject>(
    type: ResourceType<T>,
    obj: T,
    opts: WriteOptions = {},
  ): Promise<T> {
    return this.writeObject('PUT', resourcePath(type, objectKey(obj)), type, obj, opts);
  }

  /** PUT to the status subresource (only `status` changes). */
  async updateStatus<T extends KubernetesObject>(
    type: ResourceType<T>,
    obj: T,
    opts: WriteOptions = {},
  ): Promise<T> {
    const path = resourcePath(type, { ...objectKey(obj), subresource: 'status' });
    return this.writeObject('PUT', path, type, obj, opts);
  }

  async patch<T extends KubernetesObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    patchType: PatchType,
    patch: unknown,
    opts: PatchOptions = {},
  ): Promise<T> {
    return (await this.request({
      method: 'PATCH',
      path: resourcePath(type, { ...key, subresource: opts.subresource }),
      query: {
        ...this.writeQuery(opts),
        force: opts.force,
      },
      body: patch,
      contentType: PATCH_CONTENT_TYPE[patchType],
      signal: opts.signal,
    })) as T;
  }

  /**
   * DELETE. An object with finalizers is only marked (deletionTimestamp); the answer is then the
   * object, which this returns; otherwise undefined.
   */
  async delete<T extends KubernetesObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    opts: DeleteOptions = {},
  ): Promise<T | undefined> {
    const body = (await this.request({
      method: 'DELETE',
      path: resourcePath(type, key),
      body: {
        apiVersion: 'v1',
        kind: 'DeleteOptions',
        ...(opts.propagationPolicy ? { propagationPolicy: opts.propagationPolicy } : {}),
        ...(opts.gracePeriodSeconds !== undefined ? { gracePeriodSeconds: opts.gracePeriodSeconds } : {}),
        ...(opts.preconditions ? { preconditions: opts.preconditions } : {}),
        ...(opts.dryRun ? { dryRun: ['All'] } : {}),
      },
      signal: opts.signal,
    })) as (T & { kind?: string }) | undefined;
    return body && body.kind !== 'Status' ? body : undefined;
  }

  /**
   * The ResourceType of a kind known only at run time (a CRD the operator did not ship), from the
   * API server's discovery document of its group version.
   */
  async discover(apiVersion: string, kind: string, opts: CallOptions = {}): Promise<ResourceType> {
    const path = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const list = (await this.request({ method: 'GET', path, signal: opts.signal })) as {
      resources?: { name: string; kind: string; namespaced: boolean }[];
    };
    const r = list.resources?.find((x) => x.kind === kind && !x.name.includes('/'));
    if (!r) {
      throw new KubeApiError({
        code: 404,
        method: 'GET',
        path,
        status: { reason: 'NotFound', message: `kind ${kind} is not served by ${apiVersion}` },
      });
    }
    return resourceType({ apiVersion, kind, plural: r.name, namespaced: r.namespaced });
  }

  /** Closes idle connections. */
  async close(): Promise<void> {
    const d = this.dispatcher;
    this.dispatcher = undefined;
    this.dispatcherReady = undefined;
    await d?.close();
  }

  /* The wire. */

  /** Server-side apply requires a manager; other writes name one so managedFields say who wrote. */
  private writeQuery(opts: WriteOptions): Record<string, string | undefined> {
    return { fieldManager: opts.fieldManager ?? this.fieldManager, dryRun: opts.dryRun ? 'All' : undefined };
  }

  /** POST or PUT a whole object; the body names its apiVersion and kind, which callers may omit. */
  private async writeObject<T extends KubernetesObject>(
    method: 'POST' | 'PUT',
    path: string,
    type: ResourceType<T>,
    obj: T,
    opts: WriteOptions,
  ): Promise<T> {
    return (await this.request({
      method,
      path,
      query: this.writeQuery(opts),
      body: { apiVersion: type.apiVersion, kind: type.kind, ...obj },
      signal: opts.signal,
    })) as T;
  }

  private async request(init: RequestInit): Promise<unknown> {
    const started = performance.now();
    const bound = timeoutSignal(
      this.clock,
      this.requestTimeoutMs,
      init.signal,
      () => new Error(`${init.method} ${init.path}: no answer within ${this.requestTimeoutMs} ms`),
    );
    try {
      const res = await this.send({ ...init, signal: bound.signal });
      const text = await readText(res.body, bound.signal);
      this.metrics?.latency.observe(
        { verb: init.method, host: this.host },
        (performance.now() - started) / 1000,
      );
      return text ? (JSON.parse(text) as unknown) : undefined;
    } finally {
      bound.cancel();
    }
  }

  /**
   * Rate limit, authenticate, send; a non-2xx answer becomes a KubeApiError. undici's `request`,
   * not `fetch`: a controller's requests are many and small, and fetch's WHATWG streams, headers
   * and signals cost about three times the CPU per request (bench:capo, 100 machines: the Kubernetes
   * client was a fifth of capo's CPU while they started).
   */
  private async send(init: RequestInit): Promise<KubeResponse> {
    const waited = await this.limiter.wait(init.signal);
    this.metrics?.limiter.observe({ verb: init.method, host: this.host }, waited / 1000);
    const url = new URL(this.server + init.path);
    for (const [k, v] of Object.entries(init.query ?? {})) {
      if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    }
    const headers = await this.headers();
    headers.accept = init.accept ?? 'application/json';
    headers['user-agent'] = this.userAgent;
    let body: string | undefined;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers['content-type'] = init.contentType ?? 'application/json';
    }
    const signal = init.signal;
    const dispatcher = await this.getDispatcher();
    let res: Dispatcher.ResponseData;
    try {
      res = await undiciRequest(url, {
        method: init.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        ...(signal ? { signal } : {}),
        ...(dispatcher ? { dispatcher } : {}),
      });
    } catch (err) {
      this.metrics?.requests.inc({ code: '<error>', method: init.method, host: this.host });
      // An abort (the caller's, or the request timeout) is reported as its reason, not as undici's wrapper.
      if (signal?.aborted) throw abortReason(signal);
      throw err;
    }
    const status = res.statusCode;
    this.metrics?.requests.inc({ code: String(status), method: init.method, host: this.host });
    if (status >= 200 && status < 300) return { status, body: res.body };
    const text = await readText(res.body, signal).catch(() => '');
    let apiStatus: Status | undefined;
    try {
      const parsed = JSON.parse(text) as Status;
      if (parsed && parsed.kind === 'Status') apiStatus = parsed;
    } catch {
      // Not a Status (a proxy's HTML page): keep a short excerpt as the message.
    }
    apiStatus ??= { message: text.slice(0, 200) || (STATUS_CODES[status] ?? String(status)) };
    const retryAfter = Number(res.headers['retry-after']);
    const err = new KubeApiError({
      code: status,
      method: init.method,
      path: init.path,
      status: apiStatus,
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
    });
    this.log?.debug(
      { code: err.code, reason: err.reason, method: init.method, path: init.path },
      'kube request failed',
    );
    throw err;
  }

  /** Fresh credentials per request: exec plugins and projected tokens rotate. */
  private async headers(): Promise<Record<string, string>> {
    const opts: { headers?: Record<string, unknown>; auth?: string } = {};
    await this.kc.applyToHTTPSOptions(opts);
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(opts.headers ?? {})) out[k.toLowerCase()] = String(v);
    if (opts.auth) out.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    return out;
  }

  /**
   * One dispatcher for the client's lifetime, from the kubeconfig's TLS material and `proxy-url`
   * (a SOCKS proxy's is client-node's, whose TLS offers no ALPN: HTTP/1.1 there too). HTTP/1.1 on
   * purpose, though API servers offer HTTP/2 and undici takes it unless told not to: when undici 8 tears an HTTP/2 session down (a client closed, a
   * connection lost) a stream it has let go of can be destroyed with no 'error' listener left,
   * and the ClientDestroyedError that follows is an uncaught exception that ends the process (1 run
   * in 4 to 8 of src/demo/intree/migration.test.ts, whose replicas stop and start in one process).
   */
  private async getDispatcher(): Promise<Dispatcher | undefined> {
    if (this.dispatcher) return this.dispatcher;
    this.dispatcherReady ??= (async () => {
      const tls: AgentOptions = {};
      await this.kc.applyToHTTPSOptions(tls);
      const via = this.kc.createDispatcherOptions(this.kc.getCurrentCluster(), tls);
      if (via.type === 'agent' || via.type === 'none') {
        this.dispatcher = new Agent({
          ...(via.type === 'agent' ? { connect: via.connect } : {}),
          allowH2: false,
        });
        return;
      }
      if (via.type === 'proxy') {
        this.dispatcher = new ProxyAgent({
          uri: via.uri,
          requestTls: via.requestTls,
          connect: via.connect,
          allowH2: false,
        });
        return;
      }
      const ctx = new RequestContext(this.server, 'GET');
      await this.kc.applySecurityAuthentication(ctx);
      this.dispatcher = ctx.getDispatcher();
    })();
    await this.dispatcherReady;
    return this.dispatcher;
  }
}
