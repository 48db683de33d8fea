/**
 * Structural openAPIV3Schema handling for custom resources, in the order the apiextensions
 * server applies it on every write: prune unknown fields, drop `null` where not nullable, apply
 * `default`s, then validate (type, required, enum, bounds, lengths, pattern, items, formats,
 * list-type uniqueness). Messages follow kube-openapi's validator as the CRD handler converts
 * them into field errors (`spec.replicas: Invalid value: "string": spec.replicas in body must
 * be of type integer: "string"`).
 *
 * Not evaluated: `x-kubernetes-validations` (CEL) rules; see docs/sim-kube.md.
 */
import { field, type FieldError } from './errors.ts';
import { asObj, deepEqual, isObj, type Obj } from './json.ts';
import type { FieldHint, Hints, ListType } from './patch/hints.ts';

export interface JSONSchema {
  type?: string;
  format?: string;
  description?: string;
  properties?: Record<string, JSONSchema>;
  additionalProperties?: JSONSchema | boolean;
  items?: JSONSchema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  allOf?: JSONSchema[];
  anyOf?: JSONSchema[];
  oneOf?: JSONSchema[];
  not?: JSONSchema;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: string;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: string;
  'x-kubernetes-validations'?: unknown[];
}

const MAX_DEPTH = 64;

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function preserves(s: JSONSchema): boolean {
  return s['x-kubernetes-preserve-unknown-fields'] === true;
}

/**
 * Removes fields the schema does not declare; returns their paths (for `fieldValidation`
 * Warn/Strict). The root keeps apiVersion, kind and metadata, as do embedded resources.
 */
export function prune(schema: JSONSchema, value: unknown, root = true): string[] {
  const pruned: string[] = [];
  pruneNode(schema, value, '', root, pruned, 0);
  return pruned;
}

function pruneNode(
  s: JSONSchema,
  v: unknown,
  path: string,
  isRoot: boolean,
  out: string[],
  depth: number,
): void {
  if (depth > MAX_DEPTH) return;
  if (isObj(v)) {
    const embedded = isRoot || s['x-kubernetes-embedded-resource'] === true;
    const props = s.properties;
    const addl = s.additionalProperties;
    for (const k of Object.keys(v)) {
      if (embedded && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) continue;
      const child = props?.[k] ?? (isObj(addl) ? addl : undefined);
      if (child) {
        pruneNode(child, v[k], join(path, k), false, out, depth + 1);
      } else if (!preserves(s) && addl !== true) {
        out.push(join(path, k));
        delete v[k];
      }
    }
  } else if (Array.isArray(v) && s.items) {
    v.forEach((x, i) => pruneNode(s.items as JSONSchema, x, `${path}[${i}]`, false, out, depth + 1));
  }
}

/** Drops `null` values of non-nullable object fields, then applies defaults top-down. */
export function applyDefaults(schema: JSONSchema, value: unknown): void {
  defaultNode(schema, value, 0);
}

function defaultNode(s: JSONSchema, v: unknown, depth: number): void {
  if (depth > MAX_DEPTH) return;
  if (isObj(v)) {
    for (const [k, child] of Object.entries(s.properties ?? {})) {
      if (v[k] === null && !child.nullable) delete v[k];
      if (v[k] === undefined && child.default !== undefined) v[k] = structuredClone(child.default);
      if (v[k] !== undefined) defaultNode(child, v[k], depth + 1);
    }
    const addl = s.additionalProperties;
    if (isObj(addl)) {
      for (const k of Object.keys(v)) {
        if (s.properties?.[k]) continue;
        defaultNode(addl, v[k], depth + 1);
      }
    }
  } else if (Array.isArray(v) && s.items) {
    for (const x of v) defaultNode(s.items, x, depth + 1);
  }
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(s: JSONSchema, v: unknown): boolean {
  if (v === null) return s.nullable === true;
  if (s['x-kubernetes-int-or-string'])
    return typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));
  switch (s.type) {
    case undefined:
    case '':
      return true;
    case 'object':
      return isObj(v);
    case 'array':
      return Array.isArray(v);
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return typeof v === 'number' && Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    default:
      return true;
  }
}

