/**
 * A ServiceClient is one OpenStack service as resource code sees it: an endpoint resolved from the
 * catalog (type, interface, region), the API version its paths are relative to, a default
 * microversion, and `request()`, which sends JSON (or raw bytes), authenticates, and turns every
 * unexpected status into an OpenStackHttpError in the service's own words.
 *
 * Resource modules take a ServiceClient and know nothing about auth:
 *
 *   const res = await network.request<{ port: Port }>({ method: 'GET', path: `ports/${id}`, label: 'port_get', signal });
 */
import type { Headers } from 'undici';
import { ApiVersionError, OpenStackHttpError } from './errors.ts';
import { compareApiVersions, formatApiVersion, requireApiVersion, type ApiVersions } from './api-version.ts';
import {
  parseVersionDocument,
  sharedDiscoveryCache,
  versionDocumentUrl,
  type DiscoveryCache,
} from './discovery.ts';
import { parseErrorBody } from './error-body.ts';
import { parseRetryAfter } from './retry.ts';
import { microversionHeaders, serviceTypeInfo } from './service-types.ts';
import type { Session } from './session.ts';
import type { TransportBody, TransportResponse } from './transport.ts';
import { hasVersionSegment, joinUrl, resolveLink, withQuery, type Query } from './url.ts';

export type HttpMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A body sent as is, with its content type (an image upload). Buffers can be retried; streams cannot. */
export interface RawBody {
  data: TransportBody;
  contentType: string;
}

export interface RequestOptions {
  method: HttpMethod;
  /**
   * Relative to the service's API root (`ports/abc` for Neutron means `<endpoint>/v2.0/ports/abc`),
   * or an absolute URL from a link the service returned (rebased onto the endpoint, see resolveLink).
   */
  path: string;
  query?: Query | undefined;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is instead of `body`. */
  raw?: RawBody | undefined;
  headers?: Record<string, string> | undefined;
  /** Overrides the client's default microversion for this call; `null` sends none. */
  microversion?: string | null | undefined;
  /** The metrics label, `<resource>_<verb>`: `port_list`, `loadbalancer_create`. */
  label: string;
  signal?: AbortSignal | undefined;
  /**
   * Statuses to return rather than throw. Default: any 2xx. A status listed here is returned even
   * when it is an error (`[200, 404]` to look without throwing); a 2xx not listed throws UnexpectedStatus.
   */
  expect?: readonly number[] | undefined;
  /** `json` (default: parsed, undefined when empty), `text`, `bytes`, or `stream` (a 2xx body unread). */
  responseType?: 'json' | 'text' | 'bytes' | 'stream' | undefined;
}

export interface ServiceResponse<T> {
  status: number;
  headers: Headers;
  body: T;
  requestId: string | undefined;
  /** The URL requested, secrets redacted. */
  url: string;
}

export interface ServiceClientOptions {
  /** Service type, e.g. `network`, `load-balancer`, `block-storage`. */
  type: string;
  interface?: string | undefined;
  region?: string | undefined;
  /** Sent on every call unless the call gives its own (`OpenStack-API-Version: compute 2.79`). */
  microversion?: string | undefined;
  /** Skip the catalog and use this endpoint. */
  endpoint?: string | undefined;
  discoveryCache?: DiscoveryCache | undefined;
}

export class ServiceClient {
  readonly type: string;
  readonly session: Session;
  /** The default microversion; `negotiateMicroversion` sets it. */
  microversion: string | undefined;
  private readonly options: ServiceClientOptions;
  private readonly discoveryCache: DiscoveryCache;
  private resolved: string | undefined;

  constructor(session: Session, options: ServiceClientOptions) {
    this.session = session;
    this.type = options.type;
    this.options = options;
    this.microversion = options.microversion;
    this.discoveryCache = options.discoveryCache ?? sharedDiscoveryCache;
    this.resolved = options.endpoint?.replace(/\/+$/, '');
  }

  /** A client for the same endpoint with another default microversion. */
  withMicroversion(microversion: string | undefined): ServiceClient {
    return new ServiceClient(this.session, { ...this.options, microversion, endpoint: this.resolved });
  }

  /** The endpoint URL as the catalog (or override) gives it, without a trailing slash. */
  async endpoint(signal?: AbortSignal): Promise<string> {
    if (this.resolved !== undefined) return this.resolved;
    const url = await this.session.endpoint(this.type, {
      interface: this.options.interface,
      region: this.options.region,
      signal,
    });
    this.resolved = url.replace(/\/+$/, '');
    return this.resolved;
  }

  /** The URL resource paths are relative to: the endpoint plus the service's API version unless the endpoint has one. */
  async apiRoot(signal?: AbortSignal): Promise<string> {
    const endpoint = await this.endpoint(signal);
    const version = serviceTypeInfo(this.type).apiVersion;
    return version && !hasVersionSegment(endpoint) ? joinUrl(endpoint, version) : endpoint;
  }

  /** The absolute URL for a path (relative, or a link to rebase), with the query appended. */
  async url(path: string, query?: Query, signal?: AbortSignal): Promise<string> {
    const base = /^https?:\/\//i.test(path)
      ? resolveLink(path, await this.endpoint(signal))
      : joinUrl(await this.apiRoot(signal), path);
    return withQuery(base, query);
  }

