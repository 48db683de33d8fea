import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../lib/testing/fake-clock.ts';
import { Coalescer } from './coalesce.ts';

describe('Coalescer', () => {
  it('fires once for a burst, once the events are quiet for the window', async () => {
    const clock = new FakeClock();
    let fired = 0;
    const c = new Coalescer(clock, { windowMs: 100 }, () => fired++);
    for (let i = 0; i < 40; i++) {
      c.touch();
      await clock.advance(20);
    }
    assert.equal(fired, 0, 'events 20 ms apart keep it waiting');
    await clock.advance(100);
    assert.equal(fired, 1);
    await clock.advance(10_000);
    assert.equal(fired, 1, 'nothing more without a new event');
    c.touch();
    await clock.advance(100);
    assert.equal(fired, 2, 'the next burst fires again');
  });

  it('a stream that never goes quiet fires every maxWindows windows', async () => {
    const clock = new FakeClock();
    let fired = 0;
    const c = new Coalescer(clock, { windowMs: 100, maxWindows: 10 }, () => fired++);
    for (let i = 0; i < 100; i++) {
      c.touch();
      await clock.advance(50);
    }
    // 5 s of events 50 ms apart: fired at 1 s, 2 s, ... after each burst's first event.
    assert.ok(fired >= 4 && fired <= 5, `fired ${fired} times`);
    c.stop();
    await clock.advance(10_000);
    assert.ok(fired <= 5);
  });

  it('a window of 0 fires on every event', () => {
    const clock = new FakeClock();
    let fired = 0;
    const c = new Coalescer(clock, { windowMs: 0 }, () => fired++);
    c.touch();
    c.touch();
    assert.equal(fired, 2);
  });
});
