/**
 * A small builder for Kubernetes structural schemas: each builder call makes one OpenAPI v3 node
 * (what a CRD's `openAPIV3Schema` holds) and carries, at the type level only, the TypeScript type
 * of the values that node accepts. A part's CRDs (deploy/<part>/crds) and the object types its
 * controllers use are therefore read off the same declaration and cannot drift apart.
 *
 * Only what structural schemas allow is offered (no `$ref`, no `oneOf` of types): objects with
 * required fields, strings (enum, format, pattern, lengths), integers (bounds), booleans, arrays
 * (bounds, list types), maps (`additionalProperties`), defaults, descriptions,
 * `x-kubernetes-preserve-unknown-fields`, int-or-string and CEL rules (`x-kubernetes-validations`).
 * A real API server evaluates those rules; the emulator does not, so a part states the same rules
 * again in TypeScript (CAPO's: src/capo/api/validation.ts).
 */

/** One CEL rule as a CRD carries it. */
export interface CelRule {
  rule: string;
  message: string;
  /** Field path (relative to the node) the API server reports the error on. */
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

/** An OpenAPI v3 schema node with the Kubernetes extensions, as it is written into a CRD. */
export interface OpenAPISchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: string;
  enum?: unknown[];
  default?: unknown;
  nullable?: boolean;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  items?: OpenAPISchema;
  properties?: Record<string, OpenAPISchema>;
  required?: string[];
  additionalProperties?: OpenAPISchema;
  anyOf?: OpenAPISchema[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: CelRule[];
}

/**
 * A schema node and, as a phantom, the type `T` of the values it accepts. Nodes are immutable:
 * every modifier returns a new one, so shared pieces (a NetworkParam) can be described
 * differently where they are used.
 */
export class Schema<T> {
  readonly node: Readonly<OpenAPISchema>;
  /** Type-level only: never set. */
  declare readonly __type?: T;

  constructor(node: OpenAPISchema) {
    this.node = Object.freeze(node);
  }

  describe(description: string): Schema<T> {
    return new Schema<T>({ ...this.node, description });
  }

  /** The value the API server fills in when the field is absent. */
  default(value: T): Schema<T> {
    return new Schema<T>({ ...this.node, default: structuredClone(value) });
  }

  /** CEL rules, enforced by a real API server (not by the emulator). */
  rules(...rules: CelRule[]): Schema<T> {
    return new Schema<T>({
      ...this.node,
      'x-kubernetes-validations': [...(this.node['x-kubernetes-validations'] ?? []), ...rules],
    });
  }

