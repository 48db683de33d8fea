import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { V1ConfigMap, V1Node } from '@kubernetes/client-node';
import { eventually, startTestKube, type TestKube } from '../../sim/kube/testing/harness.ts';
import type { KubeClient } from '../client.ts';
import { RetryAfterError, TerminalError } from '../errors.ts';
import { Manager } from '../manager/manager.ts';
import { setControllerReference } from '../owner.ts';
import { generationChanged } from '../predicate.ts';
import { ItemExponentialFailureRateLimiter } from '../ratelimit.ts';
import type { ReconcileFunc } from '../reconcile/types.ts';
import { keyString, kinds, type KubernetesObject, type ResourceType } from '../resource.ts';
import { configMap, GADGET, gadgetCRD, gate, kubeConfigFrom, testClient } from '../testing/env.ts';
import type { Controller } from './controller.ts';

describe('controllers against the emulator', () => {
  let k: TestKube;
  let client: KubeClient;
  const running: { stop: () => Promise<void> }[] = [];

  before(async () => {
    k = await startTestKube();
    client = testClient(k.kubeconfigPath);
    await client.create(kinds.CustomResourceDefinition, gadgetCRD());
  });
  after(async () => {
    for (const r of running) await r.stop();
    await client.close();
    await k.close();
  });

  /** A manager over one namespace, started in the background. */
  const manager = async (namespace: string) => {
    await client.create(kinds.Namespace, { metadata: { name: namespace } });
    const mgr = new Manager({
      name: `test-${namespace}`,
      kubeConfig: kubeConfigFrom(k.kubeconfigPath),
      qps: 0,
      namespace,
    });
    const run = () => {
      const ac = new AbortController();
      const done = mgr.start(ac.signal);
      const r = {
        stop: async () => {
          ac.abort();
          await done;
        },
      };
      running.push(r);
      return r;
    };
    return { mgr, run };
  };

  /** Nothing queued, waiting or in flight. */
  const idle = (c: Controller) =>
    c.queue.len() === 0 && c.queue.inFlight() === 0 && c.queue.waitingCount() === 0;

  /** The controller has seen the write that produced `obj` and has nothing left to do. */
  const settled = async (mgr: Manager, c: Controller, type: ResourceType, obj: KubernetesObject) => {
    const key = keyString({ namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '' });
    await eventually(
      () =>
        mgr.informers.informerFor(type).get(key)?.metadata?.resourceVersion ===
          obj.metadata?.resourceVersion && idle(c),
      { what: `controller settled after ${key}@${obj.metadata?.resourceVersion}` },
    );
  };

  it('reconciles once per change, and a burst of changes during a reconcile once more (dedup)', async () => {
    const ns = 'ctl-dedup';
    const { mgr, run } = await manager(ns);
    const calls = new Map<string, number>();
    const hold = gate();
    const c = mgr
      .controller()
      .for(kinds.ConfigMap)
      .complete(async (req) => {
        calls.set(req.name, (calls.get(req.name) ?? 0) + 1);
        if (req.name === 'burst' && calls.get('burst') === 1) await hold.promise;
      });
    run();

    let cm = await client.create(kinds.ConfigMap, configMap('single', ns));
    await settled(mgr, c, kinds.ConfigMap, cm);
    assert.equal(calls.get('single'), 1);
    cm = await client.patch(kinds.ConfigMap, { namespace: ns, name: 'single' }, 'merge', {
      data: { a: '1' },
    });
    await settled(mgr, c, kinds.ConfigMap, cm);
    assert.equal(calls.get('single'), 2, 'one more reconcile per change');

    cm = await client.create(kinds.ConfigMap, configMap('burst', ns));
    await eventually(() => calls.get('burst') === 1, { what: 'the first reconcile to start' });
    for (let i = 0; i < 20; i++) {
      cm = await client.patch(kinds.ConfigMap, { namespace: ns, name: 'burst' }, 'merge', {
        data: { i: String(i) },
      });
    }
    await eventually(
      () =>
        mgr.informers.informerFor(kinds.ConfigMap).get(`${ns}/burst`)?.metadata?.resourceVersion ===
        cm.metadata?.resourceVersion,
    );
    assert.equal(c.queue.len(), 0, 'the key is held by a worker, so the burst waits as one dirty entry');
    hold.open();
    await settled(mgr, c, kinds.ConfigMap, cm);
    assert.equal(calls.get('burst'), 2, '20 changes during the first reconcile → exactly one more');
  });

  it('never reconciles one key in two workers at once, while using several workers', async () => {
    const ns = 'ctl-exclusive';
    const { mgr, run } = await manager(ns);
    const active = new Map<string, number>();
    let maxPerKey = 0;
    let activeTotal = 0;
    let maxTotal = 0;
    let reconciles = 0;
    const allBusy = gate();
    const c = mgr
      .controller()
      .for(kinds.ConfigMap)
      .withOptions({ maxConcurrentReconciles: 4 })
      .complete(async (req) => {
        reconciles++;
        const n = (active.get(req.name) ?? 0) + 1;
        active.set(req.name, n);
        activeTotal++;
        maxPerKey = Math.max(maxPerKey, n);
        maxTotal = Math.max(maxTotal, activeTotal);
        // The first reconciles hold their workers until all four are busy at once.
        if (activeTotal === 4) allBusy.open();
        await allBusy.promise;
        await sleep(1);
        active.set(req.name, (active.get(req.name) ?? 1) - 1);
        activeTotal--;
      });
    run();
    const names = Array.from({ length: 8 }, (_, i) => `k${i}`);
    let last: V1ConfigMap | undefined;
    for (const name of names) last = await client.create(kinds.ConfigMap, configMap(name, ns));
    for (let round = 0; round < 10; round++) {
      await Promise.all(
        names.map(async (name) => {
          last = await client.patch(kinds.ConfigMap, { namespace: ns, name }, 'merge', {
            data: { round: String(round) },
          });
        }),
      );
    }
    const final = await client.list(kinds.ConfigMap, { namespace: ns });
    for (const cm of final.items) await settled(mgr, c, kinds.ConfigMap, cm);
    assert.ok(last);
    assert.equal(maxPerKey, 1, 'one worker per key');
    assert.equal(maxTotal, 4, 'four workers ran at once');
    assert.ok(
      reconciles >= names.length && reconciles <= names.length * 11,
      `at most one reconcile per change: ${reconciles} for ${names.length * 11} changes`,
    );
  });

  it('retries errors with per-key back-off, resets it on success, and never retries a terminal error', async () => {
    const ns = 'ctl-backoff';
    const { mgr, run } = await manager(ns);
    const retriesSeen: number[] = [];
    let doomed = 0;
    const reconcile: ReconcileFunc = (req, _signal, ctx) => {
      if (req.name === 'doomed') {
        doomed++;
        return Promise.reject(new TerminalError('spec.size must be positive', { reason: 'InvalidSpec' }));
      }
      retriesSeen.push(ctx.retries);
      if (ctx.retries < 3) return Promise.reject(new Error(`transient failure ${ctx.retries}`));
      return Promise.resolve({});
    };
    const c = mgr
      .controller()
      .for(kinds.ConfigMap)
      .withOptions({ rateLimiter: new ItemExponentialFailureRateLimiter(1, 20) })
      .complete(reconcile);
    run();
    const flaky = await client.create(kinds.ConfigMap, configMap('flaky', ns));
    await settled(mgr, c, kinds.ConfigMap, flaky);
    assert.deepEqual(retriesSeen, [0, 1, 2, 3], 'each retry sees one more failure');
    assert.equal(c.queue.numRequeues(`${ns}/flaky`), 0, 'success forgets the failures');

    const d = await client.create(kinds.ConfigMap, configMap('doomed', ns));
    await settled(mgr, c, kinds.ConfigMap, d);
    assert.equal(doomed, 1, 'a terminal error is not retried');
    assert.equal(c.stats.terminalErrors, 1);
    assert.equal(c.queue.numRequeues(`${ns}/doomed`), 0);
  });

  it('requeues after requeueAfterMs and after a RetryAfterError without any change', async () => {
    const ns = 'ctl-requeue';
    const { mgr, run } = await manager(ns);
    const calls = new Map<string, number>();
    const c = mgr
      .controller()
      .for(kinds.ConfigMap)
      .complete((req) => {
        const n = (calls.get(req.name) ?? 0) + 1;
        calls.set(req.name, n);
        if (req.name === 'poll') return Promise.resolve(n < 3 ? { requeueAfterMs: 10 } : {});
        if (n === 1) return Promise.reject(new RetryAfterError('load balancer PENDING_UPDATE', 10));
        return Promise.resolve();
      });
    run();
    const a = await client.create(kinds.ConfigMap, configMap('poll', ns));
    const b = await client.create(kinds.ConfigMap, configMap('pending', ns));
    await settled(mgr, c, kinds.ConfigMap, a);
    await settled(mgr, c, kinds.ConfigMap, b);
    assert.equal(calls.get('poll'), 3);
    assert.equal(calls.get('pending'), 2);
    assert.equal(c.stats.requeuesAfter, 2);
  });

  it('drops a requeue an earlier reconcile asked for once a later one succeeds without one', async () => {
    const ns = 'ctl-superseded';
    const { mgr, run } = await manager(ns);
    let calls = 0;
    const c = mgr
      .controller()
      .for(kinds.ConfigMap)
      // The first look asks for another in a minute; the change below is seen at once and is final.
      .complete(() => Promise.resolve(++calls === 1 ? { requeueAfterMs: 60_000 } : {}));
    run();
    const done = (n: number) => () => calls === n && c.queue.len() === 0 && c.queue.inFlight() === 0;
    await client.create(kinds.ConfigMap, configMap('late', ns));
    await eventually(done(1), { what: 'the first reconcile' });
    assert.equal(c.queue.waitingCount(), 1, 'the first reconcile asked for a requeue');
    await client.patch(kinds.ConfigMap, { namespace: ns, name: 'late' }, 'merge', {
      data: { changed: 'yes' },
    });
    await eventually(done(2), { what: 'the reconcile of the change' });
    assert.equal(c.queue.waitingCount(), 0, 'the old requeue would only repeat the last reconcile');
  });

  it('for/owns/watches with predicates: spec changes, owned children and mapped objects wake the owner', async () => {
    const ns = 'ctl-graph';
    const { mgr, run } = await manager(ns);
    const woke: string[] = [];
    const c = mgr
      .controller()
      .for(GADGET, { predicates: [generationChanged()] })
      .owns(kinds.ConfigMap)
      .watches(kinds.Node, (node: V1Node) => {
        const g = node.metadata?.labels?.gadget;
        return g ? [{ namespace: ns, name: g }] : [];
      })
      .complete((req) => {
        woke.push(req.name);
        return Promise.resolve();
      });
    run();
    const since = (n: number) => woke.slice(n);

    let g = await client.create(GADGET, { metadata: { name: 'g1', namespace: ns }, spec: { size: 1 } });
    await settled(mgr, c, GADGET, g);
    assert.deepEqual(woke, ['g1']);

    let mark = woke.length;
    g = await client.patch(
      GADGET,
      { namespace: ns, name: 'g1' },
      'merge',
      { status: { phase: 'Ready' } },
      { subresource: 'status' },
    );
    await settled(mgr, c, GADGET, g);
    assert.deepEqual(since(mark), [], 'a status-only update does not pass generationChanged');

    g = await client.patch(GADGET, { namespace: ns, name: 'g1' }, 'merge', { spec: { size: 2 } });
    await settled(mgr, c, GADGET, g);
    assert.deepEqual(since(mark), ['g1'], 'a spec change does');

    mark = woke.length;
    const child = configMap('g1-config', ns);
    setControllerReference(g, child);
    const created = await client.create(kinds.ConfigMap, child);
    await settled(mgr, c, kinds.ConfigMap, created);
    const orphan = await client.create(kinds.ConfigMap, configMap('unrelated', ns));
    await settled(mgr, c, kinds.ConfigMap, orphan);
    assert.deepEqual(
      since(mark),
      ['g1'],
      'an owned child wakes its controller owner; an unowned one wakes nobody',
    );

    mark = woke.length;
    const node = await client.create(kinds.Node, {
      metadata: { name: 'worker-g1', labels: { gadget: 'g1' } },
    });
    await settled(mgr, c, kinds.Node, node);
    assert.deepEqual(since(mark), ['g1'], 'watches() maps a Node to its gadget');
  });

  it('a namespaced source watches its namespace only, and the cached read of it starts no cluster-wide informer', async () => {
    for (const name of ['scoped-a', 'scoped-b']) await client.create(kinds.Namespace, { metadata: { name } });
    const mgr = new Manager({ name: 'test-scoped', kubeConfig: kubeConfigFrom(k.kubeconfigPath), qps: 0 });
    const woke: string[] = [];
    const c = mgr
      .controller('scoped')
      .watches(kinds.ConfigMap, (cm: V1ConfigMap) => [{ name: cm.metadata!.name! }], {
        namespace: 'scoped-a',
      })
      .complete((req) => {
        woke.push(req.name);
        return Promise.resolve();
      });
    const ac = new AbortController();
    const done = mgr.start(ac.signal);
    running.push({ stop: async () => (ac.abort(), await done) });
    await client.create(kinds.ConfigMap, configMap('in-b', 'scoped-b'));
    const inA = await client.create(kinds.ConfigMap, configMap('in-a', 'scoped-a'));
    const scope = { informer: { namespace: 'scoped-a' } };
    await eventually(
      async () =>
        (await mgr.client.get(kinds.ConfigMap, { namespace: 'scoped-a', name: 'in-a' }, scope))?.metadata
          ?.resourceVersion === inA.metadata?.resourceVersion && idle(c),
      { what: 'in-a seen' },
    );
    assert.deepEqual(woke, ['in-a']);
    assert.equal(
      await mgr.client.get(kinds.ConfigMap, { namespace: 'scoped-b', name: 'in-b' }, scope),
      undefined,
    );
    const configMapInformers = mgr.informers.all().filter((i) => i.type.kind === 'ConfigMap');
    assert.equal(configMapInformers.length, 1, 'one informer, the namespaced one');
  });
});
