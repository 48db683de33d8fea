import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestKube, type TestKube } from './testing/harness.ts';

const coreEvent = (
  ns: string,
  subject: { kind: string; name: string; namespace?: string },
  extra: object = {},
) => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { generateName: 'e-', namespace: ns },
  involvedObject: subject,
  reason: 'Test',
  message: 'hello',
  type: 'Normal',
  ...extra,
});

describe('kube emulator: Event namespace rules', () => {
  let k: TestKube;
  before(async () => (k = await startTestKube()));
  after(async () => k.close());

  it('keeps a namespaced subject’s Events in its namespace', async () => {
    const ok = await k.req(
      'POST',
      '/api/v1/namespaces/default/events',
      coreEvent('default', { kind: 'ConfigMap', name: 'x', namespace: 'default' }),
    );
    assert.equal(ok.status, 201);
    const bad = await k.req(
      'POST',
      '/api/v1/namespaces/kube-system/events',
      coreEvent('kube-system', { kind: 'ConfigMap', name: 'x', namespace: 'default' }),
    );
    assert.equal(bad.status, 422);
    assert.equal(bad.body.details.causes[0].field, 'involvedObject.namespace');
    assert.match(bad.body.details.causes[0].message, /does not match event.namespace/);
  });

  it('puts a Node’s old-style Events in default, and new-style ones in default or kube-system', async () => {
    const node = { kind: 'Node', name: 'worker-0' };
    assert.equal(
      (await k.req('POST', '/api/v1/namespaces/default/events', coreEvent('default', node))).status,
      201,
    );
    assert.equal(
      (await k.req('POST', '/api/v1/namespaces/kube-system/events', coreEvent('kube-system', node))).status,
      422,
    );
    const newStyle = {
      eventTime: new Date().toISOString().replace('Z', '000Z'),
      reportingComponent: 'ccm',
      reportingInstance: 'ccm-0',
      action: 'Init',
    };
    assert.equal(
      (await k.req('POST', '/api/v1/namespaces/kube-system/events', coreEvent('kube-system', node, newStyle)))
        .status,
      201,
    );
  });

  it('applies the same rule to events.k8s.io/v1 through regarding', async () => {
    const ev = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { generateName: 'e-', namespace: 'kube-system' },
      eventTime: new Date().toISOString().replace('Z', '000Z'),
      reportingController: 'ccm',
      reportingInstance: 'ccm-0',
      action: 'Sync',
      reason: 'Test',
      type: 'Normal',
      regarding: { kind: 'Service', name: 'web', namespace: 'demo' },
    };
    const bad = await k.req('POST', '/apis/events.k8s.io/v1/namespaces/kube-system/events', ev);
    assert.equal(bad.status, 422);
    assert.equal(bad.body.details.causes[0].field, 'regarding.namespace');
  });
});

describe('kube emulator: events.k8s.io/v1 and core/v1 views of one Event', () => {
  let k: TestKube;
  before(async () => (k = await startTestKube()));
  after(async () => k.close());

  const microNow = () => new Date().toISOString().replace('Z', '000Z');
  const newEvent = (extra: object = {}) => ({
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { generateName: 'e-', namespace: 'default' },
    eventTime: microNow(),
    reportingController: 'shiftstack.io/ccm',
    reportingInstance: 'ccm-0',
    action: 'Sync',
    reason: 'Test',
    note: 'hello',
    type: 'Normal',
    regarding: { kind: 'ConfigMap', name: 'x', namespace: 'default' },
    ...extra,
  });

  it('refuses the deprecated* fields on an events.k8s.io/v1 create, as the API server does ("needs to be unset")', async () => {
    for (const [wire, stored, value] of [
      ['deprecatedFirstTimestamp', 'firstTimestamp', '2025-01-01T00:00:00Z'],
      ['deprecatedLastTimestamp', 'lastTimestamp', '2025-01-01T00:00:00Z'],
      ['deprecatedCount', 'count', 3],
      ['deprecatedSource', 'source', { component: 'ccm' }],
    ] as const) {
      const res = await k.req(
        'POST',
        '/apis/events.k8s.io/v1/namespaces/default/events',
        newEvent({ [wire]: value }),
      );
      assert.equal(res.status, 422, `${wire}: ${res.text}`);
      assert.deepEqual(
        res.body.details.causes.map((c: { field: string; message: string }) => [c.field, c.message]),
        [[stored, 'Invalid value: "": needs to be unset']],
      );
    }
  });

  it('converts like the API server: note ↔ message, regarding ↔ involvedObject, series kept; core fields as deprecated*', async () => {
    const created = await k.req('POST', '/apis/events.k8s.io/v1/namespaces/default/events', newEvent());
    assert.equal(created.status, 201, created.text);
    const name = created.body.metadata.name as string;
    const core = (await k.req('GET', `/api/v1/namespaces/default/events/${name}`)).body;
    assert.equal(core.message, 'hello');
    assert.equal(core.involvedObject.name, 'x');
    assert.equal(core.reportingComponent, 'shiftstack.io/ccm');
    assert.equal(core.lastTimestamp ?? null, null, 'events.k8s.io leaves the core timestamps unset');

    const patched = await k.req(
      'PATCH',
      `/apis/events.k8s.io/v1/namespaces/default/events/${name}`,
      { series: { count: 2, lastObservedTime: microNow() } },
      { contentType: 'application/merge-patch+json' },
    );
    assert.equal(patched.status, 200, patched.text);
    assert.equal((await k.req('GET', `/api/v1/namespaces/default/events/${name}`)).body.series.count, 2);

    // A core/v1 Event, read through events.k8s.io/v1.
    const old = await k.req('POST', '/api/v1/namespaces/default/events', {
      ...coreEvent('default', { kind: 'ConfigMap', name: 'x', namespace: 'default' }),
      firstTimestamp: '2025-01-01T00:00:00Z',
      lastTimestamp: '2025-01-01T00:01:00Z',
      count: 4,
      source: { component: 'ccm', host: 'h' },
    });
    assert.equal(old.status, 201, old.text);
    const v1 = (
      await k.req('GET', `/apis/events.k8s.io/v1/namespaces/default/events/${old.body.metadata.name}`)
    ).body;
    assert.deepEqual(
      [
        v1.note,
        v1.deprecatedCount,
        v1.deprecatedLastTimestamp,
        v1.deprecatedFirstTimestamp,
        v1.deprecatedSource,
      ],
      ['hello', 4, '2025-01-01T00:01:00Z', '2025-01-01T00:00:00Z', { component: 'ccm', host: 'h' }],
    );
  });

  it('keeps what an events.k8s.io/v1 update may not change: the deprecated* fields and the note', async () => {
    const created = await k.req('POST', '/apis/events.k8s.io/v1/namespaces/default/events', newEvent());
    const name = created.body.metadata.name as string;
    for (const patch of [{ deprecatedCount: 7 }, { note: 'changed' }]) {
      const res = await k.req('PATCH', `/apis/events.k8s.io/v1/namespaces/default/events/${name}`, patch, {
        contentType: 'application/merge-patch+json',
      });
      assert.equal(res.status, 422, `${JSON.stringify(patch)}: ${res.text}`);
      assert.match(res.text, /field is immutable/);
    }
    // Through core/v1 the same changes are allowed (no strict validation for the old API).
    const res = await k.req(
      'PATCH',
      `/api/v1/namespaces/default/events/${name}`,
      { count: 7 },
      {
        contentType: 'application/merge-patch+json',
      },
    );
    assert.equal(res.status, 200, res.text);
  });
});
