/**
 * The schema table against the real thing: kubectl carries the gzipped FileDescriptorProtos of
 * k8s.io/api and apimachinery's generated.proto; every message and field of the table must be
 * there with the same number, type and cardinality, and no field of those messages may be
 * missing from the table.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import { fromBinary } from '@bufbuild/protobuf';
import {
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  FileDescriptorProtoSchema,
  type DescriptorProto,
} from '@bufbuild/protobuf/wkt';
import { messageDef, messageNames, type FieldType } from './schema.ts';

const KUBECTL = process.env.KUBECTL_1_33 ?? '/usr/lib/google-cloud-sdk/bin/kubectl.1.33';

const PACKAGES: Record<string, string> = {
  meta: 'k8s.io.apimachinery.pkg.apis.meta.v1',
  core: 'k8s.io.api.core.v1',
  apps: 'k8s.io.api.apps.v1',
  batch: 'k8s.io.api.batch.v1',
  rbac: 'k8s.io.api.rbac.v1',
  policy: 'k8s.io.api.policy.v1',
  networking: 'k8s.io.api.networking.v1',
  scheduling: 'k8s.io.api.scheduling.v1',
  authentication: 'k8s.io.api.authentication.v1',
  coordination: 'k8s.io.api.coordination.v1',
  discovery: 'k8s.io.api.discovery.v1',
  events: 'k8s.io.api.events.v1',
};
const SPECIAL: Record<string, string> = {
  Time: '.k8s.io.apimachinery.pkg.apis.meta.v1.Time',
  MicroTime: '.k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime',
  Duration: '.k8s.io.apimachinery.pkg.apis.meta.v1.Duration',
  IntOrString: '.k8s.io.apimachinery.pkg.util.intstr.IntOrString',
  Quantity: '.k8s.io.apimachinery.pkg.api.resource.Quantity',
  Raw: '.k8s.io.apimachinery.pkg.runtime.RawExtension',
  FieldsV1: '.k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1',
};
const SCALAR: Record<string, Type> = {
  string: Type.STRING,
  bool: Type.BOOL,
  int32: Type.INT32,
  int64: Type.INT64,
  double: Type.DOUBLE,
  bytes: Type.BYTES,
};

function full(message: string): string {
  const dot = message.indexOf('.');
  return `.${PACKAGES[message.slice(0, dot)] ?? ''}.${message.slice(dot + 1)}`;
}

/** Every message kubectl was compiled with, by full name. */
function compiledMessages(): Map<string, DescriptorProto> {
  const bin = readFileSync(KUBECTL);
  const magic = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00]);
  const out = new Map<string, DescriptorProto>();
  const add = (prefix: string, list: DescriptorProto[]) => {
    for (const m of list) {
      out.set(`${prefix}.${m.name}`, m);
      add(`${prefix}.${m.name}`, m.nestedType);
    }
  };
  for (let at = bin.indexOf(magic); at >= 0; at = bin.indexOf(magic, at + 1)) {
    let raw: Buffer;
    try {
      raw = gunzipSync(bin.subarray(at, at + 512 * 1024), { finishFlush: 2 });
    } catch {
      continue;
    }
    if (!raw.subarray(0, 120).includes('generated.proto')) continue;
    try {
      const fd = fromBinary(FileDescriptorProtoSchema, raw);
      add(`.${fd.package}`, fd.messageType);
    } catch {
      // Not a descriptor after all.
    }
  }
  return out;
}

function typeMatches(
  t: FieldType,
  f: DescriptorProto['field'][number],
  all: Map<string, DescriptorProto>,
): boolean {
  switch (t.kind) {
    case 'scalar':
      return f.type === SCALAR[t.scalar];
    case 'special':
      return f.typeName === SPECIAL[t.special];
    case 'message':
      return f.typeName === full(t.message);
    case 'map': {
      const entry = all.get(f.typeName);
      const value = entry?.field.find((x) => x.number === 2);
      return !!entry?.options?.mapEntry && !!value && typeMatches(t.value, value, all);
    }
  }
}

describe('protobuf schema table', { skip: existsSync(KUBECTL) ? undefined : `no ${KUBECTL}` }, () => {
  it('matches the descriptors compiled into kubectl 1.33, field for field', () => {
    const all = compiledMessages();
    assert.ok(all.size > 500, `found ${all.size} compiled messages`);
    const problems: string[] = [];
    for (const name of messageNames()) {
      const compiled = all.get(full(name));
      if (!compiled) {
        problems.push(`${name}: not compiled into kubectl`);
        continue;
      }
      const ours = messageDef(name);
      for (const f of compiled.field) {
        const mine = ours.get(f.number);
        if (!mine) {
          problems.push(`${name}.${f.name} (${f.number}): missing from the table`);
          continue;
        }
        if (mine.name !== undefined && mine.name.toLowerCase() !== f.name.toLowerCase())
          problems.push(`${name} field ${f.number}: ${mine.name} here, ${f.name} compiled`);
        // A map is a repeated entry message on the wire.
        if ((mine.repeated || mine.type.kind === 'map') !== (f.label === Label.REPEATED))
          problems.push(`${name}.${f.name}: repeated differs`);
        if (!typeMatches(mine.type, f, all))
          problems.push(`${name}.${f.name}: type differs (${f.typeName || f.type})`);
      }
      for (const n of ours.keys())
        if (!compiled.field.some((f) => f.number === n)) problems.push(`${name}: field ${n} is not compiled`);
    }
    assert.deepEqual(problems, []);
  });
});
