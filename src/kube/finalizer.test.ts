import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import type { KubeClient } from './client.ts';
import { ignoreNotFound, KubeApiError } from './errors.ts';
import { addFinalizer, hasFinalizer, removeFinalizer, withFinalizer } from './finalizer.ts';
import { Manager } from './manager/manager.ts';
import { kinds } from './resource.ts';
import { GADGET, gadgetCRD, kubeConfigFrom, testClient, type Gadget } from './testing/env.ts';

const NS = 'finalizers';
const FINALIZER = 'test.shiftstack.io/external';

describe('finalizers against the emulator', () => {
  let k: TestKube;
  let client: KubeClient;

  before(async () => {
    k = await startTestKube();
    client = testClient(k.kubeconfigPath);
    await client.create(kinds.CustomResourceDefinition, gadgetCRD());
    await client.create(kinds.Namespace, { metadata: { name: NS } });
  });
  after(async () => {
    await client.close();
    await k.close();
  });

  it('adds the finalizer before any external resource, cleans up on deletion, removes it last', async () => {
    /** The "cloud": what exists outside the cluster, by deterministic name. */
    const external = new Set<string>();
    const log: string[] = [];
    let cleanupCalls = 0;
    const mgr = new Manager({
      name: 'finalizer-test',
      kubeConfig: kubeConfigFrom(k.kubeconfigPath),
      qps: 0,
      namespace: NS,
    });
    mgr
      .controller()
      .for(GADGET)
      .complete(async (req, signal) => {
        const g = await mgr.client.get(GADGET, req, { signal });
        if (!g) return {};
        return withFinalizer(
          mgr.api,
          GADGET,
          g,
          FINALIZER,
          {
            apply: (obj) => {
              // The guarantee: by the time apply runs, the stored object carries the finalizer.
              log.push(`apply finalizer=${hasFinalizer(obj, FINALIZER)}`);
              external.add(`lb-${obj.metadata?.name}`);
              return Promise.resolve({});
            },
            cleanup: (obj) => {
              cleanupCalls++;
              log.push('cleanup');
              // The first pass waits for the cloud to finish deleting, as for an Octavia LB.
              if (cleanupCalls === 1) return Promise.resolve({ requeueAfterMs: 10 });
              external.delete(`lb-${obj.metadata?.name}`);
              return Promise.resolve({});
            },
          },
          signal,
        );
      });
    const ac = new AbortController();
    const done = mgr.start(ac.signal);

    await client.create(GADGET, { metadata: { name: 'g', namespace: NS }, spec: { size: 1 } });
    await eventually(() => external.has('lb-g'), { what: 'the external resource' });
    const stored = await client.get(GADGET, { namespace: NS, name: 'g' });
    assert.deepEqual(stored.metadata?.finalizers, [FINALIZER]);
    assert.ok(
      log.every((l) => l !== 'apply finalizer=false'),
      'apply never ran without the finalizer',
    );

    const marked = await client.delete(GADGET, { namespace: NS, name: 'g' });
    assert.ok(marked?.metadata?.deletionTimestamp, 'the finalizer holds the deletion');
    await eventually(
      async () => (await ignoreNotFound(client.get(GADGET, { namespace: NS, name: 'g' }))) === undefined,
      {
        what: 'the object to go once cleanup finished',
      },
    );
    assert.equal(external.size, 0, 'cleanup removed the external resource');
    assert.equal(cleanupCalls, 2, 'the finalizer stayed while cleanup was still waiting');
    assert.equal(log.at(-1), 'cleanup');
    ac.abort();
    await done;
  });

  it('never drops a finalizer someone else added meanwhile, and removes only its own', async () => {
    const g = await client.create(GADGET, { metadata: { name: 'shared', namespace: NS }, spec: { size: 1 } });
    // Another controller adds its finalizer after we read the object.
    await client.patch(GADGET, { namespace: NS, name: 'shared' }, 'merge', {
      metadata: { finalizers: ['other.example.com/x'] },
    });
    const stale = await addFinalizer(client, GADGET, g, FINALIZER).catch((e: unknown) => e);
    assert.ok(KubeApiError.is(stale) && stale.code === 422, 'the test operation fails on a changed list');
    let fresh: Gadget = await client.get(GADGET, { namespace: NS, name: 'shared' });
    fresh = await addFinalizer(client, GADGET, fresh, FINALIZER);
    assert.deepEqual(fresh.metadata?.finalizers, ['other.example.com/x', FINALIZER]);
    assert.equal(await addFinalizer(client, GADGET, fresh, FINALIZER), fresh, 'present already: no request');

    fresh = await removeFinalizer(client, GADGET, fresh, FINALIZER);
    assert.deepEqual(fresh.metadata?.finalizers, ['other.example.com/x']);
    await assert.rejects(addFinalizer(client, GADGET, fresh, 'no-domain'), TypeError);
  });
});
