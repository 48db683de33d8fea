import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { crdSchemaToV2 } from './openapi-v2.ts';
import { decodeOpenAPIv2, encodeOpenAPIv2 } from './protobuf/gnostic.ts';
import { startTestKube, widgetCRD, type TestKube } from './testing/harness.ts';

const PB_OLD = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const PB = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

describe('kube emulator: OpenAPI v2', () => {
  let k: TestKube;
  before(async () => {
    k = await startTestKube();
    const r = await k.req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCRD());
    assert.equal(r.status, 201, r.text);
    await k.em.settle();
  });
  after(async () => k.close());

  it('serves JSON with every served kind as a definition carrying its group, version and kind', async () => {
    const r = await k.req('GET', '/openapi/v2', undefined, { accept: 'application/json' });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'application/json');
    assert.match(r.headers.get('etag') ?? '', /^"[0-9A-F]{128}"$/);
    assert.equal(r.headers.get('vary'), 'Accept');
    const defs = r.body.definitions;
    const gvks = new Set<string>();
    for (const d of Object.values<any>(defs))
      for (const g of d['x-kubernetes-group-version-kind'] ?? [])
        gvks.add(`${g.group}/${g.version}/${g.kind}`);
    for (const def of k.em.registry.all())
      assert.ok(gvks.has(`${def.group}/${def.version}/${def.kind}`), def.kind);
    const svc = defs['io.k8s.api.core.v1.Service'];
    assert.deepEqual(svc['x-kubernetes-group-version-kind'], [{ group: '', kind: 'Service', version: 'v1' }]);
    assert.deepEqual(svc.properties.spec, { $ref: '#/definitions/io.k8s.api.core.v1.ServiceSpec' });
    assert.deepEqual(defs['io.k8s.api.core.v1.ServiceSpec'].properties.ports, {
      type: 'array',
      items: { $ref: '#/definitions/io.k8s.api.core.v1.ServicePort' },
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'port',
    });
    assert.deepEqual(defs['io.k8s.api.core.v1.ServicePort'].properties.targetPort, {
      $ref: '#/definitions/io.k8s.apimachinery.pkg.util.intstr.IntOrString',
    });
    // Embedded structs are flattened: a Volume has its sources as its own properties.
    assert.ok(defs['io.k8s.api.core.v1.Volume'].properties.configMap);
    const widget = defs['com.example.v1.Widget'];
    assert.deepEqual(widget['x-kubernetes-group-version-kind'], [
      { group: 'example.com', kind: 'Widget', version: 'v1' },
    ]);
    assert.equal(widget.properties.spec.properties.size.type, 'integer');
    assert.equal(widget.properties.spec.properties.color.default, undefined, 'v2 carries no defaults');
    assert.deepEqual(widget.properties.metadata, {
      $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    });
  });

  it('serves gnostic protobuf under the dotted media type, for either name asked', async () => {
    const json = await k.req('GET', '/openapi/v2', undefined, { accept: 'application/json' });
    for (const accept of [PB_OLD, `${PB}, application/json;q=0.5`]) {
      const r = await k.req('GET', '/openapi/v2', undefined, { accept });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get('content-type'), PB, accept);
      assert.equal(r.headers.get('etag'), json.headers.get('etag'), 'one ETag for both forms');
    }
    // The harness reads bodies as text; fetch the bytes to decode them.
    const res = await k.raw('/openapi/v2', { accept: PB_OLD });
    const doc = decodeOpenAPIv2(new Uint8Array(await res.arrayBuffer()));
    assert.deepEqual(doc, json.body);
  });

  it('answers 304 to a matching If-None-Match and 406 to a type it cannot serve', async () => {
    const first = await k.req('GET', '/openapi/v2', undefined, { accept: 'application/json' });
    const etag = first.headers.get('etag') ?? '';
    const again = await k.raw('/openapi/v2', { accept: 'application/json', 'if-none-match': etag });
    assert.equal(again.status, 304);
    const html = await k.req('GET', '/openapi/v2', undefined, { accept: 'text/html' });
    assert.equal(html.status, 406);
  });

  it('changes the document (and its ETag) when a CRD comes', async () => {
    const before = await k.req('GET', '/openapi/v2', undefined, { accept: 'application/json' });
    const r = await k.req(
      'POST',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      widgetCRD('Cluster', 'gadgets', 'Gadget'),
    );
    assert.equal(r.status, 201, r.text);
    await k.em.settle();
    const after = await k.req('GET', '/openapi/v2', undefined, { accept: 'application/json' });
    assert.notEqual(after.headers.get('etag'), before.headers.get('etag'));
    assert.ok(after.body.definitions['com.example.v1.Gadget']);
  });
});

describe('OpenAPI v2: CRD schema conversion and the gnostic encoding', () => {
  it('converts structural schemas as the apiextensions server does, roughly', () => {
    const v2 = crdSchemaToV2({
      type: 'object',
      required: ['a', 'n'],
      properties: {
        a: { type: 'string', default: 'x', oneOf: [{ pattern: '^a' }] },
        n: { type: 'object', nullable: true, properties: { b: { type: 'string' } } },
        free: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { c: { type: 'string' } },
        },
        list: { type: 'array', 'x-kubernetes-preserve-unknown-fields': true, items: { type: 'string' } },
        ios: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
      },
    });
    assert.deepEqual(v2, {
      type: 'object',
      required: ['a'],
      properties: {
        a: { type: 'string' },
        n: {},
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        list: { 'x-kubernetes-preserve-unknown-fields': true },
        ios: { 'x-kubernetes-int-or-string': true },
      },
    });
  });

  it('round-trips a document through protobuf', () => {
    const doc = {
      swagger: '2.0',
      info: { title: 'Kubernetes', version: 'v1.32.4' },
      paths: {},
      definitions: {
        'a.b.v1.Thing': {
          description: 'A thing',
          type: 'object',
          required: ['spec'],
          properties: {
            spec: {
              type: 'object',
              additionalProperties: { type: 'integer', format: 'int64', minimum: 0, maximum: 10.5 },
            },
            mode: { type: 'string', enum: ['a', 'b'], pattern: '^[ab]$', maxLength: 1 },
            open: { type: 'object', additionalProperties: true },
            list: { type: 'array', items: { $ref: '#/definitions/x' }, 'x-kubernetes-list-type': 'atomic' },
          },
          'x-kubernetes-group-version-kind': [{ group: 'b.a', kind: 'Thing', version: 'v1' }],
        },
      },
      securityDefinitions: {
        BearerToken: {
          description: 'Bearer Token authentication',
          type: 'apiKey',
          name: 'authorization',
          in: 'header',
        },
      },
      security: [{ BearerToken: [] }],
    };
    assert.deepEqual(decodeOpenAPIv2(encodeOpenAPIv2(doc)), doc);
  });
});
