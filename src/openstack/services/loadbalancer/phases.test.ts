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
        // A busy API: the create is answered half a phase after it was sent.
        latency: { 'octavia POST /v2/lbaas/loadbalancers': CREATE_MS / 2 },
      },
    });
    engine = new LoadBalancerEngine(w.os, {
      backoff: {
        initialMs: 20,
        maxMs: 1_000,
        phases: { create: CREATE_MS, update: UPDATE_MS, delete: UPDATE_MS },
      },
    });
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
});
