/**
 * The errors the OpenStack client throws. One HTTP error class with a `kind` and predicates, and a few
 * semantic errors. Every class has a name-based `is()` brand check, because `instanceof` fails when
 * two copies of a module are loaded; messages read as one log line or Kubernetes Event and never
 * carry a token, password or secret.
 */
import { redact, redactText } from '../../lib/redact.ts';

/** The HTTP statuses callers branch on, by name; anything else is `ClientError`, `ServerError` or `UnexpectedStatus`. */
export type HttpErrorKind =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'Conflict'
  | 'PreconditionFailed'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'RateLimited'
  | 'InternalServerError'
  | 'NotImplemented'
  | 'BadGateway'
  | 'ServiceUnavailable'
  | 'GatewayTimeout'
  | 'ClientError'
  | 'ServerError'
  /** A success or redirect status the caller did not list in `expect`. */
  | 'UnexpectedStatus';

const KINDS: Readonly<Record<number, HttpErrorKind>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  412: 'PreconditionFailed',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  429: 'RateLimited',
  500: 'InternalServerError',
  501: 'NotImplemented',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
  504: 'GatewayTimeout',
};

export function httpErrorKind(status: number): HttpErrorKind {
  const known = KINDS[status];
  if (known) return known;
  if (status >= 500) return 'ServerError';
  if (status >= 400) return 'ClientError';
  return 'UnexpectedStatus';
}

export interface HttpErrorInit {
  status: number;
  method: string;
  /** The request URL; secret query values must already be redacted (see `safeUrl`). */
  url: string;
  /** Service type, e.g. `network`. */
  service: string;
  requestId?: string | undefined;
  /** The service's own message, parsed from its error format. */
  serviceMessage: string;
  /** Neutron's `type`, Nova's fault name, Keystone's title, Placement's code, Octavia's faultcode. */
  errorType?: string | undefined;
  /** The parsed error body (JSON, or text), redacted. */
  body?: unknown;
  /** From `Retry-After` on 429 and 503. */
  retryAfterMs?: number | undefined;
}

/**
 * A response with a status the caller did not expect. `message` is the whole log line
 * (`DELETE https://neutron/v2.0/ports/abc → 404 NotFound (req-…): Port abc could not be found.`);
 * `serviceMessage` is the service's own text alone.
 */
export class OpenStackHttpError extends Error {
  override readonly name = 'OpenStackHttpError';
  readonly kind: HttpErrorKind;
  readonly status: number;
  readonly method: string;
  readonly url: string;
  readonly service: string;
  readonly requestId: string | undefined;
  readonly serviceMessage: string;
  readonly errorType: string | undefined;
  readonly body: unknown;
  readonly retryAfterMs: number | undefined;

  constructor(init: HttpErrorInit) {
    const kind = httpErrorKind(init.status);
    const serviceMessage = redactText(init.serviceMessage);
    const rid = init.requestId ? ` (${init.requestId})` : '';
    super(
      `${init.method} ${init.url} → ${init.status} ${kind}${rid}${serviceMessage ? `: ${serviceMessage}` : ''}`,
    );
    this.kind = kind;
    this.status = init.status;
    this.method = init.method;
    this.url = init.url;
    this.service = init.service;
    this.requestId = init.requestId;
    this.serviceMessage = serviceMessage;
    this.errorType = init.errorType;
    this.body = redact(init.body);
    this.retryAfterMs = init.retryAfterMs;
  }

  static is(this: void, err: unknown): err is OpenStackHttpError {
    return hasName(err, 'OpenStackHttpError') && typeof (err as { status?: unknown }).status === 'number';
  }
}

const statusIs =
  (status: number) =>
  (err: unknown): err is OpenStackHttpError =>
    OpenStackHttpError.is(err) && err.status === status;

export const isBadRequest = statusIs(400);
export const isUnauthorized = statusIs(401);
export const isForbidden = statusIs(403);
export const isNotFound = statusIs(404);
export const isConflict = statusIs(409);
export const isPreconditionFailed = statusIs(412);
export const isRequestEntityTooLarge = statusIs(413);
export const isRateLimited = statusIs(429);
export const isInternalServerError = statusIs(500);
export const isNotImplemented = statusIs(501);
export const isServiceUnavailable = statusIs(503);

