import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { ComputeApi, IdentityApi, ImageApi, NetworkApi, VolumeApi } from './contracts.ts';
import { REASONS, SimError } from './errors.ts';
import { Faults } from './faults.ts';
import { requestId as newRequestId } from './ids.ts';
import { Router } from './router.ts';
import { Scheduler } from './scheduler.ts';
import { NO_CALLER, Stats } from './stats.ts';
import { StatusLog } from './status-log.ts';
import { resolveProfile, Timing, type ProfileOverrides } from './timing.ts';
import type { Persistent, Route, ServiceDefinition, ServiceName, SimRequest, SimResponse } from './types.ts';
import { handleAdmin } from './admin.ts';

export interface CloudOptions {
  profile?: 'fast' | 'realistic';
  overrides?: ProfileOverrides;
  region?: string;
  /** Token lifetime; Keystone's default is one hour. */
  tokenTtlMs?: number;
  /** Password of the seeded users (admin, demo, alt_demo), as in ../shared/openstack-real. */
  password?: string;
  /** Seed for the fault-injection dice, for reproducible runs. */
  seed?: number;
  /**
   * Services left out of the Keystone catalog (and its services and endpoints lists): the cloud a
   * client sees when it has no such service, e.g. `['cinder']` for one without block storage. They
   * are still served (other services' internal calls keep working), only no client finds them.
   */
  notInCatalog?: readonly ServiceName[];
  log?: Logger;
}

/** Largest JSON body accepted, as Keystone's and Neutron's max_request_body_size (112 KiB) is for small calls; images may be larger. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

interface Mounted {
  def: ServiceDefinition;
  router: Router;
}

/** Hook through which the admin API forces an object's state (e.g. a load balancer to ERROR). */
export type StateSetter = (resource: string, id: string, fields: Record<string, unknown>) => boolean;

/**
 * One emulated cloud: every service store, the catalog, the clock of transitions, faults and
 * accounting. No module-level state: tests create as many clouds as they like.
 */
export class EmulatedCloud {
  readonly options: Required<Pick<CloudOptions, 'region' | 'tokenTtlMs' | 'password'>> & CloudOptions;
  readonly timing: Timing;
  readonly scheduler = new Scheduler();
  readonly faults: Faults;
  readonly stats = new Stats();
  /** When each server, volume, port and load balancer reached each status (GET /_sim/statuses). */
  readonly statuses = new StatusLog();
  readonly log: Logger | undefined;

  private readonly services = new Map<string, Mounted>();
  private readonly persistent = new Map<string, Persistent>();
  private readonly stateSetters = new Map<string, StateSetter>();
  private server: Server | undefined;
  private base = 'http://127.0.0.1';
  private onChange: (() => void) | undefined;

  // Cross-service APIs, set by the service modules as they register.
  identity!: IdentityApi;
  network!: NetworkApi;
  compute!: ComputeApi;
  image!: ImageApi;
  volume!: VolumeApi;

  constructor(options: CloudOptions = {}) {
    this.options = {
      region: 'RegionOne',
      tokenTtlMs: 3_600_000,
      password: 'secret',
      ...options,
    };
    this.timing = new Timing(resolveProfile(options.profile ?? 'fast', options.overrides));
    this.faults = new Faults(options.seed);
    this.log = options.log;
  }

