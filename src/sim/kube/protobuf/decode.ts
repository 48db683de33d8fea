/**
 * `application/vnd.kubernetes.protobuf` request bodies → the JSON objects the JSON path gets:
 * the envelope (magic `k8s\0` + `runtime.Unknown{typeMeta, raw, contentEncoding, contentType}`),
 * then the kind's message from the schema table, with the apimachinery types in their JSON forms
 * (Time → RFC 3339, IntOrString → number or string, Quantity → string, bytes → base64,
 * RawExtension and FieldsV1 → their JSON). The wire format is read by @bufbuild/protobuf.
 */
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import type { Obj } from '../json.ts';
import { messageDef, messageForKind, type FieldDef, type FieldType } from './schema.ts';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

const MAGIC = Buffer.from('k8s\0', 'latin1');
/** Nested messages deeper than this are refused; real objects stay well under it. */
const MAX_DEPTH = 64;

/** A body that is not a well-formed envelope or message; the server answers 400. */
export class ProtobufDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufDecodeError';
  }
}

/** A well-formed envelope of a kind the emulator has no schema for; the server answers 415. */
export class UnsupportedProtobufKindError extends Error {
  readonly apiVersion: string;
  readonly kind: string;
  constructor(apiVersion: string, kind: string) {
    super(
      `the Kubernetes emulator cannot decode ${kind || '<no kind>'} (${apiVersion || '<no apiVersion>'}) from ${PROTOBUF_MEDIA_TYPE}; send it as application/json or application/yaml`,
    );
    this.name = 'UnsupportedProtobufKindError';
    this.apiVersion = apiVersion;
    this.kind = kind;
  }
}

