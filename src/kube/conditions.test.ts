import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import type { KubeClient } from './client.ts';
import {
  getCondition,
  isConditionTrue,
  removeCondition,
  setCondition,
  type Condition,
} from './conditions.ts';
import { StatusPatcher } from './patch.ts';
import { metaTime } from './time.ts';
import { kinds } from './resource.ts';
import { GADGET, gadgetCRD, testClient, type Gadget } from './testing/env.ts';

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);
const T1 = T0 + 60_000;
const T2 = T0 + 120_000;

describe('conditions (metav1.Condition semantics)', () => {
  it('lastTransitionTime changes only when the status flips', () => {
    const list: Condition[] = [];
    assert.equal(
      setCondition(
        list,
        { type: 'Ready', status: 'False', reason: 'LoadBalancerPending', observedGeneration: 1 },
        T0,
      ),
      true,
    );
    assert.equal(list[0]?.lastTransitionTime, '2025-01-01T12:00:00Z');
    assert.equal(
      setCondition(
        list,
        { type: 'Ready', status: 'False', reason: 'LoadBalancerPending', observedGeneration: 1 },
        T1,
      ),
      false,
      'same input: no change',
    );
    assert.equal(
      setCondition(
        list,
        {
          type: 'Ready',
          status: 'False',
          reason: 'FloatingIPPending',
          message: 'waiting for a FIP',
          observedGeneration: 2,
        },
        T1,
      ),
      true,
    );
    assert.deepEqual(
      list[0],
      {
        type: 'Ready',
        status: 'False',
        observedGeneration: 2,
        lastTransitionTime: metaTime(T0),
        reason: 'FloatingIPPending',
        message: 'waiting for a FIP',
      },
      'reason, message and observedGeneration change; the transition time does not',
    );
    assert.equal(
      setCondition(
        list,
        { type: 'Ready', status: 'True', reason: 'LoadBalancerReady', observedGeneration: 2 },
        T2,
      ),
      true,
    );
    assert.equal(list[0]?.lastTransitionTime, metaTime(T2));
    assert.ok(isConditionTrue(list, 'Ready'));
    assert.equal(getCondition(list, 'Missing'), undefined);
    assert.equal(removeCondition(list, 'Ready'), true);
    assert.equal(list.length, 0);
  });

  it('refuses reasons and types the API would reject', () => {
    assert.throws(
      () => setCondition([], { type: 'Ready', status: 'True', reason: 'not camel case' }),
      /CamelCase/,
    );
    assert.throws(
      () => setCondition([], { type: 'bad type!', status: 'True', reason: 'Ok' }),
      /condition type/,
    );
    assert.throws(() => setCondition([], { type: 'Ready', status: 'Yes' as never, reason: 'Ok' }), /status/);
  });
});

describe('StatusPatcher against the emulator', () => {
  let k: TestKube;
  let client: KubeClient;
  before(async () => {
    k = await startTestKube();
    client = testClient(k.kubeconfigPath);
    await client.create(kinds.CustomResourceDefinition, gadgetCRD());
    await client.create(kinds.Namespace, { metadata: { name: 'cond' } });
  });
  after(async () => {
    await client.close();
    await k.close();
  });

  it('writes one status patch when something changed, none otherwise, and the server keeps the semantics', async () => {
    let g: Gadget = await client.create(GADGET, {
      metadata: { name: 'g', namespace: 'cond' },
      spec: { size: 1 },
    });
    let writes = 0;
    const stop = k.em.reactors.prepend('patch', 'gadgets/status', () => {
      writes++;
      return { handled: false };
    });
    const step = async (status: 'True' | 'False', reason: string, now: number) => {
      const p = new StatusPatcher(g);
      p.draft.status ??= {};
      p.draft.status.conditions ??= [];
      setCondition(
        p.draft.status.conditions,
        { type: 'Ready', status, reason, observedGeneration: g.metadata?.generation },
        now,
      );
      p.draft.status.observedGeneration = g.metadata?.generation;
      g = await p.patch(client, GADGET);
    };
    await step('False', 'Provisioning', T0);
    await step('False', 'Provisioning', T1);
    assert.equal(writes, 1, 'an unchanged status is not written');
    await step('True', 'Provisioned', T2);
    assert.equal(writes, 2);
    const stored = await client.get(GADGET, { namespace: 'cond', name: 'g' });
    const ready = getCondition(stored.status?.conditions, 'Ready');
    assert.equal(ready?.status, 'True');
    assert.equal(ready?.lastTransitionTime, metaTime(T2));
    assert.equal(ready?.observedGeneration, 1);
    assert.equal(stored.status?.observedGeneration, 1);
    stop();
  });
});
