/**
 * The HTTP face of a {@link KubeEmulator}: bearer-token authentication, routing of the REST
 * paths (`/api/v1/...`, `/apis/<group>/<version>/...`, namespaced or not, subresources),
 * content negotiation (JSON, YAML, Table, PartialObjectMetadata, aggregated discovery),
 * query-parameter handling, reactors, watches as chunked streams, and errors as Status bodies.
 */
import {
  createServer,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import {
  createSecureServer,
  type Http2SecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
} from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { stringify as toYaml, parse as parseYaml } from 'yaml';
import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  versionDoc,
} from './discovery.ts';
import { isIPv6 } from '../../lib/cidr.ts';
import { ADMIN_USER } from './auth/auth.ts';
import type { KubeEmulator } from './emulator.ts';
import { apiErrors, isStatusError, StatusError } from './errors.ts';
import { isObj, type Obj } from './json.ts';
import { evict } from './eviction.ts';
import { openapiV3Doc, openapiV3Index } from './openapi.ts';
import { openapiEtag, openapiV2Doc } from './openapi-v2.ts';
import { encodeOpenAPIv2 } from './protobuf/gnostic.ts';
import {
  decodeObject,
  PROTOBUF_MEDIA_TYPE,
  ProtobufDecodeError,
  UnsupportedProtobufKindError,
} from './protobuf/decode.ts';
import type { Action, Verb } from './reactors.ts';
import {
  managerFromUserAgent,
  parseFilter,
  PATCH_CONTENT_TYPES,
  type DeleteOptions,
  type FieldValidation,
  type InternalWrite,
  type ListQuery,
} from './rest.ts';
import { toTable, type IncludeObject } from './table.ts';
import type { ServingCert } from './tls.ts';
import { apiVersionOf, groupResource, type ResourceDef } from './types.ts';
import { defaultWatchTimeoutMs, type WatchEventType } from './watch.ts';

/** A request over HTTP/1.1 or, as client-go and kubectl speak to a real API server, HTTP/2. */
type Req = IncomingMessage | Http2ServerRequest;
type Res = ServerResponse | Http2ServerResponse;

/** The real server's request body limit (3 MiB). */
const MAX_BODY_BYTES = 3 * 1024 * 1024;
const PUBLIC_PATHS = new Set(['/version', '/healthz', '/livez', '/readyz']);
/** What one HTTP/2 connection may hold in flight (MB): lists and watches of thousands of objects. */
const SESSION_MEMORY_MB = 256;
/** How long an idle connection is kept (and what the Keep-Alive header tells clients). */
const KEEP_ALIVE_MS = 30_000;

type Output =
  | { kind: 'json' }
  | { kind: 'yaml' }
  | { kind: 'table'; version: 'v1' | 'v1beta1' }
  | { kind: 'partial'; version: 'v1' | 'v1beta1' }
  | { kind: 'discovery'; version: 'v2' | 'v2beta1' };

interface MediaRange {
  type: string;
  params: Record<string, string>;
}

function parseAccept(header: string | undefined): MediaRange[] {
  if (!header) return [{ type: '*/*', params: {} }];
  return header.split(',').map((part) => {
    const [type = '', ...rest] = part.split(';').map((s) => s.trim());
    const params: Record<string, string> = {};
    for (const p of rest) {
      const eq = p.indexOf('=');
      if (eq > 0) params[p.slice(0, eq).trim()] = p.slice(eq + 1).trim();
    }
    return { type: type.toLowerCase(), params };
  });
}

/** Picks the response form: the first Accept entry we can serve, in the client's order. */
function negotiate(accept: string | undefined, opts: { discovery: boolean; objects: boolean }): Output {
  for (const m of parseAccept(accept)) {
    const as = m.params.as;
    const json = m.type === 'application/json' || m.type === '*/*' || m.type === 'application/*';
    if (as) {
      if (m.type !== 'application/json') continue;
      if (as === 'APIGroupDiscoveryList' && opts.discovery && m.params.g === 'apidiscovery.k8s.io') {
        if (m.params.v === 'v2' || m.params.v === 'v2beta1')
          return { kind: 'discovery', version: m.params.v };
        continue;
      }
      if (opts.objects && m.params.g === 'meta.k8s.io' && (m.params.v === 'v1' || m.params.v === 'v1beta1')) {
        if (as === 'Table') return { kind: 'table', version: m.params.v };
        if (as === 'PartialObjectMetadata' || as === 'PartialObjectMetadataList')
          return { kind: 'partial', version: m.params.v };
      }
      continue;
    }
    if (json) return { kind: 'json' };
    if (m.type === 'application/yaml') return { kind: 'yaml' };
  }
  throw apiErrors.notAcceptable(['application/json', 'application/yaml']);
}