  register(def: ServiceDefinition, extras: { persistent?: Persistent; setState?: StateSetter } = {}): void {
    const key = def.prefix.replace(/^\//, '');
    this.services.set(key, { def, router: new Router(def.routes) });
    if (extras.persistent) this.persistent.set(def.name, extras.persistent);
    if (extras.setState) this.stateSetters.set(def.name, extras.setState);
  }

  get serviceDefinitions(): ServiceDefinition[] {
    return [...this.services.values()].map((m) => m.def);
  }

  /** Public URL of the emulator (scheme, host, port), known once listening. */
  get baseUrl(): string {
    return this.base;
  }

  serviceUrl(name: ServiceName): string {
    const def = this.serviceDefinitions.find((d) => d.name === name);
    if (!def) throw new Error(`service ${name} is not registered`);
    return `${this.base}${def.prefix}`;
  }

  get authUrl(): string {
    return `${this.serviceUrl('keystone')}/v3`;
  }

  /** The Keystone catalog as it appears in a token for `projectId`. */
  catalog(projectId: string | undefined): unknown[] {
    const omitted = new Set(this.options.notInCatalog ?? []);
    return this.serviceDefinitions.flatMap((def) => {
      if (omitted.has(def.name)) return [];
      const path = def.catalogPath.replace('{project_id}', projectId ?? '');
      const url = `${this.base}${def.prefix}${path}`;
      return [def.type, ...(def.aliases ?? [])].map((type) => ({
        endpoints: (['public', 'internal', 'admin'] as const).map((iface) => ({
          id: stableId(`${type}-${iface}`),
          interface: iface,
          region_id: this.options.region,
          url,
          region: this.options.region,
        })),
        id: stableId(type),
        type,
        name: type === def.type ? def.name : `${def.name}-${type}`,
      }));
    });
  }

  forceState(service: string, resource: string, id: string, fields: Record<string, unknown>): boolean {
    return this.stateSetters.get(service)?.(resource, id, fields) ?? false;
  }

  /** Called by stores after each write, so a state file can be saved shortly after. */
  changed(): void {
    this.onChange?.();
  }

  onStateChange(fn: (() => void) | undefined): void {
    this.onChange = fn;
  }

  snapshot(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, p] of this.persistent) out[name] = p.snapshot();
    return out;
  }

  restore(data: Record<string, unknown>): void {
    for (const [name, p] of this.persistent) {
      if (data[name] !== undefined) p.restore(data[name]);
    }
  }

  async listen(port = 0, host = '127.0.0.1'): Promise<string> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address() as AddressInfo;
    const h = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    this.base = `http://${h}:${addr.port}`;
    this.server = server;
    return this.base;
  }

  async close(): Promise<void> {
    this.scheduler.stop();
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  }

  /** Serves one HTTP request. Never throws: every failure becomes a response in the service's format. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const url = new URL(req.url ?? '/', this.base);
    const first = url.pathname.split('/')[1] ?? '';
    const rid = newRequestId();
    const controller = new AbortController();
    res.once('close', () => controller.abort());

    if (first === '_sim') {
      const raw = await readBody(req).catch(() => Buffer.alloc(0));
      let out: SimResponse;
      try {
        out = handleAdmin(this, req.method ?? 'GET', url, raw);
      } catch (err) {
        this.log?.error({ err, path: url.pathname }, 'emulator admin call failed');
        out = {
          status: 500,
          body: { error: { code: 500, message: err instanceof Error ? err.message : String(err) } },
        };
      }
      write(res, out, rid);
      return;
    }
    if (url.pathname === '/' || url.pathname === '') {
      write(res, { status: 200, body: this.index() }, rid);
      return;
    }
    const mounted = this.services.get(first);
    if (!mounted) {
      write(
        res,
        {
          status: 404,
          body: { error: { code: 404, message: `No service is mounted at /${first}.`, title: 'Not Found' } },
        },
        rid,
      );
      return;
    }
    const { def, router } = mounted;
    const path = url.pathname.slice(def.prefix.length) || '/';
    const method = req.method ?? 'GET';
    const simReq: SimRequest = {
      method,
      path,
      query: url.searchParams,
      headers: req.headers,
      body: undefined,
      rawBody: Buffer.alloc(0),
      params: {},
      auth: undefined,
      requestId: rid,
      baseUrl: `${this.base}${def.prefix}`,
      signal: controller.signal,
    };
    let template = '(unmatched)';
    let response: SimResponse;
    try {
      const match = router.match(method, path === '/' ? '' : path);
      if (!match) throw new SimError(404, `The resource could not be found.`, { type: 'HTTPNotFound' });
      if ('methods' in match) {
        throw new SimError(405, `The method ${method} is not allowed for this resource.`, {
          type: 'HTTPMethodNotAllowed',
          headers: { Allow: match.methods.join(', ') },
        });
      }
      const route: Route = match.route;
      template = route.template;
      simReq.params = match.params;
      simReq.rawBody = await readBody(req);
      simReq.body = parseJsonBody(simReq.rawBody, req.headers['content-type']);
      if (!route.public) {
        const token = header(req, 'x-auth-token');
        if (!token)
          throw new SimError(401, 'The request you have made requires authentication.', {
            type: 'Unauthorized',
          });
        simReq.auth = this.identity.validate(token);
      }
      def.before?.(simReq);
      const fault = this.faults.checkRequest(def.name, method, template, path);
      if (fault) throw fault;
      const latency = this.timing.latency(def.name, `${method} ${template}`);
      if (latency > 0) await sleep(latency, undefined, { signal: controller.signal }).catch(() => undefined);
      response = await route.handler(simReq);
    } catch (err) {
      response = this.renderError(def, err, simReq);
    }
    def.decorate?.(simReq, response);
    write(res, response, rid);
    this.stats.record(
      def.name,
      `${method} ${template}`,
      response.status,
      performance.now() - started,
      header(req, 'user-agent') || NO_CALLER,
    );
  }

  private renderError(def: ServiceDefinition, err: unknown, req: SimRequest): SimResponse {
    const simErr = SimError.is(err)
      ? err
      : new SimError(
          500,
          'The server has either erred or is incapable of performing the requested operation.',
          {
            type: 'HTTPInternalServerError',
          },
        );
    if (!SimError.is(err))
      this.log?.error({ err, path: req.path, service: def.name }, 'emulator handler failed');
    const out = def.renderError(simErr, req);
    if (simErr.headers) out.headers = { ...out.headers, ...simErr.headers };
    return out;
  }

  private index() {
    return {
      emulator: 'shiftstack sim openstack',
      auth_url: this.authUrl,
      services: this.serviceDefinitions.map((d) => ({
        name: d.name,
        type: d.type,
        url: `${this.base}${d.prefix}`,
      })),
      admin: `${this.base}/_sim`,
    };
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const b = chunk as Buffer;
    size += b.length;
    if (size > MAX_BODY_BYTES)
      throw new SimError(413, 'Request is too large.', { type: 'RequestEntityTooLarge' });
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

function parseJsonBody(raw: Buffer, contentType: string | undefined): unknown {
  if (raw.length === 0) return undefined;
  const ct = (contentType ?? '').toLowerCase();
  if (ct && !ct.includes('json')) return undefined;
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    throw new SimError(400, 'Malformed request body', { type: 'HTTPBadRequest', detail: 'malformed-json' });
  }
}

function write(res: ServerResponse, out: SimResponse, requestId: string): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string> = { 'X-Openstack-Request-Id': requestId, ...out.headers };
  let payload: Buffer | undefined;
  if (out.status !== 204 && out.status !== 304 && out.body !== undefined) {
    if (Buffer.isBuffer(out.body)) payload = out.body;
    else if (typeof out.body === 'string') payload = Buffer.from(out.body);
    else payload = Buffer.from(JSON.stringify(out.body));
    headers['Content-Type'] =
      out.contentType ?? (typeof out.body === 'string' ? 'text/plain; charset=UTF-8' : 'application/json');
  }
  headers['Content-Length'] = String(payload?.length ?? 0);
  res.writeHead(out.status, REASONS[out.status] ?? '', headers);
  res.end(payload);
}

/** Catalog ids must stay the same across restarts and requests; derive them from the service name. */
function stableId(seed: string): string {
  let h1 = 0x811c9dc5;
  let out = '';
  for (let round = 0; round < 4; round++) {
    for (const ch of `${seed}#${round}`) h1 = Math.imul(h1 ^ ch.charCodeAt(0), 16777619) >>> 0;
    out += h1.toString(16).padStart(8, '0');
  }
  return out;
}
