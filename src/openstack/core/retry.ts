/**
 * When the transport may send a request again, and after how long.
 *
 * Safe retries only:
 * - 429 and 503, any method: the service refused the request before acting on it, and says when to
 *   come back (`Retry-After`, seconds or an HTTP date).
 * - Other 5xx but 501, and connection failures: only GET, HEAD and DELETE, which can be repeated
 *   without creating a second object. A POST that timed out may have created its object.
 * - A refused connection (nothing was sent), any method.
 *
 * Never retried: 4xx other than 429 (Octavia's 409 "immutable" means "wait for the load balancer",
 * which a waiter does, not the transport), 501, TLS failures, the request timeout, a body that
 * cannot be replayed (a stream), and a `Retry-After` longer than `maxRetryAfterMs`: that one is
 * surfaced as `RateLimited` with its `retryAfterMs` for the caller to requeue.
 */

export interface RetryPolicy {
  /** Attempts in all, the first included. 1 turns retries off. */
  maxAttempts: number;
  /** Back-off before the second attempt; doubles each time, before jitter. */
  baseDelayMs: number;
  /** Cap on one back-off delay. */
  maxDelayMs: number;
  /** Longest `Retry-After` honoured by waiting; longer ones end the call. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 15_000,
  maxRetryAfterMs: 60_000,
};

const IDEMPOTENT = new Set(['GET', 'HEAD', 'DELETE', 'OPTIONS']);

/** Codes meaning the connection was refused before any byte of the request left. */
const NOT_SENT = new Set(['ECONNREFUSED', 'EAI_AGAIN', 'ENOTFOUND', 'UND_ERR_CONNECT_TIMEOUT']);

export function isIdempotent(method: string): boolean {
  return IDEMPOTENT.has(method.toUpperCase());
}

/** Whether a response status may be retried for this method. */
export function retryableStatus(method: string, status: number): boolean {
  if (status === 429 || status === 503) return true;
  return status >= 500 && status !== 501 && isIdempotent(method);
}

/** Whether a connection failure with this code may be retried for this method. */
export function retryableConnectionError(method: string, code: string | undefined): boolean {
  if (code !== undefined && TLS_CODES.test(code)) return false;
  return isIdempotent(method) || (code !== undefined && NOT_SENT.has(code));
}

/** TLS verification failures: retrying cannot fix a certificate. */
export const TLS_CODES =
  /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS|ERR_SSL|DEPTH_ZERO|HOSTNAME_MISMATCH|ALTNAME/;

/** `Retry-After` as milliseconds from `now`: delta-seconds (fractions tolerated) or an HTTP date. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Full-jitter exponential back-off: uniform in [0, min(cap, base·2^(retry−1))]. `retry` counts from 1. */
export function backoffDelay(retry: number, policy: RetryPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(retry - 1, 30));
  return Math.floor(random() * ceiling);
}