/** Returns undefined for a 404 and rethrows anything else: `const port = await get(id).catch(ignoreNotFound)`. */
export function ignoreNotFound(err: unknown): undefined {
  if (isNotFound(err)) return undefined;
  throw err;
}

/** No endpoint in the catalog (or in `endpointOverride`) matches the service type, interface and region. */
export class EndpointNotFoundError extends Error {
  override readonly name = 'EndpointNotFoundError';
  readonly serviceType: string;
  readonly interface: string;
  readonly region: string | undefined;
  /** What the catalog has, one `type (interface region, …)` per service. */
  readonly available: readonly string[];

  constructor(init: {
    serviceType: string;
    interface: string;
    region?: string | undefined;
    available: readonly string[];
    reason?: string;
  }) {
    const where = `interface ${init.interface}${init.region ? `, region ${init.region}` : ''}`;
    const has = init.available.length > 0 ? init.available.join('; ') : 'no endpoints at all';
    super(
      `no ${init.serviceType} endpoint for ${where}${init.reason ? ` (${init.reason})` : ''}; the catalog has: ${has}`,
    );
    this.serviceType = init.serviceType;
    this.interface = init.interface;
    this.region = init.region;
    this.available = init.available;
  }

  static is(this: void, err: unknown): err is EndpointNotFoundError {
    return hasName(err, 'EndpointNotFoundError');
  }
}

/** Keystone refused to issue a token. Names the auth URL and the identity, never the secret. */
export class AuthenticationError extends Error {
  override readonly name = 'AuthenticationError';
  readonly authUrl: string;
  /** Who tried, e.g. `user demo (domain Default), project demo (domain Default)`. */
  readonly identity: string;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  /** Keystone's message; for a 401 always the same generic text, whatever was wrong. */
  readonly serviceMessage: string;
  /** What to check, in words. */
  readonly fix: string;

  constructor(init: {
    authUrl: string;
    identity: string;
    status?: number | undefined;
    requestId?: string | undefined;
    serviceMessage: string;
    fix: string;
    cause?: unknown;
  }) {
    const status = init.status !== undefined ? ` → ${init.status}` : '';
    const rid = init.requestId ? ` (${init.requestId})` : '';
    super(
      redactText(
        `authentication at ${init.authUrl} failed for ${init.identity}${status}${rid}: ${init.serviceMessage.replace(/\.\s*$/, '')}. ${init.fix}`,
      ),
      init.cause !== undefined ? { cause: init.cause } : undefined,
    );
    this.authUrl = init.authUrl;
    this.identity = init.identity;
    this.status = init.status;
    this.requestId = init.requestId;
    this.serviceMessage = redactText(init.serviceMessage);
    this.fix = init.fix;
  }

  static is(this: void, err: unknown): err is AuthenticationError {
    return hasName(err, 'AuthenticationError');
  }
}

/** A waiter gave up: the object did not reach the wanted state in time. */
export class WaitTimeoutError extends Error {
  override readonly name = 'WaitTimeoutError';
  /** What was awaited, e.g. `load balancer 4f… to become ACTIVE`. */
  readonly what: string;
  readonly timeoutMs: number;
  /** The status last seen, when the waiter knows how to read one. */
  readonly lastStatus: string | undefined;

  constructor(init: { what: string; timeoutMs: number; lastStatus?: string | undefined }) {
    const last = init.lastStatus !== undefined ? ` (last status ${init.lastStatus})` : '';
    super(`timed out after ${formatMs(init.timeoutMs)} waiting for ${init.what}${last}`);
    this.what = init.what;
    this.timeoutMs = init.timeoutMs;
    this.lastStatus = init.lastStatus;
  }

  static is(this: void, err: unknown): err is WaitTimeoutError {
    return hasName(err, 'WaitTimeoutError');
  }
}

/** The object went to an error state (ERROR, error_deleting, …) while a waiter watched it: waiting longer will not help. */
export class ResourceErrorStateError extends Error {
  override readonly name = 'ResourceErrorStateError';
  readonly what: string;
  readonly resourceId: string | undefined;
  readonly status: string;
  /** The service's account of why (Nova's `fault.message`, Octavia has none). */
  readonly fault: string | undefined;

