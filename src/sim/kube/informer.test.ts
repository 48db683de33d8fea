import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { configMap, eventually, startTestKube, type TestKube } from './testing/harness.ts';

const NS = 'informed';

describe('kube emulator: @kubernetes/client-node informer', () => {
  let k: TestKube;
  let informer: k8s.Informer<k8s.V1ConfigMap> & k8s.ObjectCache<k8s.V1ConfigMap>;
  let core: k8s.CoreV1Api;
  let stopped = false;
  const restarts: NodeJS.Timeout[] = [];

  /** What the API server holds, by name and resourceVersion. */
  const serverView = async () => {
    const list = await core.listNamespacedConfigMap({ namespace: NS });
    return list.items.map((c) => `${c.metadata?.name}@${c.metadata?.resourceVersion}`).sort();
  };
  const cacheView = () =>
    informer
      .list(NS)
      .map((c) => `${c.metadata?.name}@${c.metadata?.resourceVersion}`)
      .sort();
  const inSync = async () => {
    const server = await serverView();
    return JSON.stringify(server) === JSON.stringify(cacheView()) ? server : undefined;
  };

  before(async () => {
    k = await startTestKube();
    await k.req('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(k.kubeconfigPath);
    core = kc.makeApiClient(k8s.CoreV1Api);
    informer = k8s.makeInformer(kc, `/api/v1/namespaces/${NS}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace: NS }),
    );
    // client-node's informer stops on connection errors; restarting it is the documented remedy.
    informer.on('error', () => {
      if (stopped) return;
      const t = setTimeout(() => void informer.start().catch(() => undefined), 100);
      restarts.push(t);
    });
    await informer.start();
  });
  after(async () => {
    stopped = true;
    for (const t of restarts) clearTimeout(t);
    await informer.stop();
    await k.close();
  });

  it('keeps its cache in sync through creates, updates and deletes', async () => {
    for (const n of ['a', 'b', 'c'])
      await core.createNamespacedConfigMap({ namespace: NS, body: configMap(n, { v: '0' }) });
    await core.patchNamespacedConfigMap(
      { namespace: NS, name: 'b', body: { data: { v: '1' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await core.deleteNamespacedConfigMap({ namespace: NS, name: 'c' });
    const view = await eventually(inSync, { what: 'informer in sync' });
    assert.deepEqual(
      view.map((v) => v.split('@')[0]),
      ['a', 'b'],
    );
    assert.equal(informer.get('b', NS)?.data?.v, '1');
  });

  it('relists after a forced 410 and stays in sync', async () => {
    let lists = 0;
    const count = k.em.reactors.prepend('list', 'configmaps', () => {
      lists++;
      return { handled: false };
    });
    await core.createNamespacedConfigMap({ namespace: NS, body: configMap('before-410') });
    await eventually(inSync);
    // Compaction makes the informer's resourceVersion too old; ending the watch makes it resume.
    k.em.compact();
    k.em.watches.closeAll();
    await eventually(() => lists > 0, { what: 'a relist after 410' });
    await core.createNamespacedConfigMap({ namespace: NS, body: configMap('after-410') });
    const view = await eventually(inSync, { what: 'in sync after 410' });
    assert.ok(view.some((v) => v.startsWith('after-410@')));
    count();
  });

  it('survives an emulator restart, catching up on changes made while it was down', async () => {
    await k.sim.stop();
    k.em.create({ ...configMap('during-downtime'), metadata: { name: 'during-downtime', namespace: NS } });
    k.em.delete('v1', 'configmaps', NS, 'a');
    await k.sim.start({ keepState: true });
    const view = await eventually(inSync, { timeoutMs: 10_000, what: 'in sync after restart' });
    assert.ok(view.some((v) => v.startsWith('during-downtime@')));
    assert.ok(!view.some((v) => v.startsWith('a@')));
  });

  it('survives a restart without state: resourceVersions jump, the informer relists, deletes are seen', async () => {
    await k.sim.restart({ keepState: false });
    await k.req('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    await core.createNamespacedConfigMap({ namespace: NS, body: configMap('fresh') });
    const view = await eventually(inSync, { timeoutMs: 10_000, what: 'in sync after a reset' });
    assert.deepEqual(
      view.map((v) => v.split('@')[0]),
      ['fresh'],
    );
  });
});
