/**
 * The conversion webhook server, as controller-runtime's webhook server serves CRD conversion: HTTPS
 * on `--webhook-port` (9443) with the certificate in `--webhook-cert-dir` (`tls.crt`, `tls.key`,
 * as cert-manager's Secret mounts them; re-read when they change, as controller-runtime's
 * certwatcher does), or a self-signed one made in memory when there is none; `POST /convert`
 * answers ConversionReviews with the `KindConversion`s a part declares (review.ts). Every replica
 * serves (not leader-elected): the API server calls whichever pod the Service picks.
 *
 * Bounded: a body over `maxBodyBytes` is refused (413) before it is read whole, and a request that
 * takes longer than `requestTimeoutMs` is dropped.
 */
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { systemClock, type Clock } from '../../lib/clock.ts';
import type { Check } from '../../lib/health-server.ts';
import { createLogger, type Logger } from '../../lib/log.ts';
import { createRegistry, type Registry } from '../../lib/metrics.ts';
import { readServingCert, selfSignedCert, type ServingCert } from '../../lib/tls-cert.ts';
import { counter, gauge, histogram, REQUEST_BUCKETS } from '../metrics.ts';
import type { Runnable } from '../runnable.ts';
import { answerReview, BadReviewError, conversionTable, parseReview } from './review.ts';
import type { KindConversion } from './types.ts';

/** The path Cluster API's and kubebuilder's CRDs name in `conversion.webhook.clientConfig`. */
export const CONVERT_PATH = '/convert';
/** controller-runtime's defaults: `--webhook-port` and `--webhook-cert-dir`. */
export const DEFAULT_WEBHOOK_PORT = 9443;
export const DEFAULT_WEBHOOK_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';
/** controller-runtime's webhook request limit (7 MiB); the API server's own is smaller. */
export const DEFAULT_MAX_BODY_BYTES = 7 * 1024 * 1024;
/** The API server gives a conversion webhook 30 s; we give up at the same time. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** How often the certificate files are looked at for a rotation (controller-runtime: 10 s). */
export const CERT_POLL_MS = 10_000;

export interface ConversionWebhookOptions {
  conversions: readonly KindConversion[];
  /** 0 picks a free port. */
  port: number;
  /** The listen address: '' is every address, as Go's `:9443`; 127.0.0.1 by default. */
  host?: string;
  /**
   * Where `tls.crt` and `tls.key` are. When they are not there: a self-signed certificate if
   * `selfSignedWithoutCert`, else `start` fails naming the files.
   */
  certDir?: string;
  selfSignedWithoutCert?: boolean;
  /** The certificate to serve, instead of `certDir` (tests, a bed that keeps one across restarts). */
  tls?: ServingCert;
  maxBodyBytes?: number;
  requestTimeoutMs?: number;
  certPollMs?: number;
  registry?: Registry;
  log?: Logger;
  clock?: Clock;
}

export interface RunningWebhook {
  /** `https://<host>:<port>/convert`, the CRDs' `clientConfig.url` outside a cluster. */
  url: string;
  port: number;
  /** The served certificate as `clientConfig.caBundle` wants it (base64 of the PEM). */
  caBundle: string;
  close(): Promise<void>;
}

