/**
 * The engine against the emulator: end states and OpenStack call budgets (from `/_sim/stats`),
 * never timings.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { addFault, clearFaults } from '../../core/testing/target.ts';
import { LoadBalancerEngine } from './engine.ts';
import {
  calls,
  converge,
  desiredLb,
  drive,
  nodeAddress,
  openLbWorld,
  teardown,
  total,
  writes,
  type LbWorld,
} from './testing/fixtures.ts';
import type { DesiredLoadBalancer, EnsureResult } from './types.ts';

describe('load-balancer engine', () => {
  let w: LbWorld;
  let engine: LoadBalancerEngine;
  const cleanups: DesiredLoadBalancer[] = [];

  before(async () => {
    w = await openLbWorld();
    engine = new LoadBalancerEngine(w.os, { backoff: { initialMs: 2, maxMs: 20 } });
  });
  after(async () => {
    for (const d of cleanups.splice(0)) await teardown(engine, d);
    await w?.close();
  });
  beforeEach(async () => {
    await clearFaults(w.sim);
    w.sim.cloud.stats.reset();
  });

  /** Desired state whose load balancer the suite deletes at the end. */
  const desired = (o: Parameters<typeof desiredLb>[1]) => {
    const d = desiredLb(w, o);
    cleanups.push(d);
    return d;
  };
  const ready = (r: EnsureResult) => {
    assert.equal(r.phase, 'Ready', JSON.stringify(r));
    return r;
  };

  for (const n of [1, 50]) {
    it(`creates ${n} member(s) with one Octavia write and one floating IP create`, async () => {
      const d = desired({ name: `create-${n}`, members: n, monitor: true });
      const run = await converge(engine, d);
      const r = ready(run.result);
      assert.deepEqual(writes(w.sim, 'octavia'), { 'POST /v2/lbaas/loadbalancers': 1 });
      assert.deepEqual(writes(w.sim, 'neutron'), { 'POST /v2.0/floatingips': 1 });
      assert.equal(r.floatingIp?.port_id, r.loadBalancer.vip_port_id);
      assert.equal(r.address, r.floatingIp?.floating_ip_address);
      assert.equal(run.results[0]!.phase, 'Pending', 'the create never waits for ACTIVE');
      for (const x of run.results) if (x.phase === 'Pending') assert.ok(x.retryAfterMs <= 10_000);

      const [pool] = await w.os.loadBalancer.pools.list({ loadbalancer_id: r.loadBalancer.id }).all();
      assert.equal((await w.os.loadBalancer.members.list(pool!.id).all()).length, n);
      assert.ok(pool!.healthmonitor_id);

      w.sim.cloud.stats.reset();
      ready(await engine.ensure(d));
      assert.equal(total(writes(w.sim, 'octavia')) + total(writes(w.sim, 'neutron')), 0, 'steady state');
    });
  }

  it('applies a member change with exactly one batch PUT per pool', async () => {
    const ports = [
      { protocol: 'TCP' as const, port: 80, nodePort: 30080 },
      { protocol: 'UDP' as const, port: 53, nodePort: 30053 },
    ];
    const d = desired({ name: 'churn', members: 5, ports });
    ready((await converge(engine, d)).result);

    // A burst of node changes seen at once: two added, one gone, one reweighted.
    const churned: DesiredLoadBalancer = {
      ...d,
      listeners: d.listeners.map((l) => {
        const members = l.pool.members.filter((m) => m.address !== nodeAddress(0));
        const changed = members.map((m) => (m.address === nodeAddress(1) ? { ...m, weight: 5 } : m));
        const extra = [5, 6].map((i) => ({
          name: `node-${i}`,
          address: nodeAddress(i),
          port: l.pool.members[0]!.port,
        }));
        return { ...l, pool: { ...l.pool, members: [...changed, ...extra] } };
      }),
    };
    w.sim.cloud.stats.reset();
    const r = ready((await converge(engine, churned)).result);
    assert.deepEqual(writes(w.sim, 'octavia'), { 'PUT /v2/lbaas/pools/{pool_id}/members': 2 });
    assert.deepEqual(writes(w.sim, 'neutron'), {});
    for (const pool of await w.os.loadBalancer.pools.list({ loadbalancer_id: r.loadBalancer.id }).all()) {
      const members = await w.os.loadBalancer.members.list(pool.id).all();
      assert.equal(members.length, 6);
      assert.equal(members.find((m) => m.address === nodeAddress(1))?.weight, 5);
    }
    w.sim.cloud.stats.reset();
    ready(await engine.ensure(churned));
    assert.equal(total(writes(w.sim, 'octavia')), 0);
  });

  it('reads an unchanged pool’s members once, and again once anyone changes them, putting them back', async () => {
    // Its own clock, to be past a confirmation's age at will.
    let ahead = 0;
    const engine = new LoadBalancerEngine(w.os, {
      backoff: { initialMs: 2, maxMs: 20 },
      now: () => Date.now() + ahead,
    });
    const d = desired({ name: 'by-hand', members: 3 });
    const r = ready((await converge(engine, d)).result);
    const [pool] = await w.os.loadBalancer.pools.list({ loadbalancer_id: r.loadBalancer.id }).all();
    const memberReads = () => calls(w.sim, 'octavia')['GET /v2/lbaas/pools/{pool_id}/members'] ?? 0;
    w.sim.cloud.stats.reset();
    ready(await engine.ensure(d));
    assert.equal(memberReads(), 0, 'found as desired when it became Ready, unchanged since');

    // Someone removes a member, adds one, reweights one: each time the members are read again (the
    // pool lists other members; a change in place within the second of the last read may not show
    // in the pool's updated_at, so that one is found once the confirmation is too old) and the batch
    // update puts them back.
    const byHand: [string, (id: string) => Promise<unknown>][] = [
      ['removed', (id) => w.os.loadBalancer.members.delete(pool!.id, id)],
      [
        'added',
        () => w.os.loadBalancer.members.create(pool!.id, { address: nodeAddress(9), protocol_port: 80 }),
      ],
      [
        'reweighted',
        (id) => {
          ahead += 600_001;
          return w.os.loadBalancer.members.update(pool!.id, id, { weight: 7 });
        },
      ],
    ];
    for (const [what, edit] of byHand) {
      const [m] = await w.os.loadBalancer.members.list(pool!.id).all();
      await edit(m!.id);
      w.sim.cloud.stats.reset();
      ready((await converge(engine, d)).result);
      assert.deepEqual(writes(w.sim, 'octavia'), { 'PUT /v2/lbaas/pools/{pool_id}/members': 1 }, what);
      const members = await w.os.loadBalancer.members.list(pool!.id).all();
      assert.deepEqual(members.map((x) => x.address).sort(), [0, 1, 2].map(nodeAddress).sort(), what);
      assert.ok(
        members.every((x) => x.weight === 1),
        what,
      );
    }
  });

  it('updates listeners, pools and monitors in place with the minimum calls', async () => {
    const d = desired({ name: 'options', members: 2 });
    ready((await converge(engine, d)).result);
    const [l] = d.listeners;
    const changed: DesiredLoadBalancer = {
      ...d,
      listeners: [
        {
          ...l!,
          connectionLimit: 1000,
          allowedCidrs: ['10.0.0.0/8'],
          timeouts: { clientData: 60_000 },
          pool: {
            ...l!.pool,
            algorithm: 'LEAST_CONNECTIONS',
            healthMonitor: { name: 'monitor_0_x', type: 'TCP', delay: 5, timeout: 3, maxRetries: 2 },
          },
        },
      ],
    };
    w.sim.cloud.stats.reset();
    ready((await converge(engine, changed)).result);
    assert.deepEqual(writes(w.sim, 'octavia'), {
      'PUT /v2/lbaas/listeners/{listener_id}': 1,
      'PUT /v2/lbaas/pools/{pool_id}': 1,
      'POST /v2/lbaas/healthmonitors': 1,
    });
    const listener = (await w.os.loadBalancer.listeners.list({ name: l!.name }).all())[0]!;
    assert.equal(listener.connection_limit, 1000);
    assert.deepEqual(listener.allowed_cidrs, ['10.0.0.0/8']);
    assert.equal(listener.timeout_client_data, 60_000);

    // Changing the monitor's type replaces it; dropping a listener removes its pool then itself.
    const retyped: DesiredLoadBalancer = {
      ...changed,
      listeners: [
        {
          ...changed.listeners[0]!,
          pool: {
            ...changed.listeners[0]!.pool,
            healthMonitor: {
              name: 'monitor_0_x',
              type: 'HTTP',
              delay: 5,
              timeout: 3,
              maxRetries: 2,
              urlPath: '/healthz',
              httpMethod: 'GET',
              expectedCodes: '200',
            },
          },
        },
        { ...l!, name: 'listener_1_x', port: 443, pool: { ...l!.pool, name: 'pool_1_x' } },
      ],
    };
    w.sim.cloud.stats.reset();
    ready((await converge(engine, retyped)).result);
    assert.deepEqual(writes(w.sim, 'octavia'), {
      'DELETE /v2/lbaas/healthmonitors/{healthmonitor_id}': 1,
      'POST /v2/lbaas/healthmonitors': 1,
      'POST /v2/lbaas/listeners': 1,
      'POST /v2/lbaas/pools': 1,
      'PUT /v2/lbaas/pools/{pool_id}/members': 1,
    });
    w.sim.cloud.stats.reset();
    ready((await converge(engine, { ...retyped, listeners: [retyped.listeners[1]!] })).result);
    assert.deepEqual(writes(w.sim, 'octavia'), {
      'DELETE /v2/lbaas/pools/{pool_id}': 1,
      'DELETE /v2/lbaas/listeners/{listener_id}': 1,
    });
  });

  it('creates step by step in serial mode, one write per call', async () => {
    const n = 4;
    const d = desired({ name: 'serial', members: n, serial: true, monitor: true });
    const run = await converge(engine, d);
    ready(run.result);
    assert.deepEqual(writes(w.sim, 'octavia'), {
      'POST /v2/lbaas/loadbalancers': 1,
      'POST /v2/lbaas/listeners': 1,
      'POST /v2/lbaas/pools': 1,
      'POST /v2/lbaas/pools/{pool_id}/members': n,
      'POST /v2/lbaas/healthmonitors': 1,
    });
    for (const r of run.results) {
      const octaviaWrites = r.actions.filter((a) => a.resource !== 'floatingip').length;
      assert.ok(octaviaWrites <= 1, 'at most one Octavia write per call');
    }
    w.sim.cloud.stats.reset();
    ready(await engine.ensure(d));
    assert.equal(total(writes(w.sim, 'octavia')), 0);
  });

  it('finds by id, adopts a legacy name, and renames when asked', async () => {
    const d = desired({ name: 'legacy' });
    const legacy = await w.os.loadBalancer.loadBalancers.create({
      name: 'a0123456789abcdef',
      vip_subnet_id: w.subnet.id,
    });
    await drive(async () => {
      const lb = await w.os.loadBalancer.loadBalancers.get(legacy.id);
      return lb.provisioning_status === 'ACTIVE' ? { phase: 'done' } : { phase: 'Pending', retryAfterMs: 5 };
    });
    const adopting = { ...d, identity: { ...d.identity, legacyNames: ['a0123456789abcdef'] } };
    w.sim.cloud.stats.reset();
    const r = ready((await converge(engine, adopting)).result);
    assert.equal(r.loadBalancer.id, legacy.id);
    assert.equal(r.loadBalancer.name, 'a0123456789abcdef');
    assert.equal(
      writes(w.sim, 'octavia')['POST /v2/lbaas/loadbalancers'],
      undefined,
      'no second load balancer',
    );

    const byId = ready((await converge(engine, { ...d, identity: { ...d.identity, id: legacy.id } })).result);
    assert.equal(byId.loadBalancer.id, legacy.id);
    assert.equal(byId.owned, false, 'found by id under another name: shared, not owned');

    const renamed = ready(
      (await converge(engine, { ...adopting, identity: { ...adopting.identity, renameLegacy: true } }))
        .result,
    );
    assert.equal(renamed.loadBalancer.id, legacy.id);
    assert.equal(renamed.loadBalancer.name, d.identity.name);
    assert.ok(renamed.loadBalancer.tags?.includes(d.identity.name));
  });

  it('refuses to choose between two load balancers of one name, and creates none', async () => {
    const d = desired({ name: 'twice' });
    for (let i = 0; i < 2; i++)
      await w.os.loadBalancer.loadBalancers.create({ name: d.identity.name, vip_subnet_id: w.subnet.id });
    w.sim.cloud.stats.reset();
    const r = await engine.ensure(d);
    assert.equal(r.phase, 'Failed');
    assert.equal(r.phase === 'Failed' && r.reason, 'MultipleLoadBalancers');
    assert.deepEqual(writes(w.sim, 'octavia'), {});
    const removal = await engine.remove(d);
    assert.equal(removal.phase, 'Failed');
    for (const lb of await w.os.loadBalancer.loadBalancers.list({ name: d.identity.name }).all()) {
      await drive(async () =>
        (await w.os.loadBalancer.loadBalancers.get(lb.id)).provisioning_status === 'ACTIVE'
          ? { phase: 'done' }
          : { phase: 'Pending', retryAfterMs: 5 },
      );
      await w.os.loadBalancer.loadBalancers.delete(lb.id, { cascade: true });
    }
  });

  it('reports ERROR at creation as Failed with recreate; remove + ensure makes a new one', async () => {
    const d = desired({ name: 'error' });
    await addFault(w.sim, {
      kind: 'error-on-create',
      service: 'octavia',
      resource: 'loadbalancer',
      times: 1,
    });
    const first = await converge(engine, d);
    assert.equal(first.result.phase, 'Failed');
    assert.equal(first.result.phase === 'Failed' && first.result.recreate, true);
    const broken = first.result.loadBalancer!.id;
    assert.equal((await teardown(engine, d)).result.phase, 'Deleted');
    const again = ready((await converge(engine, d)).result);
    assert.notEqual(again.loadBalancer.id, broken);
    assert.equal((await w.os.loadBalancer.loadBalancers.list({ name: d.identity.name }).all()).length, 1);
    assert.ok(again.floatingIp);
  });

  it('reports a load balancer PENDING for too long as LoadBalancerStuck, with a capped hint', async () => {
    const d = desired({ name: 'stuck' });
    // Pinned before the create: added after it, the fault would race the fast profile's transition.
    await addFault(w.sim, { kind: 'stuck', service: 'octavia', resource: 'loadbalancer', times: 1 });
    const first = await engine.ensure(d);
    assert.equal(first.phase, 'Pending');
    const soon = await engine.ensure(d);
    assert.equal(soon.phase === 'Pending' && soon.reason, 'LoadBalancerPending');
    const later = new LoadBalancerEngine(w.os, {
      backoff: { stuckAfterMs: 60_000 },
      now: () => Date.now() + 3_600_000,
    });
    const stuck = await later.ensure(d);
    assert.equal(stuck.phase === 'Pending' && stuck.reason, 'LoadBalancerStuck');
    assert.equal(stuck.phase === 'Pending' && stuck.retryAfterMs, 10_000);
    await clearFaults(w.sim);
    // The stuck fault pinned the transition: force the states the worker would have left.
    const lbId = first.loadBalancer!.id;
    const octavia = w.os.loadBalancer;
    const forced: [string, string][] = [['loadbalancer', lbId]];
    for (const l of await octavia.listeners.list({ loadbalancer_id: lbId }).all())
      forced.push(['listener', l.id]);
    for (const p of await octavia.pools.list({ loadbalancer_id: lbId }).all()) {
      forced.push(['pool', p.id]);
      for (const m of await octavia.members.list(p.id).all()) forced.push(['member', m.id]);
    }
    for (const [kind, id] of forced) {
      await fetch(`${w.sim.url}/_sim/state/octavia/${kind}/${id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ provisioning_status: 'ACTIVE' }),
      });
    }
    ready((await converge(engine, d)).result);
  });

  it('writes nothing below a child left PENDING under an ACTIVE load balancer, backs off by its age and reports it stuck by name', async () => {
    const d = desired({ name: 'stuck-pool', members: 2 });
    const r = ready((await converge(engine, d)).result);
    const [pool] = await w.os.loadBalancer.pools.list({ loadbalancer_id: r.loadBalancer.id }).all();
    await addFault(w.sim, { kind: 'stuck', service: 'octavia', resource: 'pool', target: pool!.id });
    const grown = (n: number): DesiredLoadBalancer => ({
      ...d,
      listeners: d.listeners.map((l) => ({
        ...l,
        pool: {
          ...l.pool,
          members: Array.from({ length: n }, (_, i) => ({
            name: `node-${i}`,
            address: nodeAddress(i),
            port: 30080,
          })),
        },
      })),
    });
    // The batch PUT that Octavia answers by leaving the pool PENDING_UPDATE.
    const first = await engine.ensure(grown(3));
    assert.equal(first.phase, 'Pending', JSON.stringify(first));
    const put = 'PUT /v2/lbaas/pools/{pool_id}/members';
    assert.equal(writes(w.sim, 'octavia')[put], 1);
    await w.os.loadBalancer.loadBalancers.waitForActive(r.loadBalancer.id, {
      intervalMs: 10,
      timeoutMs: 10_000,
    });

    w.sim.cloud.stats.reset();
    const policy = { initialMs: 1_000, maxMs: 10_000, stuckAfterMs: 600_000 };
    const at = (ms: number) => new LoadBalancerEngine(w.os, { backoff: policy, now: () => Date.now() + ms });
    const hints: number[] = [];
    for (const ms of [0, 4_000, 12_000, 60_000]) {
      const p = await at(ms).ensure(grown(4));
      assert.equal(p.phase === 'Pending' && p.reason, 'LoadBalancerPending', JSON.stringify(p));
      assert.match(p.phase === 'Pending' ? p.message : '', new RegExp(`pool ${pool!.id} .*PENDING_UPDATE`));
      hints.push(p.phase === 'Pending' ? p.retryAfterMs : 0);
    }
    assert.deepEqual(
      hints,
      [...hints].sort((a, b) => a - b),
      `the hint grows with the pool's age: ${hints.join(', ')}`,
    );
    assert.ok(hints[0]! < hints[3]!, `the hint grows with the pool's age: ${hints.join(', ')}`);
    assert.equal(hints[3], 10_000);
    const stuck = await at(3_600_000).ensure(grown(4));
    assert.equal(stuck.phase === 'Pending' && stuck.reason, 'LoadBalancerStuck');
    assert.match(stuck.phase === 'Pending' ? stuck.message : '', new RegExp(`pool ${pool!.id} .*operator`));
    assert.equal(writes(w.sim, 'octavia')[put] ?? 0, 0, 'no write is sent below the busy pool');

    // An operator resets the pool: the change goes through with one PUT.
    await clearFaults(w.sim);
    await fetch(`${w.sim.url}/_sim/state/octavia/pool/${pool!.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ provisioning_status: 'ACTIVE' }),
    });
    const done = ready((await converge(engine, grown(4))).result);
    assert.equal(writes(w.sim, 'octavia')[put], 1);
    const [after] = await w.os.loadBalancer.pools.list({ loadbalancer_id: done.loadBalancer.id }).all();
    assert.equal((await w.os.loadBalancer.members.list(after!.id).all()).length, 4);
  });

  /**
   * Two controllers taking over from each other (the in-tree provider and the CCM, both ways): what
   * one made under its names is the other's to keep serving, not to rename or re-tag.
   */
  describe('adoption between controllers that name things differently', () => {
    /** The in-tree provider's spelling of the same load balancer: its names, serial, no tags, undescribed floating IP. */
    const legacy = (d: DesiredLoadBalancer, name: string): DesiredLoadBalancer => ({
      ...d,
      identity: { name, description: `Kubernetes external service ${name}`, tagless: true },
      listeners: d.listeners.map((l, i) => ({
        name: `listener_${name}_${i}`,
        protocol: l.protocol,
        port: l.port,
        pool: {
          ...l.pool,
          name: `pool_${name}_${i}`,
          members: l.pool.members.map((m) => ({ ...m, name: `member_${name}_${i}_${m.name}` })),
          ...(l.pool.healthMonitor
            ? { healthMonitor: { ...l.pool.healthMonitor, name: `monitor_${name}_${i}` } }
            : {}),
        },
      })),
      floatingIp: { ...d.floatingIp!, description: '', ownsUndescribed: true },
      serialApiCalls: true,
    });

    it('adopts a load balancer found under its legacy name without a write, and keeps its VIP and floating IP', async () => {
      const ccm = desired({ name: 'adopt', members: 3, monitor: true });
      const name = 'a0123456789abcdef0123456789abcde';
      const intree = legacy(ccm, name);
      const made = ready((await converge(engine, intree)).result);
      assert.equal(made.loadBalancer.name, name);
      assert.deepEqual(made.loadBalancer.tags ?? [], [], 'the in-tree provider wrote no tags');
      assert.equal(made.floatingIp?.description, '');

      w.sim.cloud.stats.reset();
      const adopting = { ...ccm, identity: { ...ccm.identity, legacyNames: [name] } };
      const r = ready((await converge(engine, adopting)).result);
      assert.equal(r.loadBalancer.id, made.loadBalancer.id);
      assert.equal(r.vip.address, made.vip.address);
      assert.equal(r.address, made.address, 'the same floating IP');
      // The name a<uid> says whose it is; no ownership tag until someone shares it (plan.ts).
      assert.deepEqual(writes(w.sim, 'octavia'), {});
      assert.deepEqual(writes(w.sim, 'neutron'), {});
      const [listener] = await w.os.loadBalancer.listeners.list({ loadbalancer_id: r.loadBalancer.id }).all();
      assert.equal(listener!.name, `listener_${name}_0`, 'children keep the names they were made with');

      w.sim.cloud.stats.reset();
      const byId = { ...adopting, identity: { ...adopting.identity, id: r.loadBalancer.id } };
      ready(await engine.ensure(byId));
      assert.equal(total(writes(w.sim, 'octavia')), 0, 'steady state, found by id');

      // The Service goes: its address goes with it, as the in-tree provider would have deleted it.
      assert.equal((await teardown(engine, byId)).result.phase, 'Deleted');
      const fips = await w.os.network.floatingIps.list({ floating_ip_address: r.address }).all();
      assert.deepEqual(fips, [], 'the in-tree floating IP is not left behind');
    });

    it('keeps an undescribed floating IP the Service named (loadBalancerIP) when it deletes an adopted load balancer', async () => {
      const ccm = desired({ name: 'named-ip', members: 1 });
      const name = 'a0123456789abcdef0123456789abcd0';
      const made = ready((await converge(engine, legacy(ccm, name))).result);
      const adopting = {
        ...ccm,
        identity: { ...ccm.identity, legacyNames: [name] },
        floatingIp: { ...ccm.floatingIp!, address: made.address },
      };
      ready((await converge(engine, adopting)).result);
      assert.equal((await teardown(engine, adopting)).result.phase, 'Deleted');
      const [fip] = await w.os.network.floatingIps.list({ floating_ip_address: made.address }).all();
      assert.ok(fip, 'the address the Service named stays');
      assert.equal(fip.port_id, null, 'detached');
      await w.os.network.floatingIps.delete(fip.id);
    });

    it('going back: found by the id the other recorded under a name it recognises, adopted without a write, and removed with its floating IP', async () => {
      const ccm = desired({ name: 'back', members: 2, monitor: true });
      const made = ready((await converge(engine, ccm)).result);
      const intree = legacy(ccm, 'a00000000000000000000000000000back');
      w.sim.cloud.stats.reset();
      const backById = {
        ...intree,
        identity: {
          ...intree.identity,
          id: made.loadBalancer.id,
          alsoNamed: (n: string) => n.startsWith('kube_service_') && n.endsWith('_default_back'),
        },
      };
      const r = ready((await converge(engine, backById)).result);
      assert.equal(r.loadBalancer.id, made.loadBalancer.id);
      assert.equal(r.owned, true);
      assert.equal(r.address, made.address);
      assert.equal(total(writes(w.sim, 'octavia')) + total(writes(w.sim, 'neutron')), 0);
      // Someone else's load balancer behind the same id is not taken for its own.
      const stranger = await engine.find({ ...backById.identity, alsoNamed: () => false });
      assert.ok(stranger.kind === 'found' && !stranger.owned);

      // A node goes: one member DELETE (serial), nothing renamed.
      const fewer = {
        ...backById,
        listeners: backById.listeners.map((l) => ({
          ...l,
          pool: { ...l.pool, members: l.pool.members.slice(1) },
        })),
      };
      w.sim.cloud.stats.reset();
      ready((await converge(engine, fewer)).result);
      assert.deepEqual(writes(w.sim, 'octavia'), {
        'DELETE /v2/lbaas/pools/{pool_id}/members/{member_id}': 1,
      });

      // Removal: the CCM's floating IP (its marker) and the undescribed ones are this side's to delete.
      w.sim.cloud.stats.reset();
      const gone = await teardown(engine, fewer);
      assert.equal(gone.result.phase, 'Deleted');
      assert.equal(writes(w.sim, 'neutron')['DELETE /v2.0/floatingips/{floatingip_id}'], 1);
      const left = await w.os.network.floatingIps.list({ floating_ip_address: made.address }).all();
      assert.deepEqual(left, []);
    });
  });
});
