/**
 * The errors of the runtime. `KubeApiError` is every non-2xx answer of the API server, with the
 * code and reason parsed from its metav1.Status body; predicates (`isNotFound`, `isConflict`, …)
 * read the reason as apimachinery's `errors.ReasonForError` does. A reconciler knows three classes
 * of failure: `TerminalError` (never retried), `RetryAfterError` (retried after a fixed delay) and
 * anything else (retried with per-key exponential back-off).
 *
 * Every class has a name-based `is()` brand check because `instanceof` fails when two copies of a
 * module are loaded.
 */

/** metav1.StatusReason values the API server sends, plus `Unknown` for answers without a Status. */
export type StatusReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'Gone'
  | 'Expired'
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'TooManyRequests'
  | 'Timeout'
  | 'ServerTimeout'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Unknown';

/** The subset of metav1.Status we read. */
export interface Status {
  kind?: string;
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    uid?: string;
    causes?: { reason?: string; message?: string; field?: string }[];
    retryAfterSeconds?: number;
  };
}

/** What apimachinery assumes when a response carries no Status (a proxy's 502, a bare 429). */
const REASON_BY_CODE: Readonly<Record<number, StatusReason>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export interface KubeApiErrorInit {
  code: number;
  method: string;
  /** The request path (no host, no token). */
  path: string;
  status?: Status | undefined;
  /** From a Retry-After header or `details.retryAfterSeconds`. */
  retryAfterMs?: number | undefined;
}

/** A non-2xx answer of the Kubernetes API, or an ERROR event on a watch. */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  readonly code: number;
  readonly reason: StatusReason;
  readonly method: string;
  readonly path: string;
  readonly status: Status | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(init: KubeApiErrorInit) {
    const reason = parseReason(init.status?.reason, init.code);
    super(`${init.method} ${init.path}: ${init.code} ${reason}: ${init.status?.message ?? 'no message'}`);
    this.code = init.code;
    this.reason = reason;
    this.method = init.method;
    this.path = init.path;
    this.status = init.status;
    const fromDetails = init.status?.details?.retryAfterSeconds;
    this.retryAfterMs = init.retryAfterMs ?? (fromDetails !== undefined ? fromDetails * 1000 : undefined);
  }

  static is(err: unknown): err is KubeApiError {
    return (
      err instanceof Error && err.name === 'KubeApiError' && typeof (err as KubeApiError).code === 'number'
    );
  }
}

function parseReason(reason: string | undefined, code: number): StatusReason {
  if (reason && reason !== '') return reason as StatusReason;
  return REASON_BY_CODE[code] ?? 'Unknown';
}

const reasonIs =
  (...reasons: StatusReason[]) =>
  (err: unknown): boolean =>
    KubeApiError.is(err) && reasons.includes(err.reason);

export const isNotFound = reasonIs('NotFound');
export const isAlreadyExists = reasonIs('AlreadyExists');
export const isConflict = reasonIs('Conflict');
export const isInvalid = reasonIs('Invalid');
/** A resourceVersion or continue token too old for the server's history: relist. */
export const isGone = (err: unknown): boolean =>
  KubeApiError.is(err) && (err.reason === 'Expired' || err.reason === 'Gone' || err.code === 410);
export const isTooManyRequests = reasonIs('TooManyRequests');

/**
 * `await ignoreNotFound(client.get(...))` is the object or undefined; any other failure still
 * throws. The reconciler's usual first line, since a deleted object is observed as missing.
 */
export async function ignoreNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** `await ignoreAlreadyExists(client.create(...))`: creating what exists is success (undefined). */
export async function ignoreAlreadyExists<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isAlreadyExists(err)) return undefined;
    throw err;
  }
}

