import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestKube, type TestKube } from './testing/harness.ts';

const PODS = '/api/v1/namespaces/default/pods';
const PDBS = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
const MERGE = { contentType: 'application/merge-patch+json' };

function pod(name: string): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'db' } },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'postgres' }] },
  };
}

function eviction(name: string): any {
  return { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' } };
}

describe('kube emulator: pods/eviction', () => {
  let k: TestKube;
  before(async () => {
    k = await startTestKube();
  });
  after(async () => k.close());

  const running = async (name: string) => {
    assert.equal((await k.req('POST', PODS, pod(name))).status, 201);
    const r = await k.req(
      'PATCH',
      `${PODS}/${name}/status`,
      { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } },
      MERGE,
    );
    assert.equal(r.status, 200, r.text);
  };

  it('is listed in discovery as a create-only subresource of kind policy/v1 Eviction', async () => {
    const core = await k.req('GET', '/api/v1');
    const sub = core.body.resources.find((r: any) => r.name === 'pods/eviction');
    assert.deepEqual([sub.verbs, sub.group, sub.version, sub.kind], [['create'], 'policy', 'v1', 'Eviction']);
  });

  it('deletes a pending pod whatever the budgets say', async () => {
    assert.equal((await k.req('POST', PODS, pod('pending'))).status, 201);
    const r = await k.req('POST', `${PODS}/pending/eviction`, eviction('pending'));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.status, 'Success');
    assert.equal((await k.req('GET', `${PODS}/pending`)).status, 404);
  });

  it('refuses while the budget is unobserved or spent, and spends one disruption otherwise', async () => {
    await running('db-0');
    await running('db-1');
    const pdb = await k.req('POST', PDBS, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'db' },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'db' } } },
    });
    assert.equal(pdb.status, 201, pdb.text);
    const unobserved = await k.req('POST', `${PODS}/db-0/eviction`, eviction('db-0'));
    assert.equal(unobserved.status, 429, unobserved.text);
    assert.equal(
      unobserved.body.message,
      "Cannot evict pod as it would violate the pod's disruption budget.",
    );
    assert.match(unobserved.body.details.causes[0].message, /still being processed/);

    // What the disruption controller would write: two healthy, one may go.
    const observed = await k.req(
      'PATCH',
      `${PDBS}/db/status`,
      {
        status: {
          observedGeneration: 1,
          disruptionsAllowed: 1,
          currentHealthy: 2,
          desiredHealthy: 1,
          expectedPods: 2,
        },
      },
      MERGE,
    );
    assert.equal(observed.status, 200, observed.text);
    const ok = await k.req('POST', `${PODS}/db-0/eviction`, eviction('db-0'));
    assert.equal(ok.status, 201, ok.text);
    assert.equal((await k.req('GET', `${PODS}/db-0`)).status, 404);
    const spent = await k.req('GET', `${PDBS}/db`);
    assert.equal(spent.body.status.disruptionsAllowed, 0);
    assert.ok(spent.body.status.disruptedPods['db-0']);

    const refused = await k.req('POST', `${PODS}/db-1/eviction`, eviction('db-1'));
    assert.equal(refused.status, 429, refused.text);
    assert.equal(refused.body.details.causes[0].reason, 'DisruptionBudget');
    assert.match(refused.body.details.causes[0].message, /needs 1 healthy pods and has 2 currently/);
    assert.equal((await k.req('GET', `${PODS}/db-1`)).status, 200);
  });

  it('rejects an eviction naming another pod', async () => {
    const r = await k.req('POST', `${PODS}/db-1/eviction`, eviction('someone-else'));
    assert.equal(r.status, 400, r.text);
  });
});
