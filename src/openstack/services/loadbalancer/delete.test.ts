/** Removal and shared load balancers against the emulator: end states and call budgets. */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { OpenStackClient } from '../../client.ts';
import { LoadBalancerEngine } from './engine.ts';
import { converge, desiredLb, openLbWorld, teardown, writes, type LbWorld } from './testing/fixtures.ts';
import type { DesiredLoadBalancer, EnsureResult } from './types.ts';

describe('load-balancer engine: removal and sharing', () => {
  let w: LbWorld;
  let admin: OpenStackClient;
  let engine: LoadBalancerEngine;

  before(async () => {
    w = await openLbWorld();
    admin = await w.target.client(w.target.admin!);
    engine = new LoadBalancerEngine(w.os, { backoff: { initialMs: 2, maxMs: 20 } });
  });
  after(async () => {
    await w?.close();
  });
  beforeEach(() => w.sim.cloud.stats.reset());

  const ready = (r: EnsureResult) => {
    assert.equal(r.phase, 'Ready', JSON.stringify(r));
    return r;
  };
  /** Everything in the cloud, every project: what a leak would show up in. */
  const census = async () => ({
    ports: (await admin.network.ports.list().all()).length,
    fips: (await admin.network.floatingIps.list().all()).length,
    lbs: (await admin.loadBalancer.loadBalancers.list().all()).length,
  });

  it('removes with the floating IP delete and one cascade DELETE, leaving nothing', async () => {
    const before = await census();
    const d = desiredLb(w, { name: 'gone', members: 20, monitor: true });
    ready((await converge(engine, d)).result);
    w.sim.cloud.stats.reset();
    const run = await teardown(engine, d);
    assert.equal(run.result.phase, 'Deleted');
    assert.deepEqual(writes(w.sim, 'octavia'), { 'DELETE /v2/lbaas/loadbalancers/{loadbalancer_id}': 1 });
    assert.deepEqual(writes(w.sim, 'neutron'), { 'DELETE /v2.0/floatingips/{floatingip_id}': 1 });
    assert.deepEqual(await census(), before);

    w.sim.cloud.stats.reset();
    assert.equal((await engine.remove(d)).phase, 'Deleted', 'idempotent');
    assert.deepEqual(writes(w.sim, 'octavia'), {});
  });

  it('removes step by step in serial mode', async () => {
    const before = await census();
    const ports = [
      { protocol: 'TCP' as const, port: 80, nodePort: 30080 },
      { protocol: 'UDP' as const, port: 53, nodePort: 30053 },
    ];
    const d = desiredLb(w, { name: 'serial-gone', members: 3, ports, serial: true, monitor: true });
    ready((await converge(engine, d)).result);
    w.sim.cloud.stats.reset();
    assert.equal((await teardown(engine, d)).result.phase, 'Deleted');
    assert.deepEqual(writes(w.sim, 'octavia'), {
      'DELETE /v2/lbaas/pools/{pool_id}': 2,
      'DELETE /v2/lbaas/listeners/{listener_id}': 2,
      'DELETE /v2/lbaas/loadbalancers/{loadbalancer_id}': 1,
    });
    assert.deepEqual(await census(), before);
  });

  it('removes children one call each with cascade-delete off, even after a fully populated create', async () => {
    const before = await census();
    const d = desiredLb(w, { name: 'no-cascade', members: 2, monitor: true });
    ready((await converge(engine, d)).result);
    w.sim.cloud.stats.reset();
    assert.equal((await teardown(engine, { ...d, cascadeDelete: false })).result.phase, 'Deleted');
    assert.deepEqual(writes(w.sim, 'octavia'), {
      'DELETE /v2/lbaas/pools/{pool_id}': 1,
      'DELETE /v2/lbaas/listeners/{listener_id}': 1,
      'DELETE /v2/lbaas/loadbalancers/{loadbalancer_id}': 1,
    });
    assert.deepEqual(await census(), before);
  });

  it('counts the untagged maker of a legacy-named load balancer when another identity joins it', async () => {
    const before = await census();
    const legacy = 'a00112233445566778899aabbccddeef';
    const made0 = desiredLb(w, { name: 'in-tree', members: 1 });
    const made = { ...made0, identity: { ...made0.identity, name: legacy, tagless: true } };
    const a = ready((await converge(engine, made)).result);
    assert.equal(a.loadBalancer.name, legacy);
    assert.deepEqual(a.loadBalancer.tags ?? [], []);
    const b0 = desiredLb(w, {
      name: 'joiner',
      members: 1,
      ports: [{ protocol: 'TCP', port: 8080, nodePort: 31080 }],
    });
    const b: DesiredLoadBalancer = {
      ...b0,
      identity: {
        ...b0.identity,
        id: a.loadBalancer.id,
        maxShared: 1,
        taglessOwner: (n) => /^a[0-9a-f]{31}$/.test(n),
      },
    };
    const limited = await engine.ensure(b);
    assert.equal(limited.phase === 'Failed' && limited.reason, 'ShareLimit');
    assert.equal((await teardown(engine, made)).result.phase, 'Deleted');
    assert.deepEqual(await census(), before);
  });

  it('shares one load balancer between two identities; the last one out deletes it', async () => {
    const before = await census();
    const a = desiredLb(w, { name: 'owner', members: 2 });
    const first = ready((await converge(engine, a)).result);
    const lbId = first.loadBalancer.id;

    const b0 = desiredLb(w, {
      name: 'sharer',
      members: 2,
      ports: [{ protocol: 'TCP', port: 8080, nodePort: 31080 }],
    });
    const b: DesiredLoadBalancer = { ...b0, identity: { ...b0.identity, id: lbId } };

    const limited = await engine.ensure({ ...b, identity: { ...b.identity, maxShared: 1 } });
    assert.equal(limited.phase === 'Failed' && limited.reason, 'ShareLimit');
    const clash = await engine.ensure({ ...b, listeners: [{ ...b.listeners[0]!, port: 80 }] });
    assert.equal(clash.phase === 'Failed' && clash.reason, 'PortConflict');

    const joined = ready((await converge(engine, b)).result);
    assert.equal(joined.loadBalancer.id, lbId);
    assert.equal(joined.owned, false);
    assert.equal(joined.floatingIp?.id, first.floatingIp?.id, 'one address for every sharer');
    assert.ok(joined.loadBalancer.tags?.includes(a.identity.name));
    assert.ok(joined.loadBalancer.tags?.includes(b.identity.name));
    const listeners = await w.os.loadBalancer.listeners.list({ loadbalancer_id: lbId }).all();
    assert.equal(listeners.length, 2);
    assert.ok(listeners.find((l) => l.protocol_port === 8080)?.tags?.includes(b.identity.name));

    // Both reconcile again: neither touches the other's listener.
    w.sim.cloud.stats.reset();
    ready(await engine.ensure(a));
    ready(await engine.ensure(b));
    assert.deepEqual(writes(w.sim, 'octavia'), {});

    // The owner leaves first: only its listener and pool go, and its tag; the address stays.
    assert.equal((await teardown(engine, a)).result.phase, 'Deleted');
    const lb = await w.os.loadBalancer.loadBalancers.get(lbId);
    assert.deepEqual(lb.tags, [b.identity.name]);
    assert.deepEqual(
      (await w.os.loadBalancer.listeners.list({ loadbalancer_id: lbId }).all()).map((l) => l.protocol_port),
      [8080],
    );
    assert.equal((await w.os.network.floatingIps.get(first.floatingIp!.id)).port_id, lb.vip_port_id);

    // The last one out deletes the load balancer (an OCCM one, by its name) and our address.
    assert.equal((await teardown(engine, b)).result.phase, 'Deleted');
    assert.deepEqual(await census(), before);
  });

  it('never deletes a load balancer made outside, only its own listeners on it', async () => {
    const outside = await w.os.loadBalancer.loadBalancers.create({
      name: 'made-by-hand',
      vip_subnet_id: w.subnet.id,
    });
    await w.os.loadBalancer.loadBalancers.waitForActive(outside.id, { intervalMs: 5, timeoutMs: 5_000 });
    const d0 = desiredLb(w, { name: 'guest', members: 1, floatingIp: false });
    const d: DesiredLoadBalancer = {
      ...d0,
      identity: { ...d0.identity, id: outside.id },
      floatingIp: undefined,
    };
    ready((await converge(engine, d)).result);
    assert.equal((await teardown(engine, d)).result.phase, 'Deleted');
    const lb = await w.os.loadBalancer.loadBalancers.get(outside.id);
    assert.equal(lb.provisioning_status, 'ACTIVE');
    assert.deepEqual(await w.os.loadBalancer.listeners.list({ loadbalancer_id: outside.id }).all(), []);
    await w.os.loadBalancer.loadBalancers.delete(outside.id, { cascade: true });
  });
});