function bool(v: string | null): boolean | undefined {
  if (v === null) return undefined;
  return v === 'true' || v === '1';
}

function int(name: string, v: string | null): number | undefined {
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n))
    throw apiErrors.badRequest(`${name}: invalid value ${JSON.stringify(v)}: must be an integer`);
  return n;
}

interface Route {
  def: ResourceDef;
  namespace: string | undefined;
  name: string;
  subresource: string;
}

export interface ServerOptions {
  token: string;
}

/** The request handler for one emulator; `serverAddress` is what `/api` advertises. */
export class KubeHttp {
  private readonly em: KubeEmulator;
  private readonly token: string;
  private server: { server: Server | Http2SecureServer; sockets: Set<Socket> } | undefined;
  private address = '127.0.0.1:0';
  private v2Cache:
    { generation: number; json: string; etag: string; protobuf(): Uint8Array; modified: Date } | undefined;

  constructor(em: KubeEmulator, options: ServerOptions) {
    this.em = em;
    this.token = options.token;
    em.auth.addStaticToken(options.token, ADMIN_USER);
  }

  /**
   * Listens on loopback; with a certificate, over HTTPS (kubectl sends tokens only over TLS), where
   * a client that offers HTTP/2 by ALPN gets it, as from a real API server (kubectl and client-go
   * send every request and watch as streams of one connection); HTTP/1.1 clients are served too.
   */
  async listen(port: number, host: string, tls?: ServingCert): Promise<string> {
    const handler = (req: Req, res: Res) => {
      this.handle(req, res).catch((err: unknown) => this.fail(res, err));
    };
    const server = tls
      ? createSecureServer(
          {
            key: tls.keyPem,
            cert: tls.certPem,
            allowHTTP1: true,
            // Node refuses new streams on a connection holding more than this in flight (10 MB by
            // default), and one list of 5,000 Nodes is more; a Go API server sets no such bound.
            maxSessionMemory: SESSION_MEMORY_MB,
          },
          handler,
        )
      : createServer(handler);
    // The HTTP/1.1 side's limits (on the HTTP/2 server too, whose HTTP/1.1 connections read them):
    // watches are long requests, which Node's default 5-minute request timeout would cut; clients
    // keep their connections as long as the server's Keep-Alive says, and Node's 5 s made a busy
    // controller's bursts open a new TLS connection every dozen requests (448 handshakes for 100
    // machines); a real API server keeps idle connections far longer (as the OpenStack emulator does).
    Object.assign(server, { requestTimeout: 0, keepAliveTimeout: KEEP_ALIVE_MS, headersTimeout: 60_000 });
    const sockets = new Set<Socket>();
    server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = { server, sockets };
    const a = server.address() as AddressInfo;
    const h = isIPv6(host) ? `[${host}]` : host;
    this.address = `${h}:${a.port}`;
    return `${tls ? 'https' : 'http'}://${this.address}`;
  }

  async close(): Promise<void> {
    const listening = this.server;
    this.server = undefined;
    if (!listening) return;
    this.em.close();
    const closed = new Promise<void>((resolve) => listening.server.close(() => resolve()));
    // Open watches and idle keep-alive connections would hold the close forever.
    for (const socket of listening.sockets) socket.destroy();
    await closed;
  }

  private send(
    res: Res,
    code: number,
    body: unknown,
    output: Output = { kind: 'json' },
    headers: Record<string, string> = {},
  ): void {
    if (res.headersSent) return;
    let text: string;
    let type: string;
    if (output.kind === 'yaml') {
      text = toYaml(body);
      type = 'application/yaml';
    } else {
      text = JSON.stringify(body);
      type =
        output.kind === 'discovery'
          ? `application/json;g=apidiscovery.k8s.io;v=${output.version};as=APIGroupDiscoveryList`
          : 'application/json';
    }
    writeHead(res, code, {
      'content-type': type,
      'cache-control': 'no-cache, private',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  }

  private fail(res: Res, err: unknown): void {
    if (isStatusError(err)) {
      this.send(res, err.code, err.status, { kind: 'json' }, err.headers);
      return;
    }
    this.em.log?.error({ err }, 'kube emulator request failed');
    const e = apiErrors.internal(err instanceof Error ? err.message : String(err));
    this.send(res, 500, e.status);
  }

  private authenticate(req: Req, url: URL, path: string): void {
    const h = req.headers.authorization;
    if (h === undefined) {
      if (
        PUBLIC_PATHS.has(path) ||
        path.startsWith('/healthz/') ||
        path.startsWith('/livez/') ||
        path.startsWith('/readyz/')
      )
        return;
      // Anonymous requests are authenticated as system:anonymous and then forbidden.
      throw new StatusError(
        403,
        'Forbidden',
        `forbidden: User "system:anonymous" cannot ${req.method?.toLowerCase() ?? 'get'} path "${path}"`,
      );
    }
    const m = /^Bearer\s+(.+)$/i.exec(h);
    if (m?.[1] === this.token) return;
    // Any other token (a ServiceAccount's) is held to RBAC.
    this.em.auth.admit(m?.[1], req.method ?? 'GET', url);
  }

  private async readBody(req: Req): Promise<Buffer> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req) {
      const b = c as Buffer;
      size += b.length;
      if (size > MAX_BODY_BYTES)
        throw apiErrors.tooLarge(`Request entity too large: limit is ${MAX_BODY_BYTES}`);
      chunks.push(b);
    }
    return Buffer.concat(chunks);
  }