const FORMATS: Record<string, RegExp> = {
  'date-time': /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  uuid: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  ipv4: /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/,
  byte: /^[A-Za-z0-9+/]*={0,2}$/,
};

/** Go's `%v` of a float64 bound: integers without a fraction. */
function num(n: number): string {
  return String(n);
}

/** Validates a value against the schema; `path` is the field path of `value` ('' for the root). */
export function validate(schema: JSONSchema, value: unknown, path = ''): FieldError[] {
  const errs: FieldError[] = [];
  validateNode(schema, value, path, errs, 0, true);
  return errs;
}

function validateNode(
  s: JSONSchema,
  v: unknown,
  path: string,
  errs: FieldError[],
  depth: number,
  isRoot: boolean,
): void {
  if (depth > MAX_DEPTH) return;
  const name = path || '.';
  if (!typeMatches(s, v)) {
    const t = s['x-kubernetes-int-or-string'] ? 'integer,string' : (s.type ?? '');
    errs.push(
      field.typeInvalid(
        path,
        jsonType(v),
        `${name} in body must be of type ${t}: ${JSON.stringify(jsonType(v))}`,
      ),
    );
    return;
  }
  if (v === null) return;
  if (s.enum && !s.enum.some((e) => deepEqual(e, v))) {
    errs.push(
      field.notSupported(
        path,
        v,
        s.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))),
      ),
    );
  }
  if (typeof v === 'number') {
    if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)) {
      errs.push(
        field.invalid(
          path,
          v,
          `${name} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${num(s.maximum)}`,
        ),
      );
    }
    if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)) {
      errs.push(
        field.invalid(
          path,
          v,
          `${name} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${num(s.minimum)}`,
        ),
      );
    }
    if (s.multipleOf !== undefined && s.multipleOf > 0 && !Number.isInteger(v / s.multipleOf)) {
      errs.push(field.invalid(path, v, `${name} in body should be a multiple of ${num(s.multipleOf)}`));
    }
    if (s.format === 'int32' && (v > 2147483647 || v < -2147483648)) {
      errs.push(
        field.invalid(path, v, `${name} in body must be of type int32: ${JSON.stringify(String(v))}`),
      );
    }
  }
  if (typeof v === 'string') {
    const len = [...v].length;
    if (s.maxLength !== undefined && len > s.maxLength) errs.push(field.tooLong(path, s.maxLength));
    if (s.minLength !== undefined && len < s.minLength) {
      errs.push(field.invalid(path, v, `${name} in body should be at least ${s.minLength} chars long`));
    }
    if (s.pattern !== undefined) {
      let re: RegExp | undefined;
      try {
        re = new RegExp(s.pattern, 'u');
      } catch {
        re = undefined;
      }
      if (re && !re.test(v)) errs.push(field.invalid(path, v, `${name} in body should match '${s.pattern}'`));
    }
    const fmt = s.format ? FORMATS[s.format] : undefined;
    if (fmt && !fmt.test(v)) {
      errs.push(field.invalid(path, v, `${name} in body must be of type ${s.format}: ${JSON.stringify(v)}`));
    }
  }
  if (Array.isArray(v)) {
    if (s.maxItems !== undefined && v.length > s.maxItems)
      errs.push(field.tooMany(path, v.length, s.maxItems));
    if (s.minItems !== undefined && v.length < s.minItems) {
      errs.push(field.invalid(path, v.length, `${name} in body should have at least ${s.minItems} items`));
    }
    if (s.items)
      v.forEach((x, i) => validateNode(s.items as JSONSchema, x, `${path}[${i}]`, errs, depth + 1, false));
    validateListType(s, v, path, errs);
  }
  if (isObj(v)) {
    const n = Object.keys(v).length;
    if (s.maxProperties !== undefined && n > s.maxProperties)
      errs.push(field.tooMany(path, n, s.maxProperties));
    if (s.minProperties !== undefined && n < s.minProperties) {
      errs.push(field.invalid(path, n, `${name} in body should have at least ${s.minProperties} properties`));
    }
    for (const r of s.required ?? []) {
      if (v[r] === undefined) errs.push(field.required(join(path, r)));
    }
    for (const [k, x] of Object.entries(v)) {
      if (isRoot && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) continue;
      const child = s.properties?.[k] ?? (isObj(s.additionalProperties) ? s.additionalProperties : undefined);
      if (child)
        validateNode(
          child,
          x,
          join(path, k),
          errs,
          depth + 1,
          child['x-kubernetes-embedded-resource'] === true,
        );
    }
  }
  for (const sub of s.allOf ?? []) validateNode(sub, v, path, errs, depth + 1, false);
  if (s.anyOf && !s.anyOf.some((sub) => validate(sub, v, path).length === 0)) {
    errs.push(field.invalid(path, v, `${name} in body must be of one of the anyOf schemas`));
  }
  if (s.oneOf && s.oneOf.filter((sub) => validate(sub, v, path).length === 0).length !== 1) {
    errs.push(field.invalid(path, v, `${name} in body must validate one and only one schema (oneOf)`));
  }
  if (s.not && validate(s.not, v, path).length === 0) {
    errs.push(field.invalid(path, v, `${name} in body should not validate the schema (not)`));
  }
}

