import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configMap, eventually, startTestKube, widgetCRD, type TestKube } from './testing/harness.ts';

const CM = '/api/v1/namespaces/default/configmaps';
const MERGE = { contentType: 'application/merge-patch+json' };

function ownedBy(owner: any, block = false): any {
  return {
    ownerReferences: [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: owner.metadata.name,
        uid: owner.metadata.uid,
        ...(block ? { blockOwnerDeletion: true } : {}),
      },
    ],
  };
}

describe('kube emulator: garbage collection and namespace lifecycle', () => {
  let k: TestKube;
  before(async () => (k = await startTestKube()));
  after(async () => k.close());

  const exists = async (path: string) => (await k.req('GET', path)).status === 200;

  it('deletes dependents in the background once their owner is gone', async () => {
    const owner = (await k.req('POST', CM, configMap('bg-owner'))).body;
    await k.req('POST', CM, configMap('bg-dep', {}, ownedBy(owner)));
    const d = await k.req('DELETE', `${CM}/bg-owner`);
    assert.equal(d.status, 200);
    assert.equal(await exists(`${CM}/bg-owner`), false, 'background: the owner goes at once');
    await k.em.settle();
    assert.equal(await exists(`${CM}/bg-dep`), false);
  });

  it('keeps a dependent with another live owner, dropping only the dead reference', async () => {
    const a = (await k.req('POST', CM, configMap('two-a'))).body;
    const b = (await k.req('POST', CM, configMap('two-b'))).body;
    const refs = [...ownedBy(a).ownerReferences, ...ownedBy(b).ownerReferences];
    await k.req('POST', CM, configMap('two-dep', {}, { ownerReferences: refs }));
    await k.req('DELETE', `${CM}/two-a`);
    await k.em.settle();
    const dep = await k.req('GET', `${CM}/two-dep`);
    assert.equal(dep.status, 200);
    assert.deepEqual(
      dep.body.metadata.ownerReferences.map((r: any) => r.name),
      ['two-b'],
    );
  });

  it('foreground deletion: the owner waits, with foregroundDeletion, until blocking dependents are gone', async () => {
    const owner = (await k.req('POST', CM, configMap('fg-owner'))).body;
    await k.req(
      'POST',
      CM,
      configMap('fg-dep', {}, { ...ownedBy(owner, true), finalizers: ['example.com/hold'] }),
    );
    const d = await k.req('DELETE', `${CM}/fg-owner?propagationPolicy=Foreground`);
    assert.equal(d.status, 200);
    assert.ok(d.body.metadata.deletionTimestamp);
    assert.deepEqual(d.body.metadata.finalizers, ['foregroundDeletion']);
    await k.em.settle();
    assert.equal(await exists(`${CM}/fg-owner`), true, 'blocked by the dependent');
    const dep = await k.req('GET', `${CM}/fg-dep`);
    assert.ok(dep.body.metadata.deletionTimestamp, 'the dependent is being deleted');
    await k.req('PATCH', `${CM}/fg-dep`, { metadata: { finalizers: null } }, MERGE);
    await k.em.settle();
    assert.equal(await exists(`${CM}/fg-dep`), false);
    assert.equal(await exists(`${CM}/fg-owner`), false);
  });

  it('orphan deletion strips the owner reference and keeps the dependent', async () => {
    const owner = (await k.req('POST', CM, configMap('or-owner'))).body;
    await k.req('POST', CM, configMap('or-dep', {}, ownedBy(owner)));
    const d = await k.req('DELETE', `${CM}/or-owner`, {
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      propagationPolicy: 'Orphan',
    });
    assert.deepEqual(d.body.metadata.finalizers, ['orphan']);
    await k.em.settle();
    assert.equal(await exists(`${CM}/or-owner`), false);
    const dep = await k.req('GET', `${CM}/or-dep`);
    assert.equal(dep.status, 200);
    assert.equal(dep.body.metadata.ownerReferences, undefined);
  });

  it('collects a dependent whose owner never existed (or has another uid)', async () => {
    await k.req(
      'POST',
      CM,
      configMap(
        'dangling',
        {},
        {
          ownerReferences: [
            {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              name: 'ghost',
              uid: '00000000-0000-0000-0000-000000000000',
            },
          ],
        },
      ),
    );
    await k.em.settle();
    assert.equal(await exists(`${CM}/dangling`), false);
  });

  it('owners of another kind work too: a Deployment owning ConfigMaps', async () => {
    const dep = await k.req('POST', '/apis/apps/v1/namespaces/default/deployments', {
      metadata: { name: 'owner-deploy' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    const ref = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'owner-deploy',
      uid: dep.body.metadata.uid,
      controller: true,
    };
    await k.req('POST', CM, configMap('deploy-dep', {}, { ownerReferences: [ref] }));
    await k.em.settle();
    assert.equal(await exists(`${CM}/deploy-dep`), true);
    await k.req('DELETE', '/apis/apps/v1/namespaces/default/deployments/owner-deploy');
    await k.em.settle();
    assert.equal(await exists(`${CM}/deploy-dep`), false);
  });

  it('namespace deletion cascades to its content, waits for finalizers, then the namespace goes', async () => {
    await k.req('POST', '/api/v1/namespaces', { metadata: { name: 'doomed' } });
    const NSCM = '/api/v1/namespaces/doomed/configmaps';
    await k.req('POST', NSCM, configMap('plain'));
    await k.req('POST', NSCM, configMap('held', {}, { finalizers: ['example.com/hold'] }));
    await k.req('POST', '/api/v1/namespaces/doomed/services', {
      metadata: { name: 's' },
      spec: { ports: [{ port: 80 }] },
    });
    const d = await k.req('DELETE', '/api/v1/namespaces/doomed');
    assert.equal(d.status, 200);
    assert.equal(d.body.status.phase, 'Terminating');
    await k.em.settle();
    assert.equal(await exists(`${NSCM}/plain`), false);
    assert.equal(await exists('/api/v1/namespaces/doomed/services/s'), false);
    const ns = await k.req('GET', '/api/v1/namespaces/doomed');
    assert.equal(ns.status, 200, 'held back by the finalizer');
    const remaining = ns.body.status.conditions.find((c: any) => c.type === 'NamespaceContentRemaining');
    assert.equal(remaining.status, 'True');
    assert.match(remaining.message, /configmaps\. has 1 resource instances/);
    const fin = ns.body.status.conditions.find((c: any) => c.type === 'NamespaceFinalizersRemaining');
    assert.match(fin.message, /example.com\/hold in 1 resource instances/);
    await k.req('PATCH', `${NSCM}/held`, { metadata: { finalizers: null } }, MERGE);
    await k.em.settle();
    assert.equal(await exists('/api/v1/namespaces/doomed'), false);
  });

  it('deleting a CRD deletes its instances first, then stops serving it', async () => {
    await k.req(
      'POST',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      widgetCRD('Cluster', 'gadgets', 'Gadget'),
    );
    const G = '/apis/example.com/v1/gadgets';
    await eventually(async () => (await k.req('GET', G)).status === 200);
    await k.req('POST', G, {
      apiVersion: 'example.com/v1',
      kind: 'Gadget',
      metadata: { name: 'g1', finalizers: ['example.com/keep'] },
      spec: { size: 1 },
    });
    await k.req('DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com');
    await k.em.settle();
    const crd = await k.req(
      'GET',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com',
    );
    assert.equal(crd.status, 200, 'waits for the instance');
    const create = await k.req('POST', G, {
      apiVersion: 'example.com/v1',
      kind: 'Gadget',
      metadata: { name: 'g2' },
      spec: { size: 1 },
    });
    assert.equal(create.status, 405, 'no new instances while terminating');
    await k.req('PATCH', `${G}/g1`, { metadata: { finalizers: null } }, MERGE);
    await k.em.settle();
    assert.equal(
      (await k.req('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com'))
        .status,
      404,
    );
    assert.equal((await k.req('GET', G)).status, 404);
  });
});
