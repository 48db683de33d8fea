/**
 * Request body parsing with WSME's rules and wording: unknown attributes, wrong types, enum and
 * range violations and missing mandatory fields are 400s raised before any controller logic runs.
 */
import { ipVersion, parseCidr } from '../../../lib/cidr.ts';
import { SimError } from '../core/errors.ts';
import { invalidInput } from './errors.ts';

export type Kind =
  | { t: 'str'; max?: number }
  | { t: 'bool' }
  | { t: 'int'; min?: number; max?: number }
  | { t: 'enum'; values: readonly string[] }
  | { t: 'numenum'; values: readonly number[] }
  | { t: 'uuid' }
  | { t: 'ip' }
  | { t: 'strlist'; max?: number }
  | { t: 'cidrlist' }
  | { t: 'strdict' }
  | { t: 'obj'; fields: Fields }
  | { t: 'objlist'; fields: Fields };

export interface FieldDef {
  kind: Kind;
  mandatory?: boolean;
}

export type Fields = Readonly<Record<string, FieldDef>>;

export type Parsed = Record<string, unknown>;

const UUID_RE = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;

export const str = (max = 255): FieldDef => ({ kind: { t: 'str', max } });
export const bool = (): FieldDef => ({ kind: { t: 'bool' } });
export const int = (min?: number, max?: number): FieldDef => ({
  kind: { t: 'int', ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) },
});
export const enumOf = (values: readonly string[]): FieldDef => ({ kind: { t: 'enum', values } });
export const numEnumOf = (values: readonly number[]): FieldDef => ({ kind: { t: 'numenum', values } });
export const uuidField = (): FieldDef => ({ kind: { t: 'uuid' } });
export const ip = (): FieldDef => ({ kind: { t: 'ip' } });
export const strList = (max = 255): FieldDef => ({ kind: { t: 'strlist', max } });
export const cidrList = (): FieldDef => ({ kind: { t: 'cidrlist' } });
export const strDict = (): FieldDef => ({ kind: { t: 'strdict' } });
export const obj = (fields: Fields): FieldDef => ({ kind: { t: 'obj', fields } });
export const objList = (fields: Fields): FieldDef => ({ kind: { t: 'objlist', fields } });
export const mandatory = (def: FieldDef): FieldDef => ({ ...def, mandatory: true });

/** Parses `{"<root>": {...}}`; returns only the attributes the client sent (null included). */
export function parseRoot(body: unknown, root: string, fields: Fields): Parsed {
  if (!isObject(body) || !(root in body) || body[root] === null) {
    throw invalidInput(root, undefined, 'Mandatory field missing.');
  }
  const unknown = Object.keys(body).filter((k) => k !== root);
  if (unknown.length > 0) throw unknownAttribute(undefined, unknown);
  return parseObject(body[root], fields, root);
}

export function parseObject(value: unknown, fields: Fields, name: string): Parsed {
  if (!isObject(value)) throw invalidInput(name, value, wrongType('dict', value));
  const unknown = Object.keys(value).filter((k) => !(k in fields));
  if (unknown.length > 0) throw unknownAttribute(name, unknown);
  const out: Parsed = {};
  for (const [key, def] of Object.entries(fields)) {
    const raw = value[key];
    if (raw === undefined || raw === null) {
      if (def.mandatory) throw invalidInput(key, raw, 'Mandatory field missing.');
      if (raw === null) out[key] = null;
      continue;
    }
    out[key] = parseValue(raw, def.kind, key);
  }
  return out;
}

