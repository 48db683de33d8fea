/**
 * Floating IP rules against the emulator: create on the VIP, adopt a requested address, release on
 * an internal switch (ours deleted, a user's detached), keep-floatingip, an address in use elsewhere.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LoadBalancerEngine } from './engine.ts';
import { converge, desiredLb, openLbWorld, teardown, writes, type LbWorld } from './testing/fixtures.ts';
import type { DesiredLoadBalancer, EnsureResult } from './types.ts';

describe('load-balancer engine: floating IPs', () => {
  let w: LbWorld;
  let engine: LoadBalancerEngine;

  before(async () => {
    w = await openLbWorld();
    engine = new LoadBalancerEngine(w.os, { backoff: { initialMs: 2, maxMs: 20 } });
  });
  after(async () => {
    await w?.close();
  });

  const ready = (r: EnsureResult) => {
    assert.equal(r.phase, 'Ready', JSON.stringify(r));
    return r;
  };
  const fipsOf = async (portId: string) => w.os.network.floatingIps.list({ port_id: portId }).all();

  it('switches external → internal → external: ours is deleted, then a new one made', async () => {
    const d = desiredLb(w, { name: 'switch' });
    const ext = ready((await converge(engine, d)).result);
    const first = ext.floatingIp!;
    assert.ok(first.description.includes('Floating IP for Kubernetes external service'));

    const internal: DesiredLoadBalancer = { ...d, floatingIp: { ...d.floatingIp!, external: false } };
    const int = ready((await converge(engine, internal)).result);
    assert.equal(int.floatingIp, undefined);
    assert.equal(int.address, int.loadBalancer.vip_address);
    await assert.rejects(w.os.network.floatingIps.get(first.id), /404/);

    const back = ready((await converge(engine, d)).result);
    assert.notEqual(back.floatingIp!.id, first.id);
    assert.equal((await teardown(engine, d)).result.phase, 'Deleted');
    assert.deepEqual(
      await w.os.network.floatingIps.list({ description: d.floatingIp!.description }).all(),
      [],
    );
  });

  it('adopts a requested free address, and only detaches it on removal', async () => {
    const user = await w.os.network.floatingIps.create({
      floating_network_id: w.publicNetworkId,
      description: 'mine',
    });
    const d = desiredLb(w, { name: 'requested', floatingIp: { address: user.floating_ip_address } });
    w.sim.cloud.stats.reset();
    const r = ready((await converge(engine, d)).result);
    assert.equal(r.floatingIp!.id, user.id);
    assert.equal(r.address, user.floating_ip_address);
    assert.deepEqual(writes(w.sim, 'neutron'), { 'PUT /v2.0/floatingips/{floatingip_id}': 1 });

    assert.equal((await teardown(engine, d)).result.phase, 'Deleted');
    const after = await w.os.network.floatingIps.get(user.id);
    assert.equal(after.port_id, null, 'detached');
    await w.os.network.floatingIps.delete(user.id);
  });

  it('refuses a requested address attached elsewhere, while the load balancer itself converges', async () => {
    const other = desiredLb(w, { name: 'holder' });
    const holder = ready((await converge(engine, other)).result);
    const d = desiredLb(w, {
      name: 'wants',
      floatingIp: { address: holder.floatingIp!.floating_ip_address },
    });
    const r = (await converge(engine, d)).result;
    assert.equal(r.phase, 'Failed');
    assert.equal(r.phase === 'Failed' && r.reason, 'FloatingIpInUse');
    assert.equal(r.loadBalancer?.provisioning_status, 'ACTIVE');
    assert.deepEqual(await fipsOf(r.loadBalancer.vip_port_id), []);
    for (const x of [d, other]) assert.equal((await teardown(engine, x)).result.phase, 'Deleted');
  });

  it('keeps the floating IP with keep-floatingip, detached on removal', async () => {
    const d = desiredLb(w, { name: 'keep', floatingIp: { keep: true } });
    const r = ready((await converge(engine, d)).result);
    assert.equal((await teardown(engine, d)).result.phase, 'Deleted');
    const kept = await w.os.network.floatingIps.get(r.floatingIp!.id);
    assert.equal(kept.port_id, null);
    await w.os.network.floatingIps.delete(kept.id);
  });

  it('takes the address from the chosen subnet of the floating network, by id or by match', async () => {
    // A project sees no subnet of an external network it does not own (Neutron's policy): the
    // admin finds one here, and the match path runs as the admin.
    const admin = await w.target.client(w.target.admin!);
    const subnets = await admin.network.subnets.list({ network_id: w.publicNetworkId }).all();
    const v4 = subnets.find((s) => s.ip_version === 4)!;
    const byId = desiredLb(w, { name: 'subnet-id', floatingIp: { subnet: { id: v4.id } } });
    const r = ready((await converge(engine, byId)).result);
    assert.equal(r.floatingIp!.floating_network_id, w.publicNetworkId);

    const adminEngine = new LoadBalancerEngine(admin, { backoff: { initialMs: 2, maxMs: 20 } });
    const byMatch = desiredLb(w, {
      name: 'subnet-match',
      floatingIp: { networkId: w.publicNetworkId, subnet: { match: (s) => s.id === v4.id } },
    });
    assert.ok(ready((await converge(adminEngine, byMatch)).result).floatingIp);
    assert.equal((await teardown(adminEngine, byMatch)).result.phase, 'Deleted');

    const none = desiredLb(w, {
      name: 'subnet-none',
      floatingIp: { networkId: w.publicNetworkId, subnet: { match: () => false } },
    });
    const refused = (await converge(engine, none)).result;
    assert.equal(refused.phase === 'Failed' && refused.reason, 'FloatingIpFailed');
    for (const x of [byId, none]) assert.equal((await teardown(engine, x)).result.phase, 'Deleted');
  });

  it('deletes a floating IP of ours left unattached when its load balancer vanished', async () => {
    const d = desiredLb(w, { name: 'orphan' });
    const r = ready((await converge(engine, d)).result);
    // The load balancer deleted behind our back: Neutron detaches the address with the VIP port.
    await w.os.loadBalancer.loadBalancers.delete(r.loadBalancer.id, { cascade: true });
    await w.os.loadBalancer.loadBalancers.waitForDeleted(r.loadBalancer.id, {
      intervalMs: 5,
      timeoutMs: 5_000,
    });
    assert.equal((await w.os.network.floatingIps.get(r.floatingIp!.id)).port_id, null);
    assert.equal((await teardown(engine, d)).result.phase, 'Deleted');
    await assert.rejects(w.os.network.floatingIps.get(r.floatingIp!.id), /404/);
  });
});
