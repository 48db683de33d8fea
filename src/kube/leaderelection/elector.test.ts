import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { apiErrors } from '../../sim/kube/errors.ts';
import { eventually, startTestKube, type TestKube } from '../../sim/kube/testing/harness.ts';
import type { KubeClient } from '../client.ts';
import { kinds } from '../resource.ts';
import { testClient } from '../testing/env.ts';
import {
  LeaderElectionConfigError,
  LeaderElector,
  validateLeaderElectionConfig,
  type ElectionOutcome,
} from './elector.ts';

const base = { leaseName: 'l', leaseNamespace: 'kube-system', identity: 'me' };

describe('leader election config', () => {
  it("takes client-go's defaults and OpenShift's long ones", () => {
    const d = validateLeaderElectionConfig(base);
    assert.deepEqual(
      [d.leaseDurationMs, d.renewDeadlineMs, d.retryPeriodMs, d.releaseOnCancel],
      [15_000, 10_000, 2_000, true],
    );
    assert.doesNotThrow(() =>
      validateLeaderElectionConfig({
        ...base,
        leaseDurationMs: 137_000,
        renewDeadlineMs: 107_000,
        retryPeriodMs: 26_000,
      }),
    );
  });

  it('refuses leaseDuration ≤ renewDeadline ≤ 1.2 × retryPeriod, and missing callbacks', () => {
    assert.throws(
      () => validateLeaderElectionConfig({ ...base, leaseDurationMs: 10_000 }),
      /leaseDurationMs \(10000\) must be greater than renewDeadlineMs/,
    );
    assert.throws(
      () => validateLeaderElectionConfig({ ...base, retryPeriodMs: 9_000 }),
      /1.2 × retryPeriodMs/,
    );
    assert.throws(() => validateLeaderElectionConfig({ ...base, identity: '' }), LeaderElectionConfigError);
    assert.throws(
      () =>
        new LeaderElector({
          client: {} as KubeClient,
          config: base,
          callbacks: { onStartedLeading: () => {} } as never,
        }),
      /callbacks are required/,
    );
  });
});

describe('leader election against the emulator', () => {
  let k: TestKube;
  let client: KubeClient;
  before(async () => {
    k = await startTestKube();
    client = testClient(k.kubeconfigPath);
  });
  after(async () => {
    await client.close();
    await k.close();
  });

  const candidate = (
    identity: string,
    leaseName: string,
    timing: { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number },
  ) => {
    const events: string[] = [];
    const elector = new LeaderElector({
      client,
      config: { leaseName, leaseNamespace: 'kube-system', identity, ...timing },
      callbacks: {
        onStartedLeading: () => events.push('started'),
        onStoppedLeading: () => events.push('stopped'),
      },
    });
    const stop = new AbortController();
    const outcome: Promise<ElectionOutcome> = elector.run(stop.signal);
    return { elector, events, stop, outcome };
  };

  it('one leader at a time; a released lease passes at once, with a transition counted', async () => {
    const timing = { leaseDurationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 100 };
    const a = candidate('a', 'release', timing);
    await eventually(() => a.elector.isLeader(), { what: 'a to lead' });
    const b = candidate('b', 'release', timing);
    await eventually(() => b.elector.leader() === 'a', { what: 'b to see a' });
    assert.equal(b.elector.isLeader(), false);

    a.stop.abort();
    assert.equal(await a.outcome, 'released');
    assert.deepEqual(a.events, ['started', 'stopped']);
    // A 60 s lease: b only gets it within the test's 5 s because a handed it back.
    await eventually(() => b.elector.isLeader(), { what: 'b to take the released lease' });
    const lease = await client.get(kinds.Lease, { namespace: 'kube-system', name: 'release' });
    assert.equal(lease.spec?.holderIdentity, 'b');
    assert.equal(lease.spec?.leaseTransitions, 1);
    assert.equal(lease.spec?.leaseDurationSeconds, 60);
    b.stop.abort();
    await b.outcome;
  });

  it('a leader that cannot renew loses within renewDeadline; a standby takes over once the lease expires', async () => {
    const timing = { leaseDurationMs: 2_000, renewDeadlineMs: 1_500, retryPeriodMs: 200 };
    const a = candidate('a', 'failover', timing);
    await eventually(() => a.elector.isLeader());
    const b = candidate('b', 'failover', timing);
    await eventually(() => b.elector.leader() === 'a');
    // a's process hangs as far as the API server can tell: its renewals never arrive.
    const block = k.em.reactors.prepend('update', 'leases', (action) =>
      action.name === 'failover' &&
      (action.object?.spec as { holderIdentity?: string } | undefined)?.holderIdentity === 'a'
        ? { handled: true, error: apiErrors.internal('renewal lost by the test') }
        : { handled: false },
    );
    assert.equal(await a.outcome, 'lost', 'fail-stop after renewDeadline');
    assert.equal(a.elector.isLeader(), false);
    await eventually(() => b.elector.isLeader(), {
      timeoutMs: 8_000,
      what: 'b to take over the expired lease',
    });
    const lease = await client.get(kinds.Lease, { namespace: 'kube-system', name: 'failover' });
    assert.equal(lease.spec?.holderIdentity, 'b');
    block();
    b.stop.abort();
    assert.equal(await b.outcome, 'released');
  });
});
