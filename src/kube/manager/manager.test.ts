import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fetch } from 'undici';
import { apiErrors } from '../../sim/kube/errors.ts';
import { eventually, startTestKube, type TestKube } from '../../sim/kube/testing/harness.ts';
import type { KubeClient } from '../client.ts';
import { LeaderElectionLostError } from '../leaderelection/elector.ts';
import { parseLeaderMigrationConfiguration } from '../leaderelection/migration.ts';
import { kinds, objectKey } from '../resource.ts';
import { configMap, gate, kubeConfigFrom, testClient } from '../testing/env.ts';
import { Manager, ShutdownIncompleteError, type ManagerOptions } from './manager.ts';

describe('manager against the emulator', () => {
  let k: TestKube;
  let client: KubeClient;
  const stops: (() => Promise<unknown>)[] = [];

  before(async () => {
    k = await startTestKube();
    client = testClient(k.kubeconfigPath);
  });
  after(async () => {
    for (const s of stops) await s().catch(() => undefined);
    await client.close();
    await k.close();
  });

  const namespace = async (name: string) => {
    await client.create(kinds.Namespace, { metadata: { name } });
    return name;
  };

  /**
   * A manager with one ConfigMap controller per name in `controllers`, counting reconciles per
   * controller and object, started in the background.
   */
  const launch = (opts: Omit<ManagerOptions, 'kubeConfig'> & { controllers?: string[] }) => {
    const mgr = new Manager({ kubeConfig: kubeConfigFrom(k.kubeconfigPath), qps: 0, ...opts });
    const seen = new Map<string, string[]>();
    for (const name of opts.controllers ?? ['configmaps']) {
      seen.set(name, []);
      mgr
        .controller(name)
        .for(kinds.ConfigMap)
        .complete((req) => {
          seen.get(name)?.push(req.name);
          return Promise.resolve();
        });
    }
    const ac = new AbortController();
    const done = mgr.start(ac.signal);
    // Observe a failure now, so an expected rejection is not reported as unhandled.
    const outcome = done.then(
      () => 'stopped' as const,
      (err: unknown) => err,
    );
    const stop = async () => {
      ac.abort();
      return outcome;
    };
    stops.push(stop);
    return { mgr, seen, stop, outcome };
  };

  it('serves /healthz, /readyz and /metrics with the runtime metrics', async () => {
    const ns = await namespace('mgr-health');
    await client.create(kinds.ConfigMap, configMap('h', ns));
    const { mgr, seen, stop } = launch({
      name: 'health',
      namespace: ns,
      healthProbe: { port: 0 },
      leaderElection: {
        leaseName: 'health',
        leaseNamespace: ns,
        leaseDurationMs: 30_000,
        renewDeadlineMs: 20_000,
        retryPeriodMs: 200,
      },
    });
    await eventually(() => seen.get('configmaps')?.includes('h'), { what: 'a reconcile' });
    const base = mgr.healthUrl as string;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    const ready = await fetch(`${base}/readyz?verbose`);
    assert.equal(ready.status, 200);
    assert.match(await ready.text(), /\[\+\]informer-sync ok/);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    for (const line of [
      /workqueue_depth\{name="configmaps"\} 0/,
      /workqueue_adds_total\{name="configmaps"\} [1-9]/,
      /workqueue_queue_duration_seconds_count\{name="configmaps"\}/,
      /workqueue_work_duration_seconds_count\{name="configmaps"\}/,
      /workqueue_retries_total\{name="configmaps"\} 0/,
      /controller_runtime_reconcile_total\{controller="configmaps",result="success"\} [1-9]/,
      /controller_runtime_reconcile_errors_total\{controller="configmaps"\} 0/,
      /rest_client_requests_total\{code="200",method="GET"/,
      /leader_election_master_status\{name="health"\} 1/,
      /informer_lists_total\{resource="configmaps"\} 1/,
    ]) {
      assert.match(metrics, line);
    }
    assert.equal(await stop(), 'stopped');
  });

  it('stops gracefully: no new work, reconciles in flight finish, the lease is released last', async () => {
    const ns = await namespace('mgr-graceful');
    const hold = gate();
    let finished: { aborted: boolean } | undefined;
    const mgr = new Manager({
      name: 'graceful',
      kubeConfig: kubeConfigFrom(k.kubeconfigPath),
      qps: 0,
      namespace: ns,
      leaderElection: {
        leaseName: 'graceful',
        leaseNamespace: ns,
        leaseDurationMs: 30_000,
        renewDeadlineMs: 20_000,
        retryPeriodMs: 200,
      },
    });
    let started = 0;
    mgr
      .controller()
      .for(kinds.ConfigMap)
      .complete(async (_req, signal) => {
        started++;
        await hold.promise;
        // The lease is still ours while we finish: a successor cannot overlap with this write.
        const lease = await client.get(kinds.Lease, { namespace: ns, name: 'graceful' });
        finished = { aborted: signal.aborted || lease.spec?.holderIdentity !== mgr.identity };
      });
    const ac = new AbortController();
    const done = mgr.start(ac.signal);
    await client.create(kinds.ConfigMap, configMap('slow', ns));
    await eventually(() => started === 1, { what: 'the reconcile to start' });
    ac.abort(new Error('SIGTERM'));
    await client.create(kinds.ConfigMap, configMap('late', ns));
    hold.open();
    await done;
    assert.deepEqual(
      finished,
      { aborted: false },
      'finished with its signal intact and the lease still held',
    );
    assert.equal(started, 1, 'no work taken after the stop');
    const lease = await client.get(kinds.Lease, { namespace: ns, name: 'graceful' });
    assert.equal(lease.spec?.holderIdentity, '', 'released on the way out');
  });

  it('keeps leading while its controllers saturate their rate limiter: the Lease has a client of its own', async () => {
    const ns = await namespace('mgr-saturated');
    const sink = await namespace('mgr-saturated-sink');
    const mgr = new Manager({
      name: 'saturated',
      kubeConfig: kubeConfigFrom(k.kubeconfigPath),
      // A tiny budget: hundreds of writes queue for minutes behind each other.
      qps: 2,
      burst: 1,
      namespace: ns,
      gracefulShutdownTimeoutMs: 100,
      leaderElection: {
        leaseName: 'saturated',
        leaseNamespace: ns,
        leaseDurationMs: 6_000,
        renewDeadlineMs: 4_000,
        retryPeriodMs: 500,
      },
    });
    let written = 0;
    mgr
      .controller()
      .for(kinds.ConfigMap)
      .complete(async (req, signal) => {
        if (req.name !== 'go') return;
        await Promise.all(
          Array.from({ length: 300 }, (_, i) =>
            mgr.api.create(kinds.ConfigMap, configMap(`w-${i}`, sink), { signal }).then(() => written++),
          ),
        );
      });
    const ac = new AbortController();
    const done = mgr.start(ac.signal);
    const outcome = done.then(
      () => 'stopped' as const,
      (err: unknown) => err,
    );
    stops.push(async () => {
      ac.abort();
      return outcome;
    });
    await eventually(() => mgr.isLeader(), { what: 'leading' });
    await client.create(kinds.ConfigMap, configMap('go', ns));
    await eventually(() => written >= 2, { what: 'the writes to start draining' });

    // Renewals go on (each one a new renewTime) while the controllers' writes wait their turn.
    const renewals = new Set<string>();
    await eventually(
      async () => {
        const lease = await client.get(kinds.Lease, { namespace: ns, name: 'saturated' });
        assert.equal(lease.spec?.holderIdentity, mgr.identity, 'still the holder');
        renewals.add(String(lease.spec?.renewTime));
        return renewals.size >= 4;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'the Lease renewed while saturated' },
    );
    assert.ok(mgr.isLeader(), 'still leading');
    assert.ok(written < 300, `the controllers' writes are still queued (${written} of 300 done)`);
    ac.abort();
    assert.equal(await outcome, 'stopped', 'a graceful stop, not a lost lease');
  });

  it("writes Events through a rate limiter of its own: the controllers' budget spent, an Event still goes at once", async () => {
    const ns = await namespace('mgr-events-limiter');
    // Time stands still on this clock: a call without a token would record the wait it needs.
    const waits: number[] = [];
    const clock = {
      now: () => 0,
      random: () => 0,
      setTimer: () => () => {},
      sleep: (ms: number) => {
        waits.push(ms);
        return Promise.resolve();
      },
    };
    const mgr = new Manager({
      name: 'events-limiter',
      kubeConfig: kubeConfigFrom(k.kubeconfigPath),
      qps: 1,
      burst: 1,
      clock,
    });
    const cm = await mgr.api.create(kinds.ConfigMap, configMap('seen', ns));
    assert.deepEqual(waits, [], "the controllers' one token");
    mgr.events.event(cm, 'Normal', 'Seen', 'seen by the test');
    await mgr.events.flush();
    assert.deepEqual(waits, [], 'the Event took no token of the controllers');
    const events = await client.list(kinds.Event, { namespace: ns });
    assert.deepEqual(
      events.items.map((e) => e.reason),
      ['Seen'],
    );
    const ac = new AbortController();
    const done = mgr.start(ac.signal);
    ac.abort();
    await done;
  });

  it('aborts reconciles still running at the graceful-shutdown deadline', async () => {
    const ns = await namespace('mgr-deadline');
    const mgr = new Manager({
      name: 'deadline',
      kubeConfig: kubeConfigFrom(k.kubeconfigPath),
      qps: 0,
      namespace: ns,
      gracefulShutdownTimeoutMs: 100,
    });
    let reason: string | undefined;
    let running = false;
    mgr
      .controller()
      .for(kinds.ConfigMap)
      .complete(
        (_req, signal) =>
          new Promise((_resolve, reject) => {
            running = true;
            signal.addEventListener('abort', () => {
              reason = (signal.reason as Error).message;
              reject(signal.reason as Error);
            });
          }),
      );
    const ac = new AbortController();
    const done = mgr.start(ac.signal);
    await client.create(kinds.ConfigMap, configMap('stuck', ns));
    await eventually(() => running, { what: 'the stuck reconcile' });
    ac.abort();
    await done;
    assert.match(reason ?? '', /graceful shutdown exceeded 100 ms/);
  });

  it('never releases the Lease while a runnable that ignores its stop signal still writes', async () => {
    const ns = await namespace('mgr-stubborn');
    const target = await client.create(kinds.ConfigMap, configMap('target', ns));
    const mgr = new Manager({
      name: 'stubborn',
      kubeConfig: kubeConfigFrom(k.kubeconfigPath),
      qps: 0,
      namespace: ns,
      gracefulShutdownTimeoutMs: 100,
      leaderElection: {
        leaseName: 'stubborn',
        leaseNamespace: ns,
        leaseDurationMs: 30_000,
        renewDeadlineMs: 20_000,
        retryPeriodMs: 200,
      },
    });
    // Left-behind work: it sees neither its stop signal nor the hard stop, and writes on.
    const writes: number[] = [];
    let quit = false;
    let loop: Promise<void> | undefined;
    mgr.add({
      name: 'stubborn-writer',
      start: () => {
        loop = (async () => {
          for (let n = 0; !quit; n++) {
            const cm = await client.patch(kinds.ConfigMap, objectKey(target), 'merge', {
              data: { n: String(n) },
            });
            writes.push(Number(cm.metadata?.resourceVersion));
            await sleep(20);
          }
        })();
        return loop;
      },
    });
    const ac = new AbortController();
    const done = mgr.start(ac.signal);
    const outcome = done.then(
      () => 'stopped' as const,
      (err: unknown) => err,
    );
    await eventually(() => writes.length >= 2, { what: 'the writer to write' });
    ac.abort(new Error('SIGTERM'));
    const ended = await outcome;
    // The manager has given up on it; it still writes a few times before the test ends it.
    const after = writes.length;
    await eventually(() => writes.length >= after + 3, { what: 'writes after the manager returned' });
    quit = true;
    await loop;

    const lease = await client.get(kinds.Lease, { namespace: ns, name: 'stubborn' });
    const leaseRv = Number(lease.metadata?.resourceVersion);
    if (lease.spec?.holderIdentity === '') {
      const late = writes.filter((rv) => rv > leaseRv);
      assert.deepEqual(late, [], 'no write after the Lease was released: a successor would have overlapped');
    } else {
      assert.equal(lease.spec?.holderIdentity, mgr.identity, 'left to expire, still naming us');
    }
    assert.ok(ShutdownIncompleteError.is(ended), `start rejects naming what did not stop: ${String(ended)}`);
    assert.match(ended.message, /stubborn-writer/);
  });

  it('two managers: only the leader reconciles; a graceful stop hands over at once', async () => {
    const ns = await namespace('mgr-handover');
    // A 60 s lease: the standby can only lead within this test's waits if the lease is handed back.
    const leaderElection = {
      leaseName: 'handover',
      leaseNamespace: ns,
      leaseDurationMs: 60_000,
      renewDeadlineMs: 40_000,
      retryPeriodMs: 100,
    };
    const a = launch({ name: 'a', namespace: ns, leaderElection });
    await eventually(() => a.mgr.isLeader(), { what: 'a to lead' });
    const b = launch({ name: 'b', namespace: ns, leaderElection });
    await eventually(() => b.mgr.informers.hasSynced() && b.mgr.informers.all().length > 0, {
      what: 'b synced',
    });

    for (const name of ['x1', 'x2']) await client.create(kinds.ConfigMap, configMap(name, ns));
    await eventually(() => ['x1', 'x2'].every((n) => a.seen.get('configmaps')?.includes(n)), {
      what: 'a reconciles',
    });
    await eventually(() => b.mgr.client.get(kinds.ConfigMap, { namespace: ns, name: 'x2' }), {
      what: 'b caches x2',
    });
    assert.equal(b.mgr.isLeader(), false);
    assert.deepEqual(b.seen.get('configmaps'), [], 'the standby watches but does not reconcile');

    assert.equal(await a.stop(), 'stopped');
    await eventually(() => b.mgr.isLeader(), { what: 'b to lead after the release' });
    await eventually(() => ['x1', 'x2'].every((n) => b.seen.get('configmaps')?.includes(n)), {
      what: 'b reconciles everything',
    });
    await b.stop();
  });

  it('failover: when the holder dies without releasing, it stops itself and the standby takes over', async () => {
    const ns = await namespace('mgr-failover');
    const leaderElection = {
      leaseName: 'failover',
      leaseNamespace: ns,
      leaseDurationMs: 2_000,
      renewDeadlineMs: 1_500,
      retryPeriodMs: 200,
    };
    const a = launch({ name: 'a', namespace: ns, leaderElection });
    await eventually(() => a.mgr.isLeader(), { what: 'a to lead' });
    const b = launch({ name: 'b', namespace: ns, leaderElection });
    await client.create(kinds.ConfigMap, configMap('before', ns));
    await eventually(() => a.seen.get('configmaps')?.includes('before'));

    const aId = a.mgr.identity;
    const block = k.em.reactors.prepend('update', 'leases', (action) =>
      action.namespace === ns &&
      (action.object?.spec as { holderIdentity?: string } | undefined)?.holderIdentity === aId
        ? { handled: true, error: apiErrors.internal('a is gone') }
        : { handled: false },
    );
    const outcome = await a.outcome;
    assert.ok(
      LeaderElectionLostError.is(outcome),
      'losing the lease stops the manager with LeaderElectionLostError',
    );
    await eventually(() => b.mgr.isLeader(), { timeoutMs: 8_000, what: 'b to take over the expired lease' });
    await client.create(kinds.ConfigMap, configMap('after', ns));
    await eventually(() => b.seen.get('configmaps')?.includes('after'), { what: 'b reconciles' });
    assert.ok(!a.seen.get('configmaps')?.includes('after'), 'the dead leader does nothing more');
    block();
    await b.stop();
  });

  it('KEP-2436 leader migration: each migrating controller runs in exactly one component', async () => {
    const ns = await namespace('mgr-migration');
    const timing = {
      leaseNamespace: ns,
      leaseDurationMs: 60_000,
      renewDeadlineMs: 40_000,
      retryPeriodMs: 100,
    };
    const config = (text: string) =>
      parseLeaderMigrationConfiguration(
        `kind: LeaderMigrationConfiguration\napiVersion: controllermanager.config.k8s.io/v1\nleaderName: cloud-provider-extraction-migration\ncontrollerLeaders:\n${text}`,
      );
    // The old release runs both cloud controllers in kube-controller-manager; the new one moves
    // service-controller to cloud-controller-manager and leaves route-controller where it was.
    const kcm = launch({
      name: 'kube-controller-manager',
      namespace: ns,
      controllers: ['route-controller', 'service-controller', 'node-ipam-controller'],
      leaderElection: { leaseName: 'kube-controller-manager', ...timing },
      leaderMigration: {
        component: 'kube-controller-manager',
        config: config(
          '- {name: route-controller, component: kube-controller-manager}\n- {name: service-controller, component: kube-controller-manager}\n',
        ),
      },
    });
    await eventually(() => kcm.mgr.isLeader());
    const ccm = launch({
      name: 'cloud-controller-manager',
      namespace: ns,
      controllers: ['route-controller', 'service-controller', 'cloud-node-controller'],
      leaderElection: { leaseName: 'cloud-controller-manager', ...timing },
      leaderMigration: {
        component: 'cloud-controller-manager',
        config: config(
          '- {name: route-controller, component: kube-controller-manager}\n- {name: service-controller, component: cloud-controller-manager}\n',
        ),
      },
    });
    await eventually(() => ccm.mgr.isLeader(), { what: 'ccm holds its own main lease' });

    await client.create(kinds.ConfigMap, configMap('s1', ns));
    await eventually(
      () =>
        ['route-controller', 'service-controller', 'node-ipam-controller'].every((c) =>
          kcm.seen.get(c)?.includes('s1'),
        ) && ccm.seen.get('cloud-node-controller')?.includes('s1'),
      { what: 'kcm runs the migrating controllers, each main lease its own' },
    );
    assert.deepEqual(ccm.seen.get('service-controller'), [], 'the migration lease is kcm’s: ccm waits');
    const lease = await client.get(kinds.Lease, {
      namespace: ns,
      name: 'cloud-provider-extraction-migration',
    });
    assert.equal(lease.spec?.holderIdentity, kcm.mgr.identity);

    // The control-plane upgrade replaces the old kcm: its migration lease is handed over.
    assert.equal(await kcm.stop(), 'stopped');
    await client.create(kinds.ConfigMap, configMap('s2', ns));
    await eventually(() => ccm.seen.get('service-controller')?.includes('s2'), {
      what: 'ccm runs service-controller',
    });
    assert.deepEqual(
      ccm.seen.get('route-controller'),
      [],
      'route-controller belongs to kcm: ccm never runs it',
    );
    await ccm.stop();
  });
});
