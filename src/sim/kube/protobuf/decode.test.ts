import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { startTestKube, type TestKube } from '../testing/harness.ts';
import {
  decodeObject,
  goDuration,
  PROTOBUF_MEDIA_TYPE,
  ProtobufDecodeError,
  UnsupportedProtobufKindError,
} from './decode.ts';

/** A message built field by field, as the Go marshaller writes it. */
type Build = (w: BinaryWriter) => void;

const str =
  (no: number, v: string): Build =>
  (w) =>
    w.tag(no, 2).string(v);
const msg =
  (no: number, ...fields: Build[]): Build =>
  (w) => {
    w.tag(no, 2).fork();
    for (const f of fields) f(w);
    w.join();
  };
const varint =
  (no: number, v: number): Build =>
  (w) =>
    w.tag(no, 0).int64(v);
const bytes =
  (no: number, v: Uint8Array): Build =>
  (w) =>
    w.tag(no, 2).bytes(v);
const entry = (no: number, key: string, value: Build): Build => msg(no, str(1, key), value);

function envelope(apiVersion: string, kind: string, ...fields: Build[]): Buffer {
  const raw = new BinaryWriter();
  for (const f of fields) f(raw);
  const w = new BinaryWriter();
  msg(1, str(1, apiVersion), str(2, kind))(w);
  bytes(2, raw.finish())(w);
  str(3, '')(w);
  str(4, '')(w);
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), w.finish()]);
}

/** ObjectMeta with every non-pointer field written, empty ones too, as gogo-protobuf does. */
const objectMeta = (name: string, ...more: Build[]): Build =>
  msg(1, str(1, name), str(2, ''), str(3, ''), msg(8), ...more);

describe('Kubernetes protobuf bodies', () => {
  it('decodes a Secret: typeMeta, bytes as base64, zero time as null, empty strings dropped', () => {
    const body = envelope(
      'v1',
      'Secret',
      objectMeta('s', entry(11, 'app', str(2, 'web'))),
      entry(2, 'a', bytes(2, Buffer.from('b'))),
      str(3, 'Opaque'),
    );
    assert.deepEqual(decodeObject(body), {
      kind: 'Secret',
      apiVersion: 'v1',
      metadata: { name: 's', creationTimestamp: null, labels: { app: 'web' } },
      data: { a: 'Yg==' },
      type: 'Opaque',
    });
  });

  it('keeps meaningful zeros, reads IntOrString both ways and Time as RFC 3339', () => {
    const deployment = envelope(
      'apps/v1',
      'Deployment',
      objectMeta('d', msg(9, varint(1, 1_700_000_000), varint(2, 0))),
      msg(
        2,
        varint(1, 0), // replicas: 0 is not "unset"
        varint(5, 0), // minReadySeconds: 0 is dropped (omitempty)
        msg(
          4,
          str(1, 'RollingUpdate'),
          msg(
            2,
            msg(1, varint(1, 1), varint(2, 0), str(3, '25%')),
            msg(2, varint(1, 0), varint(2, 2), str(3, '')),
          ),
        ),
      ),
    );
    const d = decodeObject(deployment) as any;
    assert.equal(d.metadata.deletionTimestamp, '2023-11-14T22:13:20Z');
    assert.equal(d.spec.replicas, 0);
    assert.equal('minReadySeconds' in d.spec, false);
    assert.deepEqual(d.spec.strategy, {
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: '25%', maxSurge: 2 },
    });
  });

  it('merges embedded structs into their parent and reads Quantity maps and packed lists', () => {
    const pod = envelope(
      'v1',
      'Pod',
      objectMeta('p'),
      msg(
        2,
        // volumes[0]: name + inline VolumeSource{configMap{inline LocalObjectReference{name}}}
        msg(1, str(1, 'cfg'), msg(2, msg(19, msg(1, str(1, 'my-config'))))),
        msg(
          2,
          str(1, 'c'),
          str(2, 'nginx'),
          msg(8, entry(1, 'cpu', msg(2, str(1, '500m')))),
          // readinessProbe with its inline ProbeHandler{httpGet{path, port}}
          msg(
            11,
            msg(1, msg(2, str(1, '/healthz'), msg(2, varint(1, 0), varint(2, 8080), str(3, '')))),
            varint(4, 5),
          ),
          msg(15, msg(1, str(1, 'NET_ADMIN'))),
        ),
        msg(14, (w) => w.tag(4, 2).fork().int64(1000).int64(2000).join()),
      ),
    );
    const p = decodeObject(pod) as any;
    assert.deepEqual(p.spec.volumes, [{ name: 'cfg', configMap: { name: 'my-config' } }]);
    const c = p.spec.containers[0];
    assert.deepEqual(c.resources, { limits: { cpu: '500m' } });
    assert.deepEqual(c.readinessProbe, { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 5 });
    assert.deepEqual(c.securityContext, { capabilities: { add: ['NET_ADMIN'] } });
    assert.deepEqual(p.spec.securityContext.supplementalGroups, [1000, 2000]);
  });

  it('skips fields it does not know, as the Go decoder does', () => {
    const ns = envelope('v1', 'Namespace', objectMeta('n'), str(99, 'from the future'));
    assert.deepEqual(decodeObject(ns), {
      kind: 'Namespace',
      apiVersion: 'v1',
      metadata: { name: 'n', creationTimestamp: null },
    });
  });

  it('refuses what it cannot read, naming the kind', () => {
    assert.throws(() => decodeObject(Buffer.from('{"kind":"Namespace"}')), ProtobufDecodeError);
    assert.throws(
      () => decodeObject(envelope('apps/v1', 'StatefulSet', objectMeta('s'))),
      (err: unknown) =>
        err instanceof UnsupportedProtobufKindError && /StatefulSet \(apps\/v1\)/.test(err.message),
    );
    const wrongWire = envelope('apps/v1', 'Deployment', objectMeta('d'), msg(2, str(1, 'three')));
    assert.throws(() => decodeObject(wrongWire), /replicas \(1\): wire type 2/);
    const truncated = envelope('v1', 'ConfigMap', objectMeta('c')).subarray(0, 20);
    assert.throws(() => decodeObject(truncated), ProtobufDecodeError);
  });

  it("prints durations as Go's time.Duration does", () => {
    assert.equal(goDuration(0), '0s');
    assert.equal(goDuration(1.5e9), '1.5s');
    assert.equal(goDuration(3_723e9), '1h2m3s');
    assert.equal(goDuration(150e6), '150ms');
  });
});

