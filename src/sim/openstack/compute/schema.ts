/**
 * The slice of JSON Schema Nova's API schemas use, with python-jsonschema's messages and Nova's
 * wrapping ("Invalid input for field/attribute <last path element>. Value: <python repr>. <message>"),
 * so clients that match on Nova's 400 texts see the same words.
 */
import { isIPv4, isIPv6 } from '../../../lib/cidr.ts';
import { SimError } from '../core/errors.ts';

type JsonType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean' | 'null';

export interface Schema {
  type?: JsonType | JsonType[];
  properties?: Record<string, Schema>;
  patternProperties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  minProperties?: number;
  maxProperties?: number;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  enum?: readonly unknown[];
  format?: 'uuid' | 'base64' | 'ipv4' | 'ipv6' | 'name' | 'date-time';
  minimum?: number;
  maximum?: number;
  oneOf?: Schema[];
  anyOf?: Schema[];
}

interface Failure {
  path: (string | number)[];
  instance: unknown;
  message: string;
  /** Nova's custom `name` format replaces the whole text with its own. */
  replaces?: string;
}

/** Python's repr() of a JSON value, as jsonschema and Nova print them. */
export function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : pyFloat(v);
  if (typeof v === 'string') return pyStr(v);
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>)
      .map(([k, x]) => `${pyStr(k)}: ${pyRepr(x)}`)
      .join(', ')}}`;
  }
  return typeof v === 'bigint' ? v.toString() : '';
}

function pyFloat(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : n < 0 ? '-inf' : 'nan';
  const s = String(n);
  return s.includes('e') ? s.replace(/e\+?/, 'e+').replace('e+-', 'e-') : s;
}

function pyStr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '\\') out += '\\\\';
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}

function typeMatches(v: unknown, t: JsonType): boolean {
  switch (t) {
    case 'null':
      return v === null;
    case 'boolean':
      return typeof v === 'boolean';
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
  }
}

const UUID_RE = /^(\{)?(urn:uuid:)?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}(\})?$/i;
export const isUuidLike = (s: string): boolean => UUID_RE.test(s);

/** Python's base64.decodebytes: ignores characters outside the alphabet, insists on padding. */
export function isPythonBase64(s: string): boolean {
  const cleaned = s.replace(/[^A-Za-z0-9+/=]/g, '');
  const firstPad = cleaned.indexOf('=');
  const data = firstPad < 0 ? cleaned : cleaned.slice(0, firstPad);
  const pads = firstPad < 0 ? 0 : cleaned.length - firstPad;
  const rem = data.length % 4;
  if (rem === 0) return true;
  if (rem === 1) return false;
  return pads >= 4 - rem;
}

/** Nova's format checkers read addresses with netaddr, leading zeros as decimal. */
const NOVA = { sloppy: true };

const NAME_MESSAGE =
  "An invalid 'name' value was provided. The name must be: printable characters. Can not start or end with whitespace.";

function formatOk(format: NonNullable<Schema['format']>, v: string): boolean {
  switch (format) {
    case 'uuid':
      return isUuidLike(v);
    case 'base64':
      return isPythonBase64(v);
    case 'ipv4':
      return isIPv4(v, NOVA);
    case 'ipv6':
      return isIPv6(v, NOVA);
    case 'date-time':
      return !Number.isNaN(Date.parse(v)) && /^\d{4}-\d{2}-\d{2}/.test(v);
    case 'name':
      // eslint-disable-next-line no-control-regex
      return v.trim() === v && !/[\u0000-\u001f\u007f]/.test(v);
  }
}

function typeList(t: JsonType | JsonType[]): string {
  return (Array.isArray(t) ? t : [t]).map((x) => pyRepr(x)).join(', ');
}

function check(schema: Schema, v: unknown, path: (string | number)[]): Failure | undefined {
  const fail = (message: string, replaces?: string): Failure => ({
    path,
    instance: v,
    message,
    ...(replaces ? { replaces } : {}),
  });
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(v, t)))
      return fail(`${pyRepr(v)} is not of type ${typeList(schema.type)}`);
  }
  if (schema.enum && !schema.enum.some((e) => e === v))
    return fail(`${pyRepr(v)} is not one of ${pyRepr(schema.enum)}`);
  if (schema.oneOf) {
    const ok = schema.oneOf.filter((s) => check(s, v, path) === undefined).length;
    if (ok !== 1) return fail(`${pyRepr(v)} is not valid under any of the given schemas`);
  }
  if (schema.anyOf && !schema.anyOf.some((s) => check(s, v, path) === undefined)) {
    return fail(`${pyRepr(v)} is not valid under any of the given schemas`);
  }
  if (typeof v === 'string') {
    if (schema.minLength !== undefined && [...v].length < schema.minLength)
      return fail(`${pyRepr(v)} is too short`);
    if (schema.maxLength !== undefined && [...v].length > schema.maxLength)
      return fail(`${pyRepr(v)} is too long`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(v)) {
      return fail(`${pyRepr(v)} does not match ${pyRepr(schema.pattern)}`);
    }
    if (schema.format && !formatOk(schema.format, v)) {
      return schema.format === 'name'
        ? fail('', NAME_MESSAGE)
        : fail(`${pyRepr(v)} is not a ${pyRepr(schema.format)}`);
    }
  }
  if (typeof v === 'number') {
    if (schema.minimum !== undefined && v < schema.minimum) {
      return fail(`${pyRepr(v)} is less than the minimum of ${pyRepr(schema.minimum)}`);
    }
    if (schema.maximum !== undefined && v > schema.maximum) {
      return fail(`${pyRepr(v)} is greater than the maximum of ${pyRepr(schema.maximum)}`);
    }
  }
  if (Array.isArray(v)) {
    if (schema.minItems !== undefined && v.length < schema.minItems) return fail(`${pyRepr(v)} is too short`);
    if (schema.maxItems !== undefined && v.length > schema.maxItems) return fail(`${pyRepr(v)} is too long`);
    if (schema.uniqueItems && new Set(v.map((x) => JSON.stringify(x))).size !== v.length) {
      return fail(`${pyRepr(v)} has non-unique elements`);
    }
    if (schema.items) {
      for (let i = 0; i < v.length; i++) {
        const f = check(schema.items, v[i], [...path, i]);
        if (f) return f;
      }
    }
  }
  if (typeMatches(v, 'object')) {
    const obj = v as Record<string, unknown>;
    const keys = Object.keys(obj);
    if (schema.minProperties !== undefined && keys.length < schema.minProperties) {
      return fail(`${pyRepr(v)} does not have enough properties`);
    }
    if (schema.maxProperties !== undefined && keys.length > schema.maxProperties) {
      return fail(`${pyRepr(v)} has too many properties`);
    }
    for (const [k, s] of Object.entries(schema.properties ?? {})) {
      if (!(k in obj)) continue;
      const f = check(s, obj[k], [...path, k]);
      if (f) return f;
    }
    const patterns = Object.entries(schema.patternProperties ?? {});
    for (const k of keys) {
      for (const [p, s] of patterns) {
        if (!new RegExp(p).test(k)) continue;
        const f = check(s, obj[k], [...path, k]);
        if (f) return f;
      }
    }
    for (const r of schema.required ?? [])
      if (!(r in obj)) return fail(`${pyRepr(r)} is a required property`);
    const extras = keys.filter(
      (k) => !(schema.properties && k in schema.properties) && !patterns.some(([p]) => new RegExp(p).test(k)),
    );
    if (extras.length > 0) {
      if (schema.additionalProperties === false) {
        if (patterns.length > 0) {
          const verb = extras.length === 1 ? 'does' : 'do';
          return fail(
            `${extras
              .sort()
              .map((e) => pyRepr(e))
              .join(', ')} ${verb} not match any of the regexes: ${patterns
              .map(([p]) => p)
              .sort()
              .map((p) => pyRepr(p))
              .join(', ')}`,
          );
        }
        const verb = extras.length === 1 ? 'was' : 'were';
        return fail(
          `Additional properties are not allowed (${extras.map((e) => pyRepr(e)).join(', ')} ${verb} unexpected)`,
        );
      }
      if (typeof schema.additionalProperties === 'object') {
        for (const k of extras) {
          const f = check(schema.additionalProperties, obj[k], [...path, k]);
          if (f) return f;
        }
      }
    }
  }
  return undefined;
}

/** jsonschema's message for the first failure, for callers that word their own 400 around it. */
export function firstError(schema: Schema, value: unknown): string | undefined {
  return check(schema, value, [])?.message;
}

/** Validates a request body; throws Nova's 400 on the first failure. */
export function validateBody(schema: Schema, body: unknown): void {
  const f = check(schema, body, []);
  if (!f) return;
  throw new SimError(400, novaText(f));
}

function novaText(f: Failure): string {
  if (f.replaces) return f.replaces;
  const last = f.path[f.path.length - 1];
  if (last === undefined) return f.message;
  const value = typeof f.instance === 'string' ? f.instance : pyRepr(f.instance);
  return `Invalid input for field/attribute ${last}. Value: ${value}. ${f.message}`;
}

// Parameter types shared by Nova's schemas (nova/api/validation/parameter_types.py).
export const name: Schema = { type: 'string', minLength: 1, maxLength: 255, format: 'name' };
export const uuid: Schema = { type: 'string', format: 'uuid' };
export const description: Schema = { type: ['string', 'null'], minLength: 0, maxLength: 255 };
export const metadata: Schema = {
  type: 'object',
  patternProperties: { '^[a-zA-Z0-9-_:. ]{1,255}$': { type: 'string', maxLength: 255 } },
  additionalProperties: false,
};
export const tag: Schema = { type: 'string', minLength: 1, maxLength: 60, pattern: '^[^,/]*$' };
export const booleanLike: Schema = {
  enum: [
    true,
    'True',
    'TRUE',
    'true',
    '1',
    'ON',
    'On',
    'on',
    'YES',
    'Yes',
    'yes',
    false,
    'False',
    'FALSE',
    'false',
    '0',
    'OFF',
    'Off',
    'off',
    'NO',
    'No',
    'no',
  ],
};
export const positiveInteger: Schema = {
  type: ['integer', 'string'],
  pattern: '^[0-9]*$',
  minimum: 1,
  minLength: 1,
};
export const nonNegativeInteger: Schema = {
  type: ['integer', 'string'],
  pattern: '^[0-9]*$',
  minimum: 0,
  minLength: 1,
};

/** Python's truthiness of Nova's boolean-like strings. */
export function truthy(v: unknown): boolean {
  return v === true || (typeof v === 'string' && ['true', '1', 'on', 'yes'].includes(v.toLowerCase()));
}
