import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Limiter } from './limiter.ts';

describe('limiter', () => {
  it('lets `limit` callers in and queues the rest in order', async () => {
    const limiter = new Limiter(2);
    const r1 = await limiter.acquire();
    const r2 = await limiter.acquire();
    const order: number[] = [];
    const third = limiter.acquire().then((r) => (order.push(3), r));
    const fourth = limiter.acquire().then((r) => (order.push(4), r));
    assert.deepEqual([limiter.inFlight, limiter.queued], [2, 2]);
    r1();
    r1();
    const r3 = await third;
    assert.deepEqual([limiter.inFlight, limiter.queued, order], [2, 1, [3]]);
    r2();
    const r4 = await fourth;
    r3();
    r4();
    assert.deepEqual([limiter.inFlight, limiter.queued, order], [0, 0, [3, 4]]);
  });

  it('drops a queued caller whose signal aborts, with its reason', async () => {
    const limiter = new Limiter(1);
    const release = await limiter.acquire();
    const abort = new AbortController();
    const waiting = limiter.acquire(abort.signal);
    abort.abort(new Error('gone'));
    await assert.rejects(waiting, /gone/);
    assert.equal(limiter.queued, 0);
    release();
    assert.equal(limiter.inFlight, 0);
  });
});
