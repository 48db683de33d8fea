import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { ServingCert } from './tls-cert.ts';

/** A named readiness or liveness check; it resolves when healthy and throws (or rejects) with the reason otherwise. */
export interface Check {
  name: string;
  check: (signal: AbortSignal) => Promise<void> | void;
}

/** What a guard sees of a request. */
export interface GuardedRequest {
  method: string;
  path: string;
  /** The Authorization header, if any. */
  authorization: string | undefined;
}

export type GuardDecision = { allowed: true } | { allowed: false; status: 401 | 403 | 500; message: string };

/** Decides, before anything is served, whether a request may be (authentication and authorization). */
export type RequestGuard = (req: GuardedRequest) => Promise<GuardDecision>;

export interface HealthServerOptions {
  /** 0 picks a free port. */
  port: number;
  /** 127.0.0.1 by default; '' is every address, as Go's `:port` (IPv6 and IPv4 where the host has both). */
  host?: string;
  /** HTTPS with this certificate; plain HTTP without. */
  tls?: ServingCert;
  /** Asked for every request; none lets everyone in. */
  guard?: RequestGuard;
  /** What this server answers (both by default): `/metrics`, and the `/healthz`, `/livez`, `/readyz` checks. */
  serve?: { metrics?: boolean; health?: boolean };
  registry: Registry;
  healthz?: Check[];
  readyz?: Check[];
  log?: Logger;
  /** Bound on each check so a hung dependency cannot hang the probe. */
  checkTimeoutMs?: number;
  /**
   * More paths for the same checks, for a component whose upstream probes other paths (Kuryr's
   * health server answers `/alive` and `/ready`, and OpenShift's manifests probe those).
   */
  paths?: { healthz?: readonly string[]; readyz?: readonly string[] };
}

export interface HealthServer {
  url: string;
  port: number;
  /** Adds a check after start-up, e.g. "informers synced" once a manager has started. */
  addReadyzCheck(check: Check): void;
  addHealthzCheck(check: Check): void;
  close(): Promise<void>;
}

/**
 * Serves /metrics, /healthz and /readyz the way kube components do: 200 "ok" when every check
 * passes, 500 with one `[+]`/`[-]` line per check otherwise (or always with `?verbose`). With `tls`
 * and a `guard` it is a component's secure port: HTTPS, and every request authenticated and
 * authorized first (src/kube/delegated-auth.ts).
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const healthz = [...(options.healthz ?? [])];
  const readyz = [...(options.readyz ?? [])];
  const timeoutMs = options.checkTimeoutMs ?? 5_000;
  const serveMetrics = options.serve?.metrics ?? true;
  const serveHealth = options.serve?.health ?? true;

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      options.log?.error({ err, path: req.url }, 'health server request failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error\n');
    });
  };
  const server: Server = options.tls
    ? createTlsServer({ cert: options.tls.certPem, key: options.tls.keyPem }, handler)
    : createServer(handler);

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (options.guard) {
      const decision = await options.guard({
        method: req.method ?? 'GET',
        path: url.pathname,
        authorization: req.headers.authorization,
      });
      if (!decision.allowed) {
        res
          .writeHead(decision.status, { 'content-type': 'text/plain; charset=utf-8' })
          .end(`${decision.message}\n`);
        return;
      }
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
      return;
    }
    const path = url.pathname;
    if (serveMetrics && path === '/metrics') {
      const body = await options.registry.metrics();
      res.writeHead(200, { 'content-type': options.registry.contentType }).end(body);
      return;
    }
    if (serveHealth && (path === '/healthz' || path === '/livez' || options.paths?.healthz?.includes(path)))
      return respondChecks(res, healthz, url.searchParams.has('verbose'));
    if (serveHealth && (path === '/readyz' || options.paths?.readyz?.includes(path)))
      return respondChecks(res, readyz, url.searchParams.has('verbose'));
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  }

  async function respondChecks(res: ServerResponse, checks: Check[], verbose: boolean) {
    const results = await Promise.all(checks.map((c) => runCheck(c, timeoutMs)));
    const failed = results.some((r) => r.error !== undefined);
    const lines = results.map((r) =>
      r.error === undefined ? `[+]${r.name} ok` : `[-]${r.name} failed: ${r.error}`,
    );
    const status = failed ? 500 : 200;
    const body = verbose || failed ? `${lines.join('\n')}\n${failed ? 'check failed' : 'ok'}\n` : 'ok\n';
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(body);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const listening = () => {
      server.off('error', reject);
      resolve();
    };
    const host = options.host ?? '127.0.0.1';
    if (host === '') server.listen(options.port, listening);
    else server.listen(options.port, host, listening);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `${options.tls ? 'https' : 'http'}://${host}:${address.port}`,
    port: address.port,
    addReadyzCheck: (c) => void readyz.push(c),
    addHealthzCheck: (c) => void healthz.push(c),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

async function runCheck(check: Check, timeoutMs: number): Promise<{ name: string; error?: string }> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    await Promise.race([
      Promise.resolve(check.check(signal)),
      new Promise<never>((_, reject) =>
        signal.addEventListener('abort', () => reject(new Error(`timed out after ${timeoutMs} ms`)), {
          once: true,
        }),
      ),
    ]);
    return { name: check.name };
  } catch (err) {
    return { name: check.name, error: err instanceof Error ? err.message : String(err) };
  }
}