  /** A request body in JSON, YAML or Kubernetes protobuf, as the JSON object it stands for. */
  private parseObject(body: Buffer, contentType: string): unknown {
    const type = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    if (type === PROTOBUF_MEDIA_TYPE) {
      try {
        return decodeObject(body);
      } catch (err) {
        if (err instanceof UnsupportedProtobufKindError)
          throw new StatusError(415, 'UnsupportedMediaType', err.message);
        if (err instanceof ProtobufDecodeError) throw apiErrors.badRequest(err.message);
        throw err;
      }
    }
    const text = body.toString('utf8');
    try {
      if (type === 'application/yaml') return parseYaml(text) as unknown;
      if (type === '' || type === 'application/json' || type === '*/*')
        return text ? (JSON.parse(text) as unknown) : undefined;
    } catch (err) {
      throw apiErrors.badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
    }
    throw apiErrors.unsupportedMediaType(['application/json', 'application/yaml', PROTOBUF_MEDIA_TYPE]);
  }

  private async handle(req: Req, res: Res): Promise<void> {
    this.em.countRequest(req.httpVersion);
    const url = new URL(req.url ?? '/', 'http://emulator');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    this.authenticate(req, url, path);
    const method = req.method ?? 'GET';
    const accept = req.headers.accept;

    if (path === '/version') return this.send(res, 200, versionDoc(this.em.version));
    if (PUBLIC_PATHS.has(path) || /^\/(healthz|livez|readyz)\//.test(path)) {
      writeHead(res, 200, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return;
    }
    if (path === '/api') {
      const out = negotiate(accept, { discovery: true, objects: false });
      if (out.kind === 'discovery')
        return this.send(res, 200, aggregatedDiscovery(this.em.registry, true, out.version), out);
      return this.send(res, 200, apiVersions(this.address), out);
    }
    if (path === '/apis') {
      const out = negotiate(accept, { discovery: true, objects: false });
      if (out.kind === 'discovery')
        return this.send(res, 200, aggregatedDiscovery(this.em.registry, false, out.version), out);
      return this.send(res, 200, apiGroupList(this.em.registry), out);
    }
    if (path === '/openapi/v2') return this.serveOpenAPIv2(req, res);
    if (path === '/openapi/v3')
      return this.send(res, 200, openapiV3Index(this.em.registry, this.em.version.gitVersion));
    if (path.startsWith('/openapi/v3/')) {
      const rest = path.slice('/openapi/v3/'.length).split('/');
      const [group, version] = rest[0] === 'api' ? ['', rest[1] ?? ''] : [rest[1] ?? '', rest[2] ?? ''];
      const doc = openapiV3Doc(this.em.registry, group, version, this.em.version.gitVersion);
      if (!doc) throw notFoundPath();
      return this.send(res, 200, doc);
    }

    const segs = path
      .split('/')
      .filter(Boolean)
      .map((seg) => {
        try {
          return decodeURIComponent(seg);
        } catch {
          throw apiErrors.badRequest(`invalid path segment ${JSON.stringify(seg)}`);
        }
      });
    let group: string;
    let version: string;
    let restSegs: string[];
    if (segs[0] === 'api' && segs.length >= 2) {
      group = '';
      version = segs[1] as string;
      restSegs = segs.slice(2);
    } else if (segs[0] === 'apis' && segs.length >= 2) {
      group = segs[1] as string;
      if (segs.length === 2) {
        const g = apiGroup(this.em.registry, group);
        if (!g) throw notFoundPath();
        return this.send(res, 200, g, negotiate(accept, { discovery: false, objects: false }));
      }
      version = segs[2] as string;
      restSegs = segs.slice(3);
    } else {
      throw notFoundPath();
    }
    if (restSegs.length === 0) {
      const list = apiResourceList(this.em.registry, group, version);
      if (!list) throw notFoundPath();
      return this.send(res, 200, list, negotiate(accept, { discovery: false, objects: false }));
    }
    const route = this.route(group, version, restSegs);
    await this.serveResource(req, res, url, method, route);
  }

  private route(group: string, version: string, segs: string[]): Route {
    const reg = this.em.registry;
    let namespace: string | undefined;
    let s = segs;
    if (s[0] === 'namespaces' && s.length >= 3) {
      const candidate = reg.get(group, version, s[2] as string);
      if (candidate?.namespaced) {
        namespace = s[1];
        s = s.slice(2);
      }
    }
    const [resource = '', name = '', subresource = '', ...extra] = s;
    const def = reg.get(group, version, resource);
    if (!def || extra.length) throw notFoundPath();
    if (def.namespaced && namespace === undefined && name) throw notFoundPath();
    if (subresource && !def.subresources.includes(subresource)) throw notFoundPath();
    return { def, namespace, name, subresource };
  }

  private runReactors(route: Route, verb: Verb, extra: Partial<Action> = {}): Obj | undefined {
    const r = this.em.reactors.run({
      verb,
      group: route.def.group,
      version: route.def.version,
      resource: route.def.resource,
      subresource: route.subresource,
      namespace: route.namespace ?? '',
      name: route.name,
      ...extra,
    });
    if (!r?.handled) return undefined;
    if (r.error) throw r.error;
    return r.object ?? {};
  }

  private writeOptions(url: URL, req: Req, route: Route): InternalWrite {
    const dryRun = url.searchParams.getAll('dryRun');
    for (const d of dryRun) {
      if (d !== 'All') {
        throw apiErrors.invalid('meta.k8s.io', 'CreateOptions', '', [
          { type: 'FieldValueNotSupported', field: 'dryRun', value: d, detail: 'supported values: "All"' },
        ]);
      }
    }
    const fv = url.searchParams.get('fieldValidation') ?? 'Warn';
    if (!isFieldValidation(fv)) {
      throw apiErrors.badRequest(
        `fieldValidation: Unsupported value: ${JSON.stringify(fv)}: supported values: "Ignore", "Warn", "Strict"`,
      );
    }
    const fieldManager = url.searchParams.get('fieldManager') ?? undefined;
    return {
      dryRun: dryRun.length > 0,
      fieldValidation: fv,
      subresource: route.subresource,
      manager: fieldManager ?? managerFromUserAgent(req.headers['user-agent']),
      ...(fieldManager ? { fieldManager } : {}),
    };
  }

  /** The v2 document of what is served now, built once per registry change. */
  private openapiV2(): { json: string; etag: string; protobuf(): Uint8Array; modified: Date } {
    const generation = this.em.registry.generation;
    if (this.v2Cache?.generation !== generation) {
      const doc = openapiV2Doc(this.em.registry, this.em.version.gitVersion);
      const json = JSON.stringify(doc);
      let pb: Uint8Array | undefined;
      this.v2Cache = {
        generation,
        json,
        etag: openapiEtag(json),
        protobuf: () => (pb ??= encodeOpenAPIv2(doc)),
        modified: this.em.now(),
      };
    }
    return this.v2Cache;
  }

  /**
   * kube-openapi's handler: the first Accept clause (by quality, then specificity) that is JSON or
   * one of the two protobuf names wins; protobuf answers under its dotted name (Go's MIME parser
   * refuses the `@` of the old one); an ETag of the JSON makes If-None-Match a 304; else 406.
   */
  private serveOpenAPIv2(req: Req, res: Res): void {
    const clauses = parseAccept(req.headers.accept || '*/*')
      .map((m, i) => ({ ...m, q: m.params.q === undefined ? 1 : Number(m.params.q), i }))
      .filter((m) => m.q > 0)
      .sort((a, b) => b.q - a.q || specificity(b.type) - specificity(a.type) || a.i - b.i);
    for (const c of clauses) {
      const [type = '', sub = ''] = c.type.split('/');
      const served = OPENAPI_V2_TYPES.find(
        (t) => (type === '*' || type === 'application') && (sub === '*' || sub === t.subType),
      );
      if (!served) continue;
      const doc = this.openapiV2();
      const headers = {
        vary: 'Accept',
        etag: `"${doc.etag}"`,
        'last-modified': doc.modified.toUTCString(),
        'content-type': served.contentType,
      };
      const match = req.headers['if-none-match'];
      if (match && match.split(',').some((t) => t.trim() === headers.etag || t.trim() === '*')) {
        writeHead(res, 304, headers);
        res.end();
        return;
      }
      const body = served.protobuf ? Buffer.from(doc.protobuf()) : Buffer.from(doc.json);
      writeHead(res, 200, { ...headers, 'content-length': body.length });
      res.end(body);
      return;
    }
    writeHead(res, 406, { vary: 'Accept' });
    res.end();
  }

  private warningHeaders(warnings: string[]): Record<string, string> {
    return warnings.length ? { warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(', ') } : {};
  }

  private async serveResource(req: Req, res: Res, url: URL, method: string, route: Route): Promise<void> {
    const { def, name, subresource } = route;
    const ns = route.namespace ?? '';
    const rest = this.em.rest;
    const accept = req.headers.accept;
    const contentType = req.headers['content-type'] ?? '';
    const verbAllowed = (v: string) => {
      if (!def.verbs.includes(v)) throw apiErrors.methodNotSupported(groupResource(def), v);
    };
    // A CRD converted by a webhook goes through the asynchronous verbs; every other resource
    // keeps the synchronous ones.
    const conv = def.webhookConversion ? this.em.conversions : undefined;
    const signal = conv ? requestSignal(res) : undefined;

    if (method === 'GET') {
      const out = negotiate(accept, { discovery: false, objects: true });
      if (name) {
        verbAllowed('get');
        const injected = this.runReactors(route, 'get', { output: out.kind });
        if (subresource === 'scale')
          return this.send(res, 200, injected ?? rest.getScale(def, ns, name), out);
        const obj =
          injected ?? (conv && signal ? await conv.get(def, ns, name, signal) : rest.get(def, ns, name));
        return this.sendObject(res, 200, def, obj, out, url);
      }
      const query: ListQuery = {
        ...(url.searchParams.get('labelSelector') !== null
          ? { labelSelector: url.searchParams.get('labelSelector') as string }
          : {}),
        ...(url.searchParams.get('fieldSelector') !== null
          ? { fieldSelector: url.searchParams.get('fieldSelector') as string }
          : {}),
        ...(url.searchParams.get('resourceVersion') !== null
          ? { resourceVersion: url.searchParams.get('resourceVersion') as string }
          : {}),
        ...(url.searchParams.get('resourceVersionMatch') !== null
          ? { resourceVersionMatch: url.searchParams.get('resourceVersionMatch') as string }
          : {}),
      };
      if (bool(url.searchParams.get('watch'))) {
        verbAllowed('watch');
        this.runReactors(route, 'watch', { output: out.kind });
        return this.serveWatch(res, url, route, query, out);
      }
      verbAllowed('list');
      const injected = this.runReactors(route, 'list', { output: out.kind });
      if (injected) return this.send(res, 200, injected, out);
      const limit = int('limit', url.searchParams.get('limit'));
      const cont = url.searchParams.get('continue');
      const listQuery = { ...query, ...(limit ? { limit } : {}), ...(cont ? { continue: cont } : {}) };
      const result =
        conv && signal
          ? await conv.list(def, route.namespace, listQuery, signal)
          : rest.list(def, route.namespace, listQuery);
      if (out.kind === 'table') {
        const include = (url.searchParams.get('includeObject') ?? 'Metadata') as IncludeObject;
        const meta = result.list.metadata as Obj;
        const table = toTable(def, result.items, meta, include, this.em.now().getTime());
        return this.send(
          res,
          200,
          out.version === 'v1' ? table : { ...table, apiVersion: 'meta.k8s.io/v1beta1' },
          { kind: 'json' },
        );
      }
      if (out.kind === 'partial') {
        const items = result.items.map((o) => ({
          kind: 'PartialObjectMetadata',
          apiVersion: `meta.k8s.io/${out.version}`,
          metadata: o.metadata,
        }));
        return this.send(
          res,
          200,
          {
            kind: 'PartialObjectMetadataList',
            apiVersion: `meta.k8s.io/${out.version}`,
            metadata: result.list.metadata,
            items,
          },
          { kind: 'json' },
        );
      }
      return this.send(res, 200, result.list, out);
    }

    const rawBody = await this.readBody(req);
    const body = rawBody.toString('utf8');
    const out = negotiate(accept, { discovery: false, objects: true });

    if (method === 'POST') {
      if (!name && subresource === '' && (route.namespace !== undefined || !def.namespaced)) {
        verbAllowed('create');
        const parsed = this.parseObject(rawBody, contentType);
        const injected = this.runReactors(route, 'create', isObj(parsed) ? { object: parsed } : {});
        if (injected) return this.sendObject(res, 201, def, injected, out, url);
        const opts = this.writeOptions(url, req, route);
        const r =
          conv && signal
            ? await conv.create(def, ns, parsed, opts, signal)
            : rest.create(def, ns, parsed, opts);
        return this.sendObject(res, r.code, def, r.object, out, url, this.warningHeaders(r.warnings));
      }
      if (name && subresource === 'eviction') {
        const eviction = this.parseObject(rawBody, contentType);
        const e = isObj(eviction) ? eviction : {};
        const injected = this.runReactors(route, 'create', { object: e });
        if (injected) return this.send(res, 201, injected, out);
        const opts = this.deleteOptions(url, isObj(e.deleteOptions) ? e.deleteOptions : undefined);
        const deps = {
          rest,
          pods: def,
          budgets: this.em.resource('policy/v1', 'poddisruptionbudgets'),
          now: () => this.em.now(),
        };
        return this.send(res, 201, evict(deps, ns, name, e, opts), out);
      }
      if (name && subresource === 'token') {
        const request = this.parseObject(rawBody, contentType);
        const r = isObj(request) ? request : {};
        const injected = this.runReactors(route, 'create', { object: r });
        if (injected) return this.send(res, 201, injected, out);
        const sa = rest.get(def, ns, name);
        const errs = this.em.tokens.validate(r);
        if (errs.length) throw apiErrors.invalid('authentication.k8s.io', 'TokenRequest', name, errs);
        return this.send(res, 201, this.em.tokens.issue(sa, r, this.em.now()), out);
      }
      throw apiErrors.methodNotSupported(groupResource(def), 'create');
    }

    if (method === 'PUT') {
      if (!name) throw apiErrors.methodNotSupported(groupResource(def), 'update');
      verbAllowed('update');
      const parsed = this.parseObject(rawBody, contentType);
      const injected = this.runReactors(route, 'update', isObj(parsed) ? { object: parsed } : {});
      if (injected) return this.sendObject(res, 200, def, injected, out, url);
      const opts = this.writeOptions(url, req, route);
      if (subresource === 'scale') {
        const spec = isObj(parsed) && isObj(parsed.spec) ? parsed.spec : {};
        const rv =
          isObj(parsed) && isObj(parsed.metadata)
            ? (parsed.metadata.resourceVersion as string | undefined)
            : undefined;
        return this.send(
          res,
          200,
          rest.updateScale(def, ns, name, Number(spec.replicas ?? 0), rv, opts),
          out,
        );
      }
      const r =
        conv && signal
          ? await conv.update(def, ns, name, parsed, opts, signal)
          : rest.update(def, ns, name, parsed, opts);
      return this.sendObject(res, r.code, def, r.object, out, url, this.warningHeaders(r.warnings));
    }

    if (method === 'PATCH') {
      if (!name) throw apiErrors.methodNotSupported(groupResource(def), 'patch');
      verbAllowed('patch');
      const type = PATCH_CONTENT_TYPES[contentType.split(';')[0]?.trim().toLowerCase() ?? ''];
      if (!type) {
        throw apiErrors.unsupportedMediaType(
          def.strategy.strategicMerge
            ? [
                'application/json-patch+json',
                'application/merge-patch+json',
                'application/apply-patch+yaml',
                'application/strategic-merge-patch+json',
              ]
            : ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'],
        );
      }
      const injected = this.runReactors(route, 'patch', { patch: { type, body } });
      if (injected) return this.sendObject(res, 200, def, injected, out, url);
      const opts = {
        ...this.writeOptions(url, req, route),
        ...(bool(url.searchParams.get('force')) ? { force: true } : {}),
      };
      if (subresource === 'scale') {
        const current = rest.getScale(def, ns, name);
        const patched = this.patchScale(current, type, body);
        const spec = isObj(patched.spec) ? patched.spec : {};
        return this.send(
          res,
          200,
          rest.updateScale(def, ns, name, Number(spec.replicas ?? 0), undefined, opts),
          out,
        );
      }
      const r =
        conv && signal
          ? await conv.patch(def, ns, name, type, body, opts, signal)
          : rest.patch(def, ns, name, type, body, opts);
      return this.sendObject(res, r.code, def, r.object, out, url, this.warningHeaders(r.warnings));
    }

    if (method === 'DELETE') {
      const parsed = body.trim() ? this.parseObject(rawBody, contentType || 'application/json') : undefined;
      const opts = this.deleteOptions(url, parsed);
      if (!name) {
        verbAllowed('deletecollection');
        const injected = this.runReactors(route, 'deletecollection');
        if (injected) return this.send(res, 200, injected, out);
        const query: ListQuery = {
          ...(url.searchParams.get('labelSelector')
            ? { labelSelector: url.searchParams.get('labelSelector') as string }
            : {}),
          ...(url.searchParams.get('fieldSelector')
            ? { fieldSelector: url.searchParams.get('fieldSelector') as string }
            : {}),
        };
        const list =
          conv && signal
            ? await conv.deleteCollection(def, route.namespace, query, opts, signal)
            : rest.deleteCollection(def, route.namespace, query, opts);
        return this.send(res, 200, list, out);
      }
      verbAllowed('delete');
      const injected = this.runReactors(route, 'delete');
      if (injected) return this.send(res, 200, injected, out);
      const r =
        conv && signal ? await conv.delete(def, ns, name, opts, signal) : rest.delete(def, ns, name, opts);
      return this.send(res, r.code, r.body, out);
    }
    throw new StatusError(
      405,
      'MethodNotAllowed',
      `the server does not allow this method on the requested resource`,
    );
  }

  private patchScale(current: Obj, type: string, body: string): Obj {
    let doc: unknown;
    try {
      doc = type === 'apply' ? parseYaml(body) : JSON.parse(body);
    } catch (err) {
      throw apiErrors.badRequest(`error decoding patch: ${(err as Error).message}`);
    }
    if (type === 'json') {
      const ops = Array.isArray(doc) ? doc : [];
      const next = structuredClone(current);
      for (const o of ops) {
        if (isObj(o) && o.path === '/spec/replicas' && (o.op === 'replace' || o.op === 'add'))
          (next.spec as Obj).replicas = o.value;
      }
      return next;
    }
    const spec = isObj(doc) && isObj(doc.spec) ? doc.spec : {};
    return { ...current, spec: { ...(current.spec as Obj), ...spec } };
  }

  private deleteOptions(url: URL, body: unknown): DeleteOptions {
    const b = isObj(body) ? body : {};
    const opts: DeleteOptions = {};
    const policy =
      url.searchParams.get('propagationPolicy') ??
      (typeof b.propagationPolicy === 'string' ? b.propagationPolicy : undefined);
    if (policy !== undefined) {
      if (policy !== 'Foreground' && policy !== 'Background' && policy !== 'Orphan') {
        throw apiErrors.invalid('meta.k8s.io', 'DeleteOptions', '', [
          {
            type: 'FieldValueNotSupported',
            field: 'propagationPolicy',
            value: policy,
            detail: 'supported values: "Foreground", "Background", "Orphan", "nil"',
          },
        ]);
      }
      opts.propagationPolicy = policy;
    }
    const orphan =
      bool(url.searchParams.get('orphanDependents')) ??
      (typeof b.orphanDependents === 'boolean' ? b.orphanDependents : undefined);
    if (orphan !== undefined) opts.orphanDependents = orphan;
    if (
      url.searchParams.getAll('dryRun').includes('All') ||
      (Array.isArray(b.dryRun) && b.dryRun.includes('All'))
    )
      opts.dryRun = true;
    const grace =
      int('gracePeriodSeconds', url.searchParams.get('gracePeriodSeconds')) ??
      (typeof b.gracePeriodSeconds === 'number' ? b.gracePeriodSeconds : undefined);
    if (grace !== undefined) opts.gracePeriodSeconds = grace;
    if (isObj(b.preconditions)) {
      const p = b.preconditions;
      opts.preconditions = {
        ...(typeof p.uid === 'string' ? { uid: p.uid } : {}),
        ...(typeof p.resourceVersion === 'string' ? { resourceVersion: p.resourceVersion } : {}),
      };
    }
    return opts;
  }

  private sendObject(
    res: Res,
    code: number,
    def: ResourceDef,
    obj: Obj,
    out: Output,
    url: URL,
    headers: Record<string, string> = {},
  ): void {
    if (out.kind === 'table') {
      const include = (url.searchParams.get('includeObject') ?? 'Metadata') as IncludeObject;
      const table = toTable(
        def,
        [obj],
        { resourceVersion: (obj.metadata as Obj | undefined)?.resourceVersion ?? '' },
        include,
        this.em.now().getTime(),
      );
      return this.send(
        res,
        code,
        out.version === 'v1' ? table : { ...table, apiVersion: 'meta.k8s.io/v1beta1' },
        { kind: 'json' },
        headers,
      );
    }
    if (out.kind === 'partial') {
      return this.send(
        res,
        code,
        { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${out.version}`, metadata: obj.metadata },
        { kind: 'json' },
        headers,
      );
    }
    this.send(res, code, obj, out, headers);
  }

  private serveWatch(res: Res, url: URL, route: Route, query: ListQuery, out: Output): void {
    const { def } = route;
    const filter = parseFilter(
      def,
      def.namespaced ? route.namespace : undefined,
      query.labelSelector,
      query.fieldSelector,
    );
    const timeoutSeconds = int('timeoutSeconds', url.searchParams.get('timeoutSeconds'));
    const sendInitialEvents = bool(url.searchParams.get('sendInitialEvents'));
    const allowBookmarks = bool(url.searchParams.get('allowWatchBookmarks')) === true;
    if (sendInitialEvents !== undefined) {
      const errs = [];
      if (query.resourceVersionMatch !== 'NotOlderThan') {
        errs.push({
          type: 'FieldValueForbidden' as const,
          field: 'resourceVersionMatch',
          detail: 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        });
      }
      if (!allowBookmarks)
        errs.push({
          type: 'FieldValueForbidden' as const,
          field: 'allowWatchBookmarks',
          detail: 'allowWatchBookmarks must be true when sendInitialEvents is set',
        });
      if (errs.length) throw apiErrors.invalid('meta.k8s.io', 'ListOptions', '', errs);
    }
    const include = (url.searchParams.get('includeObject') ?? 'Metadata') as IncludeObject;
    const rest = this.em.rest;
    const now = () => this.em.now().getTime();
    const conv = def.webhookConversion ? this.em.conversions : undefined;
    const signal = conv ? requestSignal(res) : undefined;
    const render = (type: WatchEventType, stored: Obj): Obj | Promise<Obj> => {
      if (conv && signal) {
        const o = conv.event(def, stored, signal);
        return o instanceof Promise ? o.then((c) => shape(type, c)) : shape(type, o);
      }
      return shape(type, rest.out(def, stored));
    };
    const shape = (type: WatchEventType, o: Obj): Obj => {
      if (out.kind === 'table' && type !== 'BOOKMARK') {
        const t = toTable(
          def,
          [o],
          { resourceVersion: (o.metadata as Obj | undefined)?.resourceVersion ?? '' },
          include,
          now(),
        );
        return out.version === 'v1' ? t : { ...t, apiVersion: 'meta.k8s.io/v1beta1' };
      }
      if (out.kind === 'partial')
        return {
          kind: 'PartialObjectMetadata',
          apiVersion: `meta.k8s.io/${out.version}`,
          metadata: o.metadata,
        };
      return o;
    };
    let started = false;
    const startStream = () => {
      if (started) return;
      started = true;
      // HTTP/2 frames the stream itself and refuses HTTP/1.1's connection headers.
      const head = { 'content-type': 'application/json', 'cache-control': 'no-cache, private' };
      if (isHttp2(res)) res.writeHead(200, head);
      else {
        res.writeHead(200, { ...head, 'transfer-encoding': 'chunked' });
        res.flushHeaders();
      }
    };
    this.em.watches.start(
      {
        def,
        filter,
        ...(query.resourceVersion !== undefined ? { resourceVersion: query.resourceVersion } : {}),
        ...(query.resourceVersionMatch !== undefined
          ? { resourceVersionMatch: query.resourceVersionMatch }
          : {}),
        ...(sendInitialEvents !== undefined ? { sendInitialEvents } : {}),
        allowBookmarks,
        timeoutMs:
          timeoutSeconds !== undefined && timeoutSeconds > 0
            ? timeoutSeconds * 1000
            : defaultWatchTimeoutMs(),
        render,
        // The same object for every watcher of this version and form: serialised once per event.
        ...(conv || out.kind === 'table'
          ? {}
          : {
              renderKey: `${apiVersionOf(def)} ${def.kind} ${out.kind}${'version' in out ? ` ${out.version}` : ''}`,
            }),
      },
      {
        write(chunk) {
          startStream();
          if (!writable(res)) return;
          if (isHttp2(res)) res.write(chunk);
          else res.write(chunk);
        },
        end() {
          startStream();
          if (writable(res)) res.end();
        },
        buffered: () => res.writableLength,
        onClose(cb) {
          res.once('close', cb);
        },
      },
    );
    startStream();
  }
}

const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
/** What `/openapi/v2` serves, in kube-openapi's order. */
const OPENAPI_V2_TYPES = [
  { subType: 'json', contentType: 'application/json', protobuf: false },
  {
    subType: 'com.github.proto-openapi.spec.v2@v1.0+protobuf',
    contentType: OPENAPI_V2_PROTOBUF,
    protobuf: true,
  },
  {
    subType: 'com.github.proto-openapi.spec.v2.v1.0+protobuf',
    contentType: OPENAPI_V2_PROTOBUF,
    protobuf: true,
  },
];

/** goautoneg's ordering: `type/sub` before `type/*` before `*\/*`. */
function specificity(type: string): number {
  if (type === '*/*') return 0;
  return type.endsWith('/*') ? 1 : 2;
}

function isFieldValidation(v: string): v is FieldValidation {
  return v === 'Ignore' || v === 'Warn' || v === 'Strict';
}

function isHttp2(res: Res): res is Http2ServerResponse {
  return 'stream' in res;
}

/** The two protocols' `writeHead` (and `write`) typings have overloads that do not unify. */
function writeHead(res: Res, code: number, headers: OutgoingHttpHeaders): void {
  if (isHttp2(res)) res.writeHead(code, headers);
  else res.writeHead(code, headers);
}

/** Not ended, and its connection (HTTP/1.1) or stream (HTTP/2) not gone. */
function writable(res: Res): boolean {
  return !(isHttp2(res) ? res.stream.destroyed : res.destroyed) && !res.writableEnded;
}

/** Aborted when the client goes away before its answer is written (a webhook call then stops). */
function requestSignal(res: Res): AbortSignal {
  const ac = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) ac.abort(new Error('the client closed the request'));
  });
  return ac.signal;
}

function notFoundPath(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource', {
    causes: [{ reason: 'UnexpectedServerResponse', message: '404 page not found' }],
  });
}
