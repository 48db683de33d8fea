/**
 * The Glance v2 image schema (recorded from a real Zed Glance) and the subset of JSON Schema
 * validation Glance applies to image bodies, with jsonschema's error text.
 */
import { SimError } from '../core/errors.ts';
import imageSchemaJson from './image-schema.json' with { type: 'json' };
import { pformat, pyRepr } from './pyformat.ts';

interface PropertySchema {
  type?: string | string[];
  enum?: unknown[];
  maxLength?: number;
  pattern?: string;
  readOnly?: boolean;
  items?: PropertySchema;
  [key: string]: unknown;
}

interface ImageSchema {
  name: string;
  properties: Record<string, PropertySchema>;
  additionalProperties: PropertySchema;
  links: unknown[];
}

export const IMAGE_SCHEMA = imageSchemaJson as unknown as ImageSchema;

/** `GET /v2/schemas/images`: the collection schema wraps the image one. */
export function imagesSchema(): unknown {
  return {
    name: 'images',
    properties: {
      images: { type: 'array', items: IMAGE_SCHEMA },
      schema: { type: 'string' },
      first: { type: 'string' },
      next: { type: 'string' },
    },
    links: [
      { rel: 'first', href: '{first}' },
      { rel: 'next', href: '{next}' },
      { rel: 'describedby', href: '{schema}' },
    ],
  };
}

/** Attributes Glance computes; a client setting them gets 403 "Attribute 'x' is read-only.". */
export const READ_ONLY = new Set([
  'checksum',
  'os_hash_algo',
  'os_hash_value',
  'created_at',
  'size',
  'virtual_size',
  'status',
  'updated_at',
  'direct_url',
  'self',
  'file',
  'schema',
  'stores',
]);

export const RESERVED = new Set(['location', 'deleted', 'deleted_at']);

export const DISK_FORMATS = (IMAGE_SCHEMA.properties.disk_format?.enum ?? []).filter(
  (f) => f !== null,
) as string[];
export const CONTAINER_FORMATS = (IMAGE_SCHEMA.properties.container_format?.enum ?? []).filter(
  (f) => f !== null,
) as string[];

interface Violation {
  message: string;
  validator: string;
  schemaPath: (string | number)[];
  schema: PropertySchema;
  instancePath: (string | number)[];
  instance: unknown;
}

/**
 * Validates a (partial) image document as Glance does before create and for each PATCH operation;
 * throws 400 with jsonschema's `best_match` error rendered as Glance renders it.
 */
export function validateImage(doc: Record<string, unknown>): void {
  const violations: Violation[] = [];
  for (const [name, schema] of Object.entries(IMAGE_SCHEMA.properties)) {
    if (Object.hasOwn(doc, name)) violations.push(...check(doc[name], schema, ['properties', name], [name]));
  }
  for (const [name, value] of Object.entries(doc)) {
    if (!Object.hasOwn(IMAGE_SCHEMA.properties, name)) {
      violations.push(...check(value, IMAGE_SCHEMA.additionalProperties, ['additionalProperties'], [name]));
    }
  }
  if (violations.length === 0) return;
  // best_match prefers the shallowest error, then the first one found.
  const best = violations.reduce((a, b) => (b.instancePath.length < a.instancePath.length ? b : a));
  throw new SimError(400, `Provided object does not match schema 'image': ${describe(best)}`, {
    type: 'InvalidObject',
  });
}

function check(
  value: unknown,
  schema: PropertySchema,
  schemaPath: (string | number)[],
  instancePath: (string | number)[],
): Violation[] {
  const out: Violation[] = [];
  const fail = (validator: string, message: string) =>
    out.push({
      message,
      validator,
      schemaPath: [...schemaPath, validator],
      schema,
      instancePath,
      instance: value,
    });
  for (const key of Object.keys(schema)) {
    if (key === 'type' && schema.type !== undefined) {
      const types = Array.isArray(schema.type) ? schema.type : [schema.type];
      if (!types.some((t) => isType(value, t))) {
        fail('type', `${pyRepr(value)} is not of type ${types.map((t) => pyRepr(t)).join(', ')}`);
      }
    } else if (key === 'enum' && schema.enum !== undefined) {
      if (!schema.enum.some((e) => e === value))
        fail('enum', `${pyRepr(value)} is not one of ${pyRepr(schema.enum)}`);
    } else if (key === 'maxLength' && schema.maxLength !== undefined) {
      if (typeof value === 'string' && [...value].length > schema.maxLength)
        fail('maxLength', `${pyRepr(value)} is too long`);
    } else if (key === 'pattern' && schema.pattern !== undefined) {
      if (typeof value === 'string' && !new RegExp(schema.pattern).test(value)) {
        fail('pattern', `${pyRepr(value)} does not match ${pyRepr(schema.pattern)}`);
      }
    } else if (key === 'items' && schema.items !== undefined && Array.isArray(value)) {
      const items = schema.items;
      value.forEach((item, i) =>
        out.push(...check(item, items, [...schemaPath, 'items'], [...instancePath, i])),
      );
    }
  }
  return out;
}

function isType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
    default:
      return true;
  }
}

/** jsonschema's `str(ValidationError)`. */
function describe(v: Violation): string {
  const index = (path: (string | number)[]) => path.map((p) => `[${pyRepr(p)}]`).join('');
  const indent = (text: string) =>
    text
      .split('\n')
      .map((l) => `    ${l}`)
      .join('\n');
  return (
    `${v.message}\n\nFailed validating ${pyRepr(v.validator)} in schema${index(v.schemaPath.slice(0, -1))}:\n` +
    `${indent(pformat(v.schema))}\n\nOn instance${index(v.instancePath)}:\n${indent(pformat(v.instance))}`
  );
}
