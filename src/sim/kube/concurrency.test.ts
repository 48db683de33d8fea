import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configMap, startTestKube, type TestKube } from './testing/harness.ts';

const CM = '/api/v1/namespaces/default/configmaps';
const WRITERS = 50;
const ROUNDS = 2;

describe('kube emulator: optimistic concurrency under load', () => {
  let k: TestKube;
  before(async () => (k = await startTestKube()));
  after(async () => k.close());

  it(`loses no update among ${WRITERS} concurrent read-modify-write writers; losers get 409`, async () => {
    await k.req('POST', CM, configMap('counter', { n: '0' }));
    let successes = 0;
    let conflicts = 0;
    const writer = async (id: number) => {
      for (let round = 0; round < ROUNDS; round++) {
        // Read, increment, write back with the resourceVersion read: a lost race is a 409.
        for (let attempt = 0; attempt < 200; attempt++) {
          const cur = await k.req('GET', `${CM}/counter`);
          const n = Number(cur.body.data.n);
          const seen = cur.body.data.writers ? String(cur.body.data.writers) : '';
          const next = { ...cur.body, data: { n: String(n + 1), writers: `${seen}${id},` } };
          const r = await k.req('PUT', `${CM}/counter`, next);
          if (r.status === 200) {
            successes++;
            break;
          }
          assert.equal(r.status, 409, r.text);
          assert.equal(r.body.reason, 'Conflict');
          conflicts++;
        }
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, (_, i) => writer(i)));
    const final = await k.req('GET', `${CM}/counter`);
    assert.equal(successes, WRITERS * ROUNDS);
    assert.equal(Number(final.body.data.n), successes, 'every successful write is counted exactly once');
    const ids = String(final.body.data.writers).split(',').filter(Boolean);
    assert.equal(ids.length, successes, 'no write duplicated');
    assert.ok(conflicts > 0, 'concurrent writers did collide');
  });

  it('creates of one name race to exactly one 201', async () => {
    const results = await Promise.all(
      Array.from({ length: WRITERS }, () => k.req('POST', CM, configMap('race'))),
    );
    assert.equal(results.filter((r) => r.status === 201).length, 1);
    assert.ok(
      results
        .filter((r) => r.status !== 201)
        .every((r) => r.status === 409 && r.body.reason === 'AlreadyExists'),
    );
  });
});
