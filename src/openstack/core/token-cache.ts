/**
 * Keystone tokens shared by every Session of the process: one per (auth URL, identity, scope),
 * refreshed before it expires, and issued single-flight: a hundred callers that find no valid token
 * cause one `POST /v3/auth/tokens`, not a hundred (gophercloud's `reauthFuture`).
 */
import { raceSignal } from '../../lib/clock.ts';
import type { KeystoneToken } from './keystone.ts';

export interface CachedToken {
  /** The `X-Subject-Token`. A secret: never log it. */
  value: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  issuedAt: number;
  /** The token body: user, scope, roles, catalog. */
  token: KeystoneToken;
}

/**
 * When to get a new token: once less than max(`minMarginMs`, `fraction` × lifetime) remains. The
 * defaults (5 min, 10 %) leave time for a slow Keystone before the old token stops working.
 */
export interface RefreshPolicy {
  minMarginMs: number;
  fraction: number;
}

export const DEFAULT_REFRESH: RefreshPolicy = { minMarginMs: 5 * 60_000, fraction: 0.1 };

/** A token this close to expiry is not handed out even when a refresh fails. */
const LAST_RESORT_MS = 10_000;

export function needsRefresh(token: CachedToken, now: number, policy: RefreshPolicy): boolean {
  const lifetime = Math.max(0, token.expiresAt - token.issuedAt);
  const margin = Math.max(policy.minMarginMs, policy.fraction * lifetime);
  return token.expiresAt - now <= margin;
}

interface Entry {
  token?: CachedToken | undefined;
  flight?: Promise<CachedToken> | undefined;
}

export interface TokenRequest {
  /** Epoch milliseconds now (the Session's clock). */
  now: () => number;
  refresh: RefreshPolicy;
  signal?: AbortSignal | undefined;
  /** Told when a refresh failed and the old, still valid token is used instead. */
  onStaleFallback?: (err: unknown) => void;
}

export class TokenCache {
  readonly maxEntries: number;
  private readonly entries = new Map<string, Entry>();

  constructor(options: { maxEntries?: number } = {}) {
    this.maxEntries = options.maxEntries ?? 1000;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The token in the cache for `key`, fresh or not, without issuing one. */
  peek(key: string): CachedToken | undefined {
    return this.entries.get(key)?.token;
  }

  /**
   * A token for `key` that is not due for refresh, issuing one with `issue` when needed. Concurrent
   * callers share one `issue` call; a caller whose signal aborts stops waiting without cancelling it
   * for the others. If a refresh fails while the old token is still valid, the old one is returned.
   */
  async get(key: string, issue: () => Promise<CachedToken>, request: TokenRequest): Promise<CachedToken> {
    const entry = this.entry(key);
    const current = entry.token;
    if (current && !needsRefresh(current, request.now(), request.refresh)) return current;
    if (!entry.flight) {
      const flight = issue()
        .then((token) => {
          entry.token = token;
          return token;
        })
        .finally(() => {
          entry.flight = undefined;
        });
      // Waiters handle the outcome; this keeps an abandoned flight's failure from being unhandled.
      flight.catch(() => undefined);
      entry.flight = flight;
    }
    try {
      return await raceSignal(entry.flight, request.signal);
    } catch (err) {
      if (!request.signal?.aborted && current && current.expiresAt - request.now() > LAST_RESORT_MS) {
        request.onStaleFallback?.(err);
        return current;
      }
      throw err;
    }
  }

  /**
   * Drops the token for `key` if it is still `value` (a service answered 401 to it). Compare-and-drop,
   * so of many callers that saw the same 401 only the first causes a new token.
   */
  invalidate(key: string, value: string): boolean {
    const entry = this.entries.get(key);
    if (entry?.token?.value !== value) return false;
    entry.token = undefined;
    return true;
  }

  clear(): void {
    this.entries.clear();
  }

  private entry(key: string): Entry {
    let entry = this.entries.get(key);
    if (entry) return entry;
    if (this.entries.size >= this.maxEntries) this.evictOne();
    entry = {};
    this.entries.set(key, entry);
    return entry;
  }

  /** Bounds memory for a process that meets many identities: the oldest idle entry goes. */
  private evictOne(): void {
    for (const [key, entry] of this.entries) {
      if (!entry.flight) {
        this.entries.delete(key);
        return;
      }
    }
  }
}

/** The process-wide cache every Session uses unless given its own. */
export const sharedTokenCache = new TokenCache();
