import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { CoreV1Event, EventsV1Event } from '@kubernetes/client-node';
import { createLogger } from '../lib/log.ts';
import { StatusError } from '../sim/kube/errors.ts';
import type { Action } from '../sim/kube/reactors.ts';
import { startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import type { KubeClient } from './client.ts';
import { EventRecorder } from './events.ts';
import { kinds } from './resource.ts';
import { configMap, testClient } from './testing/env.ts';
import { FakeClock } from '../lib/testing/fake-clock.ts';

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
    const rec = new EventRecorder({
      client,
      component: 'shiftstack.io/ccm',
      instance: 'host-1',
      clock,
      api: 'events.k8s.io/v1',
    });
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
    const rec = new EventRecorder({ client, component: 'x', api: 'events.k8s.io/v1' });
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'n', namespace: 'no-such-namespace' },
    };
    assert.throws(() => rec.event(cm, 'Normal', 'not camel', 'm'), TypeError);
    rec.event(cm, 'Normal', 'Fine', 'the namespace does not exist: the write fails, quietly');
    await rec.flush();
  });

  it('core/v1 by default, as upstream OCCM and controller-runtime record: first/lastTimestamp, count and source', async () => {
    await client.create(kinds.Namespace, { metadata: { name: 'ev-core' } });
    const cm = await client.create(kinds.ConfigMap, configMap('subject', 'ev-core'));
    const clock = new FakeClock(Date.UTC(2025, 5, 1, 10, 0, 0));
    const rec = new EventRecorder({ client, component: 'shiftstack.io/ccm', instance: 'host-1', clock });
    assert.equal(rec.api, 'v1');
    rec.event(cm, 'Warning', 'LoadBalancerPending', 'waiting for Octavia');
    await clock.advance(60_000);
    rec.event(cm, 'Warning', 'LoadBalancerPending', 'waiting for Octavia');
    await rec.flush();
    const { body } = await k.req('GET', '/api/v1/namespaces/ev-core/events');
    assert.equal(body.items.length, 1);
    const e = body.items[0];
    assert.deepEqual(
      {
        firstTimestamp: e.firstTimestamp,
        lastTimestamp: e.lastTimestamp,
        count: e.count,
        source: e.source,
        reportingComponent: e.reportingComponent,
        reportingInstance: e.reportingInstance,
      },
      {
        firstTimestamp: '2025-06-01T10:00:00Z',
        lastTimestamp: '2025-06-01T10:01:00Z',
        count: 2,
        source: { component: 'shiftstack.io/ccm', host: 'host-1' },
        reportingComponent: 'shiftstack.io/ccm',
        reportingInstance: 'host-1',
      },
    );
  });

  it('kubectl get events --sort-by=.lastTimestamp lists our Events, in the order they last happened', async () => {
    await client.create(kinds.Namespace, { metadata: { name: 'ev-sort' } });
    const cm = await client.create(kinds.ConfigMap, configMap('subject', 'ev-sort'));
    const clock = new FakeClock(Date.UTC(2025, 5, 1, 10, 0, 0));
    const rec = new EventRecorder({ client, component: 'shiftstack.io/ccm', clock });
    rec.event(cm, 'Normal', 'FirstSeenFirst', 'first');
    await clock.advance(60_000);
    rec.event(cm, 'Normal', 'SeenOnce', 'second');
    await clock.advance(60_000);
    // A repeat: the older Event becomes the latest one.
    rec.event(cm, 'Normal', 'FirstSeenFirst', 'first');
    await rec.flush();
    const { stdout } = await promisify(execFile)('/usr/bin/kubectl', [
      '--kubeconfig',
      k.kubeconfigPath,
      '--cache-dir',
      join(k.dir, 'kubectl-cache'),
      'get',
      'events',
      '--namespace',
      'ev-sort',
      '--sort-by=.lastTimestamp',
    ]);
    const rows = stdout.trim().split('\n').slice(1);
    assert.deepEqual(
      rows.map((r) => /(FirstSeenFirst|SeenOnce)/.exec(r)?.[1]),
      ['SeenOnce', 'FirstSeenFirst'],
      stdout,
    );
  });

  /** A recorder asked for events.k8s.io/v1, with a log to read. */
  const eventsV1Recorder = () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    const log = createLogger({ level: 'info', destination });
    return {
      rec: new EventRecorder({ client, component: 'shiftstack.io/ccm', api: 'events.k8s.io/v1', log }),
      lines,
    };
  };

  /** Answers every events.k8s.io request with `error`, counting them. */
  const refuseEventsV1 = (error: () => StatusError) => {
    const seen: Action[] = [];
    const remove = k.em.reactors.prepend('*', 'events', (action) => {
      if (action.group !== 'events.k8s.io') return { handled: false };
      seen.push(action);
      return { handled: true, error: error() };
    });
    return { seen, remove };
  };

  for (const [what, error] of [
    [
      'forbidden (403, as under upstream OCCM’s RBAC, which grants only core events)',
      () =>
        new StatusError(
          403,
          'Forbidden',
          'events.events.k8s.io is forbidden: User "system:serviceaccount:kube-system:cloud-controller-manager" cannot create resource "events" in API group "events.k8s.io" in the namespace "ev-fallback"',
          { group: 'events.k8s.io', kind: 'events' },
        ),
    ],
    [
      'not served (404)',
      () => new StatusError(404, 'NotFound', 'the server could not find the requested resource'),
    ],
  ] as const) {
    it(`events.k8s.io/v1 ${what}: falls back to core/v1 once, remembered, with one log line`, async () => {
      const ns = `ev-fallback-${what.slice(0, 3)}`;
      await client.create(kinds.Namespace, { metadata: { name: ns } });
      const a = await client.create(kinds.ConfigMap, configMap('a', ns));
      const b = await client.create(kinds.ConfigMap, configMap('b', ns));
      const refused = refuseEventsV1(error);
      try {
        const { rec, lines } = eventsV1Recorder();
        rec.event(a, 'Warning', 'SyncFailed', 'first');
        rec.event(a, 'Warning', 'SyncFailed', 'first');
        rec.event(b, 'Normal', 'Synced', 'second');
        await rec.flush();
        rec.event(b, 'Normal', 'Synced', 'third');
        await rec.flush();
        assert.equal(rec.api, 'v1', 'remembered');
        assert.equal(refused.seen.length, 1, 'events.k8s.io was tried once');
        const list = await client.list(kinds.Event, { namespace: ns });
        const summary = list.items
          .map((e: CoreV1Event) => `${e.involvedObject.name} ${e.reason} ${e.message} x${e.count}`)
          .sort();
        assert.deepEqual(summary, ['a SyncFailed first x2', 'b Synced second x1', 'b Synced third x1']);
        const fallbacks = lines.filter((l) => l.includes('falling back to core/v1 Events'));
        assert.equal(fallbacks.length, 1, lines.join('\n'));
        assert.match(fallbacks[0] ?? '', /"code":(403|404)/);
      } finally {
        refused.remove();
      }
    });
  }

  it('a 404 for a missing namespace is not a missing API: no fallback', async () => {
    const { rec, lines } = eventsV1Recorder();
    rec.event(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'n', namespace: 'no-such-ns' } },
      'Normal',
      'Fine',
      'the namespace does not exist',
    );
    await rec.flush();
    assert.equal(rec.api, 'events.k8s.io/v1');
    assert.ok(!lines.some((l) => l.includes('falling back')));
  });
});
