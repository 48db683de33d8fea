/**
 * A trunk's subports through a removal that is killed. The subports' ports were made by someone else
 * (Kuryr puts pod ports on a machine's trunk) and only the engine's removal deletes them; once
 * detached nothing points at them, so they are recorded (`resources.subports`) before the detach.
 * Killed right after the detach, or after any write of the removal, a fresh engine from the
 * recorded state leaves no port and no trunk.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isNotFound } from '../../core/errors.ts';
import type { Port } from '../../network/v2/ports.ts';
import { ServerEngine } from './engine.ts';
import {
  BACKOFF,
  census,
  converge,
  drive,
  killAfter,
  killAfterWrites,
  machineSpec,
  openServerWorld,
  Recorder,
  runUntilKilled,
  teardown,
  type ServerWorld,
} from './testing/fixtures.ts';
import type { ServerState } from './types.ts';

describe('server engine: no subport port leaks when a removal is killed', () => {
  let w: ServerWorld;
  let baseline: Awaited<ReturnType<typeof census>>;

  before(async () => {
    w = await openServerWorld();
    baseline = await census(w);
  });
  after(async () => {
    await w?.close();
  });

  /** A machine whose trunk carries two pod ports, created and attached by someone else. */
  async function machineWithSubports(name: string) {
    const rec = new Recorder();
    const created = await converge(
      new ServerEngine(w.os, { backoff: BACKOFF }),
      machineSpec(name, { volumes: false }),
      rec,
    );
    assert.equal(created.result.phase, 'Ready', JSON.stringify(created.result));
    const parent = rec.state.resources!.ports[1]!.id;
    const [trunk] = await w.os.network.trunks.list({ port_id: parent }).all();
    assert.ok(trunk, 'the machine has a trunk');
    const pods: Port[] = [];
    for (const suffix of ['a', 'b'])
      pods.push(
        await w.os.network.ports.create({ network_id: w.trunkNetwork.id, name: `${name}-pod-${suffix}` }),
      );
    await w.os.network.trunks.addSubports(
      trunk.id,
      pods.map((p, i) => ({ port_id: p.id, segmentation_type: 'vlan' as const, segmentation_id: 101 + i })),
    );
    return { rec, trunkID: trunk.id, parent, podIDs: pods.map((p) => p.id).sort() };
  }

  async function portExists(id: string): Promise<boolean> {
    try {
      await w.os.network.ports.get(id);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  const recordedSubports = (s: ServerState) => (s.resources?.subports ?? []).map((p) => p.id).sort();

  it('killed right after the detach: a fresh remove() deletes the detached ports it recorded', async () => {
    const { rec, trunkID, podIDs } = await machineWithSubports('detached');
    // What the trunk carried when the subports were first recorded: they must be written down
    // while the trunk still leads to them.
    let atFirstRecord: string[] | undefined;
    const record = async (s: ServerState) => {
      if (atFirstRecord === undefined && recordedSubports(s).length > 0) {
        const trunk = await w.os.network.trunks.get(trunkID);
        atFirstRecord = trunk.sub_ports.map((p) => p.port_id).sort();
      }
      await rec.record(s);
    };

    const killed = killAfter(w.os, (method) => method === 'removeSubports');
    const engine = new ServerEngine(killed.api, { backoff: BACKOFF });
    assert.equal(
      await runUntilKilled(() => engine.remove({ name: 'detached', ...rec.state }, { record })),
      true,
    );
    assert.equal(killed.log().at(-1), 'removeSubports');
    assert.deepEqual(atFirstRecord, podIDs, 'recorded before the detach');
    assert.deepEqual((await w.os.network.trunks.get(trunkID)).sub_ports, [], 'the detach took effect');
    assert.deepEqual(recordedSubports(rec.state), podIDs, 'the detached ports are in the record');

    // A restarted controller: the trunk it finds has no subports; only the record leads to the pods.
    const removal = await teardown(new ServerEngine(w.os, { backoff: BACKOFF }), 'detached', rec);
    assert.equal(removal.result.phase, 'Ready', JSON.stringify(removal.result));
    const deleted = removal.results.flatMap((r) => r.actions).filter((a) => a.verb === 'delete');
    for (const id of podIDs) {
      assert.ok(
        deleted.some((a) => a.resource === 'port' && a.id === id),
        `pod port ${id} deleted`,
      );
      assert.equal(await portExists(id), false, `pod port ${id} is gone`);
    }
    assert.equal(removal.result.state.resources?.subports, undefined, 'the record is cleared once gone');
    assert.equal(rec.state.resources?.subports, undefined, 'and the cleared record was persisted');
    assert.deepEqual(await census(w), baseline, 'no server, port or trunk left');
  });

  it('killed after each write of a removal: nothing left, for every k', async (t) => {
    const clean = await machineWithSubports('sprobe');
    const counting = killAfterWrites(w.os, Infinity);
    const r = await teardown(new ServerEngine(counting.api, { backoff: BACKOFF }), 'sprobe', clean.rec);
    assert.equal(r.result.phase, 'Ready', JSON.stringify(r.result));
    assert.deepEqual(await census(w), baseline);
    // The server; the machine port; the detach, the trunk and its parent port; both pod ports.
    assert.deepEqual(counting.log(), [
      'delete',
      'delete',
      'removeSubports',
      'delete',
      'delete',
      'delete',
      'delete',
    ]);
    const m = counting.writes();
    t.diagnostic(`removal with subports: killed after each of ${m} writes`);

    for (let k = 1; k <= m; k++) {
      const name = `skill-${k}`;
      const { rec, podIDs } = await machineWithSubports(name);
      const killed = killAfterWrites(w.os, k);
      assert.equal(
        await runUntilKilled(() =>
          new ServerEngine(killed.api, { backoff: BACKOFF }).remove(
            { name, ...rec.state },
            { record: rec.record },
          ),
        ),
        true,
        `k=${k}: killed`,
      );
      const done = (await teardown(new ServerEngine(w.os, { backoff: BACKOFF }), name, rec)).result;
      assert.equal(done.phase, 'Ready', `k=${k}: ${JSON.stringify(done)}`);
      for (const id of podIDs) assert.equal(await portExists(id), false, `k=${k}: pod port ${id} is gone`);
      assert.deepEqual(await census(w), baseline, `k=${k}: nothing left`);
    }
  });

  it('a recorded subport that is in use elsewhere is waited for, then deleted', async () => {
    const { rec, podIDs } = await machineWithSubports('reused');
    const killed = killAfter(w.os, (method) => method === 'removeSubports');
    assert.equal(
      await runUntilKilled(() =>
        new ServerEngine(killed.api, { backoff: BACKOFF }).remove(
          { name: 'reused', ...rec.state },
          { record: rec.record },
        ),
      ),
      true,
    );
    // Its owner puts one pod port on another trunk before the restarted controller gets to it.
    const [held, freed] = podIDs as [string, string];
    const other = await w.os.network.ports.create({ network_id: w.trunkNetwork.id, name: 'other-parent' });
    const otherTrunk = await w.os.network.trunks.create({ port_id: other.id, name: 'other' });
    await w.os.network.trunks.addSubports(otherTrunk.id, [
      { port_id: held, segmentation_type: 'vlan', segmentation_id: 200 },
    ]);

    const engine = new ServerEngine(w.os, { backoff: BACKOFF });
    // Through the server's deletion (Pending Deleting) up to the subports' sweep.
    const stuck = await drive(async () => {
      const r = await engine.remove({ name: 'reused', ...rec.state }, { record: rec.record });
      const atHeld = r.phase === 'Pending' && r.reason === 'Conflict' && r.message.includes(held);
      return atHeld ? { ...r, phase: 'Stuck' as const } : r;
    });
    assert.equal(
      stuck.result.phase,
      'Stuck',
      `not done while the port is a subport elsewhere: ${JSON.stringify(stuck.result)}`,
    );
    assert.deepEqual(recordedSubports(rec.state), [held], 'only the held port stays recorded');
    assert.equal(await portExists(freed), false);
    assert.equal(await portExists(held), true);

    await w.os.network.trunks.removeSubports(otherTrunk.id, [{ port_id: held }]);
    const done = await teardown(engine, 'reused', rec);
    assert.equal(done.result.phase, 'Ready', JSON.stringify(done.result));
    assert.equal(await portExists(held), false);
    await w.os.network.trunks.delete(otherTrunk.id);
    await w.os.network.ports.delete(other.id);
    assert.deepEqual(await census(w), baseline);
  });
});
