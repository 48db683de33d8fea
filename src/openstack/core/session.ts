/**
 * A Session is one cloud identity at work: it owns the Keystone token (through the process-wide
 * TokenCache), finds service endpoints in the catalog, and sends authenticated requests, getting a
 * new token once when a service answers 401. Resource code never sees it directly: it goes
 * through a ServiceClient.
 */
import type { Logger } from '../../lib/log.ts';
import type { CloudConfig } from '../config/types.ts';
import { systemClock, type Clock } from '../../lib/clock.ts';
import { selectEndpoint } from './catalog.ts';
import { parseErrorBody } from './error-body.ts';
import { AuthenticationError, OpenStackHttpError } from './errors.ts';
import {
  authRequestBody,
  describeIdentity,
  tokenCacheKey,
  type CatalogService,
  type TokenResponseBody,
} from './keystone.ts';
import { parseRetryAfter } from './retry.ts';
import { serviceTypeNames } from './service-types.ts';
import {
  DEFAULT_REFRESH,
  sharedTokenCache,
  type CachedToken,
  type RefreshPolicy,
  type TokenCache,
} from './token-cache.ts';
import type { Transport, TransportRequest, TransportResponse } from './transport.ts';
import { hasVersionSegment, joinUrl, safeUrl } from './url.ts';

export interface SessionOptions {
  transport: Transport;
  log?: Logger | undefined;
  /** Defaults to the process-wide cache, so every Session of one identity shares one token. */
  tokenCache?: TokenCache | undefined;
  /** When to refresh a token before it expires; defaults to max(5 min, 10 % of its lifetime). */
  refresh?: Partial<RefreshPolicy> | undefined;
  clock?: Clock | undefined;
}

export interface EndpointOptions {
  /** Defaults to the config's interface (`public` unless set). */
  interface?: string | undefined;
  /** Defaults to the config's region. */
  region?: string | undefined;
  signal?: AbortSignal | undefined;
}

export class Session {
  readonly config: CloudConfig;
  readonly transport: Transport;
  /** Who this session authenticates as, in words, without secrets. */
  readonly identity: string;
  private readonly log: Logger | undefined;
  private readonly cache: TokenCache;
  private readonly cacheKey: string;
  private readonly refresh: RefreshPolicy;
  private readonly clock: Clock;
  private readonly tokensUrl: string;

  constructor(config: CloudConfig, options: SessionOptions) {
    this.config = config;
    this.transport = options.transport;
    this.log = options.log;
    this.cache = options.tokenCache ?? sharedTokenCache;
    this.cacheKey = tokenCacheKey(config);
    this.refresh = { ...DEFAULT_REFRESH, ...options.refresh };
    this.clock = options.clock ?? systemClock;
    this.identity = describeIdentity(config);
    this.tokensUrl = joinUrl(this.identityBase, 'auth/tokens');
  }

  /** The auth URL with its API version (`…/v3`), appended when the config gave a bare Keystone URL. */
  get identityBase(): string {
    const url = this.config.authUrl.replace(/\/+$/, '');
    return hasVersionSegment(url) ? url : `${url}/v3`;
  }

  /** A token that is valid and not due for refresh, issuing one (single-flight, shared per identity) when needed. */
  token(signal?: AbortSignal): Promise<CachedToken> {
    return this.cache.get(this.cacheKey, () => this.issue(), {
      now: () => this.clock.now(),
      refresh: this.refresh,
      signal,
      onStaleFallback: (err) =>
        this.log?.warn(
          { err, authUrl: this.config.authUrl },
          'could not refresh the Keystone token; using the current one until it expires',
        ),
    });
  }

  /** Forgets `tokenValue` if it is still the cached token, so the next call authenticates again. */
  invalidate(tokenValue: string): void {
    if (this.cache.invalidate(this.cacheKey, tokenValue))
      this.log?.debug({ authUrl: this.config.authUrl }, 'Keystone token dropped after a 401');
  }

  /** The catalog of the current token (empty for unscoped tokens). */
  async catalog(signal?: AbortSignal): Promise<CatalogService[]> {
    return (await this.token(signal)).token.catalog ?? [];
  }

