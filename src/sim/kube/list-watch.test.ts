import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configMap, startTestKube, type TestKube } from './testing/harness.ts';

const NS = '/api/v1/namespaces';

async function makeNamespace(k: TestKube, name: string): Promise<string> {
  await k.req('POST', NS, { metadata: { name } });
  return `${NS}/${name}/configmaps`;
}

describe('kube emulator: list and watch', () => {
  let k: TestKube;
  before(async () => (k = await startTestKube({ bookmarkIntervalMs: 50 })));
  after(async () => k.close());

  it('filters lists by label selectors with every operator', async () => {
    const CM = await makeNamespace(k, 'labels');
    const objs: [string, Record<string, string>][] = [
      ['a', { app: 'web', tier: 'front' }],
      ['b', { app: 'web', tier: 'back' }],
      ['c', { app: 'db' }],
      ['d', {}],
    ];
    for (const [name, labels] of objs) await k.req('POST', CM, configMap(name, {}, { labels }));
    const names = async (sel: string) =>
      (await k.req('GET', `${CM}?labelSelector=${encodeURIComponent(sel)}`)).body.items.map(
        (i: any) => i.metadata.name,
      );
    assert.deepEqual(await names('app=web'), ['a', 'b']);
    assert.deepEqual(await names('app==web'), ['a', 'b']);
    assert.deepEqual(await names('app!=web'), ['c', 'd']);
    assert.deepEqual(await names('tier in (front,back)'), ['a', 'b']);
    assert.deepEqual(await names('app notin (web)'), ['c', 'd']);
    assert.deepEqual(await names('tier'), ['a', 'b']);
    assert.deepEqual(await names('!tier'), ['c', 'd']);
    assert.deepEqual(await names('app=web,tier!=back'), ['a']);
    const bad = await k.req('GET', `${CM}?labelSelector=${encodeURIComponent('app in web')}`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.reason, 'BadRequest');
  });

  it('filters by field selectors, per kind, and rejects unsupported fields', async () => {
    const CM = await makeNamespace(k, 'fields');
    await k.req('POST', CM, configMap('x'));
    await k.req('POST', CM, configMap('y'));
    const byName = await k.req('GET', `${CM}?fieldSelector=metadata.name%3Dy`);
    assert.deepEqual(
      byName.body.items.map((i: any) => i.metadata.name),
      ['y'],
    );
    const notName = await k.req('GET', `${CM}?fieldSelector=metadata.name!%3Dy`);
    assert.deepEqual(
      notName.body.items.map((i: any) => i.metadata.name),
      ['x'],
    );
    const allNs = await k.req('GET', `/api/v1/configmaps?fieldSelector=metadata.namespace%3Dfields`);
    assert.equal(allNs.body.items.length, 2);
    const bad = await k.req('GET', `${CM}?fieldSelector=spec.foo%3Dbar`);
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, 'field label not supported: spec.foo');
    await k.req('POST', '/api/v1/nodes', { metadata: { name: 'cordoned' }, spec: { unschedulable: true } });
    await k.req('POST', '/api/v1/nodes', { metadata: { name: 'open' } });
    const cordoned = await k.req('GET', '/api/v1/nodes?fieldSelector=spec.unschedulable%3Dtrue');
    assert.deepEqual(
      cordoned.body.items.map((i: any) => i.metadata.name),
      ['cordoned'],
    );
    const S = `${NS}/fields/secrets`;
    await k.req('POST', S, {
      metadata: { name: 'tls' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': '', 'tls.key': '' },
    });
    await k.req('POST', S, { metadata: { name: 'plain' } });
    const tls = await k.req('GET', `${S}?fieldSelector=type%3Dkubernetes.io/tls`);
    assert.deepEqual(
      tls.body.items.map((i: any) => i.metadata.name),
      ['tls'],
    );
  });

  it('pages with limit/continue, counts what remains, and omits kind on built-in items', async () => {
    const CM = await makeNamespace(k, 'pages');
    for (let i = 0; i < 7; i++) await k.req('POST', CM, configMap(`p${i}`));
    const p1 = await k.req('GET', `${CM}?limit=3`);
    assert.equal(p1.body.kind, 'ConfigMapList');
    assert.equal(p1.body.items.length, 3);
    assert.equal(p1.body.items[0].kind, undefined);
    assert.equal(p1.body.metadata.remainingItemCount, 4);
    assert.ok(p1.body.metadata.continue);
    // Writes after the first page do not show in later pages: they read the same snapshot.
    await k.req('POST', CM, configMap('p9-late'));
    await k.req('DELETE', `${CM}/p5`);
    const p2 = await k.req('GET', `${CM}?limit=3&continue=${encodeURIComponent(p1.body.metadata.continue)}`);
    const p3 = await k.req('GET', `${CM}?limit=3&continue=${encodeURIComponent(p2.body.metadata.continue)}`);
    const all = [...p1.body.items, ...p2.body.items, ...p3.body.items].map((i: any) => i.metadata.name);
    assert.deepEqual(all, ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6']);
    assert.equal(p3.body.metadata.continue, undefined);
    assert.equal(p2.body.metadata.resourceVersion, p1.body.metadata.resourceVersion);
  });

  it('answers 410 Expired for a continue token whose snapshot was compacted', async () => {
    const CM = await makeNamespace(k, 'expire');
    for (let i = 0; i < 4; i++) await k.req('POST', CM, configMap(`e${i}`));
    const p1 = await k.req('GET', `${CM}?limit=2`);
    await k.req('POST', CM, configMap('e9'));
    k.em.compact();
    const p2 = await k.req('GET', `${CM}?limit=2&continue=${encodeURIComponent(p1.body.metadata.continue)}`);
    assert.equal(p2.status, 410);
    assert.equal(p2.body.reason, 'Expired');
    assert.match(p2.body.message, /The provided continue parameter is too old/);
    assert.ok(p2.body.metadata.continue, 'an inconsistent continue token is offered');
    const rest = await k.req(
      'GET',
      `${CM}?limit=10&continue=${encodeURIComponent(p2.body.metadata.continue)}`,
    );
    assert.equal(rest.status, 200);
    assert.deepEqual(
      rest.body.items.map((i: any) => i.metadata.name),
      ['e2', 'e3', 'e9'],
    );
  });

  it('watches from a resourceVersion: history replay, then live events, in order', async () => {
    const CM = await makeNamespace(k, 'watch');
    const c = await k.req('POST', CM, configMap('w', { v: '0' }));
    const rv = c.body.metadata.resourceVersion;
    await k.req('PATCH', `${CM}/w`, { data: { v: '1' } }, { contentType: 'application/merge-patch+json' });
    const w = await k.watch(`${CM}?watch=true&resourceVersion=${rv}`);
    assert.equal(w.status, 200);
    const replay = await w.next();
    assert.equal(replay.type, 'MODIFIED');
    assert.equal(replay.object.data.v, '1');
    assert.equal(replay.object.kind, 'ConfigMap', 'watch objects carry their kind');
    await k.req('DELETE', `${CM}/w`);
    const del = await w.next();
    assert.equal(del.type, 'DELETED');
    assert.ok(Number(del.object.metadata.resourceVersion) > Number(replay.object.metadata.resourceVersion));
    w.close();
  });

  it('starts a watch without resourceVersion with ADDED events for what exists', async () => {
    const CM = await makeNamespace(k, 'initial');
    await k.req('POST', CM, configMap('one'));
    await k.req('POST', CM, configMap('two'));
    const w = await k.watch(`${CM}?watch=1`);
    assert.deepEqual(
      [(await w.next()).object.metadata.name, (await w.next()).object.metadata.name],
      ['one', 'two'],
    );
    w.close();
  });

  it('turns selector transitions into ADDED and DELETED', async () => {
    const CM = await makeNamespace(k, 'transit');
    const c = await k.req('POST', CM, configMap('t', {}, { labels: { on: 'no' } }));
    const w = await k.watch(
      `${CM}?watch=true&labelSelector=on%3Dyes&resourceVersion=${c.body.metadata.resourceVersion}`,
    );
    const patch = (v: string) =>
      k.req(
        'PATCH',
        `${CM}/t`,
        { metadata: { labels: { on: v } } },
        { contentType: 'application/merge-patch+json' },
      );
    await patch('yes');
    assert.equal((await w.next()).type, 'ADDED');
    await k.req('PATCH', `${CM}/t`, { data: { x: '1' } }, { contentType: 'application/merge-patch+json' });
    assert.equal((await w.next()).type, 'MODIFIED');
    await patch('no');
    const left = await w.next();
    assert.equal(left.type, 'DELETED');
    assert.equal(left.object.metadata.labels.on, 'no');
    w.close();
  });

  it('one change to watchers asking differently: each its own event type and form', async () => {
    const CM = await makeNamespace(k, 'forms');
    const c = await k.req('POST', CM, configMap('f', { v: '0' }, { labels: { on: 'no' } }));
    const rv = c.body.metadata.resourceVersion;
    const all = await k.watch(`${CM}?watch=true&resourceVersion=${rv}`);
    const selected = await k.watch(`${CM}?watch=true&labelSelector=on%3Dyes&resourceVersion=${rv}`);
    const meta = await k.raw(`${CM}?watch=true&resourceVersion=${rv}`, {
      accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
    });
    await k.req(
      'PATCH',
      `${CM}/f`,
      { metadata: { labels: { on: 'yes' } }, data: { v: '1' } },
      { contentType: 'application/merge-patch+json' },
    );
    const a = await all.next();
    const b = await selected.next();
    assert.deepEqual([a.type, b.type], ['MODIFIED', 'ADDED']);
    assert.deepEqual(a.object, b.object);
    assert.equal(a.object.data.v, '1');
    const reader = meta.body!.getReader();
    let text = '';
    while (!text.includes('\n')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    const m = JSON.parse(text.slice(0, text.indexOf('\n')));
    assert.equal(m.type, 'MODIFIED');
    assert.equal(m.object.kind, 'PartialObjectMetadata');
    assert.equal(m.object.data, undefined);
    assert.equal(m.object.metadata.resourceVersion, a.object.metadata.resourceVersion);
    await reader.cancel();
    all.close();
    selected.close();
  });

  it('sends BOOKMARK events when allowed, and the watch-list end marker', async () => {
    const CM = await makeNamespace(k, 'bookmarks');
    await k.req('POST', CM, configMap('b'));
    const w = await k.watch(
      `${CM}?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan`,
    );
    assert.equal((await w.next()).type, 'ADDED');
    const end = await w.next((e) => e.type === 'BOOKMARK');
    assert.equal(end.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
    assert.equal(end.object.kind, 'ConfigMap');
    const periodic = await w.next((e) => e.type === 'BOOKMARK');
    assert.match(periodic.object.metadata.resourceVersion, /^\d+$/);
    w.close();
    const invalid = await k.req('GET', `${CM}?watch=true&sendInitialEvents=true`);
    assert.equal(invalid.status, 422);
  });

  it('answers an expired resourceVersion with an ERROR event carrying 410 Expired, then ends', async () => {
    const CM = await makeNamespace(k, 'gone');
    const c = await k.req('POST', CM, configMap('g'));
    await k.req('PATCH', `${CM}/g`, { data: { a: '1' } }, { contentType: 'application/merge-patch+json' });
    k.em.compact();
    const w = await k.watch(`${CM}?watch=true&resourceVersion=${c.body.metadata.resourceVersion}`);
    const e = await w.next();
    assert.equal(e.type, 'ERROR');
    assert.equal(e.object.kind, 'Status');
    assert.equal(e.object.code, 410);
    assert.equal(e.object.reason, 'Expired');
    assert.match(e.object.message, /^too old resource version: \d+ \(\d+\)$/);
    await w.ended;
  });

  it('answers a resourceVersion from the future with 504 Timeout', async () => {
    const CM = await makeNamespace(k, 'future');
    const r = await k.req('GET', `${CM}?watch=true&resourceVersion=999999999`);
    assert.equal(r.status, 504);
    assert.equal(r.body.reason, 'Timeout');
    assert.match(r.body.message, /Too large resource version/);
  });

  it('ends a watch at its server-side timeout and when the emulator stops', async () => {
    const CM = await makeNamespace(k, 'timeout');
    const w = await k.watch(`${CM}?watch=true&timeoutSeconds=1`);
    await w.ended;
    const w2 = await k.watch(`${CM}?watch=true`);
    k.em.close();
    await w2.ended;
  });

  it('watches a single object by metadata.name, as kubectl get -w and delete --wait do', async () => {
    const CM = await makeNamespace(k, 'single');
    await k.req('POST', CM, configMap('other'));
    const c = await k.req('POST', CM, configMap('mine'));
    const w = await k.watch(
      `${CM}?watch=true&fieldSelector=metadata.name%3Dmine&resourceVersion=${c.body.metadata.resourceVersion}`,
    );
    await k.req(
      'PATCH',
      `${CM}/other`,
      { data: { a: '1' } },
      { contentType: 'application/merge-patch+json' },
    );
    await k.req('PATCH', `${CM}/mine`, { data: { a: '1' } }, { contentType: 'application/merge-patch+json' });
    const e = await w.next();
    assert.equal(e.object.metadata.name, 'mine');
    w.close();
  });
});