/**
 * A failure that retrying cannot fix (invalid spec, a quota the user must raise). The controller
 * logs and counts it and does not requeue; the next change to the object triggers a new attempt.
 */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';
  /** CamelCase reason for a condition or Event, e.g. `InvalidSpec`. */
  readonly reason: string;

  constructor(message: string, options: { reason?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.reason = options.reason ?? 'TerminalError';
  }

  static is(err: unknown): err is TerminalError {
    return err instanceof Error && err.name === 'TerminalError';
  }
}

/**
 * A failure with a known wait, e.g. an Octavia load balancer in PENDING_UPDATE: the key is
 * requeued after exactly `retryAfterMs` instead of the exponential back-off.
 */
export class RetryAfterError extends Error {
  override readonly name = 'RetryAfterError';
  readonly retryAfterMs: number;

  constructor(message: string, retryAfterMs: number, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfterMs = Math.max(0, retryAfterMs);
  }

  static is(err: unknown): err is RetryAfterError {
    return (
      err instanceof Error &&
      err.name === 'RetryAfterError' &&
      typeof (err as RetryAfterError).retryAfterMs === 'number'
    );
  }
}

/** Anything thrown, as an Error (reconcilers may throw strings). */
export function toError(err: unknown): Error {
  return err instanceof Error ? err : new Error(typeof err === 'string' ? err : JSON.stringify(err));
}

/** What one log line says about a failure; see {@link errorSummary}. */
export interface ErrorSummary {
  /** The message, with those of its causes (`creating port: POST … → 409 Conflict …`). */
  error: string;
  /** The error's class name, e.g. `OpenStackHttpError`, `KubeApiError`, `TypeError`. */
  errorClass: string;
  /** The HTTP status of an API error (`status` or `code` on it or a cause). */
  code?: number;
  /** The request id of the failed call (OpenStack's `x-openstack-request-id`), from the error or a cause. */
  requestId?: string;
  /** For a programming error (TypeError, ReferenceError, …): the first stack frame, so the bug can be found without debug logs. */
  at?: string;
}

/** Built-in classes that mean a bug in our code rather than a failure of the world. */
const BUG_CLASSES = new Set(['TypeError', 'ReferenceError', 'RangeError', 'SyntaxError', 'EvalError']);
/** Causes followed; a cycle or a long chain must not hang a log call. */
const MAX_CAUSES = 8;

/**
 * A failure as the fields of one log line: message (causes included), class, HTTP status and
 * request id, and no stack. Expected failures (an OpenStack 400, a 409 Conflict) are logged at
 * ERROR this way and their stack only at debug: the stack of a failed API call points into the
 * client, not at the problem, and eighteen lines of it per retry bury the line that matters. The
 * request id is read by duck typing (any `requestId` string), as the runtime imports no OpenStack
 * code.
 */
export function errorSummary(thrown: unknown): ErrorSummary {
  const err = toError(thrown);
  const summary: ErrorSummary = { error: err.message, errorClass: err.name };
  const seen = new Set<unknown>();
  for (let e: unknown = err, depth = 0; e instanceof Error && !seen.has(e) && depth < MAX_CAUSES; depth++) {
    seen.add(e);
    const fields = e as Error & { status?: unknown; code?: unknown; requestId?: unknown };
    const code = typeof fields.status === 'number' ? fields.status : fields.code;
    if (summary.code === undefined && typeof code === 'number') summary.code = code;
    if (summary.requestId === undefined && typeof fields.requestId === 'string' && fields.requestId)
      summary.requestId = fields.requestId;
    if (e !== err && e.message && !summary.error.includes(e.message))
      summary.error = `${summary.error}: ${e.message}`;
    e = e.cause;
  }
  // undici's `fetch failed` is a TypeError too, but with the network error as its cause.
  if (BUG_CLASSES.has(err.name) && err.cause === undefined) {
    const frame = err.stack
      ?.split('\n')
      .find((l) => /^\s+at /.test(l))
      ?.trim();
    if (frame) summary.at = frame.replace(/^at /, '');
  }
  return summary;
}
