import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../../lib/testing/fake-clock.ts';
import { RecreateWindow } from './recreate.ts';

describe('ERROR-recreate window', () => {
  it('recreates at once the first time, then once per window per owner, on the given clock', async () => {
    const clock = new FakeClock();
    const w = new RecreateWindow(clock, 300_000);
    assert.equal(w.begin('a'), true, 'the first recreate is not delayed');
    assert.equal(w.removing('a'), true);
    w.removed('a');
    assert.equal(w.removing('a'), false);
    assert.equal(w.begin('b'), true, 'owners are apart');
    await clock.advance(299_999);
    assert.equal(w.begin('a'), false);
    assert.equal(w.removing('a'), false);
    await clock.advance(1);
    assert.equal(w.begin('a'), true);
  });

  it('forgets an owner that is gone', () => {
    const w = new RecreateWindow(new FakeClock(), 300_000);
    assert.equal(w.begin('a'), true);
    w.forget('a');
    assert.equal(w.removing('a'), false);
    assert.equal(w.begin('a'), true);
  });
});