  /**
   * The endpoint URL for a service type: `endpointOverride` first (with `{project_id}` filled in),
   * then the catalog by type and aliases, interface and region; the auth URL for identity when the
   * catalog has none. Throws EndpointNotFoundError naming what the catalog has.
   */
  async endpoint(type: string, options: EndpointOptions = {}): Promise<string> {
    for (const name of serviceTypeNames(type)) {
      const override = this.config.endpointOverride[name];
      if (override !== undefined) return this.fillProjectId(override, options.signal);
    }
    const catalog = await this.catalog(options.signal);
    const names = serviceTypeNames(type);
    if (names.includes('identity') && !catalog.some((s) => names.includes(s.type))) return this.identityBase;
    return selectEndpoint(catalog, {
      type,
      interface: options.interface ?? this.config.interface,
      region: options.region ?? this.config.regionName,
    }).url;
  }

  /**
   * Sends `req` with the session's token. On a 401 the token is dropped and the request sent once
   * more with a new one (a token revoked or expired early); a second 401 is returned to the caller.
   */
  async send(req: TransportRequest): Promise<TransportResponse> {
    const replayable =
      req.body === undefined || typeof req.body === 'string' || req.body instanceof Uint8Array;
    for (let attempt = 1; ; attempt++) {
      const token = await this.token(req.signal);
      const res = await this.transport.send({
        ...req,
        headers: { ...req.headers, 'X-Auth-Token': token.value },
      });
      if (res.status !== 401 || attempt >= 2 || !replayable) return res;
      await res.stream?.cancel();
      this.log?.debug(
        { service: req.service, url: safeUrl(req.url) },
        'service answered 401; authenticating again',
      );
      this.invalidate(token.value);
    }
  }

  private async fillProjectId(url: string, signal: AbortSignal | undefined): Promise<string> {
    if (!/(\$\(|%\(|\{)(project_id|tenant_id)(\)s|\))?\}?/.test(url)) return url;
    const project = this.config.projectId ?? (await this.token(signal)).token.project?.id ?? '';
    return url.replace(
      /\$\((project_id|tenant_id)\)s|%\((project_id|tenant_id)\)s|\{(project_id|tenant_id)\}/g,
      project,
    );
  }

  /** `POST /v3/auth/tokens`. Never gets the caller's signal: one caller giving up must not fail the others waiting on it. */
  private async issue(): Promise<CachedToken> {
    const sentAt = this.clock.now();
    const res = await this.transport.send({
      method: 'POST',
      url: this.tokensUrl,
      service: 'identity',
      label: 'token_create',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(authRequestBody(this.config)),
    });
    const text = new TextDecoder().decode(res.body);
    const value = res.headers.get('x-subject-token');
    if (res.status === 201 && value) {
      const body = JSON.parse(text) as TokenResponseBody;
      const expires = Date.parse(body.token.expires_at);
      const issued = Date.parse(body.token.issued_at);
      // Lifetime by the server's own clock, counted from when we asked: a skewed local clock cannot
      // make a token look fresher than it is.
      const lifetime = Number.isFinite(expires - issued) ? expires - issued : 0;
      this.log?.debug(
        { authUrl: this.config.authUrl, identity: this.identity, lifetimeMs: lifetime },
        'Keystone token issued',
      );
      return { value, token: body.token, issuedAt: sentAt, expiresAt: sentAt + lifetime };
    }
    const parsed = parseErrorBody(text, res.headers.get('content-type'));
    if (res.status === 400 || res.status === 401 || res.status === 403 || res.status === 404) {
      throw new AuthenticationError({
        authUrl: this.config.authUrl,
        identity: this.identity,
        status: res.status,
        requestId: res.requestId,
        serviceMessage: parsed.message,
        fix: this.fix(res.status),
      });
    }
    throw new OpenStackHttpError({
      status: res.status,
      method: 'POST',
      url: res.url,
      service: 'identity',
      requestId: res.requestId,
      serviceMessage: parsed.message || (res.status === 201 ? 'no X-Subject-Token in the answer' : ''),
      errorType: parsed.errorType,
      body: parsed.body,
      retryAfterMs: parseRetryAfter(res.headers.get('retry-after'), this.clock.now()),
    });
  }

  private fix(status: number): string {
    if (status === 400)
      return 'Fix: the auth settings are incomplete or malformed; check the auth section of the config';
    const trust = this.config.trustId ? ', and that the trust exists and names this user as its trustee' : '';
    switch (this.config.authType) {
      case 'password':
        return (
          'Fix: check the user name (or id) and its domain, the password, and that the user has a role on the ' +
          `project; Keystone answers the same for each of these${trust}`
        );
      case 'v3applicationcredential':
        return 'Fix: check the application credential id (or name and user) and its secret, and that it has not expired or been deleted';
      case 'token':
        return `Fix: the token is invalid or expired; get a new one${trust}`;
    }
  }
}