describe('kube emulator: protobuf request bodies over HTTP', () => {
  let k: TestKube;
  before(async () => {
    k = await startTestKube();
  });
  after(async () => k.close());

  const post = (path: string, body: Buffer) =>
    k.req('POST', path, body, {
      contentType: PROTOBUF_MEDIA_TYPE,
      accept: `${PROTOBUF_MEDIA_TYPE},application/json`,
    });

  it('creates from protobuf and answers in JSON', async () => {
    const r = await post(
      '/api/v1/namespaces/default/configmaps',
      envelope('v1', 'ConfigMap', objectMeta('cm'), entry(2, 'k', str(2, 'v'))),
    );
    assert.equal(r.status, 201, r.text);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(r.body.data, { k: 'v' });
  });

  it('answers 415 naming a kind it has no schema for, and 400 for a broken body', async () => {
    const r = await post(
      '/apis/apps/v1/namespaces/default/deployments',
      envelope('apps/v1', 'StatefulSet', objectMeta('x')),
    );
    assert.equal(r.status, 415, r.text);
    assert.equal(r.body.reason, 'UnsupportedMediaType');
    assert.match(r.body.message, /StatefulSet/);
    const bad = await post('/api/v1/namespaces/default/configmaps', Buffer.from('k8s\0\xff\xff', 'latin1'));
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.reason, 'BadRequest');
  });

  it('takes DeleteOptions in protobuf (dryRun, then a real delete)', async () => {
    const cm = '/api/v1/namespaces/default/configmaps/to-delete';
    assert.equal(
      (await k.req('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'to-delete' } }))
        .status,
      201,
    );
    const del = (body: Buffer) =>
      k.req('DELETE', cm, body, { contentType: PROTOBUF_MEDIA_TYPE, accept: 'application/json' });
    const dry = await del(envelope('v1', 'DeleteOptions', varint(1, 0), str(5, 'All')));
    assert.equal(dry.status, 200, dry.text);
    assert.equal((await k.req('GET', cm)).status, 200, 'dryRun=All deleted nothing');
    const real = await del(envelope('v1', 'DeleteOptions', varint(1, 0), str(4, 'Background')));
    assert.equal(real.status, 200, real.text);
    assert.equal((await k.req('GET', cm)).status, 404);
  });

  it('answers 406 to a client that accepts protobuf only', async () => {
    const r = await k.req('GET', '/api/v1/namespaces', undefined, { accept: PROTOBUF_MEDIA_TYPE });
    assert.equal(r.status, 406, r.text);
  });
});
