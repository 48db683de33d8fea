/**
 * Cinder's wsgi Fault: `{"<faultName>": {"code": N, "message": "..."}}`, the name chosen by status.
 * 401 never reaches Cinder: keystonemiddleware answers it in Keystone's format.
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
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

export function renderCinderError(err: SimError, req: SimRequest | undefined): SimResponse {
  if (err.status === 401) {
    const origin = req ? new URL(req.baseUrl).origin : '';
    return {
      status: 401,
      headers: { 'WWW-Authenticate': `Keystone uri="${origin}/identity"` },
      body: { error: { code: 401, title: 'Unauthorized', message: err.message } },
    };
  }
  const name = FAULT_NAMES[err.status] ?? 'computeFault';
  return { status: err.status, body: { [name]: { code: err.status, message: err.message } } };
}

export const volumeNotFound = (id: string) =>
  new SimError(404, `Volume ${id} could not be found.`, { type: 'VolumeNotFound' });

/** Cinder's InvalidVolume (400): "Invalid volume: <reason>". */
export const invalidVolume = (reason: string) =>
  new SimError(400, `Invalid volume: ${reason}`, { type: 'InvalidVolume' });

/** Cinder's InvalidInput (400): "Invalid input received: <reason>". */
export const invalidInput = (reason: string) =>
  new SimError(400, `Invalid input received: ${reason}`, { type: 'InvalidInput' });

export const badRequest = (message: string) => new SimError(400, message, { type: 'BadRequest' });

/** Cinder's JSON-schema failures: "Invalid input for field/attribute <f>. Value: <v>. <why>". */
export const invalidField = (field: string, value: unknown, why: string) =>
  new SimError(400, `Invalid input for field/attribute ${field}. Value: ${pyish(value)}. ${why}`, {
    type: 'ValidationError',
  });

/** How Python's `%s` prints a JSON value in Cinder's messages. */
export function pyish(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'string') return value;
  if (value === true) return 'True';
  if (value === false) return 'False';
  return JSON.stringify(value);
}
