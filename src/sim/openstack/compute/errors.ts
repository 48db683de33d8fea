/**
 * Nova's error bodies: `{"<faultName>": {"code": N, "message": "..."}}`, the fault name chosen by
 * status as nova.api.openstack.wsgi.Fault does. Two errors never reach Nova in a real cloud and keep
 * their own format: keystonemiddleware's 401 and the router's plain webob 404/405.
 */
import { SimError } from '../core/errors.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';

const FAULT_NAMES: Readonly<Record<number, string>> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  429: 'overLimit',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

const WEBOB_TITLES: Readonly<Record<number, string>> = { 404: 'Not Found', 405: 'Method Not Allowed' };

const JSON_UTF8 = 'application/json; charset=UTF-8';

/** Nova's own 500 text, shown when a handler fails unexpectedly. */
export const UNEXPECTED_ERROR =
  'Unexpected API Error. Please report this at http://bugs.launchpad.net/nova/ and attach the Nova API log if possible.';

export function renderNovaError(
  err: SimError,
  _req: SimRequest | undefined,
  keystoneUrl: () => string,
): SimResponse {
  if (err.status === 401 && err.type === 'Unauthorized') {
    return {
      status: 401,
      contentType: JSON_UTF8,
      headers: { 'WWW-Authenticate': `Keystone uri="${keystoneUrl()}"` },
      body: { error: { code: 401, title: 'Unauthorized', message: err.message } },
    };
  }
  if (err.type === 'HTTPNotFound' || err.type === 'HTTPMethodNotAllowed') {
    // Unrouted paths are answered by webob's default exception page, rendered as JSON.
    const title = WEBOB_TITLES[err.status] ?? 'Error';
    return {
      status: err.status,
      contentType: JSON_UTF8,
      body: { message: `${err.message}<br /><br />\n\n\n`, code: `${err.status} ${title}`, title },
    };
  }
  const name = FAULT_NAMES[err.status] ?? 'computeFault';
  const message =
    err.status === 500 && err.type === 'HTTPInternalServerError' ? UNEXPECTED_ERROR : err.message;
  const fault: Record<string, unknown> = { code: err.status, message };
  const retry = err.headers?.['Retry-After'];
  if ((err.status === 413 || err.status === 429) && retry !== undefined) fault['retryAfter'] = retry;
  return { status: err.status, contentType: JSON_UTF8, body: { [name]: fault } };
}

/** Errors the router or keystonemiddleware raise before Nova sees the request carry no microversion. */
export function isBeforeNova(err: SimError): boolean {
  return err.type === 'Unauthorized' || err.type === 'HTTPNotFound' || err.type === 'HTTPMethodNotAllowed';
}

/** `Cannot 'stop' instance X while it is in task_state powering-off`, as common.raise_http_conflict_for_instance_invalid_state words it. */
export function invalidState(action: string, serverId: string, attr: string, state: string | null): SimError {
  return new SimError(
    409,
    `Cannot '${action}' instance ${serverId} while it is in ${attr} ${state ?? 'None'}`,
  );
}

/** nova.exception.PolicyNotAuthorized. */
export function policyForbidden(rule: string): SimError {
  return new SimError(403, `Policy doesn't allow ${rule} to be performed.`);
}
