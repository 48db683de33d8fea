/**
 * Octavia's API exceptions (octavia/common/exceptions.py) with their exact wording, and the WSME
 * fault body they are rendered into.
 */
import { SimError } from '../core/errors.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';

export const notFound = (resource: string, id: string) => new SimError(404, `${resource} ${id} not found.`);

/** A referenced object (subnet, port, network) that does not exist: 400, not 404. */
export const invalidSubresource = (resource: string, id: string) =>
  new SimError(400, `${resource} ${id} not found.`);

export const validation = (detail: string) => new SimError(400, `Validation failure: ${detail}`);

export const invalidOption = (value: string, option: string) =>
  new SimError(400, `${value} is not a valid option for ${option}`);

export const policyForbidden = () => new SimError(403, 'Policy does not allow this request to be performed.');

export const immutable = (resource: string, id: string) =>
  new SimError(409, `${resource} ${id} is immutable and cannot be updated.`);

export const lbPendingState = (state: string, id: string) =>
  new SimError(409, `Invalid state ${state} of loadbalancer resource ${id}`);

export const providerNotEnabled = (provider: string) =>
  new SimError(400, `Provider '${provider}' is not enabled.`);

export const providerUnsupportedOption = (provider: string, message: string) =>
  new SimError(501, `Provider '${provider}' does not support a requested option: ${message}`);

export const providerNotImplemented = (provider: string, message: string) =>
  new SimError(501, `Provider '${provider}' does not support a requested action: ${message}`);

/** WSME's InvalidInput, raised while the body is parsed, before any controller code. */
export const invalidInput = (field: string, value: unknown, message: string) =>
  new SimError(400, `Invalid input for field/attribute ${field}. Value: '${wsmeRepr(value)}'. ${message}`);

function wsmeRepr(value: unknown): string {
  if (value === undefined) return 'Unset';
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  return pyRepr(value);
}

/** Python's repr of decoded JSON, as WSME prints a rejected list or dict. */
function pyRepr(value: unknown): string {
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'string') return `'${value}'`;
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `'${k}': ${pyRepr(v)}`)
      .join(', ')}}`;
  }
  return typeof value === 'number' ? String(value) : '';
}

export { pyRepr };

/**
 * Octavia answers in WSME's fault format. A missing or bad token never reaches Octavia: the
 * keystonemiddleware in front of it answers with its own body, so 401 keeps that shape.
 */
export function renderOctaviaError(err: SimError, req: SimRequest | undefined): SimResponse {
  if (err.status === 401) {
    const origin = req ? new URL(req.baseUrl).origin : 'http://127.0.0.1';
    return {
      status: 401,
      headers: { 'WWW-Authenticate': `Keystone uri="${origin}/identity"` },
      body: { error: { code: 401, title: 'Unauthorized', message: err.message } },
    };
  }
  let message = err.message;
  if (err.detail === 'malformed-json') message = 'Request is not in valid JSON format';
  return {
    status: err.status,
    body: { faultcode: err.status >= 500 ? 'Server' : 'Client', faultstring: message, debuginfo: null },
  };
}
