import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoreV1Event, EventsV1Event } from '@kubernetes/client-node';
import { startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import type { KubeClient } from './client.ts';
import { EventRecorder } from './events.ts';
import { kinds } from './resource.ts';
import { configMap, testClient } from './testing/env.ts';
import { FakeClock } from './testing/fake-clock.ts';

describe('Event recorder against the emulator', () => {
  let k: TestKube;
  let client: KubeClient;
  before(async () => {
    k = await startTestKube();
    client = testClient(k.kubeconfigPath);
    await client.create(kinds.Namespace, { metadata: { name: 'ev' } });
  });
  after(async () => {
    await client.close();
    await k.close();
  });

  it('events.k8s.io/v1: repeats within the window become one Event with a series count', async () => {
    const cm = await client.create(kinds.ConfigMap, configMap('subject', 'ev'));
    const clock = new FakeClock();
    const rec = new EventRecorder({ client, component: 'shiftstack.io/ccm', instance: 'host-1', clock });
    for (let i = 0; i < 5; i++) {
      rec.event(cm, 'Warning', 'LoadBalancerPending', 'waiting for Octavia');
      await clock.advance(1000);
    }
    rec.event(cm, 'Normal', 'EnsuredLoadBalancer', 'load balancer ready');
    await rec.flush();
    const list = await client.list(kinds.EventsV1Event, { namespace: 'ev' });
    const pending = list.items.filter((e: EventsV1Event) => e.reason === 'LoadBalancerPending');
    assert.equal(pending.length, 1, 'five repeats, one object');
    const e = pending[0] as EventsV1Event & { series?: { count?: number } };
    assert.equal(e.series?.count, 5);
    assert.equal(e.note, 'waiting for Octavia');
    assert.equal(e.type, 'Warning');
    assert.equal(e.reportingController, 'shiftstack.io/ccm');
    assert.equal(e.reportingInstance, 'host-1');
    assert.deepEqual(
      { kind: e.regarding?.kind, name: e.regarding?.name, uid: e.regarding?.uid },
      { kind: 'ConfigMap', name: 'subject', uid: cm.metadata?.uid },
    );
    assert.equal(list.items.filter((x: EventsV1Event) => x.reason === 'EnsuredLoadBalancer').length, 1);

    await clock.advance(11 * 60_000);
    rec.event(cm, 'Warning', 'LoadBalancerPending', 'waiting for Octavia');
    await rec.flush();
    const after = await client.list(kinds.EventsV1Event, { namespace: 'ev' });
    assert.equal(
      after.items.filter((x: EventsV1Event) => x.reason === 'LoadBalancerPending').length,
      2,
      'after the window, a new Event',
    );
  });

  it('core v1: count and lastTimestamp, involvedObject, source', async () => {
    const node = await client.create(kinds.Node, { metadata: { name: 'ev-node' } });
    const rec = new EventRecorder({ client, component: 'cloud-node-controller', instance: 'h', api: 'v1' });
    for (let i = 0; i < 3; i++) rec.event(node, 'Normal', 'Synced', 'node synced from Nova');
    await rec.flush();
    const list = await client.list(kinds.Event, {
      namespace: 'default',
      fieldSelector: 'involvedObject.name=ev-node',
    });
    assert.equal(list.items.length, 1);
    const e = list.items[0] as CoreV1Event;
    assert.equal(e.count, 3);
    assert.equal(e.involvedObject.kind, 'Node');
    assert.equal(e.source?.component, 'cloud-node-controller');
    assert.equal(e.message, 'node synced from Nova');
  });

  it('refuses reasons that are not CamelCase and never lets a failed write escape', async () => {
    const rec = new EventRecorder({ client, component: 'x' });
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'n', namespace: 'no-such-namespace' },
    };
    assert.throws(() => rec.event(cm, 'Normal', 'not camel', 'm'), TypeError);
    rec.event(cm, 'Normal', 'Fine', 'the namespace does not exist: the write fails, quietly');
    await rec.flush();
  });
});
