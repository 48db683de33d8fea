/**
 * Crash consistency: the engine is killed right after its k-th OpenStack write (the write took
 * effect, its answer is lost), for every k of a whole create, then a fresh engine — a restarted
 * process, remembering nothing — runs to Ready. Exactly one load balancer, one floating IP, and no
 * leaked port or address may result. The same for every k of a removal.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { OpenStackClient } from '../../client.ts';
import { LoadBalancerEngine } from './engine.ts';
import {
  converge,
  desiredLb,
  Killed,
  killAfterWrites,
  openLbWorld,
  teardown,
  type LbWorld,
} from './testing/fixtures.ts';
import type { DesiredLoadBalancer } from './types.ts';

const BACKOFF = { initialMs: 2, maxMs: 20 };

describe('load-balancer engine: killed between any two writes', () => {
  let w: LbWorld;
  let admin: OpenStackClient;

  before(async () => {
    w = await openLbWorld();
    admin = await w.target.client(w.target.admin!);
  });
  after(async () => {
    await w?.close();
  });

  const census = async () => ({
    ports: (await admin.network.ports.list().all()).length,
    fips: (await admin.network.floatingIps.list().all()).length,
    lbs: (await admin.loadBalancer.loadBalancers.list().all()).length,
  });

  /** Runs `call` (ensure or remove) until the wrapper kills it, or it finishes first. */
  async function runUntilKilled(
    call: () => Promise<{ phase: string; retryAfterMs?: number }>,
  ): Promise<boolean> {
    for (let i = 0; i < 1_000; i++) {
      try {
        const r = await call();
        if (r.phase !== 'Pending') return false;
        await sleep(Math.min(r.retryAfterMs ?? 0, 20));
      } catch (err) {
        if (err instanceof Killed) return true;
        throw err;
      }
    }
    throw new Error('neither killed nor finished');
  }

  /** Writes a clean create (or removal) makes, counted through the same wrapper. */
  async function countWrites(d: DesiredLoadBalancer, phase: 'ensure' | 'remove'): Promise<number> {
    const counting = killAfterWrites(w.os, Infinity);
    const engine = new LoadBalancerEngine(counting.api, { backoff: BACKOFF });
    const run = phase === 'ensure' ? await converge(engine, d) : await teardown(engine, d);
    assert.equal(run.result.phase, phase === 'ensure' ? 'Ready' : 'Deleted');
    return counting.writes();
  }

  for (const serial of [false, true]) {
    const mode = serial ? 'serial' : 'fully populated';

    it(`create (${mode}): one load balancer, one floating IP, no leaks, for every k`, async (t) => {
      const shape = {
        members: 3,
        monitor: true,
        serial,
        ports: [
          { protocol: 'TCP' as const, port: 80, nodePort: 30080 },
          { protocol: 'UDP' as const, port: 53, nodePort: 30053 },
        ],
      };
      const baseline = await census();
      const probe = desiredLb(w, { name: `probe-${serial}`, ...shape });
      const n = await countWrites(probe, 'ensure');
      const withOne = await census();
      assert.equal((await countWrites(probe, 'remove')) > 0, true);
      assert.deepEqual(await census(), baseline);
      assert.ok(n >= (serial ? 13 : 2), `a ${mode} create makes ${n} writes`);
      t.diagnostic(`${mode} create: killed after each of ${n} writes`);

      for (let k = 1; k <= n; k++) {
        const d = desiredLb(w, { name: `crash-${serial}-${k}`, ...shape });
        const killed = killAfterWrites(w.os, k);
        assert.equal(
          await runUntilKilled(() => new LoadBalancerEngine(killed.api, { backoff: BACKOFF }).ensure(d)),
          true,
        );
        assert.equal(killed.writes(), k);

        // A restarted process: a new engine, nothing remembered.
        const restarted = new LoadBalancerEngine(w.os, { backoff: BACKOFF });
        const r = (await converge(restarted, d)).result;
        assert.equal(r.phase, 'Ready', `k=${k}: ${JSON.stringify(r)}`);
        const lbs = await admin.loadBalancer.loadBalancers.list({ name: d.identity.name }).all();
        assert.equal(lbs.length, 1, `k=${k}: one load balancer`);
        const fips = await admin.network.floatingIps.list({ description: d.floatingIp!.description }).all();
        assert.equal(fips.length, 1, `k=${k}: one floating IP`);
        assert.equal(fips[0]!.port_id, lbs[0]!.vip_port_id);
        assert.deepEqual(await census(), withOne, `k=${k}: nothing more than one clean create leaves`);
        const listeners = await admin.loadBalancer.listeners.list({ loadbalancer_id: lbs[0]!.id }).all();
        assert.equal(listeners.length, 2, `k=${k}: no duplicate listener`);

        assert.equal((await teardown(restarted, d)).result.phase, 'Deleted');
        assert.deepEqual(await census(), baseline, `k=${k}: removal leaves nothing`);
      }
    });

    it(`removal (${mode}): nothing left, for every k`, async (t) => {
      const shape = { members: 3, monitor: true, serial };
      const baseline = await census();
      const probe = desiredLb(w, { name: `rprobe-${serial}`, ...shape });
      await countWrites(probe, 'ensure');
      const m = await countWrites(probe, 'remove');
      assert.ok(m >= 2, `a ${mode} removal makes ${m} writes`);
      t.diagnostic(`${mode} removal: killed after each of ${m} writes`);

      for (let k = 1; k <= m; k++) {
        const d = desiredLb(w, { name: `rcrash-${serial}-${k}`, ...shape });
        const engine = new LoadBalancerEngine(w.os, { backoff: BACKOFF });
        assert.equal((await converge(engine, d)).result.phase, 'Ready');
        const killed = killAfterWrites(w.os, k);
        assert.equal(
          await runUntilKilled(() => new LoadBalancerEngine(killed.api, { backoff: BACKOFF }).remove(d)),
          true,
        );
        assert.equal(
          (await teardown(new LoadBalancerEngine(w.os, { backoff: BACKOFF }), d)).result.phase,
          'Deleted',
        );
        assert.deepEqual(await census(), baseline, `k=${k}`);
      }
    });
  }
});
