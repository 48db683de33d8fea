/**
 * kuryr-daemon's HTTP endpoint for the plugin (`[cni_daemon] bind_address`): the wire of ../wire.ts,
 * with at most `workers` requests served at once (upstream's `worker_num`, 30; the rest wait their
 * turn) and every request bounded in time from its arrival (upstream's 180 s), after which it is
 * answered "try again later" and its work is aborted.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../../lib/log.ts';
import { CniError, CniErrorCode, readCniEnv, type CniRequest } from '../spec.ts';
import { DAEMON_PATHS, errorBody, statusOf, type DaemonCommand } from '../wire.ts';
import type { DaemonMetrics } from './metrics.ts';

/** What the daemon does for each command; a `CniError` thrown is answered as is. */
export interface CniHandler {
  /** Resolves with the VIF's os-vif primitive, as upstream's daemon answers. */
  add(req: CniRequest, conf: unknown, signal: AbortSignal): Promise<unknown>;
  del(req: CniRequest, conf: unknown, signal: AbortSignal): Promise<void>;
  check(req: CniRequest, conf: unknown, signal: AbortSignal): Promise<void>;
}

export interface DaemonServerOptions {
  /** `host:port`; port 0 picks a free one. */
  bindAddress: string;
  handler: CniHandler;
  workers: number;
  requestTimeoutMs: number;
  metrics: DaemonMetrics;
  log: Logger;
}

export interface DaemonServer {
  url: string;
  close(): Promise<void>;
}

const MAX_BODY = 1 << 20;

/** `host:port` as `[cni_daemon] bind_address` holds it (`[::1]:5036` for IPv6). */
export function splitHostPort(address: string): { host: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(address.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || !(port >= 0 && port <= 65535)) throw new Error(`"${address}" is not host:port`);
  return { host: m[1] ?? '', port };
}

/** A counting semaphore: `workers` holders at once, the rest queued in arrival order. */
class Workers {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(size: number) {
    this.free = size;
  }
  acquire(signal: AbortSignal): Promise<() => void> {
    const release = () => {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const turn = () => {
        signal.removeEventListener('abort', onAbort);
        resolve(release);
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(turn);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal.reason as Error);
      };
      this.waiting.push(turn);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}

export async function startDaemonServer(options: DaemonServerOptions): Promise<DaemonServer> {
  const { handler, metrics, log } = options;
  const workers = new Workers(Math.max(1, options.workers));
  const stopping = new AbortController();
  const routes = new Map<string, DaemonCommand>(
    Object.entries(DAEMON_PATHS).map(([command, path]) => [path, command as DaemonCommand]),
  );

  const server = createServer((req, res) => {
    serve(req, res).catch((err: unknown) => {
      log.error({ err, path: req.url }, 'kuryr-daemon request failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end();
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const command = routes.get(new URL(req.url ?? '/', 'http://localhost').pathname);
    if (!command || req.method !== 'POST') {
      res.writeHead(command ? 405 : 404, { 'content-type': 'text/plain', connection: 'close' });
      res.end(command ? 'POST only\n' : 'not found\n');
      return;
    }
    const started = performance.now();
    const deadline = AbortSignal.any([stopping.signal, AbortSignal.timeout(options.requestTimeoutMs)]);
    let outcome: { status: number; body?: unknown; error?: CniError };
    try {
      outcome = await run(command, req, deadline);
    } catch (err) {
      const error = asCniError(err, command, deadline, options.requestTimeoutMs);
      if (error.code === CniErrorCode.Internal) log.error({ err, command }, `kuryr-daemon ${command} failed`);
      else
        log.warn(
          { code: error.code, msg: error.message, details: error.details },
          `kuryr-daemon ${command} failed`,
        );
      outcome = { status: statusOf(error), body: errorBody(error), error };
    }
    const seconds = (performance.now() - started) / 1000;
    const labels = { command, error: String(outcome.error !== undefined) };
    metrics.requestDuration.observe(labels, seconds);
    metrics.requestDurationFine.observe(labels, seconds);
    const headers = { 'content-type': 'application/json', connection: 'close' };
    if (outcome.body === undefined) res.writeHead(outcome.status, headers).end();
    else res.writeHead(outcome.status, headers).end(JSON.stringify(outcome.body));
  }

  async function run(
    command: DaemonCommand,
    req: IncomingMessage,
    signal: AbortSignal,
  ): Promise<{ status: number; body?: unknown }> {
    const body = await readJson(req, signal);
    const fields = Object.fromEntries(
      Object.entries(body).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
    // The body carries the plugin's CNI_* variables under their own names: read them as the plugin did.
    const cni = readCniEnv({ ...fields, CNI_COMMAND: command });
    metrics.inflight.inc({ state: 'queued' });
    let release: () => void;
    try {
      release = await workers.acquire(signal);
    } finally {
      metrics.inflight.dec({ state: 'queued' });
    }
    metrics.inflight.inc({ state: 'running' });
    try {
      const conf = body.config_kuryr;
      if (command === 'ADD') return { status: 202, body: await handler.add(cni, conf, signal) };
      if (command === 'DEL') await handler.del(cni, conf, signal);
      else await handler.check(cni, conf, signal);
      return { status: 204 };
    } finally {
      metrics.inflight.dec({ state: 'running' });
      release();
    }
  }

  const { host, port } = splitHostPort(options.bindAddress);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host || undefined, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        stopping.abort(new Error('kuryr-daemon is stopping'));
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

async function readJson(req: IncomingMessage, signal: AbortSignal): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    if (signal.aborted) throw signal.reason;
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new CniError(CniErrorCode.DecodingFailure, 'the request body is too large');
    chunks.push(chunk as Buffer);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw new CniError(
      CniErrorCode.DecodingFailure,
      'the request body is not JSON',
      err instanceof Error ? err.message : String(err),
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new CniError(CniErrorCode.DecodingFailure, 'the request body is not a JSON object');
  return parsed as Record<string, unknown>;
}

function asCniError(
  err: unknown,
  command: DaemonCommand,
  deadline: AbortSignal,
  timeoutMs: number,
): CniError {
  if (err instanceof CniError) return err;
  if (deadline.aborted) {
    const reason: unknown = deadline.reason;
    const timedOut = reason instanceof DOMException && reason.name === 'TimeoutError';
    return new CniError(
      CniErrorCode.TryAgainLater,
      timedOut
        ? `kuryr-daemon did not finish ${command} within ${timeoutMs / 1000} s. Try again later.`
        : `kuryr-daemon is stopping. Try again later.`,
      err instanceof Error ? err.message : String(err),
    );
  }
  return new CniError(
    CniErrorCode.Internal,
    `Error processing ${command} request`,
    err instanceof Error ? err.message : String(err),
  );
}
