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
