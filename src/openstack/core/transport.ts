/**
 * One HTTP call to an OpenStack service, done carefully: undici's request over the TLS-configured pool,
 * a per-attempt timeout joined with the caller's signal, the safe retries of retry.ts with back-off,
 * a concurrency limit per service, OCCM's metrics and one debug log line per call. It knows nothing
 * of tokens: the Session adds those and handles 401.
 */
import { Readable } from 'node:stream';
import { Headers, request, type Dispatcher } from 'undici';
import type { Logger } from '../../lib/log.ts';
import type { Registry } from '../../lib/metrics.ts';
import { systemClock, type Clock } from '../../lib/clock.ts';
import { ClientClosedError, ConnectionError, formatMs } from './errors.ts';
import { Limiter } from './limiter.ts';
import { apiMetrics, type ApiMetrics } from './metrics.ts';
import {
  backoffDelay,
  DEFAULT_RETRY,
  parseRetryAfter,
  retryableConnectionError,
  retryableStatus,
  TLS_CODES,
  type RetryPolicy,
} from './retry.ts';
import { pathOf, safeUrl } from './url.ts';

/** A request body: text and bytes can be sent again on retry; streams cannot, so they are never retried. */
export type TransportBody = string | Uint8Array | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>;

export interface TransportRequest {
  method: string;
  /** Absolute URL, query included. */
  url: string;
  /** Service type (`network`, `identity`, …): the concurrency limit, logs and errors are per service. */
  service: string;
  /** The `request` label of the metrics, `<resource>_<verb>` (`port_list`, `loadbalancer_create`). */
  label: string;
  headers?: Record<string, string>;
  body?: TransportBody;
  signal?: AbortSignal | undefined;
  /** `buffer` (default) reads the whole body; `stream` hands a 2xx body over unread (image download). */
  responseType?: 'buffer' | 'stream';
  /** Send once, whatever happens. */
  noRetry?: boolean;
}

export interface TransportResponse {
  status: number;
  headers: Headers;
  /** The URL requested, secrets redacted. */
  url: string;
  /** `X-Openstack-Request-Id` (or Nova's `X-Compute-Request-Id`). */
  requestId: string | undefined;
  /** The whole body; empty when streamed. */
  body: Uint8Array;
  /** The unread body of a 2xx answer to a `stream` request. */
  stream: ReadableStream<Uint8Array> | undefined;
  attempts: number;
}

export interface TransportOptions {
  /** The connection pool, from `createDispatcher` (TLS settings); undici's global one otherwise. */
  dispatcher?: Dispatcher | undefined;
  /** Timeout of each attempt, until the whole body is read (until the headers for streams). Default 60 s. */
  requestTimeoutMs?: number | undefined;
  retry?: Partial<RetryPolicy> | undefined;
  /** Requests in flight per service; more wait in a queue. Default 16. */
  concurrency?: number | undefined;
  /** Where the metrics go; none are recorded without one. */
  registry?: Registry | undefined;
  log?: Logger | undefined;
  clock?: Clock | undefined;
  userAgent?: string | undefined;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
export const DEFAULT_CONCURRENCY = 16;

type Attempt = { response: TransportResponse } | { error: ConnectionError };

export class Transport {
  readonly requestTimeoutMs: number;
  readonly retry: RetryPolicy;
  readonly concurrency: number;
  private readonly dispatcher: Dispatcher | undefined;
  private readonly metrics: ApiMetrics | undefined;
  private readonly log: Logger | undefined;
  private readonly clock: Clock;
  private readonly userAgent: string;
  private readonly limiters = new Map<string, Limiter>();
  private closing = false;

  constructor(options: TransportOptions = {}) {
    this.dispatcher = options.dispatcher;
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.metrics = options.registry ? apiMetrics(options.registry) : undefined;
    this.log = options.log;
    this.clock = options.clock ?? systemClock;
    this.userAgent = options.userAgent ?? 'shiftstack';
  }

