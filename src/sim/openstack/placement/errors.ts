/**
 * Placement errors follow the API-WG guideline: `{"errors": [{status, title, detail, request_id}]}`,
 * `code` from 1.23 and the version range on 406. `detail` is webob's template with its tags
 * stripped, hence the blank line and the trailing spaces clients see.
 */
import { REASONS, SimError } from '../core/errors.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import { MAX_VERSION, MIN_VERSION, type Microversions } from './microversion.ts';

/** webob's explanation of each status, the first line of `detail`. */
const EXPLANATIONS: Readonly<Record<number, string>> = {
  400: 'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  403: 'Access was denied to this resource.',
  404: 'The resource could not be found.',
  409: 'There was a conflict when trying to complete your request.',
  413: 'The request is larger than the server is willing or able to process.',
  429: 'This request has been rate-limited.',
  500: 'The server has either erred or is incapable of performing the requested operation.',
  503: 'The server is currently unavailable. Please try again at a later time.',
};

export function placementErrorRenderer(mv: Microversions) {
  return (err: SimError, req: SimRequest | undefined): SimResponse => {
    if (err.status === 401) {
      const origin = req ? new URL(req.baseUrl).origin : '';
      return {
        status: 401,
        headers: { 'WWW-Authenticate': `Keystone uri="${origin}/identity"` },
        body: { error: { code: 401, title: 'Unauthorized', message: err.message } },
      };
    }
    const entry: Record<string, unknown> = {
      status: err.status,
      title: REASONS[err.status] ?? 'Error',
      detail: detail(err, req),
    };
    const version = req ? mv.get(req) : undefined;
    if (version && version.minor >= 23)
      entry.code = err.type?.startsWith('placement.') ? err.type : 'placement.undefined_code';
    entry.request_id = req?.requestId;
    if (err.status === 406) {
      entry.max_version = `${MAX_VERSION.major}.${MAX_VERSION.minor}`;
      entry.min_version = `${MIN_VERSION.major}.${MIN_VERSION.minor}`;
    }
    return { status: err.status, body: { errors: [entry] } };
  };
}

function detail(err: SimError, req: SimRequest | undefined): string {
  // The core's route-level messages are webob's own explanations: placement adds no text to them.
  const own = err.type === 'HTTPNotFound' || err.type === 'HTTPMethodNotAllowed' ? '' : err.message;
  if (err.status === 406) {
    return `The resource could not be generated that was acceptable to your browser (content of type application/json. \n\n ${own}`;
  }
  const explanation =
    err.status === 405
      ? `The method ${req?.method ?? ''} is not allowed for this resource.`
      : err.status === 415
        ? `The request media type ${String(req?.headers['content-type'] ?? '')} is not supported by this server.`
        : (EXPLANATIONS[err.status] ?? REASONS[err.status] ?? 'Error');
  const message = err.detail === 'malformed-json' ? 'Malformed JSON in request body.' : own;
  return `${explanation}\n\n ${message}  `;
}

export const policyDenied = (rule: string) =>
  new SimError(403, `Policy does not allow ${rule} to be performed.`, { type: 'PolicyNotAuthorized' });

export const providerNotFound = (uuid: string) =>
  new SimError(404, `No resource provider with uuid ${uuid} found`, { type: 'placement.undefined_code' });

export const badRequest = (message: string) =>
  new SimError(400, message, { type: 'placement.undefined_code' });
