import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRegistry } from '../../lib/metrics.ts';
import { ItemExponentialFailureRateLimiter } from '../ratelimit.ts';
import { FakeClock, flushMicrotasks } from '../../lib/testing/fake-clock.ts';
import { DelayingQueue } from './delaying.ts';
import { WorkQueue } from './queue.ts';
import { RateLimitingQueue } from './rate-limiting.ts';

describe('work queue (client-go semantics)', () => {
  it('deduplicates: a key added many times is queued once', async () => {
    const q = new WorkQueue<string>();
    for (let i = 0; i < 100; i++) q.add('a');
    q.add('b');
    assert.equal(q.len(), 2);
    assert.equal(await q.get(), 'a');
    assert.equal(await q.get(), 'b');
    assert.equal(q.len(), 0);
  });

  it('never hands a key to two workers: added while processing, it waits for done', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    const first = await q.get();
    q.add('a');
    q.add('a');
    assert.equal(q.len(), 0, 'not queued while a worker holds it');
    let second: string | undefined;
    void q.get().then((k) => (second = k));
    await flushMicrotasks();
    assert.equal(second, undefined, 'a second worker does not get it');
    q.done(first as string);
    await flushMicrotasks();
    assert.equal(second, 'a', 'queued again, once, after done');
    assert.equal(q.len(), 0);
  });

  it('hands items to waiting workers in FIFO order', async () => {
    const q = new WorkQueue<number>();
    const got = [q.get(), q.get(), q.get()];
    q.add(1);
    q.add(2);
    q.add(3);
    assert.deepEqual(await Promise.all(got), [1, 2, 3]);
  });

  it('shutDown: waiting workers get undefined, new adds are ignored, queued items are dropped', async () => {
    const q = new WorkQueue<string>();
    const waiting = q.get();
    q.shutDown();
    assert.equal(await waiting, undefined);
    q.add('x');
    assert.equal(q.len(), 0);
    assert.equal(await q.get(), undefined);
  });

  it('shutDownWithDrain resolves only after the items in flight are done', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    q.add('b');
    const a = await q.get();
    let drained = false;
    const d = q.shutDownWithDrain().then(() => (drained = true));
    await flushMicrotasks();
    assert.equal(drained, false);
    assert.equal(await q.get(), undefined, 'no new work after shutdown, b is dropped');
    q.done(a as string);
    await d;
    assert.equal(drained, true);
  });

  it('handles a long FIFO without quadratic shifting', async () => {
    const q = new WorkQueue<number>();
    for (let i = 0; i < 50_000; i++) q.add(i);
    let sum = 0;
    for (let i = 0; i < 50_000; i++) {
      const v = (await q.get()) as number;
      sum += v;
      q.done(v);
    }
    assert.equal(sum, (49_999 * 50_000) / 2);
    assert.equal(q.len(), 0);
  });
});

describe('delaying queue', () => {
  it('adds an item once its delay passes, earliest first', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('late', 200);
    q.addAfter('early', 100);
    q.addAfter('now', 0);
    assert.equal(q.len(), 1);
    await clock.advance(99);
    assert.equal(q.len(), 1);
    await clock.advance(1);
    assert.equal(q.len(), 2);
    await clock.advance(100);
    assert.deepEqual([await q.get(), await q.get(), await q.get()], ['now', 'early', 'late']);
  });

  it('keeps the earlier of two delays for one item', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('a', 1000);
    q.addAfter('a', 10);
    q.addAfter('a', 5000);
    assert.equal(q.waitingCount(), 1);
    await clock.advance(10);
    assert.equal(q.len(), 1);
    await clock.advance(5000);
    assert.equal(q.len(), 1, 'added once, not again at 1000 or 5000');
    assert.equal(clock.pending, 0, 'no timer left behind');
  });

  it('shutDown cancels waiting items and their timer', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('a', 100);
    q.shutDown();
    assert.equal(clock.pending, 0);
    await clock.advance(200);
    assert.equal(q.len(), 0);
  });
});

describe('rate-limiting queue', () => {
  it('addRateLimited backs off per item until forget; metrics carry the queue name', async () => {
    const clock = new FakeClock();
    const registry = createRegistry({ defaultMetrics: false });
    const q = new RateLimitingQueue<string>({
      name: 'widgets',
      clock,
      registry,
      rateLimiter: new ItemExponentialFailureRateLimiter(5, 1000),
    });
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const before = clock.now();
      q.addRateLimited('a');
      while (q.len() === 0) await clock.advance(1);
      delays.push(clock.now() - before);
      const k = (await q.get()) as string;
      q.done(k);
    }
    assert.deepEqual(delays, [5, 10, 20, 40]);
    assert.equal(q.numRequeues('a'), 4);
    q.forget('a');
    assert.equal(q.numRequeues('a'), 0);

    const text = await registry.metrics();
    for (const name of [
      'workqueue_depth{name="widgets"}',
      'workqueue_adds_total{name="widgets"} 4',
      'workqueue_retries_total{name="widgets"} 4',
      'workqueue_queue_duration_seconds_count{name="widgets"} 4',
      'workqueue_work_duration_seconds_count{name="widgets"} 4',
    ]) {
      assert.ok(text.includes(name), `${name} in\n${text}`);
    }
  });
});
