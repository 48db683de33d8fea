/**
 * The OpenAPI v2 document as gnostic's `openapi.v2.Document` protobuf (google/gnostic
 * `openapiv2/OpenAPIv2.proto`), the form kubectl asks `/openapi/v2` for. Encoded as gnostic's
 * ParseDocument + proto.Marshal would: named maps as lists of `Named*` entries, `x-` keys as
 * vendor extensions and `default`/`example`/`enum` values as `Any` holding YAML. The decoder is
 * the reverse, for tests and tools.
 */
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { isObj, type Obj } from '../json.ts';

type Scalar = 'string' | 'bool' | 'double' | 'int64';

/** Schema fields with plain values: JSON key, field number, type. */
const SCHEMA_SCALARS: [string, number, Scalar][] = [
  ['$ref', 1, 'string'],
  ['format', 2, 'string'],
  ['title', 3, 'string'],
  ['description', 4, 'string'],
  ['multipleOf', 6, 'double'],
  ['maximum', 7, 'double'],
  ['exclusiveMaximum', 8, 'bool'],
  ['minimum', 9, 'double'],
  ['exclusiveMinimum', 10, 'bool'],
  ['maxLength', 11, 'int64'],
  ['minLength', 12, 'int64'],
  ['pattern', 13, 'string'],
  ['maxItems', 14, 'int64'],
  ['minItems', 15, 'int64'],
  ['uniqueItems', 16, 'bool'],
  ['maxProperties', 17, 'int64'],
  ['minProperties', 18, 'int64'],
  ['discriminator', 26, 'string'],
  ['readOnly', 27, 'bool'],
];
const S = {
  default: 5,
  required: 19,
  enum: 20,
  additionalProperties: 21,
  type: 22,
  items: 23,
  allOf: 24,
  properties: 25,
  externalDocs: 29,
  example: 30,
  vendorExtension: 31,
};
const MAX_DEPTH = 128;

function writeScalar(w: BinaryWriter, no: number, type: Scalar, v: unknown): void {
  if (type === 'string' && typeof v === 'string') w.tag(no, WireType.LengthDelimited).string(v);
  else if (type === 'bool' && typeof v === 'boolean') w.tag(no, WireType.Varint).bool(v);
  else if (type === 'double' && typeof v === 'number') w.tag(no, WireType.Bit64).double(v);
  else if (type === 'int64' && typeof v === 'number') w.tag(no, WireType.Varint).int64(v);
}

function message(w: BinaryWriter, no: number, body: (w: BinaryWriter) => void): void {
  w.tag(no, WireType.LengthDelimited).fork();
  body(w);
  w.join();
}

/** gnostic `Any`: the value as YAML text (field 2). */
function writeAny(w: BinaryWriter, no: number, v: unknown): void {
  message(w, no, (a) => a.tag(2, WireType.LengthDelimited).string(toYaml(v)));
}

/** `x-…` keys as `NamedAny` vendor extensions. */
function writeExtensions(w: BinaryWriter, no: number, o: Obj): void {
  for (const [k, v] of Object.entries(o)) {
    if (!k.startsWith('x-')) continue;
    message(w, no, (n) => {
      n.tag(1, WireType.LengthDelimited).string(k);
      writeAny(n, 2, v);
    });
  }
}

function writeSchema(w: BinaryWriter, s: Obj, depth: number): void {
  if (depth > MAX_DEPTH) throw new Error('OpenAPI schema nested too deep');
  for (const [key, no, type] of SCHEMA_SCALARS) writeScalar(w, no, type, s[key]);
  if (s.default !== undefined) writeAny(w, S.default, s.default);
  if (Array.isArray(s.required))
    for (const r of s.required)
      if (typeof r === 'string') w.tag(S.required, WireType.LengthDelimited).string(r);
  if (Array.isArray(s.enum)) for (const e of s.enum) writeAny(w, S.enum, e);
  if (typeof s.additionalProperties === 'boolean') {
    const b = s.additionalProperties;
    message(w, S.additionalProperties, (a) => a.tag(2, WireType.Varint).bool(b));
  } else if (isObj(s.additionalProperties)) {
    const sub = s.additionalProperties;
    message(w, S.additionalProperties, (a) => message(a, 1, (x) => writeSchema(x, sub, depth + 1)));
  }
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    message(w, S.type, (t) => {
      for (const v of types) if (typeof v === 'string') t.tag(1, WireType.LengthDelimited).string(v);
    });
  }
  if (s.items !== undefined) {
    const items = (Array.isArray(s.items) ? s.items : [s.items]).filter(isObj);
    message(w, S.items, (i) => {
      for (const it of items) message(i, 1, (x) => writeSchema(x, it, depth + 1));
    });
  }
  if (Array.isArray(s.allOf))
    for (const a of s.allOf.filter(isObj)) message(w, S.allOf, (x) => writeSchema(x, a, depth + 1));
  if (isObj(s.properties)) {
    const props = s.properties;
    message(w, S.properties, (p) => writeNamedSchemas(p, props, depth));
  }
  if (isObj(s.externalDocs)) {
    const d = s.externalDocs;
    message(w, S.externalDocs, (e) => {
      writeScalar(e, 1, 'string', d.description);
      writeScalar(e, 2, 'string', d.url);
    });
  }
  if (s.example !== undefined) writeAny(w, S.example, s.example);
  writeExtensions(w, S.vendorExtension, s);
}