  /** Any node property not covered by a builder option (rarely needed). */
  with(extra: OpenAPISchema): Schema<T> {
    return new Schema<T>({ ...this.node, ...extra });
  }
}

/** The type of values a schema accepts. */
export type Infer<S> = S extends Schema<infer T> ? T : never;

type Props = Record<string, Schema<unknown>>;

/** Flattens an intersection so editors show one object type. */
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** Required keys as they are, the others optional. */
export type ObjectOf<P extends Props, R extends keyof P> = Simplify<
  { [K in R]: Infer<P[K]> } & { [K in Exclude<keyof P, R>]?: Infer<P[K]> }
>;

interface Common {
  description?: string;
}

export interface StringOptions extends Common {
  format?: 'uuid' | 'ipv4' | 'ipv6' | 'cidr' | 'date-time' | 'byte' | 'hostname' | 'uri';
  pattern?: string;
  minLength?: number;
  maxLength?: number;
}

export function string(opts: StringOptions = {}): Schema<string> {
  return new Schema<string>({ type: 'string', ...opts });
}

export function enumOf<const V extends readonly string[]>(values: V, opts: Common = {}): Schema<V[number]> {
  return new Schema<V[number]>({ type: 'string', enum: [...values], ...opts });
}

export interface IntegerOptions extends Common {
  format?: 'int32' | 'int64';
  minimum?: number;
  maximum?: number;
}

export function integer(opts: IntegerOptions = {}): Schema<number> {
  return new Schema<number>({ type: 'integer', ...opts });
}

export function boolean(opts: Common = {}): Schema<boolean> {
  return new Schema<boolean>({ type: 'boolean', ...opts });
}

/** A Kubernetes quantity or port: an integer or a string (`x-kubernetes-int-or-string`). */
export function intOrString(opts: Common & { pattern?: string } = {}): Schema<number | string> {
  const { pattern, ...rest } = opts;
  return new Schema<number | string>({
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    ...(pattern !== undefined ? { pattern } : {}),
    'x-kubernetes-int-or-string': true,
    ...rest,
  });
}

export interface ArrayOptions extends Common {
  minItems?: number;
  maxItems?: number;
  /**
   * How server-side apply merges the list: `atomic` (replaced whole), `set` (scalars, unique) or
   * `{ map: keys }` (objects identified by those keys, which must be required or defaulted).
   */
  listType?: 'atomic' | 'set' | { map: readonly string[] };
}

export function array<I>(items: Schema<I>, opts: ArrayOptions = {}): Schema<I[]> {
  const { listType, ...rest } = opts;
  const node: OpenAPISchema = { type: 'array', ...rest, items: items.node };
  if (listType === 'atomic' || listType === 'set') node['x-kubernetes-list-type'] = listType;
  else if (listType) {
    node['x-kubernetes-list-type'] = 'map';
    node['x-kubernetes-list-map-keys'] = [...listType.map];
  }
  return new Schema<I[]>(node);
}

/** A map with string keys (`additionalProperties`). */
export function map<V>(values: Schema<V>, opts: Common = {}): Schema<Record<string, V>> {
  return new Schema<Record<string, V>>({ type: 'object', additionalProperties: values.node, ...opts });
}

export interface ObjectOptions<R> extends Common {
  required?: readonly R[];
  minProperties?: number;
  maxProperties?: number;
  /** `x-kubernetes-map-type: atomic`: replaced whole by server-side apply. */
  atomic?: boolean;
}

export function object<P extends Props, R extends keyof P & string = never>(
  props: P,
  opts: ObjectOptions<R> = {},
): Schema<ObjectOf<P, R>> {
  const { required, atomic, ...rest } = opts;
  return new Schema<ObjectOf<P, R>>({
    type: 'object',
    ...rest,
    ...(required && required.length > 0 ? { required: [...required] } : {}),
    properties: Object.fromEntries(Object.entries(props).map(([k, v]) => [k, v.node])),
    ...(atomic ? { 'x-kubernetes-map-type': 'atomic' as const } : {}),
  });
}

/**
 * An object that keeps fields it does not declare (`x-kubernetes-preserve-unknown-fields`): the
 * declared ones are still typed, defaulted and validated.
 */
export function openObject<P extends Props, R extends keyof P & string = never>(
  props: P,
  opts: ObjectOptions<R> = {},
): Schema<ObjectOf<P, R> & { [key: string]: unknown }> {
  const base = object(props, opts);
  return new Schema({ ...base.node, 'x-kubernetes-preserve-unknown-fields': true });
}

/** Any JSON object, kept as is. */
export function anyObject(opts: Common = {}): Schema<Record<string, unknown>> {
  return new Schema<Record<string, unknown>>({
    type: 'object',
    'x-kubernetes-preserve-unknown-fields': true,
    ...opts,
  });
}

/**
 * The node as a CRD file spells it: properties in alphabetical order (as controller-gen writes
 * them), so the generated files diff cleanly; `required` keeps its order.
 */
export function canonical(node: Readonly<OpenAPISchema>): OpenAPISchema {
  const out: OpenAPISchema = {};
  const keys = Object.keys(node).sort() as (keyof OpenAPISchema)[];
  for (const k of keys) {
    const v = node[k];
    if (v === undefined) continue;
    if (k === 'properties') {
      const props = v as Record<string, OpenAPISchema>;
      out.properties = Object.fromEntries(
        Object.keys(props)
          .sort()
          .map((p) => [p, canonical(props[p] as OpenAPISchema)]),
      );
    } else if (k === 'items' || k === 'additionalProperties') {
      out[k] = canonical(v as OpenAPISchema);
    } else if (k === 'anyOf') {
      out.anyOf = (v as OpenAPISchema[]).map(canonical);
    } else {
      (out as Record<string, unknown>)[k] = structuredClone(v);
    }
  }
  return out;
}
