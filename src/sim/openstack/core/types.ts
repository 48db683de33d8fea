import type { IncomingHttpHeaders } from 'node:http';
import type { SimError } from './errors.ts';

/** Who made the request, resolved from the X-Auth-Token by Keystone. */
export interface AuthContext {
  token: string;
  userId: string;
  userName: string;
  domainId: string;
  /** undefined for unscoped, domain- and system-scoped tokens. */
  projectId: string | undefined;
  projectName: string | undefined;
  roles: readonly string[];
  isAdmin: boolean;
  systemScope: boolean;
  expiresAt: number;
}

export interface SimRequest {
  method: string;
  /** Path below the service prefix, e.g. `/v2.0/ports/abc`. */
  path: string;
  query: URLSearchParams;
  /** Lower-cased names, as node gives them. */
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; undefined when there is none. */
  body: unknown;
  rawBody: Buffer;
  /** Path parameters from the route template. */
  params: Record<string, string>;
  /** Set for routes that require authentication. */
  auth: AuthContext | undefined;
  requestId: string;
  /** Public URL of this service's prefix, e.g. `http://127.0.0.1:8080/networking`: for links and Location headers. */
  baseUrl: string;
  signal: AbortSignal;
}

export interface SimResponse {
  status: number;
  headers?: Record<string, string>;
  /** A JSON value, or a string/Buffer sent as is with `contentType`. */
  body?: unknown;
  contentType?: string;
}

export type Handler = (req: SimRequest) => SimResponse | Promise<SimResponse>;

export interface Route {
  method: string;
  /** Path template below the service prefix with `{param}` segments, e.g. `/v2.0/ports/{port_id}`. */
  template: string;
  handler: Handler;
  /** Routes such as version documents and token issue need no token. */
  public?: boolean;
}

export type ServiceName = 'keystone' | 'nova' | 'neutron' | 'octavia' | 'glance' | 'cinder' | 'placement';

export interface ServiceDefinition {
  name: ServiceName;
  /** Keystone catalog type. */
  type: string;
  /** Further catalog types served by the same endpoint (Cinder is both `block-storage` and `volumev3`). */
  aliases?: string[];
  /** Mount point on the emulator's HTTP server, e.g. `/networking`. */
  prefix: string;
  /** Catalog endpoint below the prefix, e.g. `/v2.1` for Nova; may use `{project_id}`. */
  catalogPath: string;
  routes: Route[];
  /** Renders an error in the service's own wire format. */
  renderError(err: SimError, req: SimRequest | undefined): SimResponse;
  /** Adds service headers to every response (Nova's microversion and compute request id). */
  decorate?(req: SimRequest, res: SimResponse): void;
  /** Validates per-request preconditions before routing (e.g. microversion headers). */
  before?(req: SimRequest): void;
}

/** A store that can be written to and restored from the emulator's state file. */
export interface Persistent {
  snapshot(): unknown;
  restore(data: unknown): void;
}
