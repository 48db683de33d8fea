import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  TokenBucket,
} from './ratelimit.ts';
import { FakeClock } from '../lib/testing/fake-clock.ts';

describe('rate limiters', () => {
  it('per-item exponential: base × 2^n, capped, per item, reset by forget', () => {
    const l = new ItemExponentialFailureRateLimiter<string>(5, 1_000);
    assert.deepEqual(
      Array.from({ length: 10 }, () => l.when('a')),
      [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000],
    );
    assert.equal(l.numRequeues('a'), 10);
    assert.equal(l.when('b'), 5, 'items back off independently');
    l.forget('a');
    assert.equal(l.numRequeues('a'), 0);
    assert.equal(l.when('a'), 5, 'forget resets the back-off');
  });

  it('never overflows: a thousand failures still give the cap', () => {
    const l = new ItemExponentialFailureRateLimiter<string>(5, 1_000_000);
    let last = 0;
    for (let i = 0; i < 1000; i++) last = l.when('x');
    assert.equal(last, 1_000_000);
  });

  it('token bucket: burst at once, then 1/qps apart, refilled by time', async () => {
    const clock = new FakeClock();
    const b = new TokenBucket(10, 3, clock);
    assert.deepEqual([b.reserve(), b.reserve(), b.reserve()], [0, 0, 0]);
    assert.equal(b.reserve(), 100);
    assert.equal(b.reserve(), 200);
    await clock.advance(1000);
    // 1 s at 10/s refills 10 tokens, 2 already owed, capped at the burst of 3.
    assert.deepEqual([b.reserve(), b.reserve(), b.reserve()], [0, 0, 0]);
    assert.equal(b.tryTake(), false);
  });

  it('token bucket wait sleeps on the clock and gives the token back on abort', async () => {
    const clock = new FakeClock();
    const b = new TokenBucket(1, 1, clock);
    assert.equal(await b.wait(), 0);
    const ac = new AbortController();
    const waiting = b.wait(ac.signal);
    ac.abort(new Error('stop'));
    await assert.rejects(waiting, /stop/);
    // The aborted wait returned its token: the next caller waits 1 s, not 2.
    assert.equal(b.reserve(), 1000);
  });

  it('qps 0 means unlimited', () => {
    const b = new TokenBucket(0, 0);
    for (let i = 0; i < 1000; i++) assert.equal(b.reserve(), 0);
  });

  it("client-go's default: exponential from 5 ms until the 10/s bucket (burst 100) is slower", () => {
    const clock = new FakeClock();
    const l = defaultControllerRateLimiter<string>(clock);
    assert.equal(l.when('a'), 5);
    assert.equal(l.when('a'), 10);
    // Drain the rest of the burst through other keys: 98 more tokens.
    for (let i = 0; i < 98; i++) l.when(`k${i}`);
    assert.equal(l.when('b'), 100, 'the bucket is empty: 100 ms for the next token');
    assert.equal(l.numRequeues('a'), 2);
    l.forget('a');
    assert.equal(l.numRequeues('a'), 0);
  });

  it('max-of asks every limiter and takes the longest', () => {
    const clock = new FakeClock();
    const l = new MaxOfRateLimiter<string>(
      new ItemExponentialFailureRateLimiter(1, 100),
      new BucketRateLimiter(1, 1, clock),
    );
    assert.equal(l.when('a'), 1);
    assert.equal(l.when('a'), 1000);
    assert.equal(l.numRequeues('a'), 2);
  });
});
