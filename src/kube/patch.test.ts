import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import type { KubeClient } from './client.ts';
import { isConflict } from './errors.ts';
import { deepFreeze } from './cache/store.ts';
import { clone, createMergePatch, mergePatch } from './patch.ts';
import { kinds } from './resource.ts';
import { configMap, testClient } from './testing/env.ts';

describe('createMergePatch (RFC 7386)', () => {
  it('sends only what changed, null for what was removed, arrays whole', () => {
    const a = { metadata: { name: 'x', labels: { a: '1', b: '2' } }, spec: { ports: [1, 2], size: 1 } };
    const b = { metadata: { name: 'x', labels: { a: '1', c: '3' } }, spec: { ports: [1, 2, 3], size: 1 } };
    assert.deepEqual(createMergePatch(a, b), {
      metadata: { labels: { b: null, c: '3' } },
      spec: { ports: [1, 2, 3] },
    });
    assert.equal(createMergePatch(a, clone(a)), undefined);
  });

  it('clones frozen cache objects into mutable drafts', () => {
    const frozen = deepFreeze({ data: { a: '1' } });
    const draft = clone(frozen);
    draft.data.a = '2';
    assert.equal(frozen.data.a, '1');
  });
});

describe('mergePatch against the emulator', () => {
  let k: TestKube;
  let client: KubeClient;
  before(async () => {
    k = await startTestKube();
    client = testClient(k.kubeconfigPath);
    await client.create(kinds.Namespace, { metadata: { name: 'patch' } });
  });
  after(async () => {
    await client.close();
    await k.close();
  });

  it('with an optimistic lock, a patch from a stale read is refused (409)', async () => {
    const original = deepFreeze(await client.create(kinds.ConfigMap, configMap('p', 'patch', { a: '1' })));
    const mine = clone(original);
    mine.data = { ...mine.data, mine: 'yes' };
    const theirs = await client.patch(kinds.ConfigMap, { namespace: 'patch', name: 'p' }, 'merge', {
      data: { theirs: 'yes' },
    });
    const err = await mergePatch(client, kinds.ConfigMap, original, mine, { optimisticLock: true }).catch(
      (e: unknown) => e,
    );
    assert.ok(isConflict(err));
    const unlocked = await mergePatch(client, kinds.ConfigMap, original, mine);
    assert.deepEqual(
      unlocked.data,
      { a: '1', theirs: 'yes', mine: 'yes' },
      'without the lock, the merge keeps both',
    );
    assert.notEqual(unlocked.metadata?.resourceVersion, theirs.metadata?.resourceVersion);
    const same = await mergePatch(client, kinds.ConfigMap, unlocked, clone(unlocked), {
      optimisticLock: true,
    });
    assert.equal(same, unlocked, 'nothing to send: no request');
  });
});
