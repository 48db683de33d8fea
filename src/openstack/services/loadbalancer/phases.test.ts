/**
 * The engine looks at Octavia when its phase should be over, and reaches the next write in as few
 * round trips as the cloud allows: counted from the emulator's journal and the engine's results,
 * never timed. The emulator's phases are long and its answers slow enough that a look made too
 * early, or a read that waits for another, shows up in the counts and the journal's order.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LoadBalancerEngine } from './engine.ts';
import { converge, desiredLb, openLbWorld, teardown, type LbWorld } from './testing/fixtures.ts';
import type { DesiredLoadBalancer } from './types.ts';

/** Octavia's create and change phases in this cloud, and what the engine is told to expect. */
const CREATE_MS = 600;
const UPDATE_MS = 300;
const LIST_MS = 150;
/** An engine told the phases above, polling finely. */
const ENGINE = {
  backoff: {
    initialMs: 20,
    maxMs: 1_000,
    phases: { create: CREATE_MS, update: UPDATE_MS, delete: UPDATE_MS },
  },
};

describe('load-balancer engine: looks timed by the phase', () => {
  let w: LbWorld;
  let engine: LoadBalancerEngine;
  const cleanups: DesiredLoadBalancer[] = [];

  before(async () => {
    w = await openLbWorld({
      overrides: {
        transitions: {
          'octavia.loadbalancer.create': CREATE_MS,
          'octavia.member.batch': UPDATE_MS,
          'octavia.loadbalancer.delete': UPDATE_MS,
        },
        // A busy API: the create is answered half a phase after it was sent, the lists of a load
        // balancer's listeners and pools a while after they were asked.
        latency: {
          'octavia POST /v2/lbaas/loadbalancers': CREATE_MS / 2,
          'octavia GET /v2/lbaas/listeners': LIST_MS,
          'octavia GET /v2/lbaas/pools': LIST_MS,
        },
      },
    });
    engine = new LoadBalancerEngine(w.os, ENGINE);
  });
  after(async () => {
    for (const d of cleanups.splice(0)) await teardown(engine, d);
    await w?.close();
  });

  it('looks at a new load balancer once, when the phase that began with its answer is over', async () => {
    const d = desiredLb(w, { name: 'phase-create', members: 2 });
    cleanups.push(d);
    const run = await converge(engine, d);
    assert.equal(run.result.phase, 'Ready');
    assert.deepEqual(
      run.results.map((r) => (r.phase === 'Pending' ? r.message.replace(/ [0-9a-f-]{36}/, '') : r.phase)),
      ['load balancer created', 'Ready'],
      'no look finds it PENDING_CREATE: the slow answer is not counted in the phase',
    );
  });

  it('reads the members and the floating IP beside the listeners and pools, not after them', async () => {
    const ports = [
      { protocol: 'TCP' as const, port: 80, nodePort: 30080 },
      { protocol: 'UDP' as const, port: 53, nodePort: 30053 },
    ];
    const d = desiredLb(w, { name: 'phase-reads', members: 2, ports });
    cleanups.push(d);
    assert.equal((await converge(engine, d)).result.phase, 'Ready');
    const { last } = w.sim.cloud.stats.requests(0);
    const more = desiredLb(w, { name: 'phase-reads', members: 3, ports });
    // A restarted controller: no pool's members confirmed yet (confirmed-members.ts), so they are read.
    const restarted = new LoadBalancerEngine(w.os, ENGINE);
    const r = await restarted.ensure(more);
    assert.equal(r.phase, 'Pending', JSON.stringify(r));
    const answered = w.sim.cloud.stats.requests(last).requests.map((q) => `${q.service} ${q.operation}`);
    const at = (op: string) => {
      const i = answered.indexOf(op);
      assert.ok(i >= 0, `${op} in ${answered.join(', ')}`);
      return i;
    };
    const poolsListed = at('octavia GET /v2/lbaas/pools');
    const membersListed = answered.filter((op) => op === 'octavia GET /v2/lbaas/pools/{pool_id}/members');
    assert.equal(membersListed.length, 2, 'one member list per pool');
    assert.ok(
      answered.lastIndexOf('octavia GET /v2/lbaas/pools/{pool_id}/members') < poolsListed,
      `the member lists were answered before the (slow) pool list: ${answered.join(', ')}`,
    );
    assert.ok(
      at('neutron GET /v2.0/floatingips') < poolsListed,
      `the floating IP list was answered before the (slow) pool list: ${answered.join(', ')}`,
    );
    assert.equal(answered.at(-1), 'octavia PUT /v2/lbaas/pools/{pool_id}/members', 'then the write');
  });
});