  /** Sends the request, retrying where safe. Resolves with any HTTP status; rejects with ConnectionError or the signal's reason. */
  async send(req: TransportRequest): Promise<TransportResponse> {
    const started = performance.now();
    const method = req.method.toUpperCase();
    const limiter = this.limiterFor(req.service);
    const replayable =
      req.body === undefined || typeof req.body === 'string' || req.body instanceof Uint8Array;
    let attempts = 0;
    let status: number | undefined;
    let requestId: string | undefined;
    let failed = true;
    try {
      for (;;) {
        attempts++;
        // A closed pool would fail every attempt as a connection error and be retried in vain.
        if (this.closing)
          throw new ClientClosedError({ method, url: safeUrl(req.url), service: req.service });
        const release = await limiter.acquire(req.signal);
        let outcome: Attempt;
        try {
          outcome = await this.once(method, req);
        } finally {
          release();
        }
        const final = req.noRetry === true || !replayable || attempts >= this.retry.maxAttempts;
        if ('error' in outcome) {
          const err = outcome.error;
          if (final || err.timedOut || !retryableConnectionError(method, err.code)) throw err;
          await this.pause(
            req,
            attempts,
            backoffDelay(attempts, this.retry, () => this.clock.random()),
            err.code ?? 'connection',
          );
          continue;
        }
        const res = outcome.response;
        status = res.status;
        requestId = res.requestId;
        if (!final && retryableStatus(method, res.status)) {
          const retryAfter =
            res.status === 429 || res.status === 503
              ? parseRetryAfter(res.headers.get('retry-after'), this.clock.now())
              : undefined;
          if (retryAfter === undefined || retryAfter <= this.retry.maxRetryAfterMs) {
            await res.stream?.cancel();
            await this.pause(
              req,
              attempts,
              retryAfter ?? backoffDelay(attempts, this.retry, () => this.clock.random()),
              String(res.status),
            );
            continue;
          }
        }
        res.attempts = attempts;
        failed = res.status >= 400;
        return res;
      }
    } finally {
      const seconds = (performance.now() - started) / 1000;
      if (this.metrics) {
        this.metrics.duration.observe({ request: req.label }, seconds);
        this.metrics.total.inc({ request: req.label });
        if (failed) this.metrics.errors.inc({ request: req.label });
      }
      this.log?.debug(
        {
          service: req.service,
          request: req.label,
          method,
          path: pathOf(req.url),
          status,
          ms: Math.round(seconds * 1000),
          requestId,
          attempts,
        },
        'openstack api call',
      );
    }
  }

  /** True once `close` was called: every later call fails with ClientClosedError. */
  get closed(): boolean {
    return this.closing;
  }

  /** Closes the pool; requests in flight finish first, later ones fail with ClientClosedError. */
  async close(): Promise<void> {
    this.closing = true;
    await this.dispatcher?.close();
  }

  private async pause(
    req: TransportRequest,
    attempt: number,
    delayMs: number,
    reason: string,
  ): Promise<void> {
    this.metrics?.retries.inc({ request: req.label });
    this.log?.debug(
      { service: req.service, request: req.label, path: pathOf(req.url), attempt, reason, delayMs },
      'openstack api call retried',
    );
    await this.clock.sleep(delayMs, req.signal);
  }

  private limiterFor(service: string): Limiter {
    let limiter = this.limiters.get(service);
    if (!limiter) this.limiters.set(service, (limiter = new Limiter(this.concurrency)));
    return limiter;
  }

