import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { configMap, startTestKube, type TestKube } from './testing/harness.ts';

const CM = '/api/v1/namespaces/default/configmaps';

describe('kube emulator: object semantics over HTTP', () => {
  let k: TestKube;
  before(async () => (k = await startTestKube()));
  after(async () => k.close());

  it('authenticates with the bearer token: 401 for a wrong one, 403 for anonymous, /version public', async () => {
    const bad = await k.req('GET', CM, undefined, { token: 'nope' });
    assert.equal(bad.status, 401);
    assert.equal(bad.body.reason, 'Unauthorized');
    const anon = await k.req('GET', CM, undefined, { token: null });
    assert.equal(anon.status, 403);
    assert.equal(anon.body.reason, 'Forbidden');
    const version = await k.req('GET', '/version', undefined, { token: null });
    assert.equal(version.status, 200);
    assert.equal(version.body.major, '1');
  });

  it('keeps idle HTTP/1.1 connections 30 s and says so, so busy clients reuse them instead of reconnecting', async () => {
    const http1 = new Agent({ allowH2: false, connect: { ca: k.sim.caPem } });
    try {
      const r = await request(`${k.sim.url}/api/v1/namespaces/default`, {
        headers: { authorization: `Bearer ${k.sim.token}` },
        dispatcher: http1,
      });
      await r.body.dump();
      assert.equal(r.statusCode, 200);
      assert.equal(r.headers['keep-alive'], 'timeout=30');
    } finally {
      await http1.close();
    }
  });

  it('speaks HTTP/2 to a client that offers it: requests and a watch as streams of one connection', async () => {
    const session = connect(k.sim.url, { ca: k.sim.caPem });
    try {
      const get = (path: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const s = session.request({ ':path': path, authorization: `Bearer ${k.sim.token}` });
          let status = 0;
          let body = '';
          s.on('response', (h) => (status = Number(h[':status'])));
          s.setEncoding('utf8');
          s.on('data', (c: string) => (body += c));
          s.on('end', () => resolve({ status, body }));
          s.on('error', reject);
        });
      const watch = session.request({
        ':path': `${CM}?watch=true&fieldSelector=metadata.name%3Dh2`,
        authorization: `Bearer ${k.sim.token}`,
      });
      const headers = await new Promise<Record<string, unknown>>((resolve) =>
        watch.once('response', resolve),
      );
      assert.equal(headers[':status'], 200);
      assert.equal(headers['transfer-encoding'], undefined, 'HTTP/2 frames the stream itself');
      watch.setEncoding('utf8');
      const first = new Promise<string>((resolve) => watch.once('data', resolve));
      const [got, created] = await Promise.all([get(`${CM}/none`), k.req('POST', CM, configMap('h2', {}))]);
      assert.equal(got.status, 404);
      assert.equal(JSON.parse(got.body).reason, 'NotFound');
      assert.equal(created.status, 201);
      assert.ok((k.em.stats().http['2.0'] ?? 0) >= 2, 'counted as HTTP/2');
      const event = JSON.parse((await first).split('\n')[0]!);
      assert.equal(event.type, 'ADDED');
      assert.equal(event.object.metadata.name, 'h2');
      watch.close();
    } finally {
      session.close();
    }
  });

  it('stamps uid, creationTimestamp and resourceVersion on create, 201, and returns it on get', async () => {
    const r = await k.req('POST', CM, configMap('stamp', { a: '1' }));
    assert.equal(r.status, 201);
    assert.match(r.body.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.match(r.body.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(r.body.metadata.resourceVersion, /^\d+$/);
    assert.equal(r.body.metadata.generation, undefined, 'ConfigMaps keep no generation');
    const g = await k.req('GET', `${CM}/stamp`);
    assert.deepEqual(g.body.metadata.uid, r.body.metadata.uid);
    assert.equal(g.body.kind, 'ConfigMap');
    assert.equal(g.body.apiVersion, 'v1');
  });

  it('generates names from generateName', async () => {
    const r = await k.req('POST', CM, { metadata: { generateName: 'gen-' }, data: {} });
    assert.equal(r.status, 201);
    assert.match(r.body.metadata.name, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('answers NotFound, AlreadyExists and Invalid as metav1.Status with details', async () => {
    const nf = await k.req('GET', `${CM}/missing`);
    assert.equal(nf.status, 404);
    assert.deepEqual(nf.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "missing" not found',
      reason: 'NotFound',
      details: { name: 'missing', kind: 'configmaps' },
      code: 404,
    });
    await k.req('POST', CM, configMap('dup'));
    const dup = await k.req('POST', CM, configMap('dup'));
    assert.equal(dup.status, 409);
    assert.equal(dup.body.reason, 'AlreadyExists');
    assert.equal(dup.body.message, 'configmaps "dup" already exists');
    const bad = await k.req('POST', CM, configMap('Bad_Name'));
    assert.equal(bad.status, 422);
    assert.equal(bad.body.reason, 'Invalid');
    assert.equal(bad.body.details.kind, 'ConfigMap');
    assert.equal(bad.body.details.causes[0].field, 'metadata.name');
    assert.equal(bad.body.details.causes[0].reason, 'FieldValueInvalid');
    assert.match(
      bad.body.message,
      /^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/,
    );
    const noName = await k.req('POST', CM, { data: {} });
    assert.equal(noName.status, 422);
    assert.equal(noName.body.details.causes[0].message, 'Required value: name or generateName is required');
    const grouped = await k.req('GET', '/apis/apps/v1/namespaces/default/deployments/none');
    assert.equal(grouped.body.message, 'deployments.apps "none" not found');
    assert.deepEqual(grouped.body.details, { name: 'none', group: 'apps', kind: 'deployments' });
  });

  it('rejects a namespace mismatch, a missing namespace and a terminating one', async () => {
    const mismatch = await k.req('POST', CM, configMap('x', {}, { namespace: 'other' }));
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.body.reason, 'BadRequest');
    const missing = await k.req('POST', '/api/v1/namespaces/nowhere/configmaps', configMap('x'));
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'namespaces "nowhere" not found');
    await k.req('POST', '/api/v1/namespaces', { metadata: { name: 'dying' } });
    await k.req(
      'POST',
      '/api/v1/namespaces/dying/configmaps',
      configMap('held', {}, { finalizers: ['example.com/hold'] }),
    );
    await k.req('DELETE', '/api/v1/namespaces/dying');
    const late = await k.req('POST', '/api/v1/namespaces/dying/configmaps', configMap('late'));
    assert.equal(late.status, 403);
    assert.equal(late.body.reason, 'Forbidden');
    assert.match(
      late.body.message,
      /unable to create new content in namespace dying because it is being terminated/,
    );
    await k.req(
      'PATCH',
      '/api/v1/namespaces/dying/configmaps/held',
      { metadata: { finalizers: null } },
      { contentType: 'application/merge-patch+json' },
    );
  });

  it('bumps resourceVersion on every write and answers 409 Conflict to a stale update', async () => {
    const c = await k.req('POST', CM, configMap('occ', { v: '0' }));
    const rv0 = Number(c.body.metadata.resourceVersion);
    const u1 = await k.req('PUT', `${CM}/occ`, { ...c.body, data: { v: '1' } });
    assert.equal(u1.status, 200);
    assert.ok(Number(u1.body.metadata.resourceVersion) > rv0);
    const stale = await k.req('PUT', `${CM}/occ`, { ...c.body, data: { v: 'stale' } });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, 'Conflict');
    assert.equal(
      stale.body.message,
      'Operation cannot be fulfilled on configmaps "occ": the object has been modified; please apply your changes to the latest version and try again',
    );
    // No resourceVersion: an unconditional update, allowed for built-in kinds.
    const { resourceVersion: _rv, ...metaNoRv } = u1.body.metadata;
    const unconditional = await k.req('PUT', `${CM}/occ`, {
      ...u1.body,
      metadata: metaNoRv,
      data: { v: '2' },
    });
    assert.equal(unconditional.status, 200);
    // A no-op update changes nothing, not even the resourceVersion.
    const noop = await k.req('PUT', `${CM}/occ`, unconditional.body);
    assert.equal(noop.body.metadata.resourceVersion, unconditional.body.metadata.resourceVersion);
  });

  it('keeps uid and creationTimestamp across updates and rejects a name that differs from the URL', async () => {
    const c = await k.req('POST', CM, configMap('keep'));
    const u = await k.req('PUT', `${CM}/keep`, {
      ...c.body,
      metadata: { ...c.body.metadata, creationTimestamp: '2000-01-01T00:00:00Z' },
    });
    assert.equal(u.body.metadata.creationTimestamp, c.body.metadata.creationTimestamp);
    const wrong = await k.req('PUT', `${CM}/keep`, {
      ...c.body,
      metadata: { ...c.body.metadata, name: 'other' },
    });
    assert.equal(wrong.status, 400);
    assert.equal(
      wrong.body.message,
      'the name of the object (other) does not match the name on the URL (keep)',
    );
  });

  it('bumps generation on spec changes only, and separates the status subresource', async () => {
    const D = '/apis/apps/v1/namespaces/default/deployments';
    const dep = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', labels: { app: 'web' } },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'c', image: 'nginx:1' }] },
        },
      },
      status: { replicas: 99 },
    };
    const c = await k.req('POST', D, dep);
    assert.equal(c.status, 201, c.text);
    assert.equal(c.body.metadata.generation, 1);
    assert.deepEqual(c.body.status, {}, 'status is reset on create');
    assert.equal(c.body.spec.replicas, 1, 'defaulted');
    const labels = await k.req(
      'PATCH',
      `${D}/web`,
      { metadata: { labels: { x: 'y' } } },
      { contentType: 'application/merge-patch+json' },
    );
    assert.equal(labels.body.metadata.generation, 1, 'metadata changes keep the generation');
    const spec = await k.req(
      'PATCH',
      `${D}/web`,
      { spec: { replicas: 3 } },
      { contentType: 'application/merge-patch+json' },
    );
    assert.equal(spec.body.metadata.generation, 2);
    const ignored = await k.req(
      'PATCH',
      `${D}/web`,
      { status: { replicas: 3 } },
      { contentType: 'application/merge-patch+json' },
    );
    assert.deepEqual(ignored.body.status, {}, 'the main resource ignores status');
    const status = await k.req(
      'PATCH',
      `${D}/web/status`,
      { status: { replicas: 3 }, spec: { replicas: 9 } },
      { contentType: 'application/merge-patch+json' },
    );
    assert.equal(status.body.status.replicas, 3);
    assert.equal(status.body.spec.replicas, 3, '/status ignores spec');
    assert.equal(status.body.metadata.generation, 2);
    const scale = await k.req('GET', `${D}/web/scale`);
    assert.equal(scale.body.kind, 'Scale');
    assert.equal(scale.body.spec.replicas, 3);
    assert.equal(scale.body.status.selector, 'app=web');
    const scaled = await k.req(
      'PATCH',
      `${D}/web/scale`,
      { spec: { replicas: 5 } },
      { contentType: 'application/merge-patch+json' },
    );
    assert.equal(scaled.body.spec.replicas, 5);
    assert.equal((await k.req('GET', `${D}/web`)).body.metadata.generation, 3);
  });

  it('delete with finalizers only marks the object; removing the last finalizer deletes it', async () => {
    await k.req('POST', CM, configMap('fin', {}, { finalizers: ['example.com/a', 'example.com/b'] }));
    const d = await k.req('DELETE', `${CM}/fin`);
    assert.equal(d.status, 200);
    assert.ok(d.body.metadata.deletionTimestamp);
    assert.equal(d.body.metadata.deletionGracePeriodSeconds, 0);
    const still = await k.req('GET', `${CM}/fin`);
    assert.equal(still.status, 200);
    const add = await k.req(
      'PATCH',
      `${CM}/fin`,
      { metadata: { finalizers: ['example.com/a', 'example.com/b', 'example.com/c'] } },
      { contentType: 'application/merge-patch+json' },
    );
    assert.equal(add.status, 422);
    assert.equal(add.body.details.causes[0].field, 'metadata.finalizers');
    assert.match(
      add.body.message,
      /no new finalizers can be added if the object is being deleted, found new finalizers \[\]string\{"example.com\/c"\}/,
    );
    const ts = await k.req(
      'PATCH',
      `${CM}/fin`,
      { metadata: { deletionTimestamp: null, finalizers: ['example.com/b'] } },
      { contentType: 'application/merge-patch+json' },
    );
    assert.equal(
      ts.body.metadata.deletionTimestamp,
      d.body.metadata.deletionTimestamp,
      'deletionTimestamp cannot be cleared',
    );
    const last = await k.req('PATCH', `${CM}/fin`, [{ op: 'remove', path: '/metadata/finalizers' }], {
      contentType: 'application/json-patch+json',
    });
    assert.equal(last.status, 200);
    assert.equal((await k.req('GET', `${CM}/fin`)).status, 404);
  });

  it('answers a plain delete with a Success Status, and honours preconditions', async () => {
    const c = await k.req('POST', CM, configMap('gone'));
    const pre = await k.req('DELETE', `${CM}/gone`, {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      preconditions: { uid: 'other' },
    });
    assert.equal(pre.status, 409);
    assert.match(pre.body.message, /Precondition failed: UID in precondition: other/);
    const d = await k.req('DELETE', `${CM}/gone`);
    assert.equal(d.status, 200);
    assert.equal(d.body.kind, 'Status');
    assert.equal(d.body.status, 'Success');
    assert.deepEqual(d.body.details, { name: 'gone', kind: 'configmaps', uid: c.body.metadata.uid });
  });

  it('dryRun=All validates and answers without writing', async () => {
    const before = k.em.store.currentRv();
    const dry = await k.req('POST', `${CM}?dryRun=All`, configMap('dry'));
    assert.equal(dry.status, 201);
    assert.equal(dry.body.metadata.name, 'dry');
    assert.equal((await k.req('GET', `${CM}/dry`)).status, 404);
    const real = await k.req('POST', CM, configMap('dry2', { a: '1' }));
    const dryPut = await k.req('PUT', `${CM}/dry2?dryRun=All`, { ...real.body, data: { a: '2' } });
    assert.equal(dryPut.body.data.a, '2');
    assert.equal((await k.req('GET', `${CM}/dry2`)).body.data.a, '1');
    const dryDel = await k.req('DELETE', `${CM}/dry2?dryRun=All`);
    assert.equal(dryDel.status, 200);
    assert.equal((await k.req('GET', `${CM}/dry2`)).status, 200);
    // Only the real create wrote (other tests' namespaces may still be finishing their deletion).
    assert.deepEqual(
      k.em.store
        .since(before)
        .filter((e) => e.storageKey.endsWith('configmaps'))
        .map((e) => `${e.type} ${e.key}`),
      ['ADDED default/dry2'],
    );
    const badDry = await k.req('POST', `${CM}?dryRun=Some`, configMap('x'));
    assert.equal(badDry.status, 422);
  });

  it('merges Secret stringData into base64 data and rejects bad base64', async () => {
    const S = '/api/v1/namespaces/default/secrets';
    const s = await k.req('POST', S, { metadata: { name: 's' }, stringData: { user: 'admin' } });
    assert.equal(s.status, 201);
    assert.equal(s.body.type, 'Opaque');
    assert.equal(s.body.data.user, Buffer.from('admin').toString('base64'));
    assert.equal(s.body.stringData, undefined);
    const bad = await k.req('POST', S, { metadata: { name: 'bad' }, data: { x: 'not base64!' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.reason, 'BadRequest');
  });

  it('validates Pods, defaults them, and refuses spec changes beyond the mutable fields', async () => {
    const P = '/api/v1/namespaces/default/pods';
    const bad = await k.req('POST', P, { metadata: { name: 'p' }, spec: { containers: [] } });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.details.causes[0].field, 'spec.containers');
    const p = await k.req('POST', P, {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    assert.equal(p.status, 201);
    assert.equal(p.body.status.phase, 'Pending');
    assert.equal(p.body.spec.containers[0].imagePullPolicy, 'Always');
    assert.equal(p.body.spec.restartPolicy, 'Always');
    const img = await k.req(
      'PATCH',
      `${P}/p`,
      { spec: { containers: [{ name: 'c', image: 'busybox:2' }] } },
      { contentType: 'application/strategic-merge-patch+json' },
    );
    assert.equal(img.status, 200);
    const node = await k.req(
      'PATCH',
      `${P}/p`,
      { spec: { nodeName: 'n1' } },
      { contentType: 'application/merge-patch+json' },
    );
    assert.equal(node.status, 422);
    assert.match(node.body.message, /pod updates may not change fields other than/);
  });

  it('serves YAML when asked and 406 for media types it cannot produce', async () => {
    await k.req('POST', CM, configMap('yaml', { a: '1' }));
    const y = await k.req('GET', `${CM}/yaml`, undefined, { accept: 'application/yaml' });
    assert.equal(y.status, 200);
    assert.match(y.text, /^apiVersion: v1\nkind: ConfigMap/m);
    const pb = await k.req('GET', `${CM}/yaml`, undefined, { accept: 'application/vnd.kubernetes.protobuf' });
    assert.equal(pb.status, 406);
    assert.equal(pb.body.reason, 'NotAcceptable');
  });

  it('serves Tables for kubectl get, with PartialObjectMetadata rows', async () => {
    const t = await k.req('GET', '/api/v1/namespaces/default/services', undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    });
    assert.equal(t.body.kind, 'Table');
    assert.deepEqual(
      t.body.columnDefinitions.map((c: any) => c.name),
      ['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age', 'Selector'],
    );
    const row = t.body.rows.find((r: any) => r.cells[0] === 'kubernetes');
    assert.deepEqual(row.cells.slice(0, 5), ['kubernetes', 'ClusterIP', '10.96.0.1', '<none>', '443/TCP']);
    assert.equal(row.object.kind, 'PartialObjectMetadata');
  });

  it('deletes a collection by label selector and serves PartialObjectMetadataList', async () => {
    await k.req('POST', '/api/v1/namespaces', { metadata: { name: 'coll' } });
    const C = '/api/v1/namespaces/coll/configmaps';
    for (const [n, team] of [
      ['c1', 'x'],
      ['c2', 'x'],
      ['c3', 'y'],
    ] as const) {
      await k.req('POST', C, configMap(n, {}, { labels: { team } }));
    }
    const partial = await k.req('GET', C, undefined, {
      accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
    });
    assert.equal(partial.body.kind, 'PartialObjectMetadataList');
    assert.deepEqual(
      partial.body.items.map((i: any) => [i.kind, i.metadata.name]),
      [
        ['PartialObjectMetadata', 'c1'],
        ['PartialObjectMetadata', 'c2'],
        ['PartialObjectMetadata', 'c3'],
      ],
    );
    const del = await k.req('DELETE', `${C}?labelSelector=team%3Dx`);
    assert.equal(del.status, 200);
    assert.equal(del.body.kind, 'ConfigMapList');
    assert.deepEqual(
      (await k.req('GET', C)).body.items.map((i: any) => i.metadata.name),
      ['c3'],
    );
  });

  it('returns 405 for verbs a resource does not serve and 404 for unknown paths', async () => {
    const ns = await k.req('DELETE', '/api/v1/namespaces');
    assert.equal(ns.status, 405);
    assert.equal(ns.body.reason, 'MethodNotAllowed');
    const unknown = await k.req('GET', '/apis/nothing.io/v1/things');
    assert.equal(unknown.status, 404);
  });
});