/** `x-kubernetes-list-type: set|map` forbid duplicate items / duplicate keys. */
function validateListType(s: JSONSchema, v: unknown[], path: string, errs: FieldError[]): void {
  const lt = s['x-kubernetes-list-type'];
  if (lt === 'set') {
    v.forEach((x, i) => {
      if (v.findIndex((y) => deepEqual(x, y)) !== i) errs.push(field.duplicate(`${path}[${i}]`, x));
    });
  } else if (lt === 'map') {
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    const seen = new Set<string>();
    v.forEach((x, i) => {
      const o = asObj(x);
      if (!o) return;
      const id = JSON.stringify(keys.map((k) => o[k] ?? null));
      if (seen.has(id)) {
        const keyObj: Obj = {};
        for (const k of keys) keyObj[k] = o[k];
        errs.push(field.duplicate(`${path}[${i}]`, keyObj));
      }
      seen.add(id);
    });
  }
}

/** The schema of a nested field path (field names; list items are stepped through `items`). */
export function schemaAt(schema: JSONSchema, path: readonly string[]): JSONSchema | undefined {
  let cur: JSONSchema | undefined = schema;
  for (const p of path) {
    if (!cur) return undefined;
    while (cur.type === 'array' && cur.items) cur = cur.items;
    const next: JSONSchema | undefined =
      cur.properties?.[p] ?? (isObj(cur.additionalProperties) ? cur.additionalProperties : undefined);
    cur = next;
  }
  return cur;
}

/** Apply/patch hints from the schema's list-type and map-type extensions. */
export function schemaHints(schema: JSONSchema, base: Hints): Hints {
  return {
    get(path): FieldHint | undefined {
      const fromBase = base.get(path);
      if (fromBase) return fromBase;
      const s = schemaAt(schema, path);
      if (!s) return undefined;
      const hint: FieldHint = {};
      const lt = s['x-kubernetes-list-type'];
      let list: ListType | undefined;
      if (lt === 'map') list = { type: 'map', keys: s['x-kubernetes-list-map-keys'] ?? [] };
      else if (lt === 'set') list = { type: 'set' };
      else if (s.type === 'array') list = { type: 'atomic' };
      if (list) hint.list = list;
      if (s['x-kubernetes-map-type'] === 'atomic') hint.atomicMap = true;
      return hint;
    },
  };
}
