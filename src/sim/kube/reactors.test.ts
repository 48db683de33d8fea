import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiErrors } from './errors.ts';
import { startTestKube, type TestKube } from './testing/harness.ts';

const L = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases';

describe('kube emulator: leases, events and reactors', () => {
  let k: TestKube;
  before(async () => (k = await startTestKube()));
  after(async () => k.close());

  it('stores Leases and validates their durations', async () => {
    const now = new Date().toISOString().replace('Z', '000Z');
    const lease = {
      metadata: { name: 'ccm' },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: now, renewTime: now },
    };
    const r = await k.req('POST', L, lease);
    assert.equal(r.status, 201, r.text);
    const bad = await k.req('POST', L, { metadata: { name: 'bad' }, spec: { leaseDurationSeconds: 0 } });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.details.causes[0].field, 'spec.leaseDurationSeconds');
  });

  it("injects errors with prepend('update', 'leases', fn), as client-go's fake reactors do", async () => {
    let calls = 0;
    const remove = k.em.reactors.prepend('update', 'leases', () => {
      calls++;
      return calls <= 2
        ? {
            handled: true,
            error: apiErrors.staleUpdate({ group: 'coordination.k8s.io', resource: 'leases' }, 'ccm'),
          }
        : { handled: false };
    });
    const cur = (await k.req('GET', `${L}/ccm`)).body;
    const renew = () => k.req('PUT', `${L}/ccm`, { ...cur, spec: { ...cur.spec, holderIdentity: 'b' } });
    assert.equal((await renew()).status, 409);
    assert.equal((await renew()).status, 409);
    const third = await renew();
    assert.equal(third.status, 200);
    assert.equal(third.body.spec.holderIdentity, 'b');
    remove();
    const canned = k.em.reactors.prepend('get', 'leases', () => ({
      handled: true,
      object: { kind: 'Lease', metadata: { name: 'fake' } },
    }));
    assert.equal((await k.req('GET', `${L}/anything`)).body.metadata.name, 'fake');
    canned();
  });

  it('serves core/v1 and events.k8s.io/v1 Events over one storage', async () => {
    const E1 = '/apis/events.k8s.io/v1/namespaces/default/events';
    const now = new Date().toISOString().replace('Z', '000Z');
    const ev = {
      metadata: { name: 'ev1' },
      eventTime: now,
      reportingController: 'shiftstack.io/ccm',
      reportingInstance: 'ccm-1',
      action: 'EnsureLoadBalancer',
      reason: 'EnsuringLoadBalancer',
      note: 'Ensuring load balancer',
      type: 'Normal',
      regarding: { kind: 'Service', namespace: 'default', name: 'web' },
    };
    const r = await k.req('POST', E1, ev);
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.apiVersion, 'events.k8s.io/v1');
    assert.equal(r.body.note, 'Ensuring load balancer');
    const core = await k.req('GET', '/api/v1/namespaces/default/events/ev1');
    assert.equal(core.body.apiVersion, 'v1');
    assert.equal(core.body.message, 'Ensuring load balancer');
    assert.equal(core.body.involvedObject.name, 'web');
    assert.equal(core.body.reportingComponent, 'shiftstack.io/ccm');
    const byObject = await k.req(
      'GET',
      '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dweb,reason%3DEnsuringLoadBalancer',
    );
    assert.deepEqual(
      byObject.body.items.map((i: any) => i.metadata.name),
      ['ev1'],
    );
    const missing = await k.req('POST', E1, { metadata: { name: 'ev2' }, type: 'Normal' });
    assert.equal(missing.status, 422);
    // As ValidateEventCreate: without an eventTime the reporting fields are not checked, the eventTime is.
    assert.ok(missing.body.details.causes.some((c: any) => c.field === 'eventTime'));
  });
});
