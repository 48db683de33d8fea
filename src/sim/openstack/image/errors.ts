/**
 * Glance errors are webob HTTP exceptions: the body format follows the Accept header (HTML for
 * `*\/*` or none, JSON for `application/json`, else plain text), and the message carries webob's
 * `<br /><br />` template. Clients (requests' default Accept is `*\/*`) really do get HTML.
 */
import { REASONS, SimError } from '../core/errors.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';

/** `detail` value telling the renderer that the message is already the complete webob body. */
export const VERBATIM = 'verbatim';

export function renderGlanceError(err: SimError, req: SimRequest | undefined): SimResponse {
  if (err.status === 401) return keystoneUnauthorized(err, req);
  const title = REASONS[err.status] ?? 'Error';
  const status = `${err.status} ${title}`;
  const message = err.detail === 'malformed-json' ? 'Malformed JSON in request body.' : err.message;
  const body = err.detail === VERBATIM ? message : `${message}<br /><br />\n\n\n`;
  const headers = { ...err.headers };
  switch (negotiate(req?.headers.accept)) {
    case 'application/json':
      return { status: err.status, headers, body: { message: body, code: status, title } };
    case 'text/html':
      return {
        status: err.status,
        headers,
        contentType: 'text/html; charset=UTF-8',
        body: `<html>\n <head>\n  <title>${status}</title>\n </head>\n <body>\n  <h1>${status}</h1>\n  ${body}\n </body>\n</html>`,
      };
    default:
      return {
        status: err.status,
        headers,
        contentType: 'text/plain; charset=UTF-8',
        body: `${status}\n\n${stripTags(body)}`,
      };
  }
}

/** keystonemiddleware answers 401 before the service sees the request, in Keystone's format. */
export function keystoneUnauthorized(err: SimError, req: SimRequest | undefined): SimResponse {
  const origin = req ? new URL(req.baseUrl).origin : '';
  return {
    status: 401,
    headers: { 'WWW-Authenticate': `Keystone uri="${origin}/identity"`, ...err.headers },
    body: { error: { code: 401, title: 'Unauthorized', message: err.message } },
  };
}

/** webob's `acceptable_offers(['text/html', 'application/json'])[0]`, falling back to text/plain. */
function negotiate(accept: string | undefined): 'text/html' | 'application/json' | 'text/plain' {
  if (accept === undefined || accept.trim() === '') return 'text/html';
  const ranges = accept.split(',').map((part) => {
    const [range = '', ...params] = part.trim().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return { range: range.trim().toLowerCase(), q: q === undefined ? 1 : Number(q.slice(2)) };
  });
  let best: { offer: 'text/html' | 'application/json'; q: number } | undefined;
  for (const offer of ['text/html', 'application/json'] as const) {
    const [type] = offer.split('/');
    let match: { specificity: number; q: number } | undefined;
    for (const r of ranges) {
      const specificity = r.range === offer ? 3 : r.range === `${type}/*` ? 2 : r.range === '*/*' ? 1 : 0;
      if (specificity > 0 && (!match || specificity > match.specificity)) match = { specificity, q: r.q };
    }
    if (match && match.q > 0 && (!best || match.q > best.q)) best = { offer, q: match.q };
  }
  return best?.offer ?? 'text/plain';
}

function stripTags(s: string): string {
  return s
    .replace(/\n/g, ' ')
    .replace(/<br.*?>/gi, '\n')
    .replace(/<.*?>/g, '');
}

export const imageNotFound = (id: string) =>
  new SimError(404, `No image found with ID ${id}`, { type: 'ImageNotFound' });

export const forbidden = (message: string) => new SimError(403, message, { type: 'Forbidden' });
