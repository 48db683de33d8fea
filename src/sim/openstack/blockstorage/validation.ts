/** Cinder's request-body checks, with its JSON-schema wording. */
import { SimError } from '../core/errors.ts';
import { invalidField } from './errors.ts';

/** Cinder's schema: an integer, or a string of digits, at least 1. */
export function parseSize(value: unknown, field = 'size'): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    if (!/^[0-9]+$/.test(value)) throw invalidField(field, value, `'${value}' does not match '^[0-9]+$'`);
    value = Number(value);
  }
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw invalidField(field, value, `${JSON.stringify(value)} is not of type 'integer', 'string', 'null'`);
  }
  if (value < 1) throw invalidField(field, value, `${value} is less than the minimum of 1`);
  if (value > 2 ** 31 - 1)
    throw invalidField(field, value, `${value} is greater than the maximum of 2147483647`);
  return value;
}

export function optionalString(value: unknown, field: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string')
    throw invalidField(field, value, `${JSON.stringify(value)} is not of type 'string', 'null'`);
  if (value.length > 255) throw invalidField(field, value, `'${value}' is too long`);
  return value;
}

export function parseMetadata(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidField('metadata', value, `${JSON.stringify(value)} is not of type 'object'`);
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k.length === 0 || k.length > 255)
      throw invalidField(
        'metadata',
        value,
        `'${k}' does not match any of the regexes: '^[a-zA-Z0-9-_:. /]{1,255}$'`,
      );
    if (typeof v !== 'string') throw invalidField(k, v, `${JSON.stringify(v)} is not of type 'string'`);
    if (v.length > 255) throw invalidField(k, v, `'${v}' is too long`);
    out[k] = v;
  }
  return out;
}

export function requireObject(body: unknown, key: string): Record<string, unknown> {
  const wrapper = body as Record<string, unknown> | undefined;
  const inner = wrapper?.[key];
  if (wrapper === undefined || typeof wrapper !== 'object' || inner === undefined) {
    throw new SimError(400, `'${key}' is a required property`, { type: 'ValidationError' });
  }
  if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) {
    throw invalidField(key, inner, `${JSON.stringify(inner)} is not of type 'object'`);
  }
  return inner as Record<string, unknown>;
}
