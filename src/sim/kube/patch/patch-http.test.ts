import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configMap, startTestKube, widgetCRD, type TestKube } from '../testing/harness.ts';
import { fieldsV1Work } from './apply.ts';

const CM = '/api/v1/namespaces/default/configmaps';
const SMP = { contentType: 'application/strategic-merge-patch+json' };
const JSONP = { contentType: 'application/json-patch+json' };
const MERGE = { contentType: 'application/merge-patch+json' };
const APPLY = { contentType: 'application/apply-patch+yaml' };

describe('kube emulator: PATCH and server-side apply over HTTP', () => {
  let k: TestKube;
  before(async () => {
    k = await startTestKube();
    await k.req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCRD());
  });
  after(async () => k.close());

  it('merge patch: null deletes, objects merge, lists replace', async () => {
    await k.req('POST', CM, configMap('m', { a: '1', b: '2' }, { labels: { x: '1' } }));
    const r = await k.req(
      'PATCH',
      `${CM}/m`,
      { data: { a: null, c: '3' }, metadata: { labels: { y: '2' } } },
      MERGE,
    );
    assert.deepEqual(r.body.data, { b: '2', c: '3' });
    assert.deepEqual(r.body.metadata.labels, { x: '1', y: '2' });
  });

  it('JSON patch: operations apply in order; a failed test is 422 and changes nothing', async () => {
    await k.req('POST', CM, configMap('j', { a: '1' }));
    const ok = await k.req(
      'PATCH',
      `${CM}/j`,
      [
        { op: 'test', path: '/data/a', value: '1' },
        { op: 'add', path: '/data/b', value: '2' },
        { op: 'move', from: '/data/a', path: '/data/c' },
      ],
      JSONP,
    );
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.data, { b: '2', c: '1' });
    const failed = await k.req(
      'PATCH',
      `${CM}/j`,
      [
        { op: 'test', path: '/data/b', value: 'nope' },
        { op: 'remove', path: '/data/b' },
      ],
      JSONP,
    );
    assert.equal(failed.status, 422);
    assert.equal(failed.body.reason, 'Invalid');
    assert.equal((await k.req('GET', `${CM}/j`)).body.data.b, '2');
    const missing = await k.req('PATCH', `${CM}/j`, [{ op: 'remove', path: '/data/zzz' }], JSONP);
    assert.equal(missing.status, 422);
    const stale = await k.req(
      'PATCH',
      `${CM}/j`,
      [{ op: 'replace', path: '/metadata/resourceVersion', value: '1' }],
      JSONP,
    );
    assert.equal(stale.status, 409, 'a patched resourceVersion is a precondition');
  });

  it('strategic merge patch merges containers by name, env by name, and honours directives', async () => {
    const D = '/apis/apps/v1/namespaces/default/deployments';
    const deployment = {
      metadata: { name: 'smp', finalizers: ['example.com/a'] },
      spec: {
        selector: { matchLabels: { app: 'smp' } },
        template: {
          metadata: { labels: { app: 'smp' } },
          spec: {
            containers: [
              {
                name: 'app',
                image: 'app:1',
                env: [
                  { name: 'A', value: '1' },
                  { name: 'B', value: '2' },
                ],
              },
              { name: 'side', image: 'side:1' },
            ],
          },
        },
      },
    };
    assert.equal((await k.req('POST', D, deployment)).status, 201);
    const r = await k.req(
      'PATCH',
      `${D}/smp`,
      {
        metadata: { finalizers: ['example.com/b'] },
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: 'app',
                  image: 'app:2',
                  env: [
                    { name: 'B', $patch: 'delete' },
                    { name: 'C', value: '3' },
                  ],
                },
              ],
            },
          },
        },
      },
      SMP,
    );
    assert.equal(r.status, 200, r.text);
    const containers = r.body.spec.template.spec.containers;
    const app = containers.find((c: any) => c.name === 'app');
    assert.equal(app.image, 'app:2');
    assert.deepEqual(app.env, [
      { name: 'A', value: '1' },
      { name: 'C', value: '3' },
    ]);
    assert.equal(containers.length, 2, 'the other container stays');
    assert.deepEqual(
      r.body.metadata.finalizers,
      ['example.com/a', 'example.com/b'],
      'finalizers merge as a set',
    );
    const prim = await k.req(
      'PATCH',
      `${D}/smp`,
      { metadata: { '$deleteFromPrimitiveList/finalizers': ['example.com/a'] } },
      SMP,
    );
    assert.deepEqual(prim.body.metadata.finalizers, ['example.com/b']);
    const order = await k.req(
      'PATCH',
      `${D}/smp`,
      {
        spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'side' }, { name: 'app' }] } } },
      },
      SMP,
    );
    assert.deepEqual(
      order.body.spec.template.spec.containers.map((c: any) => c.name),
      ['side', 'app'],
    );
    const retain = await k.req(
      'PATCH',
      `${D}/smp`,
      { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
      SMP,
    );
    assert.deepEqual(retain.body.spec.strategy, { type: 'Recreate' }, '$retainKeys drops rollingUpdate');
  });

  it('strategic merge patch on Service ports merges by port; $patch: replace replaces the list', async () => {
    const S = '/api/v1/namespaces/default/services';
    await k.req('POST', S, { metadata: { name: 'smp-svc' }, spec: { ports: [{ name: 'a', port: 80 }] } });
    const add = await k.req('PATCH', `${S}/smp-svc`, { spec: { ports: [{ name: 'b', port: 81 }] } }, SMP);
    assert.deepEqual(
      add.body.spec.ports.map((p: any) => p.port),
      [80, 81],
    );
    const upd = await k.req(
      'PATCH',
      `${S}/smp-svc`,
      { spec: { ports: [{ port: 80, targetPort: 8080 }] } },
      SMP,
    );
    assert.equal(upd.body.spec.ports[0].targetPort, 8080);
    const rep = await k.req(
      'PATCH',
      `${S}/smp-svc`,
      { spec: { ports: [{ $patch: 'replace' }, { name: 'c', port: 90 }] } },
      SMP,
    );
    assert.deepEqual(
      rep.body.spec.ports.map((p: any) => p.port),
      [90],
    );
  });

  it('server-side apply creates, records the manager, and removes fields the manager stops applying', async () => {
    const doc = (data: Record<string, string>) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'ssa', labels: { owner: 'one' } },
        data,
      });
    const created = await k.req('PATCH', `${CM}/ssa?fieldManager=one`, doc({ a: '1', b: '2' }), APPLY);
    assert.equal(created.status, 201, created.text);
    const mf = created.body.metadata.managedFields;
    assert.equal(mf.length, 1);
    assert.equal(mf[0].manager, 'one');
    assert.equal(mf[0].operation, 'Apply');
    assert.deepEqual(mf[0].fieldsV1, {
      'f:data': { 'f:a': {}, 'f:b': {} },
      'f:metadata': { 'f:labels': { 'f:owner': {} } },
    });
    const again = await k.req('PATCH', `${CM}/ssa?fieldManager=one`, doc({ a: '1' }), APPLY);
    assert.equal(again.status, 200);
    assert.deepEqual(again.body.data, { a: '1' }, 'b is gone: only manager one owned it');
    const missing = await k.req('PATCH', `${CM}/ssa`, doc({ a: '1' }), APPLY);
    assert.equal(missing.status, 422);
    assert.equal(missing.body.details.causes[0].field, 'fieldManager');
  });

  it('server-side apply of what is already there is a no-op: no new resourceVersion, though time moved', async () => {
    // A real API server reverts a write that only moves managedFields timestamps; a controller that
    // applies its objects on every reconcile must not see them change.
    let now = Date.parse('2026-01-01T00:00:00Z');
    const clocked = await startTestKube({ now: () => new Date(now) });
    try {
      const doc = JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'same', labels: { owner: 'one' } },
        data: { a: '1' },
      });
      const first = await clocked.req('PATCH', `${CM}/same?fieldManager=one`, doc, APPLY);
      assert.equal(first.status, 201, first.text);
      now += 60_000;
      const again = await clocked.req('PATCH', `${CM}/same?fieldManager=one`, doc, APPLY);
      assert.equal(again.status, 200, again.text);
      assert.equal(again.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
      assert.equal(again.body.metadata.managedFields[0].time, first.body.metadata.managedFields[0].time);
      const changed = await clocked.req(
        'PATCH',
        `${CM}/same?fieldManager=one`,
        doc.replace('"1"', '"2"'),
        APPLY,
      );
      assert.notEqual(changed.body.metadata.resourceVersion, first.body.metadata.resourceVersion);
      assert.equal(changed.body.metadata.managedFields[0].time, '2026-01-01T00:01:00Z');
    } finally {
      await clocked.close();
    }
  });

  it('server-side apply conflicts with another manager, and force takes ownership', async () => {
    const doc = (v: string) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'conflict' },
        data: { shared: v },
      });
    await k.req('PATCH', `${CM}/conflict?fieldManager=alice`, doc('a'), APPLY);
    const same = await k.req('PATCH', `${CM}/conflict?fieldManager=bob`, doc('a'), APPLY);
    assert.equal(same.status, 200, 'the same value is shared ownership, no conflict');
    const c = await k.req('PATCH', `${CM}/conflict?fieldManager=carol`, doc('c'), APPLY);
    assert.equal(c.status, 409);
    assert.equal(c.body.reason, 'Conflict');
    assert.deepEqual(c.body.details.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "alice" using v1', field: '.data.shared' },
      { reason: 'FieldManagerConflict', message: 'conflict with "bob" using v1', field: '.data.shared' },
    ]);
    assert.match(
      c.body.message,
      /^Apply failed with 2 conflicts: conflict with "alice" using v1: .data.shared/,
    );
    const forced = await k.req('PATCH', `${CM}/conflict?fieldManager=carol&force=true`, doc('c'), APPLY);
    assert.equal(forced.status, 200);
    assert.equal(forced.body.data.shared, 'c');
    const managers = forced.body.metadata.managedFields.map((m: any) => m.manager);
    assert.deepEqual(managers, ['carol']);
    // An Update-style write by someone else takes the field over.
    const upd = await k.req('PATCH', `${CM}/conflict?fieldManager=dave`, { data: { shared: 'd' } }, MERGE);
    const owners = upd.body.metadata.managedFields.map((m: any) => `${m.manager}/${m.operation}`);
    assert.deepEqual(owners, ['dave/Update']);
    const back = await k.req('PATCH', `${CM}/conflict?fieldManager=carol`, doc('c'), APPLY);
    assert.equal(back.status, 409);
    assert.equal(back.body.details.causes[0].message, 'conflict with "dave" using v1');
  });

  it('server-side apply merges keyed lists of custom resources and applies to /status', async () => {
    const W = '/apis/example.com/v1/namespaces/default/widgets';
    const doc = (ports: unknown[], size = 1) =>
      JSON.stringify({
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'ssa-w' },
        spec: { size, ports },
      });
    await k.req('PATCH', `${W}/ssa-w?fieldManager=a`, doc([{ name: 'x', port: 1 }]), APPLY);
    const b = await k.req('PATCH', `${W}/ssa-w?fieldManager=b`, doc([{ name: 'y', port: 2 }]), APPLY);
    assert.equal(b.status, 200, b.text);
    assert.deepEqual(
      b.body.spec.ports.map((p: any) => p.name),
      ['x', 'y'],
    );
    const a2 = await k.req('PATCH', `${W}/ssa-w?fieldManager=a`, doc([]), APPLY);
    assert.deepEqual(
      a2.body.spec.ports.map((p: any) => p.name),
      ['y'],
      'a drops only its own item',
    );
    const status = await k.req(
      'PATCH',
      `${W}/ssa-w/status?fieldManager=ctrl`,
      JSON.stringify({
        apiVersion: 'example.com/v1',
        kind: 'Widget',
        metadata: { name: 'ssa-w' },
        status: { phase: 'Ready' },
      }),
      APPLY,
    );
    assert.equal(status.status, 200, status.text);
    assert.equal(status.body.status.phase, 'Ready');
    const ctrl = status.body.metadata.managedFields.find((m: any) => m.manager === 'ctrl');
    assert.equal(ctrl.subresource, 'status');
    assert.deepEqual(ctrl.fieldsV1, { 'f:status': { 'f:phase': {} } });
    const wrongKind = await k.req(
      'PATCH',
      `${W}/ssa-w?fieldManager=a`,
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ssa-w' } }),
      APPLY,
    );
    assert.equal(wrongKind.status, 400);
  });

  it('records Update managers from fieldManager or the User-Agent', async () => {
    const r = await k.req('POST', CM, configMap('ua', { a: '1' }), {
      userAgent: 'my-controller/v1.2 (linux)',
    });
    assert.equal(r.body.metadata.managedFields[0].manager, 'my-controller');
    assert.equal(r.body.metadata.managedFields[0].operation, 'Update');
  });

  it('keeps the live managers decoded: a write decodes no FieldsV1 and encodes only the sets it changed', async () => {
    await k.req('POST', `${CM}?fieldManager=creator`, configMap('owned', { a: '1', b: '0' }));
    const before = { ...fieldsV1Work };
    for (let i = 1; i <= 10; i++) {
      const r = await k.req('PATCH', `${CM}/owned?fieldManager=counter`, { data: { b: String(i) } }, MERGE);
      assert.equal(r.status, 200, r.text);
    }
    // The first patch moves data.b from creator to counter (two new sets); the other nine change a
    // value counter already owns, so no set changes.
    assert.deepEqual(
      { decoded: fieldsV1Work.decoded - before.decoded, encoded: fieldsV1Work.encoded - before.encoded },
      { decoded: 0, encoded: 2 },
    );
    const live = await k.req('GET', `${CM}/owned`);
    assert.deepEqual(
      live.body.metadata.managedFields.map((m: { manager: string; fieldsV1: unknown }) => [
        m.manager,
        m.fieldsV1,
      ]),
      [
        ['creator', { 'f:data': { 'f:a': {} } }],
        ['counter', { 'f:data': { 'f:b': {} } }],
      ],
    );
  });

  it('answers unknown patch types with 415', async () => {
    await k.req('POST', CM, configMap('mt'));
    const r = await k.req('PATCH', `${CM}/mt`, '{}', { contentType: 'application/json' });
    assert.equal(r.status, 415);
    assert.equal(r.body.reason, 'UnsupportedMediaType');
  });
});