  constructor(init: {
    what: string;
    resourceId?: string | undefined;
    status: string;
    fault?: string | undefined;
  }) {
    const fault = init.fault ? `: ${init.fault}` : '';
    super(redactText(`${init.what}: ${init.resourceId ?? 'object'} went to status ${init.status}${fault}`));
    this.what = init.what;
    this.resourceId = init.resourceId;
    this.status = init.status;
    this.fault = init.fault === undefined ? undefined : redactText(init.fault);
  }

  static is(this: void, err: unknown): err is ResourceErrorStateError {
    return hasName(err, 'ResourceErrorStateError');
  }
}

/** No HTTP answer: refused, reset, DNS failure, TLS failure or the request timeout. `cause` holds the underlying error. */
export class ConnectionError extends Error {
  override readonly name = 'ConnectionError';
  readonly method: string;
  readonly url: string;
  readonly service: string;
  /** The system or TLS error code (`ECONNREFUSED`, `SELF_SIGNED_CERT_IN_CHAIN`, …), when there is one. */
  readonly code: string | undefined;
  /** True when the request timeout fired rather than the network failing. */
  readonly timedOut: boolean;

  constructor(init: {
    method: string;
    url: string;
    service: string;
    code?: string | undefined;
    timedOut?: boolean;
    detail: string;
    cause?: unknown;
  }) {
    super(
      redactText(`${init.method} ${init.url}: ${init.detail}`),
      init.cause !== undefined ? { cause: init.cause } : undefined,
    );
    this.method = init.method;
    this.url = init.url;
    this.service = init.service;
    this.code = init.code;
    this.timedOut = init.timedOut ?? false;
  }

  static is(this: void, err: unknown): err is ConnectionError {
    return hasName(err, 'ConnectionError');
  }
}

/**
 * A call on a client that was closed (its connection pool is gone): the owner retired it, e.g. the
 * scope cache after a credential rotation or an eviction. Never retried: a new client is needed.
 */
export class ClientClosedError extends Error {
  override readonly name = 'ClientClosedError';
  readonly method: string;
  readonly url: string;
  readonly service: string;

  constructor(init: { method: string; url: string; service: string }) {
    super(`${init.method} ${init.url}: this OpenStack client was closed; use a new one`);
    this.method = init.method;
    this.url = init.url;
    this.service = init.service;
  }

  static is(this: void, err: unknown): err is ClientClosedError {
    return hasName(err, 'ClientClosedError');
  }
}

/** A list response the pager cannot follow (an unknown `next` shape, a loop, too many pages): never a silent truncation. */
export class PaginationError extends Error {
  override readonly name = 'PaginationError';
  readonly url: string;

  constructor(url: string, problem: string) {
    super(`cannot page through ${url}: ${problem}`);
    this.url = url;
  }

  static is(this: void, err: unknown): err is PaginationError {
    return hasName(err, 'PaginationError');
  }
}

/** A version document the client cannot read, or a server whose range excludes what the client needs. */
export class ApiVersionError extends Error {
  override readonly name = 'ApiVersionError';
  readonly endpoint: string;

  constructor(endpoint: string, problem: string) {
    super(`${endpoint}: ${problem}`);
    this.endpoint = endpoint;
  }

  static is(this: void, err: unknown): err is ApiVersionError {
    return hasName(err, 'ApiVersionError');
  }
}

/**
 * Several objects match a lookup that must find at most one (Glance does not keep image names
 * unique): a silent pick would act on the wrong object one day, so the caller is told to use the id.
 */
export class MultipleResultsError extends Error {
  override readonly name = 'MultipleResultsError';
  /** What was looked up, singular: `image`. */
  readonly resource: string;
  /** The name (or other key) looked up. */
  readonly lookup: string;
  /** The ids of every match. */
  readonly ids: readonly string[];

  constructor(resource: string, lookup: string, ids: readonly string[]) {
    super(
      `${ids.length} ${resource}s are named "${lookup}" (${ids.join(', ')}); refer to the ${resource} by id`,
    );
    this.resource = resource;
    this.lookup = lookup;
    this.ids = ids;
  }

  static is(this: void, err: unknown): err is MultipleResultsError {
    return hasName(err, 'MultipleResultsError');
  }
}

function hasName(err: unknown, name: string): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: unknown }).name === name;
}

/** `250 ms`, `1.5 s`, `5 min` */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Math.round(ms / 100) / 10} s`;
  return `${Math.round(ms / 6000) / 10} min`;
}
