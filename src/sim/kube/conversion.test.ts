import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  gadgetCRD,
  startConversionWebhook,
  urlClientConfig,
  type TestConversionWebhook,
} from './testing/conversion-webhook.ts';
import { eventually, startTestKube, type TestKube } from './testing/harness.ts';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const G1 = '/apis/example.com/v1/namespaces/default/gadgets';
const G2 = '/apis/example.com/v2/namespaces/default/gadgets';
const MERGE = { contentType: 'application/merge-patch+json' };

function v1(name: string, size: number, labels: Record<string, string> = {}): any {
  return { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name, labels }, spec: { size } };
}

function v2(name: string, dimensions: Record<string, unknown>): any {
  return { apiVersion: 'example.com/v2', kind: 'Gadget', metadata: { name }, spec: { dimensions } };
}

/** The object as the store holds it (its apiVersion is the version it was stored in). */
function stored(k: TestKube, name: string): any {
  return k.em.rest.getStored(k.em.resource('example.com/v1', 'gadgets'), 'default', name);
}

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function setClientConfig(k: TestKube, clientConfig: Record<string, unknown>): Promise<void> {
  const r = await k.req(
    'PATCH',
    `${CRDS}/gadgets.example.com`,
    { spec: { conversion: { webhook: { clientConfig: { url: null, service: null, ...clientConfig } } } } },
    MERGE,
  );
  assert.equal(r.status, 200, r.text);
  await k.em.settle();
}

