import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestKube, widgetCRD, type TestKube } from './testing/harness.ts';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const W = '/apis/example.com/v1/namespaces/default/widgets';
const MERGE = { contentType: 'application/merge-patch+json' };

function widget(name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}): any {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec, ...extra };
}

describe('kube emulator: CustomResourceDefinitions', () => {
  let k: TestKube;
  before(async () => {
    k = await startTestKube();
    const r = await k.req('POST', CRDS, widgetCRD());
    assert.equal(r.status, 201, r.text);
    await k.em.settle();
  });
  after(async () => k.close());

  it('establishes the CRD and serves its resource in discovery', async () => {
    const crd = await k.req('GET', `${CRDS}/widgets.example.com`);
    const established = crd.body.status.conditions.find((c: any) => c.type === 'Established');
    assert.equal(established.status, 'True');
    assert.deepEqual(crd.body.status.storedVersions, ['v1']);
    assert.equal(crd.body.status.acceptedNames.kind, 'Widget');
    assert.deepEqual(crd.body.metadata.finalizers, ['customresourcecleanup.apiextensions.k8s.io']);
    const list = await k.req('GET', '/apis/example.com/v1');
    const names = list.body.resources.map((r: any) => r.name);
    assert.deepEqual(names, ['widgets', 'widgets/status']);
    assert.equal(list.body.resources[0].namespaced, true);
    assert.deepEqual(list.body.resources[0].shortNames, ['wi']);
    const groups = await k.req('GET', '/apis');
    assert.ok(groups.body.groups.some((g: any) => g.name === 'example.com'));
  });

  it('prunes unknown fields, applies schema defaults and keeps kind on list items', async () => {
    const r = await k.req('POST', W, widget('w-defaults', { size: 2, bogus: true }));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.spec.color, 'red', 'defaulted');
    assert.equal(r.body.spec.bogus, undefined, 'pruned');
    assert.match(r.headers.get('warning') ?? '', /unknown field \\"spec.bogus\\"/);
    assert.equal(r.body.metadata.generation, 1);
    const list = await k.req('GET', W);
    assert.equal(list.body.kind, 'WidgetList');
    assert.equal(list.body.items[0].kind, 'Widget');
    assert.equal(list.body.items[0].apiVersion, 'example.com/v1');
  });

  it('rejects unknown fields with fieldValidation=Strict', async () => {
    const r = await k.req(
      'POST',
      `${W}?fieldValidation=Strict`,
      widget('w-strict', { size: 2, bogus: true }),
    );
    assert.equal(r.status, 400);
    assert.equal(r.body.reason, 'BadRequest');
    assert.equal(r.body.message, 'strict decoding error: unknown field "spec.bogus"');
  });

  it('answers an invalid object with 422 Invalid and a cause per field', async () => {
    const r = await k.req('POST', W, widget('w-bad', { size: 'big', color: 'green' }));
    assert.equal(r.status, 422);
    assert.equal(r.body.reason, 'Invalid');
    assert.equal(r.body.details.kind, 'Widget');
    assert.equal(r.body.details.group, 'example.com');
    assert.deepEqual(r.body.details.causes, [
      {
        reason: 'FieldValueTypeInvalid',
        message: 'Invalid value: "string": spec.size in body must be of type integer: "string"',
        field: 'spec.size',
      },
      {
        reason: 'FieldValueNotSupported',
        message: 'Unsupported value: "green": supported values: "red", "blue"',
        field: 'spec.color',
      },
    ]);
    assert.equal(
      r.body.message,
      'Widget.example.com "w-bad" is invalid: [spec.size: Invalid value: "string": spec.size in body must be of type integer: "string", spec.color: Unsupported value: "green": supported values: "red", "blue"]',
    );
    const required = await k.req('POST', W, widget('w-req', {}));
    assert.deepEqual(required.body.details.causes, [
      { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.size' },
    ]);
    const min = await k.req('POST', W, widget('w-min', { size: 0 }));
    assert.equal(
      min.body.details.causes[0].message,
      'Invalid value: 0: spec.size in body should be greater than or equal to 1',
    );
    const dupes = await k.req(
      'POST',
      W,
      widget('w-set', { size: 1, tags: ['a', 'a'], ports: [{ name: 'x' }, { name: 'x' }] }),
    );
    assert.deepEqual(
      dupes.body.details.causes.map((c: any) => [c.reason, c.field]),
      [
        ['FieldValueDuplicate', 'spec.tags[1]'],
        ['FieldValueDuplicate', 'spec.ports[1]'],
      ],
    );
  });

  it('separates status, bumps generation on non-status changes, and demands a resourceVersion on PUT', async () => {
    const c = await k.req('POST', W, widget('w-status', { size: 1 }, { status: { phase: 'Made-up' } }));
    assert.equal(c.body.status, undefined, 'status is dropped on create');
    const s = await k.req(
      'PATCH',
      `${W}/w-status/status`,
      { status: { phase: 'Ready' }, spec: { size: 5 } },
      MERGE,
    );
    assert.equal(s.body.status.phase, 'Ready');
    assert.equal(s.body.spec.size, 1);
    assert.equal(s.body.metadata.generation, 1);
    const main = await k.req(
      'PATCH',
      `${W}/w-status`,
      { status: { phase: 'Ignored' }, spec: { size: 3 } },
      MERGE,
    );
    assert.equal(main.body.status.phase, 'Ready');
    assert.equal(main.body.metadata.generation, 2);
    const label = await k.req('PATCH', `${W}/w-status`, { metadata: { labels: { a: 'b' } } }, MERGE);
    assert.equal(label.body.metadata.generation, 2);
    const { resourceVersion: _rv, ...meta } = label.body.metadata;
    const noRv = await k.req('PUT', `${W}/w-status`, { ...label.body, metadata: meta });
    assert.equal(noRv.status, 422);
    assert.equal(noRv.body.details.causes[0].field, 'metadata.resourceVersion');
  });

  it('refuses strategic merge patches for custom resources with 415', async () => {
    await k.req('POST', W, widget('w-smp', { size: 1 }));
    const r = await k.req(
      'PATCH',
      `${W}/w-smp`,
      { spec: { size: 2 } },
      { contentType: 'application/strategic-merge-patch+json' },
    );
    assert.equal(r.status, 415);
    assert.equal(r.body.reason, 'UnsupportedMediaType');
  });

  it('renders printer columns in Tables and filters on selectable fields', async () => {
    await k.req('POST', W, widget('w-blue', { size: 7, color: 'blue' }));
    const t = await k.req('GET', `${W}?fieldSelector=spec.color%3Dblue`, undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    assert.deepEqual(
      t.body.columnDefinitions.map((c: any) => c.name),
      ['Name', 'Size'],
    );
    assert.deepEqual(
      t.body.rows.map((r: any) => r.cells),
      [['w-blue', 7]],
    );
    const bad = await k.req('GET', `${W}?fieldSelector=spec.size%3D7`);
    assert.equal(bad.status, 400);
  });

  it('serves cluster-scoped CRDs and several versions over one storage', async () => {
    const crd = widgetCRD('Cluster', 'gizmos', 'Gizmo');
    const v1 = crd.spec.versions[0];
    crd.spec.versions = [{ ...v1, name: 'v1beta1', storage: false }, v1];
    const r = await k.req('POST', CRDS, crd);
    assert.equal(r.status, 201, r.text);
    const created = await k.req('POST', '/apis/example.com/v1beta1/gizmos', {
      apiVersion: 'example.com/v1beta1',
      kind: 'Gizmo',
      metadata: { name: 'g' },
      spec: { size: 1 },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.metadata.namespace, undefined);
    const v1read = await k.req('GET', '/apis/example.com/v1/gizmos/g');
    assert.equal(v1read.body.apiVersion, 'example.com/v1');
    const groups = await k.req('GET', '/apis/example.com');
    assert.equal(groups.body.preferredVersion.version, 'v1');
    const namespaced = await k.req('GET', '/apis/example.com/v1/namespaces/default/gizmos/g');
    assert.equal(namespaced.status, 404);
  });

  it('rejects invalid CRDs', async () => {
    const bad = widgetCRD('Namespaced', 'things', 'Thing');
    bad.metadata.name = 'wrong.example.com';
    delete bad.spec.versions[0].schema;
    const r = await k.req('POST', CRDS, bad);
    assert.equal(r.status, 422);
    const fields = r.body.details.causes.map((c: any) => c.field);
    assert.ok(fields.includes('metadata.name'), JSON.stringify(fields));
    assert.ok(fields.includes('spec.versions[0].schema.openAPIV3Schema'));
  });

  it('serves the scale subresource a CRD declares', async () => {
    const crd = widgetCRD('Namespaced', 'scalers', 'Scaler');
    crd.spec.versions[0].subresources.scale = {
      specReplicasPath: '.spec.size',
      statusReplicasPath: '.status.observedGeneration',
    };
    assert.equal((await k.req('POST', CRDS, crd)).status, 201);
    const S = '/apis/example.com/v1/namespaces/default/scalers';
    await k.req('POST', S, {
      apiVersion: 'example.com/v1',
      kind: 'Scaler',
      metadata: { name: 's' },
      spec: { size: 2 },
    });
    const scale = await k.req('GET', `${S}/s/scale`);
    assert.equal(scale.body.spec.replicas, 2);
    const put = await k.req('PUT', `${S}/s/scale`, { ...scale.body, spec: { replicas: 4 } });
    assert.equal(put.status, 200, put.text);
    assert.equal((await k.req('GET', `${S}/s`)).body.spec.size, 4);
  });
});
