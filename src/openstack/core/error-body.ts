/**
 * Reads the service's own message out of an error response. Each OpenStack service has its own
 * format (see ../shared/openstack-real/NOTES.md "API facts for client authors"):
 *
 *   Keystone   {"error":{"code":404,"message":"…","title":"Not Found"}}
 *   Neutron    {"NeutronError":{"type":"PortNotFound","message":"…","detail":""}}
 *   Nova/Cinder {"itemNotFound":{"code":404,"message":"…"}}
 *   Octavia    {"faultcode":"Client","faultstring":"…","debuginfo":null}
 *   Placement  {"errors":[{"status":404,"title":"Not Found","detail":"<preamble>\n\n …","code":"…"}]}
 *   Glance     {"message":"…<br /><br />\n\n\n","code":"404 Not Found","title":"Not Found"}, or an HTML page
 *
 * The shapes do not overlap, so the parser tries them in turn and needs no service name.
 */

export interface ParsedErrorBody {
  /** One line of plain text; empty when the body says nothing. */
  message: string;
  errorType?: string | undefined;
  /** The body as parsed (JSON value or text), for the error's `body`. */
  body: unknown;
}

/** Longest message kept: an error line must stay readable in a log and an Event. */
const MAX_MESSAGE = 1000;

export function parseErrorBody(text: string, contentType: string | null): ParsedErrorBody {
  const trimmed = text.trim();
  if (trimmed === '') return { message: '', body: undefined };
  if ((contentType ?? '').includes('json') || /^[{[]/.test(trimmed)) {
    try {
      const json = JSON.parse(trimmed) as unknown;
      const parsed = fromJson(json);
      if (parsed) return { ...parsed, message: oneLine(parsed.message), body: json };
      return { message: oneLine(trimmed), body: json };
    } catch {
      // Not JSON after all: fall through to text.
    }
  }
  if (/^<(!doctype|html)/i.test(trimmed) || (contentType ?? '').includes('html')) {
    return { message: oneLine(fromHtml(trimmed)), body: trimmed };
  }
  return { message: oneLine(trimmed), body: trimmed };
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function fromJson(json: unknown): { message: string; errorType?: string | undefined } | undefined {
  const root = obj(json);
  if (!root) return undefined;

  const neutron = root.NeutronError;
  if (neutron !== undefined) {
    const n = obj(neutron);
    if (!n) return { message: str(neutron) ?? '' };
    const detail = str(n.detail);
    const message = str(n.message) ?? '';
    return {
      message: detail && !message.includes(detail) ? `${message} ${detail}` : message,
      errorType: str(n.type),
    };
  }

  const keystone = obj(root.error);
  if (keystone && (str(keystone.message) !== undefined || str(keystone.title) !== undefined)) {
    return { message: str(keystone.message) ?? str(keystone.title) ?? '', errorType: str(keystone.title) };
  }

  if (str(root.faultstring) !== undefined) {
    return { message: str(root.faultstring) ?? '', errorType: str(root.faultcode) };
  }

  if (Array.isArray(root.errors)) {
    const first = obj(root.errors[0]);
    if (first) {
      return {
        message: placementDetail(str(first.detail) ?? str(first.title) ?? ''),
        errorType: str(first.code) ?? str(first.title),
      };
    }
  }

  // Glance: a top-level message (with HTML line breaks) and code "404 Not Found".
  if (str(root.message) !== undefined) {
    return { message: fromHtml(str(root.message) ?? ''), errorType: str(root.title) };
  }

  // Nova and Cinder: one key, the fault name, holding {code, message}.
  const keys = Object.keys(root);
  if (keys.length === 1) {
    const name = keys[0] as string;
    const fault = obj(root[name]);
    if (fault && str(fault.message) !== undefined)
      return { message: str(fault.message) ?? '', errorType: name };
  }
  return undefined;
}

/** Placement (webob) prefixes the useful text with the status explanation and a blank line. */
function placementDetail(detail: string): string {
  const parts = detail.split(/\n\s*\n/);
  const useful = parts.length > 1 ? parts.slice(1).join(' ') : detail;
  return useful.trim() || detail.trim();
}

/** Glance's HTML pages and `<br />` messages: drop the title and heading, keep the text. */
function fromHtml(html: string): string {
  return html
    .replace(/<head>[\s\S]*?<\/head>/gi, ' ')
    .replace(/<h1>[\s\S]*?<\/h1>/gi, ' ')
    .replace(/<br\s*\/?>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_MESSAGE ? `${flat.slice(0, MAX_MESSAGE)}…` : flat;
}