describe('kube emulator: CRD conversion webhooks', () => {
  let k: TestKube;
  let hook: TestConversionWebhook;
  before(async () => {
    hook = await startConversionWebhook();
    k = await startTestKube();
    const r = await k.req('POST', CRDS, gadgetCRD(urlClientConfig(hook)));
    assert.equal(r.status, 201, r.text);
    await k.em.settle();
  });
  after(async () => {
    await k.close();
    await hook.close();
  });
  beforeEach(() => {
    hook.mode = 'ok';
    hook.hold = undefined;
    hook.reviews.length = 0;
  });

  it('stores an object created in v2 as v1 and reads it back in both versions', async () => {
    const r = await k.req('POST', G2, v2('g-create', { size: 3, unit: 'mm' }));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.apiVersion, 'example.com/v2');
    assert.deepEqual(r.body.spec, { dimensions: { size: 3, unit: 'mm' }, color: 'red' });
    const s = stored(k, 'g-create');
    assert.equal(s.apiVersion, 'example.com/v1');
    assert.equal(s.spec.size, 3);
    assert.equal(s.metadata.annotations['example.com/v2-unit'], 'mm');
    assert.deepEqual(
      hook.reviews.map((x) => [x.desiredAPIVersion, x.objects.length, x.reviewVersion]),
      [
        ['example.com/v1', 1, 'apiextensions.k8s.io/v1'],
        ['example.com/v2', 1, 'apiextensions.k8s.io/v1'],
      ],
      'one review to store it, one for the answer',
    );
    const g1 = await k.req('GET', `${G1}/g-create`);
    assert.equal(g1.body.apiVersion, 'example.com/v1');
    assert.equal(g1.body.spec.size, 3);
    assert.equal(hook.reviews.length, 2, 'a read in the stored version calls no webhook');
    const g2 = await k.req('GET', `${G2}/g-create`);
    assert.equal(g2.status, 200, g2.text);
    assert.deepEqual(g2.body.spec.dimensions, { size: 3, unit: 'mm' });
    assert.equal(g2.body.metadata.annotations, undefined, 'the round trip loses nothing and adds nothing');
    assert.equal(g2.body.metadata.uid, s.metadata.uid);
    assert.equal(hook.reviews.length, 3);
    assert.ok(k.em.stats().conversion.reviews >= 3);
  });

  it('defaults and validates in the version the object arrives in, before any conversion', async () => {
    const bad = await k.req('POST', G2, v2('g-invalid', { size: 0 }));
    assert.equal(bad.status, 422, bad.text);
    assert.match(bad.body.message, /spec\.dimensions\.size/);
    assert.equal(hook.reviews.length, 0, 'an invalid object is never sent to the webhook');
    const r = await k.req('POST', G2, v2('g-default', { size: 2 }));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.spec.dimensions.unit, 'cm', "v2's default");
    assert.equal(stored(k, 'g-default').metadata.annotations['example.com/v2-unit'], 'cm');
  });

  it('a write in the storage version and its reads in it call no webhook', async () => {
    const r = await k.req('POST', G1, v1('g-plain', 4));
    assert.equal(r.status, 201, r.text);
    await k.req('PATCH', `${G1}/g-plain`, { spec: { size: 5 } }, MERGE);
    await k.req('GET', `${G1}?labelSelector=none`);
    assert.equal(hook.reviews.length, 0);
  });

  it('patches and updates in the other version', async () => {
    await k.req('POST', G1, v1('g-patch', 1));
    const p = await k.req('PATCH', `${G2}/g-patch`, { spec: { dimensions: { size: 7 } } }, MERGE);
    assert.equal(p.status, 200, p.text);
    assert.equal(p.body.apiVersion, 'example.com/v2');
    assert.equal(p.body.spec.dimensions.size, 7);
    assert.equal(stored(k, 'g-patch').spec.size, 7);
    const cur = await k.req('GET', `${G2}/g-patch`);
    cur.body.spec.dimensions.size = 8;
    const u = await k.req('PUT', `${G2}/g-patch`, cur.body);
    assert.equal(u.status, 200, u.text);
    assert.equal(u.body.spec.dimensions.size, 8);
    assert.equal(stored(k, 'g-patch').spec.size, 8);
    assert.equal(u.body.metadata.generation, 3);
    const stale = await k.req('PUT', `${G2}/g-patch`, cur.body);
    assert.equal(stale.status, 409, 'the resourceVersion it was read at is gone');
  });

  it('a patch whose object changed while the webhook answered starts again from the new object', async () => {
    await k.req('POST', G1, v1('g-race', 1));
    let release!: () => void;
    hook.hold = { desiredAPIVersion: 'example.com/v1', until: new Promise<void>((r) => (release = r)) };
    const patching = k.req('PATCH', `${G2}/g-race`, { spec: { color: 'blue' } }, MERGE);
    await eventually(() => hook.reviews.some((r) => r.desiredAPIVersion === 'example.com/v1'), {
      what: 'the patch waiting for its conversion to v1',
    });
    const other = await k.req('PATCH', `${G1}/g-race`, { spec: { size: 9 } }, MERGE);
    assert.equal(other.status, 200, other.text);
    hook.hold = undefined;
    release();
    const p = await patching;
    assert.equal(p.status, 200, p.text);
    assert.deepEqual(p.body.spec, { dimensions: { size: 9, unit: 'cm' }, color: 'blue' });
    assert.equal(stored(k, 'g-race').spec.size, 9, 'the other write is not lost');
    assert.equal(stored(k, 'g-race').spec.color, 'blue');
  });

  it('writes /status and deletes in the other version, answering in it', async () => {
    await k.req('POST', G1, v1('g-status', 1));
    const cur = await k.req('GET', `${G2}/g-status`);
    const st = await k.req('PUT', `${G2}/g-status/status`, { ...cur.body, status: { phase: 'Ready' } });
    assert.equal(st.status, 200, st.text);
    assert.equal(st.body.apiVersion, 'example.com/v2');
    assert.equal(stored(k, 'g-status').status.phase, 'Ready');
    assert.equal(stored(k, 'g-status').apiVersion, 'example.com/v1');
    const d = await k.req('DELETE', `${G2}/g-status`);
    assert.equal(d.status, 200, d.text);
    assert.equal(d.body.apiVersion, 'example.com/v2');
    assert.equal(d.body.spec.dimensions.size, 1);
    assert.equal(stored(k, 'g-status'), undefined);
  });

  it('ends a watch with an ERROR event when an event cannot be converted', async () => {
    const rv = (await k.req('GET', G1)).body.metadata.resourceVersion;
    const w = await k.watch(`${G2}?watch=true&resourceVersion=${rv}&labelSelector=set%3Dwatch-fail`);
    await k.req('POST', G1, v1('g-watch-ok', 1, { set: 'watch-fail' }));
    const first = await w.next();
    assert.equal(first.type, 'ADDED');
    hook.mode = 'fail';
    await k.req('POST', G1, v1('g-watch-fail', 1, { set: 'watch-fail' }));
    const e = await w.next();
    assert.equal(e.type, 'ERROR');
    assert.equal(
      e.object.message,
      'Internal error occurred: conversion webhook for example.com/v1, Kind=Gadget failed: spec.size cannot be converted',
    );
    await w.ended;
  });

  it('lists in the other version with one review for all items', async () => {
    for (const n of ['g-list-a', 'g-list-b', 'g-list-c']) {
      const r = await k.req('POST', G1, v1(n, 2, { set: 'list' }));
      assert.equal(r.status, 201, r.text);
    }
    hook.reviews.length = 0;
    const l = await k.req('GET', `${G2}?labelSelector=set%3Dlist`);
    assert.equal(l.status, 200, l.text);
    assert.equal(l.body.apiVersion, 'example.com/v2');
    assert.deepEqual(
      l.body.items.map((i: any) => [i.apiVersion, i.metadata.name, i.spec.dimensions.size]),
      [
        ['example.com/v2', 'g-list-a', 2],
        ['example.com/v2', 'g-list-b', 2],
        ['example.com/v2', 'g-list-c', 2],
      ],
    );
    assert.deepEqual(
      hook.reviews.map((r) => r.objects.length),
      [3],
    );
  });

  it('converts watch events in the order they happened', async () => {
    const rv = (await k.req('GET', G1)).body.metadata.resourceVersion;
    const w = await k.watch(`${G2}?watch=true&resourceVersion=${rv}&labelSelector=set%3Dwatch`);
    await k.req('POST', G1, v1('g-watch', 1, { set: 'watch' }));
    for (const size of [2, 3, 4]) await k.req('PATCH', `${G1}/g-watch`, { spec: { size } }, MERGE);
    await k.req('DELETE', `${G1}/g-watch`);
    const seen: [string, string, number][] = [];
    for (let i = 0; i < 5; i++) {
      const e = await w.next();
      seen.push([e.type, e.object.apiVersion, e.object.spec.dimensions.size]);
    }
    w.close();
    assert.deepEqual(seen, [
      ['ADDED', 'example.com/v2', 1],
      ['MODIFIED', 'example.com/v2', 2],
      ['MODIFIED', 'example.com/v2', 3],
      ['MODIFIED', 'example.com/v2', 4],
      ['DELETED', 'example.com/v2', 4],
    ]);
  });

  it('a webhook that fails refuses the write and fails the read with kube-apiserver’s message', async () => {
    await k.req('POST', G1, v1('g-fail', 1));
    hook.mode = 'fail';
    const w = await k.req('POST', G2, v2('g-fail-2', { size: 1 }));
    assert.equal(w.status, 500, w.text);
    assert.equal(
      w.body.message,
      'conversion webhook for example.com/v2, Kind=Gadget failed: spec.size cannot be converted',
    );
    assert.equal(w.body.reason, undefined);
    assert.equal(stored(k, 'g-fail-2'), undefined, 'nothing was stored');
    const g = await k.req('GET', `${G2}/g-fail`);
    assert.equal(g.status, 500);
    assert.equal(g.body.reason, 'InternalError');
    assert.equal(
      g.body.message,
      'Internal error occurred: conversion webhook for example.com/v1, Kind=Gadget failed: spec.size cannot be converted',
    );
    const l = await k.req('GET', G2);
    assert.equal(l.status, 500, 'a list fails whole');
    assert.equal(
      l.body.message,
      'Internal error occurred: conversion webhook for example.com/v1, Kind=GadgetList failed: spec.size cannot be converted',
    );
    const p = await k.req('PATCH', `${G2}/g-fail`, { spec: { color: 'blue' } }, MERGE);
    assert.equal(p.status, 500);
    assert.equal(stored(k, 'g-fail').spec.color, 'red', 'the patch was refused');
    hook.mode = 'http-500';
    const h = await k.req('GET', `${G2}/g-fail`);
    assert.equal(
      h.body.message,
      'Internal error occurred: conversion webhook for example.com/v1, Kind=Gadget failed: webhook crashed',
    );
  });

  it('refuses a response that changes the name, the version, the count or the uid', async () => {
    await k.req('POST', G1, v1('g-bad', 1));
    const prefix = 'Internal error occurred: conversion webhook for example.com/v1, Kind=Gadget';
    const cases: [TestConversionWebhook['mode'], string][] = [
      ['rename', `${prefix} returned invalid object: must have the same name: g-bad != renamed`],
      [
        'wrong-version',
        `${prefix} returned invalid object: invalid groupVersion (expected example.com/v2, received example.com/v9)`,
      ],
      ['drop', `${prefix} returned 0 objects, expected 1`],
    ];
    for (const [mode, message] of cases) {
      hook.mode = mode;
      const g = await k.req('GET', `${G2}/g-bad`);
      assert.equal(g.status, 500, mode);
      assert.equal(g.body.message, message, mode);
    }
    hook.mode = 'wrong-uid';
    const g = await k.req('GET', `${G2}/g-bad`);
    assert.match(g.body.message, /failed: expected response\.uid="[0-9a-f-]{36}", got "not-the-uid"$/);
    hook.mode = 'rename';
    const l = await k.req('GET', `${G2}?fieldSelector=metadata.name%3Dg-bad`);
    assert.equal(
      l.body.message,
      'Internal error occurred: conversion webhook for example.com/v1, Kind=GadgetList returned invalid converted object at index 1: must have the same name: g-bad != renamed',
      "a list's message counts from 1, as kube-apiserver's does",
    );
  });

  it('an unreachable webhook: a closed port, a Service the emulator cannot reach', async () => {
    await k.req('POST', G1, v1('g-unreachable', 1));
    const port = await closedPort();
    await setClientConfig(k, { url: `https://127.0.0.1:${port}/convert` });
    const g = await k.req('GET', `${G2}/g-unreachable`);
    assert.equal(g.status, 500);
    assert.equal(
      g.body.message,
      `Internal error occurred: conversion webhook for example.com/v1, Kind=Gadget failed: Post "https://127.0.0.1:${port}/convert?timeout=30s": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    );
    await setClientConfig(k, { service: { namespace: 'default', name: 'gadget-webhook', path: '/convert' } });
    const s = await k.req('GET', `${G2}/g-unreachable`);
    assert.equal(
      s.body.message,
      'Internal error occurred: conversion webhook for example.com/v1, Kind=Gadget failed: Post "https://gadget-webhook.default.svc:443/convert?timeout=30s": service "gadget-webhook" not found',
    );
    // The wrong CA: the certificate is not trusted.
    await setClientConfig(k, { url: hook.url, caBundle: Buffer.from(k.sim.caPem ?? '').toString('base64') });
    const ca = await k.req('GET', `${G2}/g-unreachable`);
    assert.match(ca.body.message, /x509: certificate signed by unknown authority$/);
    await setClientConfig(k, urlClientConfig(hook));
    assert.equal((await k.req('GET', `${G2}/g-unreachable`)).status, 200);
  });

  it('refuses a Webhook strategy without a webhook or with a review version it cannot send', async () => {
    const crd = gadgetCRD({ url: hook.url }, { reviewVersions: ['v2'] });
    crd.metadata.name = 'widgets.example.org';
    crd.spec.group = 'example.org';
    crd.spec.names = { plural: 'widgets', kind: 'Widget' };
    const r = await k.req('POST', CRDS, crd);
    assert.equal(r.status, 422, r.text);
    assert.match(r.body.message, /spec\.conversion\.webhook\.conversionReviewVersions: Invalid value/);
    delete crd.spec.conversion.webhook;
    const r2 = await k.req('POST', CRDS, crd);
    assert.match(
      r2.body.message,
      /spec\.conversion\.webhook: Required value: required when strategy is set to Webhook/,
    );
  });
});

describe('kube emulator: conversion webhooks across a storage version change, and Services', () => {
  let k: TestKube;
  let hook: TestConversionWebhook;
  before(async () => {
    hook = await startConversionWebhook();
    const base = new URL(hook.url);
    k = await startTestKube({
      conversion: {
        resolveService: (svc) =>
          svc.namespace === 'default' && svc.name === 'gadget-webhook' && svc.port === 8443
            ? `https://${base.host}`
            : undefined,
      },
    });
    const svc = { namespace: 'default', name: 'gadget-webhook', port: 8443, path: '/convert' };
    const crd = gadgetCRD(
      { service: svc, caBundle: Buffer.from(hook.caPem).toString('base64') },
      { reviewVersions: ['v1beta1'] },
    );
    const r = await k.req('POST', CRDS, crd);
    assert.equal(r.status, 201, r.text);
    await k.em.settle();
  });
  after(async () => {
    await k.close();
    await hook.close();
  });

  it('reaches a Service through the resolver it is given, with the review version the CRD asks for', async () => {
    const r = await k.req('POST', G2, v2('g-svc', { size: 2 }));
    assert.equal(r.status, 201, r.text);
    assert.equal(hook.reviews[0]?.reviewVersion, 'apiextensions.k8s.io/v1beta1');
  });

  it('keeps serving objects stored in the old version after the storage version changes', async () => {
    await k.req('POST', G1, v1('g-old', 5));
    const crd = (await k.req('GET', `${CRDS}/gadgets.example.com`)).body;
    for (const v of crd.spec.versions) v.storage = v.name === 'v2';
    const u = await k.req('PUT', `${CRDS}/gadgets.example.com`, crd);
    assert.equal(u.status, 200, u.text);
    await k.em.settle();
    const after = (await k.req('GET', `${CRDS}/gadgets.example.com`)).body;
    assert.deepEqual(after.status.storedVersions, ['v1', 'v2']);
    assert.equal(stored(k, 'g-old').apiVersion, 'example.com/v1', 'not rewritten by the change');
    hook.reviews.length = 0;
    const old1 = await k.req('GET', `${G1}/g-old`);
    assert.equal(old1.body.spec.size, 5);
    assert.equal(hook.reviews.length, 0, 'still stored as v1: read as v1 without conversion');
    const old2 = await k.req('GET', `${G2}/g-old`);
    assert.equal(old2.body.spec.dimensions.size, 5);
    const n = await k.req('POST', G1, v1('g-new', 6));
    assert.equal(n.status, 201, n.text);
    assert.equal(stored(k, 'g-new').apiVersion, 'example.com/v2', 'new writes are stored in v2');
    assert.deepEqual(stored(k, 'g-new').spec.dimensions, { size: 6 });
    hook.reviews.length = 0;
    const l = await k.req('GET', G1);
    assert.deepEqual(
      l.body.items.map((i: any) => [i.metadata.name, i.apiVersion, i.spec.size]),
      [
        ['g-new', 'example.com/v1', 6],
        ['g-old', 'example.com/v1', 5],
        ['g-svc', 'example.com/v1', 2],
      ],
    );
    assert.deepEqual(
      hook.reviews.map((r) => r.objects.map((o) => o.metadata.name)),
      [['g-new']],
      'only what is stored in another version is sent',
    );
    // The emulator's own controllers patch metadata in the version an object is stored in: the
    // garbage collector orphans a Gadget stored as v2 although it reads the kind through v1.
    const owner = await k.req('POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: 'gadget-owner' },
    });
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'gadget-owner', uid: owner.body.metadata.uid };
    const owned = v1('g-owned', 1);
    owned.metadata.ownerReferences = [ref];
    assert.equal((await k.req('POST', G1, owned)).status, 201);
    assert.equal(stored(k, 'g-owned').apiVersion, 'example.com/v2');
    const del = await k.req('DELETE', '/api/v1/namespaces/default/configmaps/gadget-owner', {
      propagationPolicy: 'Orphan',
    });
    assert.equal(del.status, 200, del.text);
    await eventually(() => stored(k, 'g-owned').metadata.ownerReferences === undefined, {
      what: 'the ownerReference dropped by the garbage collector',
    });
    assert.equal(stored(k, 'g-owned').apiVersion, 'example.com/v2');
    // Rewriting an old object stores it in the new storage version.
    const p = await k.req('PATCH', `${G1}/g-old`, { spec: { size: 9 } }, MERGE);
    assert.equal(p.status, 200, p.text);
    assert.equal(stored(k, 'g-old').apiVersion, 'example.com/v2');
  });
});