  private async once(method: string, req: TransportRequest): Promise<Attempt> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.requestTimeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout.signal]) : timeout.signal;
    const streamed =
      req.body !== undefined && typeof req.body !== 'string' && !(req.body instanceof Uint8Array);
    try {
      // undici's request, not fetch: a controller's calls are many and small, and fetch's WHATWG
      // streams, headers and signals cost about three times the CPU per call. Like fetch with
      // `redirect: 'manual'`, it follows no redirect (one would carry X-Auth-Token wherever it
      // points): callers see the 3xx.
      const res = await request(req.url, {
        method,
        headers: { 'User-Agent': this.userAgent, ...req.headers },
        ...(req.body !== undefined ? { body: requestBody(req.body, streamed) } : {}),
        signal,
        ...(this.dispatcher ? { dispatcher: this.dispatcher } : {}),
      });
      const headers = responseHeaders(res.headers);
      const requestId =
        headers.get('x-openstack-request-id') ?? headers.get('x-compute-request-id') ?? undefined;
      const base = {
        status: res.statusCode,
        headers,
        url: safeUrl(req.url),
        requestId,
        attempts: 0,
      };
      if (req.responseType === 'stream' && res.statusCode >= 200 && res.statusCode < 300) {
        const stream = Readable.toWeb(res.body) as unknown as ReadableStream<Uint8Array>;
        return { response: { ...base, body: new Uint8Array(), stream } };
      }
      return { response: { ...base, body: new Uint8Array(await res.body.arrayBuffer()), stream: undefined } };
    } catch (err) {
      if (req.signal?.aborted) throw req.signal.reason;
      if (timeout.signal.aborted) {
        return {
          error: new ConnectionError({
            method,
            url: safeUrl(req.url),
            service: req.service,
            timedOut: true,
            detail: `no complete answer within ${formatMs(this.requestTimeoutMs)} (the request timeout)`,
            cause: err,
          }),
        };
      }
      return { error: connectionError(method, req, err) };
    } finally {
      clearTimeout(timer);
    }
  }
}

/** A body undici sends as is; a web stream as the Node stream it reads. */
function requestBody(body: TransportBody, streamed: boolean): string | Uint8Array | Readable {
  if (!streamed) return body as string | Uint8Array;
  if (body instanceof ReadableStream) return Readable.fromWeb(body);
  return Readable.from(body as AsyncIterable<Uint8Array>, { objectMode: false });
}

/** The answer's headers as a Headers (callers read them with `get`); repeated ones joined as fetch does. */
function responseHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const one of v) headers.append(k, one);
    else headers.append(k, v);
  }
  return headers;
}

function connectionError(method: string, req: TransportRequest, err: unknown): ConnectionError {
  const root = rootCause(err);
  const code = root.code;
  let detail: string;
  if (code !== undefined && TLS_CODES.test(code)) {
    detail =
      `TLS verification of the server failed (${code}: ${root.message}); if the cloud uses a private CA, ` +
      'give its certificate (clouds.yaml cacert, cloud.conf ca-file or OS_CACERT)';
  } else if (code === 'ECONNREFUSED') {
    detail = 'connection refused (ECONNREFUSED)';
  } else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    detail = `the host name does not resolve (${code})`;
  } else {
    detail = `${root.message || 'connection failed'}${code ? ` (${code})` : ''}`;
  }
  return new ConnectionError({
    method,
    url: safeUrl(req.url),
    service: req.service,
    code,
    detail,
    cause: err,
  });
}

/** The socket error under undici's wrappers (`TypeError: fetch failed`, an AggregateError). */
function rootCause(err: unknown): { code: string | undefined; message: string } {
  let cur: unknown = err;
  let fallback = err instanceof Error ? err.message : String(err);
  for (let depth = 0; depth < 6 && cur; depth++) {
    const e = cur as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof e.code === 'string' && e.code !== 'UND_ERR' && e.code !== 'ABORT_ERR') {
      return { code: e.code, message: typeof e.message === 'string' ? e.message : fallback };
    }
    if (typeof e.message === 'string' && e.message !== 'fetch failed') fallback = e.message;
    cur = e.cause ?? (Array.isArray(e.errors) ? (e.errors as unknown[])[0] : undefined);
  }
  return { code: undefined, message: fallback };
}