/** `additional_properties` (1) of NamedSchema{name, value} entries. */
function writeNamedSchemas(w: BinaryWriter, schemas: Obj, depth: number): void {
  for (const [name, schema] of Object.entries(schemas)) {
    if (!isObj(schema)) continue;
    message(w, 1, (n) => {
      n.tag(1, WireType.LengthDelimited).string(name);
      message(n, 2, (x) => writeSchema(x, schema, depth + 1));
    });
  }
}

/** An OpenAPI v2 document (swagger, info, paths, definitions, security) as gnostic protobuf. */
export function encodeOpenAPIv2(doc: Obj): Uint8Array {
  const w = new BinaryWriter();
  writeScalar(w, 1, 'string', doc.swagger);
  if (isObj(doc.info)) {
    const info = doc.info;
    message(w, 2, (i) => {
      writeScalar(i, 1, 'string', info.title);
      writeScalar(i, 2, 'string', info.version);
      writeScalar(i, 3, 'string', info.description);
      writeExtensions(i, 7, info);
    });
  }
  // Paths: only vendor extensions; the emulator publishes no paths in v2.
  if (isObj(doc.paths)) {
    const paths = doc.paths;
    message(w, 8, (p) => writeExtensions(p, 1, paths));
  }
  if (isObj(doc.definitions)) {
    const defs = doc.definitions;
    message(w, 9, (d) => writeNamedSchemas(d, defs, 0));
  }
  if (Array.isArray(doc.security)) {
    for (const req of doc.security.filter(isObj)) {
      message(w, 12, (r) => {
        for (const [name, scopes] of Object.entries(req)) {
          message(r, 1, (n) => {
            n.tag(1, WireType.LengthDelimited).string(name);
            message(n, 2, (a) => {
              for (const s of Array.isArray(scopes) ? scopes : [])
                if (typeof s === 'string') a.tag(1, WireType.LengthDelimited).string(s);
            });
          });
        }
      });
    }
  }
  if (isObj(doc.securityDefinitions)) {
    const defs = doc.securityDefinitions;
    message(w, 13, (sd) => {
      for (const [name, d] of Object.entries(defs)) {
        if (!isObj(d) || d.type !== 'apiKey') continue;
        message(sd, 1, (n) => {
          n.tag(1, WireType.LengthDelimited).string(name);
          // SecurityDefinitionsItem.api_key_security (2): ApiKeySecurity{type, name, in, description}.
          message(n, 2, (item) =>
            message(item, 2, (k) => {
              writeScalar(k, 1, 'string', d.type);
              writeScalar(k, 2, 'string', d.name);
              writeScalar(k, 3, 'string', d.in);
              writeScalar(k, 4, 'string', d.description);
            }),
          );
        });
      }
    });
  }
  return w.finish();
}

/* ------------------------------------------------------------------ decoding */

/** One field of a message: its number and either its bytes or its number value. */
interface Field {
  no: number;
  bytes: Uint8Array;
  value: number;
}

function fields(bytes: Uint8Array): Field[] {
  const r = new BinaryReader(bytes);
  const out: Field[] = [];
  while (r.pos < r.len) {
    const [no, wt] = r.tag();
    if (wt === WireType.LengthDelimited) out.push({ no, bytes: r.bytes(), value: 0 });
    else if (wt === WireType.Varint) out.push({ no, bytes: new Uint8Array(), value: Number(r.int64()) });
    else if (wt === WireType.Bit64) out.push({ no, bytes: new Uint8Array(), value: r.double() });
    else r.skip(wt, no);
  }
  return out;
}

function text(f: Field): string {
  return Buffer.from(f.bytes).toString('utf8');
}

function scalarOf(f: Field, type: Scalar): unknown {
  if (type === 'string') return text(f);
  if (type === 'bool') return f.value !== 0;
  return f.value;
}