function parseValue(raw: unknown, kind: Kind, key: string): unknown {
  switch (kind.t) {
    case 'str': {
      if (typeof raw !== 'string') throw invalidInput(key, raw, wrongType('str', raw));
      if (kind.max !== undefined && raw.length > kind.max) {
        throw invalidInput(key, raw, `Value should have a maximum character requirement of ${kind.max}`);
      }
      return raw;
    }
    case 'bool': {
      if (typeof raw === 'boolean') return raw;
      if (
        typeof raw === 'string' &&
        ['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'].includes(raw.toLowerCase())
      ) {
        return ['true', '1', 'yes', 'on'].includes(raw.toLowerCase());
      }
      throw invalidInput(key, raw, `Value should be boolean`);
    }
    case 'int': {
      let n: number;
      if (typeof raw === 'number') n = raw;
      else if (typeof raw === 'string' && /^-?\d+$/.test(raw.trim())) n = Number(raw);
      else throw invalidInput(key, raw, wrongType('int', raw));
      if (!Number.isInteger(n)) throw invalidInput(key, raw, wrongType('int', raw));
      if (kind.min !== undefined && n < kind.min) {
        throw invalidInput(key, raw, `Value should be greater or equal to ${kind.min}`);
      }
      if (kind.max !== undefined && n > kind.max) {
        throw invalidInput(key, raw, `Value should be lower or equal to ${kind.max}`);
      }
      return n;
    }
    case 'enum': {
      if (typeof raw !== 'string' || !kind.values.includes(raw)) {
        throw invalidInput(key, raw, `Value should be one of: ${kind.values.join(', ')}`);
      }
      return raw;
    }
    case 'numenum': {
      const n = typeof raw === 'string' ? Number(raw) : raw;
      if (typeof n !== 'number' || !kind.values.includes(n)) {
        throw invalidInput(
          key,
          raw,
          `Value should be one of: ${kind.values.map((v) => v.toFixed(1)).join(', ')}`,
        );
      }
      return n;
    }
    case 'uuid': {
      if (typeof raw !== 'string' || !UUID_RE.test(raw)) throw invalidInput(key, raw, 'Invalid UUID value');
      return raw;
    }
    case 'ip': {
      if (typeof raw !== 'string' || ipVersion(raw) === 0) {
        throw invalidInput(key, raw, 'Value should be IPv4 or IPv6 format');
      }
      return raw;
    }
    case 'strlist': {
      if (!Array.isArray(raw)) throw invalidInput(key, raw, wrongType('list', raw));
      for (const item of raw) {
        if (typeof item !== 'string') throw invalidInput(key, raw, wrongType('str', item));
        if (kind.max !== undefined && item.length > kind.max) {
          throw invalidInput(key, raw, `Value should have a maximum character requirement of ${kind.max}`);
        }
      }
      return [...(raw as string[])];
    }
    case 'cidrlist': {
      if (!Array.isArray(raw)) throw invalidInput(key, raw, wrongType('list', raw));
      for (const item of raw) {
        if (typeof item !== 'string' || !isCidr(item)) {
          throw invalidInput(key, raw, 'Value should be IPv4 or IPv6 CIDR format');
        }
      }
      return [...(raw as string[])];
    }
    case 'strdict': {
      if (!isObject(raw)) throw invalidInput(key, raw, wrongType('dict', raw));
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(raw)) {
        if (typeof v !== 'string') throw invalidInput(key, raw, wrongType('str', v));
        out[k] = v;
      }
      return out;
    }
    case 'obj':
      return parseObject(raw, kind.fields, key);
    case 'objlist': {
      if (!Array.isArray(raw)) throw invalidInput(key, raw, wrongType('list', raw));
      return raw.map((item) => parseObject(item, kind.fields, key));
    }
  }
}

function isCidr(value: string): boolean {
  return parseCidr(value) !== undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const PY_TYPES: Readonly<Record<string, string>> = {
  string: 'str',
  number: 'int',
  boolean: 'bool',
  object: 'dict',
};

function wrongType(expected: string, got: unknown): string {
  const actual = Array.isArray(got)
    ? 'list'
    : got === null
      ? 'NoneType'
      : (PY_TYPES[typeof got] ?? typeof got);
  return `Wrong type. Expected '<class '${expected}'>', got '<class '${actual}'>'`;
}

function unknownAttribute(argument: string | undefined, names: string[]): SimError {
  const where = argument ? `argument ${argument}` : 'argument';
  return new SimError(400, `Unknown attribute for ${where}: ${names.sort().join(', ')}`);
}