/** A refused request, with the HTTP status it is answered with. */
class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** Starts the server; resolves once it listens. */
export async function serveConversionWebhook(opts: ConversionWebhookOptions): Promise<RunningWebhook> {
  const log = (opts.log ?? createLogger({ level: 'silent' })).child({ component: 'conversion-webhook' });
  const clock = opts.clock ?? systemClock;
  const registry = opts.registry ?? createRegistry({ defaultMetrics: false });
  const table = conversionTable(opts.conversions);
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const metrics = webhookMetrics(registry);
  const host = opts.host ?? '127.0.0.1';
  const certs = await servingCert(opts, host, log);
  let served = certs.cert;

  const server: Server = createServer({ cert: served.certPem, key: served.keyPem }, (req, res) => {
    const started = clock.now();
    metrics.inFlight.inc({ webhook: CONVERT_PATH });
    handle(req)
      .then(
        (body) => reply(res, 200, body),
        (err: unknown) => {
          const status = err instanceof HttpError ? err.status : 500;
          if (status === 500) log.error({ err }, 'conversion request failed');
          else
            log.info({ status, reason: (err as Error).message, path: req.url }, 'conversion request refused');
          reply(res, status, `${(err as Error).message}\n`, 'text/plain; charset=utf-8');
        },
      )
      .finally(() => {
        metrics.inFlight.dec({ webhook: CONVERT_PATH });
        metrics.latency.observe({ webhook: CONVERT_PATH }, (clock.now() - started) / 1000);
        metrics.requests.inc({ webhook: CONVERT_PATH, code: String(res.statusCode) });
      });
  });
  server.requestTimeout = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  server.headersTimeout = Math.min(server.requestTimeout, 60_000);

  async function handle(req: IncomingMessage): Promise<string> {
    const path = new URL(req.url ?? '/', 'https://localhost').pathname;
    if (path !== CONVERT_PATH)
      throw new HttpError(404, `${path} is not served; conversion is at ${CONVERT_PATH}`);
    if (req.method !== 'POST') throw new HttpError(405, `${req.method ?? ''} ${CONVERT_PATH}: only POST`);
    const body = await readBody(req, maxBodyBytes);
    let review;
    try {
      review = parseReview(body);
    } catch (err) {
      // As controller-runtime: a body that is no ConversionReview is a 400, not a Failure review.
      if (err instanceof BadReviewError) throw new HttpError(400, err.message);
      throw err;
    }
    const answer = answerReview(review, table);
    for (const o of answer.outcomes) metrics.conversions.inc({ ...o });
    if (answer.error) {
      log.info(
        {
          uid: review.request.uid,
          desiredAPIVersion: review.request.desiredAPIVersion,
          reason: answer.error.message,
        },
        'conversion refused',
      );
    }
    return JSON.stringify(answer.review);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const listening = () => {
      server.off('error', reject);
      resolve();
    };
    if (host === '') server.listen(opts.port, listening);
    else server.listen(opts.port, host, listening);
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `https://${urlHost === '0.0.0.0' || urlHost === '[::]' ? '127.0.0.1' : urlHost}:${address.port}${CONVERT_PATH}`;
  log.info({ url, certificate: certs.source }, 'serving conversion webhook');

  // Rotation: cert-manager rewrites the Secret's files; the next handshake gets the new pair.
  let stopWatching = () => {};
  if (certs.files) {
    const files = certs.files;
    let last = await mtimes(files);
    const pollMs = opts.certPollMs ?? CERT_POLL_MS;
    const poll = () => {
      void (async () => {
        try {
          const now = await mtimes(files);
          if (now !== last) {
            served = await readServingCert(files.cert, files.key);
            server.setSecureContext({ cert: served.certPem, key: served.keyPem });
            last = now;
            log.info({ certificate: files.cert }, 'serving certificate reloaded');
          }
        } catch (err) {
          log.warn(
            { err, certificate: files.cert },
            'serving certificate not reloaded; the previous one is kept',
          );
        }
        stopWatching = clock.setTimer(pollMs, poll);
      })();
    };
    stopWatching = clock.setTimer(pollMs, poll);
  }

  return {
    url,
    port: address.port,
    get caBundle() {
      return Buffer.from(served.certPem).toString('base64');
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        stopWatching();
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/**
 * The webhook server as a manager runnable: started with the manager whether or not it leads, as
 * controller-runtime's; `readyCheck` (the manager's `/readyz` `webhook` line) passes once it listens.
 */
export class ConversionWebhook implements Runnable {
  readonly name = 'conversion-webhook';
  readonly needLeaderElection = false;
  private readonly opts: ConversionWebhookOptions;
  private running: RunningWebhook | undefined;
  private readonly listening: Promise<RunningWebhook>;
  private resolveListening: (w: RunningWebhook) => void = () => {};

  constructor(opts: ConversionWebhookOptions) {
    this.opts = opts;
    this.listening = new Promise((resolve) => (this.resolveListening = resolve));
  }

  /** Resolves once the server listens (its URL and caBundle known). */
  started(): Promise<RunningWebhook> {
    return this.listening;
  }

  readonly readyCheck: Check = {
    name: 'webhook',
    check: () => {
      if (!this.running) throw new Error('the conversion webhook server is not listening yet');
    },
  };

  async start(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const running = await serveConversionWebhook(this.opts);
    this.running = running;
    this.resolveListening(running);
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    this.running = undefined;
    await running.close();
  }
}

/** A certificate from the directory, or made in memory. */
async function servingCert(
  opts: ConversionWebhookOptions,
  host: string,
  log: Logger,
): Promise<{ cert: ServingCert; source: string; files?: { cert: string; key: string } }> {
  if (opts.tls) return { cert: opts.tls, source: 'given' };
  if (opts.certDir !== undefined) {
    const files = { cert: join(opts.certDir, 'tls.crt'), key: join(opts.certDir, 'tls.key') };
    const present = await Promise.all([exists(files.cert), exists(files.key)]);
    if (present.every(Boolean) || !opts.selfSignedWithoutCert) {
      return { cert: await readServingCert(files.cert, files.key), source: files.cert, files };
    }
    log.info(
      { certDir: opts.certDir },
      'no tls.crt and tls.key in the webhook certificate directory; serving a self-signed certificate',
    );
  }
  const cert = selfSignedCert({
    commonName: 'shiftstack-conversion-webhook',
    hosts: [
      'localhost',
      hostname(),
      '127.0.0.1',
      '::1',
      ...(['', '0.0.0.0', '::'].includes(host) ? [] : [host]),
    ],
  });
  return { cert, source: 'self-signed' };
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}

async function mtimes(files: { cert: string; key: string }): Promise<string> {
  const [c, k] = await Promise.all([stat(files.cert), stat(files.key)]);
  return `${c.mtimeMs}:${c.size}:${k.mtimeMs}:${k.size}`;
}

function readBody(req: IncomingMessage, max: number): Promise<string> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    return Promise.reject(new HttpError(413, `the request body is over ${max} bytes`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        reject(new HttpError(413, `the request body is over ${max} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function reply(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'content-type': type }).end(body);
}

function webhookMetrics(registry: Registry) {
  return {
    requests: counter(
      registry,
      'controller_runtime_webhook_requests_total',
      'Webhook requests by HTTP status code.',
      ['webhook', 'code'],
    ),
    latency: histogram(
      registry,
      'controller_runtime_webhook_latency_seconds',
      'How long a webhook request took.',
      ['webhook'],
      REQUEST_BUCKETS,
    ),
    inFlight: gauge(
      registry,
      'controller_runtime_webhook_requests_in_flight',
      'Webhook requests being served.',
      ['webhook'],
    ),
    conversions: counter(
      registry,
      'conversion_webhook_conversions_total',
      'Objects the conversion webhook converted (result success) or refused (failure), by kind and versions.',
      ['group', 'kind', 'from', 'to', 'result'],
    ),
  };
}
