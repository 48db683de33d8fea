import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../lib/testing/fake-clock.ts';
import { conditionsFor, conditionsPresent } from './conditions.ts';
import { FailureWindow } from './failure-window.ts';

describe('ClusterOperator conditions', () => {
  const t0 = Date.UTC(2026, 0, 1);
  const existing = [
    { type: 'Available', status: 'True' as const, lastTransitionTime: '2025-01-01T00:00:00Z' },
    {
      type: 'Degraded',
      status: 'False' as const,
      lastTransitionTime: '2025-01-01T00:00:00Z',
      reason: 'AsExpected',
    },
  ];

  it('keep the transition time while the status stays, take a new one when it flips', () => {
    const out = conditionsFor(
      existing,
      [
        { type: 'Available', status: 'True', reason: 'AsExpected', message: 'available at 4.16' },
        { type: 'Degraded', status: 'True', reason: 'SyncingFailed', message: 'x' },
        { type: 'Upgradeable', status: 'False', reason: 'SyncingFailed' },
      ],
      t0,
    );
    assert.deepEqual(out, [
      {
        type: 'Available',
        status: 'True',
        lastTransitionTime: '2025-01-01T00:00:00Z',
        reason: 'AsExpected',
        message: 'available at 4.16',
      },
      {
        type: 'Degraded',
        status: 'True',
        lastTransitionTime: '2026-01-01T00:00:00Z',
        reason: 'SyncingFailed',
        message: 'x',
      },
      {
        type: 'Upgradeable',
        status: 'False',
        lastTransitionTime: '2026-01-01T00:00:00Z',
        reason: 'SyncingFailed',
        message: '',
      },
    ]);
    assert.ok(!conditionsPresent(existing, out));
    assert.ok(conditionsPresent(out, out));
  });
});

describe('FailureWindow', () => {
  it('degrades once transient failures have lasted the threshold, and a success starts over', async () => {
    const clock = new FakeClock();
    const w = new FailureWindow(clock, 120_000);
    assert.equal(w.failed(), false);
    await clock.advance(119_000);
    assert.equal(w.failed(), false);
    await clock.advance(1_000);
    assert.equal(w.failed(), true);
    w.clear();
    assert.equal(w.failed(), false);
    assert.equal(w.failingSince, clock.now());
  });
});
