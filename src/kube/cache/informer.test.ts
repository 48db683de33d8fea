import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiErrors } from '../../sim/kube/errors.ts';
import { eventually, startTestKube, type TestKube } from '../../sim/kube/testing/harness.ts';
import type { V1ConfigMap, V1Node } from '@kubernetes/client-node';
import type { KubeClient } from '../client.ts';
import { kinds, keyOf } from '../resource.ts';
import { configMap, testClient } from '../testing/env.ts';
import { byOwnerUid, field, NAMESPACE_INDEX, OWNER_UID_INDEX } from './indexers.ts';
import { Informer, type InformerOptions } from './informer.ts';

interface Recorded {
  adds: string[];
  updates: [string, string, string][];
  deletes: V1ConfigMap[];
}

describe('informer against the emulator', () => {
  let k: TestKube;
  let client: KubeClient;
  const stops: AbortController[] = [];

  before(async () => {
    k = await startTestKube();
    client = testClient(k.kubeconfigPath);
  });
  after(async () => {
    for (const s of stops) s.abort();
    await client.close();
    await k.close();
  });

  const ns = async (name: string) => {
    await client.create(kinds.Namespace, { metadata: { name } });
    return name;
  };

  const start = <T extends V1ConfigMap | V1Node>(
    opts: Partial<InformerOptions<T>> & Pick<InformerOptions<T>, 'type'>,
  ) => {
    const informer = new Informer<T>({ client, backoff: { initialMs: 10, maxMs: 100 }, ...opts });
    const rec: Recorded = { adds: [], updates: [], deletes: [] };
    informer.addHandler({
      onAdd: (o) => rec.adds.push(o.metadata?.name ?? ''),
      onUpdate: (a, b) =>
        rec.updates.push([
          b.metadata?.name ?? '',
          a.metadata?.resourceVersion ?? '',
          b.metadata?.resourceVersion ?? '',
        ]),
      onDelete: (o) => rec.deletes.push(o),
    });
    const stop = new AbortController();
    stops.push(stop);
    const done = informer.start(stop.signal);
    return { informer, rec, stop, done };
  };

  /** The cache equals the server (names and resourceVersions). */
  const inSync = async (informer: Informer<V1ConfigMap>, namespace: string) => {
    const server = (await client.list(kinds.ConfigMap, { namespace })).items
      .map((c) => `${c.metadata?.name}@${c.metadata?.resourceVersion}`)
      .sort();
    const cache = informer
      .list()
      .map((c) => `${c.metadata?.name}@${c.metadata?.resourceVersion}`)
      .sort();
    return JSON.stringify(server) === JSON.stringify(cache);
  };

  it('lists in pages, syncs, then reports adds, updates (old and new) and deletes with the last known object', async () => {
    const n = await ns('inf-sync');
    for (let i = 0; i < 25; i++)
      await client.create(kinds.ConfigMap, configMap(`cm-${i}`, n, { i: String(i) }));
    const { informer, rec, stop, done } = start<V1ConfigMap>({
      type: kinds.ConfigMap,
      namespace: n,
      pageSize: 10,
    });
    assert.equal(informer.hasSynced(), false);
    await informer.waitForSync();
    assert.equal(informer.stats.pages, 3, '25 objects in pages of 10');
    assert.equal(informer.list().length, 25);
    assert.equal(rec.adds.length, 25);

    const before = informer.get(`${n}/cm-3`);
    await client.patch(kinds.ConfigMap, { namespace: n, name: 'cm-3' }, 'merge', { data: { i: 'changed' } });
    await client.patch(kinds.ConfigMap, { namespace: n, name: 'cm-4' }, 'merge', { data: { gone: 'soon' } });
    await client.delete(kinds.ConfigMap, { namespace: n, name: 'cm-4' });
    await eventually(() => rec.deletes.length === 1, { what: 'the delete' });
    const [name, oldRv, newRv] = rec.updates.find((u) => u[0] === 'cm-3') ?? [];
    assert.equal(name, 'cm-3');
    assert.equal(oldRv, before?.metadata?.resourceVersion);
    assert.notEqual(newRv, oldRv);
    assert.equal(rec.deletes[0]?.data?.gone, 'soon', 'the delete handler sees the last state');
    assert.equal(informer.get(`${n}/cm-4`), undefined);
    assert.ok(await inSync(informer, n));
    assert.equal(informer.state, 'Watching');

    stop.abort();
    await done;
  });

  it('freezes cached objects so no reader can change what others share', async () => {
    const n = await ns('inf-frozen');
    await client.create(kinds.ConfigMap, configMap('f', n, { a: 'b' }));
    const { informer } = start<V1ConfigMap>({ type: kinds.ConfigMap, namespace: n });
    await informer.waitForSync();
    const cm = informer.get(`${n}/f`) as V1ConfigMap;
    assert.ok(Object.isFrozen(cm) && Object.isFrozen(cm.data) && Object.isFrozen(cm.metadata));
    assert.throws(() => {
      (cm.data as Record<string, string>).a = 'c';
    }, TypeError);
  });

  it('strips managedFields from what it caches when asked (listed and watched), and keeps them otherwise', async () => {
    const n = await ns('inf-strip');
    await client.create(kinds.ConfigMap, configMap('listed', n, { a: '1' }));
    const stripped = start<V1ConfigMap>({ type: kinds.ConfigMap, namespace: n, stripManagedFields: true });
    const kept = start<V1ConfigMap>({ type: kinds.ConfigMap, namespace: n });
    await Promise.all([stripped.informer.waitForSync(), kept.informer.waitForSync()]);
    await client.create(kinds.ConfigMap, configMap('watched', n, { a: '1' }));
    await client.patch(kinds.ConfigMap, { namespace: n, name: 'listed' }, 'merge', { data: { a: '2' } });
    await eventually(
      () =>
        stripped.rec.adds.includes('watched') &&
        stripped.rec.updates.some((u) => u[0] === 'listed') &&
        kept.rec.adds.includes('watched') &&
        kept.rec.updates.some((u) => u[0] === 'listed'),
      { what: 'the add and the update in both caches' },
    );
    for (const name of ['listed', 'watched']) {
      assert.equal(stripped.informer.get(`${n}/${name}`)?.metadata?.managedFields, undefined, name);
      assert.ok(kept.informer.get(`${n}/${name}`)?.metadata?.managedFields?.length, name);
    }
    // A write from the stripped copy leaves the server's managedFields alone.
    const cm = structuredClone(stripped.informer.get(`${n}/listed`)!);
    cm.data = { a: '3' };
    const written = await client.update(kinds.ConfigMap, cm);
    assert.ok(written.metadata?.managedFields?.length);
    stripped.stop.abort();
    kept.stop.abort();
    await Promise.all([stripped.done, kept.done]);
  });

  it('indexes by namespace, owner uid and a custom key (providerID)', async () => {
    for (const name of ['node-a', 'node-b', 'node-c']) {
      await client.create(kinds.Node, {
        metadata: { name },
        spec: name === 'node-c' ? {} : { providerID: `openstack:///${name}-id` },
      });
    }
    const nodes = start<V1Node>({
      type: kinds.Node,
      indexers: { providerID: field((n: V1Node) => n.spec?.providerID) },
    });
    await nodes.informer.waitForSync();
    assert.deepEqual(
      nodes.informer.byIndex('providerID', 'openstack:///node-b-id').map((x) => x.metadata?.name),
      ['node-b'],
    );
    assert.equal(
      nodes.informer.byIndex('providerID', '').length,
      0,
      'nodes without a providerID are not indexed',
    );

    const n = await ns('inf-index');
    const owner = await client.create(kinds.ConfigMap, configMap('owner', n));
    const ref = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'owner',
      uid: owner.metadata?.uid ?? '',
      controller: true,
    };
    await client.create(kinds.ConfigMap, {
      ...configMap('child-1', n),
      metadata: { name: 'child-1', namespace: n, ownerReferences: [ref] },
    });
    await client.create(kinds.ConfigMap, {
      ...configMap('child-2', n),
      metadata: { name: 'child-2', namespace: n, ownerReferences: [ref] },
    });
    const cms = start<V1ConfigMap>({ type: kinds.ConfigMap });
    await cms.informer.waitForSync();
    cms.informer.addIndexer(OWNER_UID_INDEX, byOwnerUid);
    assert.deepEqual(
      cms.informer
        .byIndex(OWNER_UID_INDEX, owner.metadata?.uid ?? '')
        .map(keyOf)
        .sort(),
      [`${n}/child-1`, `${n}/child-2`],
    );
    assert.equal(cms.informer.byIndex(NAMESPACE_INDEX, n).length, 3);
    await client.delete(kinds.ConfigMap, { namespace: n, name: 'child-1' });
    await eventually(() => cms.informer.byIndex(OWNER_UID_INDEX, owner.metadata?.uid ?? '').length === 1, {
      what: 'the index follows deletes',
    });
  });

  it('resyncs: every cached object is reported again as an update with old === new', async () => {
    const n = await ns('inf-resync');
    for (const name of ['r1', 'r2']) await client.create(kinds.ConfigMap, configMap(name, n));
    const { informer, rec } = start<V1ConfigMap>({ type: kinds.ConfigMap, namespace: n, resyncPeriodMs: 50 });
    await informer.waitForSync();
    await eventually(() => informer.stats.resyncs >= 2, { what: 'two resyncs' });
    const resynced = rec.updates.filter(([, a, b]) => a === b).map(([name]) => name);
    assert.ok(
      resynced.filter((x) => x === 'r1').length >= 2 && resynced.filter((x) => x === 'r2').length >= 2,
    );
    assert.equal(informer.stats.lists, 1, 'a resync replays the cache; it does not list');
  });

  it('recovers from a 410 on watch by relisting, without losing the changes it missed', async () => {
    const n = await ns('inf-410');
    for (const name of ['keep', 'change', 'remove'])
      await client.create(kinds.ConfigMap, configMap(name, n, { v: '0' }));
    const { informer, rec } = start<V1ConfigMap>({ type: kinds.ConfigMap, namespace: n });
    await informer.waitForSync();
    const watchesBefore = informer.stats.watches;

    // Cut the watch and keep it down while the world changes, then forget the history.
    const block = k.em.reactors.prepend('watch', 'configmaps', (action) =>
      action.namespace === n
        ? { handled: true, error: apiErrors.internal('watch blocked by test') }
        : { handled: false },
    );
    k.em.watches.closeAll();
    await eventually(() => informer.stats.failures >= 1, { what: 'the blocked re-watch to fail' });
    await client.create(kinds.ConfigMap, configMap('added', n, { v: '1' }));
    await client.patch(kinds.ConfigMap, { namespace: n, name: 'change' }, 'merge', { data: { v: '2' } });
    await client.patch(kinds.ConfigMap, { namespace: n, name: 'remove' }, 'merge', { data: { v: 'last' } });
    await client.delete(kinds.ConfigMap, { namespace: n, name: 'remove' });
    k.em.compact();
    block();

    await eventually(() => informer.stats.relists >= 1, { what: 'a relist after 410' });
    await eventually(() => inSync(informer, n), { what: 'cache in sync after the relist' });
    assert.ok(rec.adds.includes('added'), 'the create made while blind is reported');
    assert.ok(
      rec.updates.some(([name, a, b]) => name === 'change' && a !== b),
      'the update too',
    );
    assert.deepEqual(
      rec.deletes.map((d) => [d.metadata?.name, d.data?.v]),
      [['remove', '0']],
      'the delete too, with the last state the cache knew',
    );
    assert.ok(informer.stats.watches > watchesBefore);
    assert.equal(informer.state, 'Watching');
    // And it keeps following changes afterwards.
    await client.create(kinds.ConfigMap, configMap('after', n));
    await eventually(() => informer.get(`${n}/after`), { what: 'events after recovery' });
  });

  it('backs off on failing lists and syncs once the server answers', async () => {
    const n = await ns('inf-backoff');
    await client.create(kinds.ConfigMap, configMap('x', n));
    let failures = 3;
    const remove = k.em.reactors.prepend('list', 'configmaps', (action) =>
      // Only this test's namespace: other tests' informers may be relisting meanwhile.
      action.namespace === n && failures-- > 0
        ? { handled: true, error: apiErrors.internal('list failing') }
        : { handled: false },
    );
    const { informer } = start<V1ConfigMap>({ type: kinds.ConfigMap, namespace: n });
    await informer.waitForSync();
    remove();
    assert.equal(informer.stats.failures, 3);
    assert.equal(informer.stats.lists, 4);
    assert.ok(informer.get(`${n}/x`));
  });

  it('relists when the watch goes quiet for longer than the staleness limit (watchdog)', async () => {
    const n = await ns('inf-stale');
    await client.create(kinds.ConfigMap, configMap('s', n));
    const { informer } = start<V1ConfigMap>({ type: kinds.ConfigMap, namespace: n, stalenessMs: 100 });
    await informer.waitForSync();
    await eventually(() => informer.stats.staleRestarts >= 1 && informer.stats.lists >= 2, {
      what: 'a watchdog relist',
    });
    await client.create(kinds.ConfigMap, configMap('t', n));
    await eventually(() => informer.get(`${n}/t`), { what: 'still following changes' });
  });

  it('survives an API server restart, catching up on what changed meanwhile', async () => {
    const n = await ns('inf-restart');
    await client.create(kinds.ConfigMap, configMap('old', n));
    const { informer, rec } = start<V1ConfigMap>({ type: kinds.ConfigMap, namespace: n });
    await informer.waitForSync();
    await k.sim.stop();
    k.em.create({ ...configMap('while-down', n) });
    k.em.delete('v1', 'configmaps', n, 'old');
    await k.sim.start({ keepState: true });
    await eventually(() => informer.get(`${n}/while-down`) && !informer.get(`${n}/old`), {
      timeoutMs: 10_000,
      what: 'changes made while the server was down',
    });
    assert.ok(rec.deletes.some((d) => d.metadata?.name === 'old'));
  });
});