export interface Envelope {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

function reader(bytes: Uint8Array): BinaryReader {
  return new BinaryReader(bytes);
}

/** Reads `runtime.Unknown` after the magic prefix. */
export function decodeEnvelope(body: Uint8Array): Envelope {
  if (body.length < MAGIC.length || !MAGIC.equals(body.subarray(0, MAGIC.length)))
    throw new ProtobufDecodeError(
      'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]',
    );
  const env: Envelope = {
    apiVersion: '',
    kind: '',
    raw: new Uint8Array(),
    contentEncoding: '',
    contentType: '',
  };
  wrap(() => {
    const r = reader(body.subarray(MAGIC.length));
    while (r.pos < r.len) {
      const [no, wt] = r.tag();
      if (no === 1 && wt === WireType.LengthDelimited) {
        const t = reader(r.bytes());
        while (t.pos < t.len) {
          const [tn, tw] = t.tag();
          if (tn === 1 && tw === WireType.LengthDelimited) env.apiVersion = t.string();
          else if (tn === 2 && tw === WireType.LengthDelimited) env.kind = t.string();
          else t.skip(tw, tn);
        }
      } else if (no === 2 && wt === WireType.LengthDelimited) env.raw = r.bytes();
      else if (no === 3 && wt === WireType.LengthDelimited) env.contentEncoding = r.string();
      else if (no === 4 && wt === WireType.LengthDelimited) env.contentType = r.string();
      else r.skip(wt, no);
    }
  });
  return env;
}

/**
 * A protobuf request body as the JSON object a client would have sent: `apiVersion` and `kind`
 * from the envelope, the rest from the kind's message.
 */
export function decodeObject(body: Uint8Array): Obj {
  const env = decodeEnvelope(body);
  if (env.contentEncoding)
    throw new ProtobufDecodeError(`unsupported contentEncoding ${JSON.stringify(env.contentEncoding)}`);
  const message = messageForKind(env.apiVersion, env.kind);
  if (!message) throw new UnsupportedProtobufKindError(env.apiVersion, env.kind);
  const decoded = decodeMessage(message, env.raw);
  return { kind: env.kind, apiVersion: env.apiVersion, ...decoded };
}

/** One message of the schema table, as JSON. */
export function decodeMessage(message: string, bytes: Uint8Array): Obj {
  return wrap(() => readMessage(message, bytes, 0));
}

function wrap<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof ProtobufDecodeError) throw err;
    throw new ProtobufDecodeError(`invalid protobuf: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function readMessage(message: string, bytes: Uint8Array, depth: number): Obj {
  if (depth > MAX_DEPTH) throw new ProtobufDecodeError(`message nesting deeper than ${MAX_DEPTH}`);
  const def = messageDef(message);
  const out: Obj = {};
  const r = reader(bytes);
  while (r.pos < r.len) {
    const [no, wt] = r.tag();
    const f = def.get(no);
    if (!f) {
      r.skip(wt, no);
      continue;
    }
    readField(r, f, wt, out, depth);
  }
  return out;
}

const PACKABLE = new Set(['bool', 'int32', 'int64', 'double']);

function readField(r: BinaryReader, f: FieldDef, wt: WireType, out: Obj, depth: number): void {
  const t = f.type;
  if (f.name === undefined) {
    if (t.kind !== 'message') throw new ProtobufDecodeError(`embedded field ${f.number} is not a message`);
    Object.assign(out, readMessage(t.message, lengthDelimited(r, wt, f), depth + 1));
    return;
  }
  const name = f.name;
  if (t.kind === 'map') {
    const entry = reader(lengthDelimited(r, wt, f));
    let key = '';
    let value: unknown = zeroOf(t.value);
    while (entry.pos < entry.len) {
      const [en, ew] = entry.tag();
      if (en === 1) key = entry.string();
      else if (en === 2) value = readValue(entry, t.value, ew, f, depth);
      else entry.skip(ew, en);
    }
    const m = (out[name] ??= {}) as Obj;
    m[key] = value;
    return;
  }
  if (f.repeated) {
    const list = (out[name] ??= []) as unknown[];
    if (t.kind === 'scalar' && PACKABLE.has(t.scalar) && wt === WireType.LengthDelimited) {
      const packed = reader(r.bytes());
      const itemWire = t.scalar === 'double' ? WireType.Bit64 : WireType.Varint;
      while (packed.pos < packed.len) list.push(readValue(packed, t, itemWire, f, depth));
      return;
    }
    list.push(readValue(r, t, wt, f, depth));
    return;
  }
  const value = readValue(r, t, wt, f, depth);
  if (f.keepZero || !isZero(value)) out[name] = value;
  else delete out[name];
}

/** Go's zero value of a field as JSON, which `omitempty` leaves out. */
function isZero(v: unknown): boolean {
  return v === '' || v === 0 || v === false;
}

function zeroOf(t: FieldType): unknown {
  if (t.kind === 'scalar')
    return t.scalar === 'bool' ? false : t.scalar === 'string' || t.scalar === 'bytes' ? '' : 0;
  if (t.kind === 'message') return {};
  return null;
}

/** A scalar field must come in its own wire type; anything else is a body we cannot trust. */
function wire(wt: WireType, want: WireType, f: FieldDef): true {
  if (wt !== want)
    throw new ProtobufDecodeError(
      `field ${f.name ?? '(embedded)'} (${f.number}): wire type ${wt}, want ${want}`,
    );
  return true;
}

function lengthDelimited(r: BinaryReader, wt: WireType, f: FieldDef): Uint8Array {
  if (wt !== WireType.LengthDelimited)
    throw new ProtobufDecodeError(
      `field ${f.name ?? '(embedded)'} (${f.number}): wire type ${wt}, want length-delimited`,
    );
  return r.bytes();
}

function readValue(r: BinaryReader, t: FieldType, wt: WireType, f: FieldDef, depth: number): unknown {
  switch (t.kind) {
    case 'scalar':
      switch (t.scalar) {
        case 'string':
          return Buffer.from(lengthDelimited(r, wt, f)).toString('utf8');
        case 'bytes':
          return Buffer.from(lengthDelimited(r, wt, f)).toString('base64');
        case 'bool':
          return wire(wt, WireType.Varint, f) && r.bool();
        case 'int32':
          return wire(wt, WireType.Varint, f) && r.int32();
        case 'int64':
          return wire(wt, WireType.Varint, f) && Number(r.int64());
        case 'double':
          return wire(wt, WireType.Bit64, f) && r.double();
      }
      break;
    case 'message':
      return readMessage(t.message, lengthDelimited(r, wt, f), depth + 1);
    case 'special':
      return special(t.special, lengthDelimited(r, wt, f));
    case 'map':
      break;
  }
  throw new ProtobufDecodeError(`field ${f.name ?? ''} (${f.number}): unsupported type`);
}

/** The apimachinery types with JSON forms of their own. */
function special(kind: string, bytes: Uint8Array): unknown {
  const r = reader(bytes);
  const fields = new Map<number, unknown>();
  while (r.pos < r.len) {
    const [no, wt] = r.tag();
    if (wt === WireType.Varint) fields.set(no, r.int64());
    else if (wt === WireType.LengthDelimited) fields.set(no, r.bytes());
    else r.skip(wt, no);
  }
  const num = (n: number) => Number((fields.get(n) as bigint | string | undefined) ?? 0);
  const text = (n: number) => Buffer.from((fields.get(n) as Uint8Array | undefined) ?? []).toString('utf8');
  switch (kind) {
    case 'Time':
    case 'MicroTime': {
      const seconds = num(1);
      const nanos = num(2);
      // A zero time is written as an empty message and reads back as null, as in Go.
      if (seconds === 0 && nanos === 0) return null;
      const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
      if (kind === 'Time') return `${iso}Z`;
      return `${iso}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
    }
    case 'Duration':
      return goDuration(num(1));
    case 'IntOrString':
      // type 0 is an int, 1 a string.
      return num(1) === 1 ? text(3) : Number(BigInt.asIntN(32, BigInt(num(2))));
    case 'Quantity':
      return text(1);
    case 'Raw':
    case 'FieldsV1': {
      const raw = text(1);
      if (!raw) return null;
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        throw new ProtobufDecodeError(`${kind} holds no JSON`);
      }
    }
  }
  throw new ProtobufDecodeError(`unknown type ${kind}`);
}

/** Go's `time.Duration.String()` of nanoseconds (`1h2m3.5s`, `150ms`, `0s`). */
export function goDuration(ns: number): string {
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  let n = Math.abs(ns);
  if (n < 1e9) {
    if (n < 1e3) return `${sign}${n}ns`;
    if (n < 1e6) return `${sign}${trim(n / 1e3)}µs`;
    return `${sign}${trim(n / 1e6)}ms`;
  }
  const h = Math.floor(n / 3.6e12);
  n -= h * 3.6e12;
  const m = Math.floor(n / 6e10);
  n -= m * 6e10;
  const s = trim(n / 1e9);
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}

function trim(x: number): string {
  return String(Number(x.toFixed(9)));
}