function readAny(f: Field): unknown {
  for (const a of fields(f.bytes)) if (a.no === 2) return parseYaml(text(a)) as unknown;
  return undefined;
}

function readNamedAny(f: Field, into: Obj): void {
  let name = '';
  let value: unknown;
  for (const x of fields(f.bytes)) {
    if (x.no === 1) name = text(x);
    else if (x.no === 2) value = readAny(x);
  }
  into[name] = value;
}

function readNamedSchemas(f: Field, depth: number): Obj {
  const out: Obj = {};
  for (const entry of fields(f.bytes)) {
    if (entry.no !== 1) continue;
    let name = '';
    let schema: Obj = {};
    for (const x of fields(entry.bytes)) {
      if (x.no === 1) name = text(x);
      else if (x.no === 2) schema = readSchema(x, depth + 1);
    }
    out[name] = schema;
  }
  return out;
}

function readSchema(f: Field, depth: number): Obj {
  if (depth > MAX_DEPTH) throw new Error('OpenAPI schema nested too deep');
  const s: Obj = {};
  const extensions: Obj = {};
  for (const x of fields(f.bytes)) {
    const scalar = SCHEMA_SCALARS.find(([, n]) => n === x.no);
    if (scalar) s[scalar[0]] = scalarOf(x, scalar[2]);
    else if (x.no === S.default) s.default = readAny(x);
    else if (x.no === S.required) ((s.required ??= []) as string[]).push(text(x));
    else if (x.no === S.enum) ((s.enum ??= []) as unknown[]).push(readAny(x));
    else if (x.no === S.additionalProperties) {
      for (const a of fields(x.bytes))
        s.additionalProperties = a.no === 1 ? readSchema(a, depth + 1) : a.value !== 0;
    } else if (x.no === S.type) {
      const types = fields(x.bytes).map(text);
      s.type = types.length === 1 ? types[0] : types;
    } else if (x.no === S.items) {
      const items = fields(x.bytes).map((i) => readSchema(i, depth + 1));
      s.items = items.length === 1 ? items[0] : items;
    } else if (x.no === S.allOf) ((s.allOf ??= []) as Obj[]).push(readSchema(x, depth + 1));
    else if (x.no === S.properties) s.properties = readNamedSchemas(x, depth);
    else if (x.no === S.externalDocs) {
      const d: Obj = {};
      for (const e of fields(x.bytes)) d[e.no === 1 ? 'description' : 'url'] = text(e);
      s.externalDocs = d;
    } else if (x.no === S.example) s.example = readAny(x);
    else if (x.no === S.vendorExtension) readNamedAny(x, extensions);
  }
  return { ...s, ...extensions };
}

const API_KEY_FIELDS = ['', 'type', 'name', 'in', 'description'];

/** A gnostic `openapi.v2.Document` back to the OpenAPI JSON it was made from. */
export function decodeOpenAPIv2(bytes: Uint8Array): Obj {
  const doc: Obj = {};
  for (const f of fields(bytes)) {
    if (f.no === 1) doc.swagger = text(f);
    else if (f.no === 2) {
      const info: Obj = {};
      for (const x of fields(f.bytes)) {
        if (x.no === 1) info.title = text(x);
        else if (x.no === 2) info.version = text(x);
        else if (x.no === 3) info.description = text(x);
        else if (x.no === 7) readNamedAny(x, info);
      }
      doc.info = info;
    } else if (f.no === 8) {
      const paths: Obj = {};
      for (const x of fields(f.bytes)) if (x.no === 1) readNamedAny(x, paths);
      doc.paths = paths;
    } else if (f.no === 9) doc.definitions = readNamedSchemas(f, 0);
    else if (f.no === 12) {
      const req: Obj = {};
      for (const entry of fields(f.bytes)) {
        let name = '';
        let scopes: string[] = [];
        for (const x of fields(entry.bytes)) {
          if (x.no === 1) name = text(x);
          else if (x.no === 2) scopes = fields(x.bytes).map(text);
        }
        req[name] = scopes;
      }
      ((doc.security ??= []) as Obj[]).push(req);
    } else if (f.no === 13) {
      const defs: Obj = {};
      for (const entry of fields(f.bytes)) {
        let name = '';
        const d: Obj = {};
        for (const x of fields(entry.bytes)) {
          if (x.no === 1) name = text(x);
          else if (x.no === 2)
            for (const item of fields(x.bytes))
              for (const k of fields(item.bytes)) d[API_KEY_FIELDS[k.no] ?? ''] = text(k);
        }
        defs[name] = d;
      }
      doc.securityDefinitions = defs;
    }
  }
  return doc;
}
