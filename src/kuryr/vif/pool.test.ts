/**
 * The nested VLAN driver and the port pools against the Neutron emulator over HTTP: VLAN ids per
 * trunk, one bulk create and one add_subports per batch, conflicts retried then rolled back,
 * bursts coalesced, recycling, restart recovery from the trunks.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLog } from '../../openstack/core/testing/target.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { KURYR_DEVICE_OWNER, SUBPORT_DEVICE_OWNER, type SubportVif } from './nested-vlan.ts';
import { recoverPorts } from './recovery.ts';
import { OWNER, startTrunkBed, type TrunkBed } from './testing/trunks.ts';

const BULK = 'POST /v2.0/ports';
const ADD = 'PUT /v2.0/trunks/{trunk_id}/add_subports';

describe('kuryr VIFs: nested VLAN driver and port pools', () => {
  let bed: TrunkBed;
  before(async () => {
    bed = await startTrunkBed(2);
  });
  after(async () => bed?.close());

  /** Takes a port for each requester, taking again as populates land; all served in the end. */
  async function takeAll(pools: ReturnType<TrunkBed['pools']>, trunk: number, requesters: string[]) {
    const got = new Map<string, SubportVif>();
    await eventually(async () => {
      for (const r of requesters) {
        if (got.has(r)) continue;
        const vif = await pools.take(bed.request(trunk), r);
        if (vif) got.set(r, vif);
      }
      return got.size === requesters.length;
    });
    return [...got.values()];
  }

  async function ourPorts() {
    return bed.os.network.ports.list({ tags: OWNER.tags }).all();
  }

  it('gives pods on two trunks distinct VLAN ids per trunk, each batch one bulk create and one add_subports', async () => {
    const pools = bed.pools({ batch: 3 });
    const [bulk0, add0] = [bed.count(BULK), bed.count(ADD)];
    const a = await takeAll(pools, 0, ['a1', 'a2', 'a3', 'a4']);
    const b = await takeAll(pools, 1, ['b1', 'b2']);
    for (const [vifs, t] of [
      [a, 0],
      [b, 1],
    ] as const) {
      const ids = vifs.map((v) => v.vlanId);
      assert.equal(new Set(ids).size, ids.length, 'no VLAN id twice on one trunk');
      const trunk = await bed.os.network.trunks.get(bed.trunks[t]!.trunkId);
      for (const v of vifs) {
        assert.ok(
          trunk.sub_ports.some((s) => s.port_id === v.portId && s.segmentation_id === v.vlanId),
          `port ${v.portId} is a subport with VLAN ${v.vlanId}`,
        );
        assert.match(v.fixedIps[0]!.ip_address, /^10\.128\./);
      }
    }
    const ports = await ourPorts();
    assert.ok(ports.every((p) => p.device_owner === SUBPORT_DEVICE_OWNER && p.name === OWNER.name));
    const batches = bed.count(BULK) - bulk0;
    assert.equal(bed.count(ADD) - add0, batches, 'one add_subports per bulk create');
    assert.ok(batches <= 3, `4 + 2 pods in batches of 3 or more: ${batches} bulk creates`);
  });

  it('coalesces a burst for one pool into batch-sized populates, one at a time', async () => {
    const pools = bed.pools({ batch: 3 });
    const bulk0 = bed.count(BULK);
    const burst = Array.from({ length: 20 }, (_, i) => `burst-${i}`);
    // All 20 miss at once: the first populate is under way, the rest wait for it.
    for (const r of burst) assert.equal(await pools.take(bed.request(0), r), undefined);
    assert.equal(pools.stats().populating, 1, 'one populate per pool at a time');
    const vifs = await takeAll(pools, 0, burst);
    assert.equal(vifs.length, 20);
    const creates = bed.count(BULK) - bulk0;
    assert.ok(creates <= 2, `20 pods took ${creates} bulk creates (not one per pod, nor one per batch)`);
    const trunk = await bed.os.network.trunks.get(bed.trunks[0]!.trunkId);
    const ids = trunk.sub_ports.map((s) => s.segmentation_id);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('retries a VLAN id conflict with other ids, and rolls a batch back when it keeps failing', async () => {
    const driver = bed.driver();
    const once = bed.sim.cloud.faults.add({
      kind: 'request',
      service: 'neutron',
      operation: ADD,
      status: 409,
      message: 'segmentation_id already in use',
      times: 1,
    });
    const vifs = await driver.requestVifs({ ...bed.request(1), count: 2 });
    assert.equal(vifs.length, 2);
    bed.sim.cloud.faults.remove(once.id);

    const before = new Set((await ourPorts()).map((p) => p.id));
    bed.sim.cloud.faults.add({
      kind: 'request',
      service: 'neutron',
      operation: ADD,
      status: 409,
      message: 'segmentation_id already in use',
      times: 3,
    });
    await assert.rejects(driver.requestVifs({ ...bed.request(1), count: 2 }), /409|already in use/);
    const after = (await ourPorts()).filter((p) => !before.has(p.id));
    assert.deepEqual(after, [], 'the failed batch left no port behind');
    const stray = await bed.os.network.ports.list({ device_owner: KURYR_DEVICE_OWNER }).all();
    assert.deepEqual(stray, []);
  });

  it('reuses a port of another security-group set by update_port, and recycles above max by deleting', async () => {
    const group = await bed.os.network.securityGroups.create({ name: 'policy-a' });
    const pools = bed.pools({ batch: 2, max: 1 });
    const [first] = await takeAll(pools, 1, ['sg-1']);
    // The pool of the default set holds one more; a pod of another set takes it, re-grouped.
    const other = await pools.take(bed.request(1, [group.id]), 'sg-2');
    assert.ok(other, 'a port of the sibling set was reused');
    assert.deepEqual((await bed.os.network.ports.get(other.portId)).security_groups, [group.id]);
    pools.release(first!);
    pools.release(other);
    await pools.recycle();
    // max 1: one goes back to the pool, the other is detached and deleted.
    const left = await Promise.all(
      [first!, other].map((v) =>
        bed.os.network.ports.get(v.portId).then(
          () => true,
          () => false,
        ),
      ),
    );
    assert.deepEqual(left.filter(Boolean).length, 1);
    assert.equal(pools.stats().available, 1);
  });

  it('recovers free subports from the trunks after a restart and deletes what a crash left half made', async () => {
    const pools = bed.pools({ batch: 3 });
    const taken = await takeAll(pools, 0, ['r1']);
    const free = [...pools.availablePortIds()];
    assert.ok(free.length >= 2);
    // A process that died right after its bulk create: untagged, never attached.
    const [half] = await bed.os.network.ports.createBulk([
      {
        network_id: bed.networkId,
        name: OWNER.name,
        description: OWNER.description,
        device_owner: KURYR_DEVICE_OWNER,
      },
    ]);
    const inUse = new Set(taken.map((v) => v.portId));
    const recovered = await recoverPorts({
      api: bed.os,
      driver: bed.driver(),
      owner: OWNER,
      inUse,
      log: silentLog,
    });
    const pooled = new Set(recovered.pooled.map((v) => v.portId));
    for (const id of free) assert.ok(pooled.has(id), `free subport ${id} back in a pool`);
    assert.ok(!pooled.has(taken[0]!.portId), 'a port in use is not pooled');
    assert.deepEqual(recovered.deleted, [half!.id]);
    const trunk = await bed.os.network.trunks.get(bed.trunks[0]!.trunkId);
    for (const v of recovered.pooled.filter((p) => p.trunkId === trunk.id))
      assert.ok(trunk.sub_ports.some((s) => s.port_id === v.portId && s.segmentation_id === v.vlanId));
  });
});