  /**
   * One call to the service: authenticated (a new token once on 401), retried where safe, counted
   * in the metrics under `label`. Rejects with OpenStackHttpError for a status not expected,
   * ConnectionError, AuthenticationError, EndpointNotFoundError, or the signal's reason.
   */
  async request<T = unknown>(options: RequestOptions): Promise<ServiceResponse<T>> {
    const { method, signal } = options;
    const url = await this.url(options.path, options.query, signal);
    const responseType = options.responseType ?? 'json';
    const headers: Record<string, string> = {
      Accept: responseType === 'json' ? 'application/json' : '*/*',
    };
    const microversion =
      options.microversion === null ? undefined : (options.microversion ?? this.microversion);
    if (microversion !== undefined) Object.assign(headers, microversionHeaders(this.type, microversion));
    let body: TransportBody | undefined;
    if (options.raw) {
      headers['Content-Type'] = options.raw.contentType;
      body = options.raw.data;
    } else if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    // The caller's headers win, case-insensitively (Glance's JSON-patch content type).
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      for (const existing of Object.keys(headers))
        if (existing.toLowerCase() === name.toLowerCase()) delete headers[existing];
      headers[name] = value;
    }
    const res = await this.session.send({
      method,
      url,
      service: this.type,
      label: options.label,
      headers,
      body,
      signal,
      responseType: responseType === 'stream' ? 'stream' : 'buffer',
    });
    const expected = options.expect
      ? options.expect.includes(res.status)
      : res.status >= 200 && res.status < 300;
    if (!expected) {
      await res.stream?.cancel();
      throw httpError(method, this.type, res);
    }
    return {
      status: res.status,
      headers: res.headers,
      body: decode(res, responseType) as T,
      requestId: res.requestId,
      url: res.url,
    };
  }

  /**
   * What the endpoint serves: Nova's and Cinder's microversion range, Octavia's API versions,
   * Placement's range. Read once per endpoint and cached for the process (see DiscoveryCache).
   */
  async discover(signal?: AbortSignal): Promise<ApiVersions> {
    const endpoint = await this.endpoint(signal);
    const docUrl = versionDocumentUrl(endpoint);
    return this.discoveryCache.get(
      docUrl,
      async () => {
        const res = await this.request({
          method: 'GET',
          path: docUrl,
          label: 'version_get',
          expect: [200, 300],
          // A microversion header on a version document is at best ignored.
          microversion: null,
        });
        return parseVersionDocument(endpoint, res.body);
      },
      Date.now(),
      signal,
    );
  }

  /**
   * Sets the default microversion to min(`wanted`, the server's maximum) and returns it; throws
   * ApiVersionError if the server's minimum is above `wanted` or `atLeast` is above its maximum.
   */
  async negotiateMicroversion(
    wanted: string,
    options: { atLeast?: string; signal?: AbortSignal } = {},
  ): Promise<string> {
    const want = requireApiVersion(wanted);
    const versions = await this.discover(options.signal);
    if (!versions.min || !versions.max) {
      throw new ApiVersionError(versions.endpoint, `${this.type} advertises no microversion range`);
    }
    const chosen = compareApiVersions(want, versions.max) <= 0 ? want : versions.max;
    if (compareApiVersions(chosen, versions.min) < 0) {
      throw new ApiVersionError(
        versions.endpoint,
        `${this.type} supports microversions ${versions.toString()}, but the client needs ${wanted}`,
      );
    }
    if (options.atLeast !== undefined && compareApiVersions(chosen, requireApiVersion(options.atLeast)) < 0) {
      throw new ApiVersionError(
        versions.endpoint,
        `${this.type} supports microversions ${versions.toString()}, but the client needs at least ${options.atLeast}`,
      );
    }
    this.microversion = formatApiVersion(chosen);
    return this.microversion;
  }
}

function decode(res: TransportResponse, responseType: NonNullable<RequestOptions['responseType']>): unknown {
  switch (responseType) {
    case 'stream':
      return res.stream;
    case 'bytes':
      return res.body;
    case 'text':
      return new TextDecoder().decode(res.body);
    case 'json': {
      if (res.body.length === 0) return undefined;
      const text = new TextDecoder().decode(res.body);
      const type = res.headers.get('content-type') ?? '';
      if (!type.includes('json') && !/^\s*[{[]/.test(text)) return text;
      try {
        return JSON.parse(text) as unknown;
      } catch (err) {
        throw new SyntaxError(
          `${res.url}: the ${res.status} answer is not valid JSON (${(err as Error).message})`,
          {
            cause: err,
          },
        );
      }
    }
  }
}

/** The typed error for a response the caller did not expect. */
export function httpError(method: string, service: string, res: TransportResponse): OpenStackHttpError {
  const parsed = parseErrorBody(new TextDecoder().decode(res.body), res.headers.get('content-type'));
  return new OpenStackHttpError({
    status: res.status,
    method,
    url: res.url,
    service,
    requestId: res.requestId,
    serviceMessage: parsed.message,
    errorType: parsed.errorType,
    body: parsed.body,
    retryAfterMs:
      res.status === 429 || res.status === 503
        ? parseRetryAfter(res.headers.get('retry-after'), Date.now())
        : undefined,
  });
}
