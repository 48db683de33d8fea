/**
 * The OpenStack client core: what gophercloud's ProviderClient and ServiceClient are. Layers, from
 * the wire up: Transport (HTTP, TLS, retries, limits, metrics) → Session (Keystone token, catalog,
 * re-auth) → ServiceClient (one service: endpoint, version, microversion, typed errors) → resource
 * modules (`src/openstack/<service>/<version>`), which take a ServiceClient and a `CallOptions`.
 */
export {
  ApiVersions,
  compareApiVersions,
  formatApiVersion,
  parseApiVersion,
  type ApiVersion,
} from './api-version.ts';
export type { CallOptions } from './call-options.ts';
export { describeCatalog, selectEndpoint, type EndpointQuery, type SelectedEndpoint } from './catalog.ts';
export {
  DiscoveryCache,
  parseVersionDocument,
  sharedDiscoveryCache,
  versionDocumentUrl,
} from './discovery.ts';
export { parseErrorBody, type ParsedErrorBody } from './error-body.ts';
export {
  ApiVersionError,
  AuthenticationError,
  ClientClosedError,
  ConnectionError,
  EndpointNotFoundError,
  httpErrorKind,
  ignoreNotFound,
  isBadRequest,
  isConflict,
  isForbidden,
  isInternalServerError,
  isNotFound,
  isNotImplemented,
  isPreconditionFailed,
  isRateLimited,
  isRequestEntityTooLarge,
  isServiceUnavailable,
  isUnauthorized,
  MultipleResultsError,
  OpenStackHttpError,
  PaginationError,
  ResourceErrorStateError,
  WaitTimeoutError,
  type HttpErrorInit,
  type HttpErrorKind,
} from './errors.ts';
export {
  authRequestBody,
  describeIdentity,
  type CatalogEndpoint,
  type CatalogService,
  type KeystoneRef,
  type KeystoneToken,
  type TokenResponseBody,
} from './keystone.ts';
export { Limiter } from './limiter.ts';
export { apiMetrics, type ApiMetrics } from './metrics.ts';
export { DEFAULT_MAX_PAGES, Pager, type Page, type PagerOptions, type PageStrategy } from './pagination.ts';
export { DEFAULT_RETRY, parseRetryAfter, type RetryPolicy } from './retry.ts';
export {
  httpError,
  ServiceClient,
  type HttpMethod,
  type RawBody,
  type RequestOptions,
  type ServiceClientOptions,
  type ServiceResponse,
} from './service-client.ts';
export {
  microversionHeaders,
  serviceTypeInfo,
  serviceTypeNames,
  type ServiceTypeInfo,
} from './service-types.ts';
export { Session, type EndpointOptions, type SessionOptions } from './session.ts';
export { createDispatcher, type DispatcherOptions } from './tls.ts';
export {
  DEFAULT_REFRESH,
  sharedTokenCache,
  TokenCache,
  type CachedToken,
  type RefreshPolicy,
} from './token-cache.ts';
export {
  DEFAULT_CONCURRENCY,
  DEFAULT_REQUEST_TIMEOUT_MS,
  Transport,
  type TransportBody,
  type TransportOptions,
  type TransportRequest,
  type TransportResponse,
} from './transport.ts';
export { resolveLink, safeUrl, withQuery, type Query, type QueryValue } from './url.ts';
export { waitFor, waitForDeletion, type ErrorState, type WaiterOptions, type WaitOptions } from './wait.ts';
