/**
 * Crash consistency: the engine is killed right after its k-th OpenStack write (the write took
 * effect, its answer is lost, `record` never heard of it), for every k of a whole create; then a
 * fresh engine — a restarted controller — starts from what `record` had persisted and nothing else.
 * Exactly one server, the spec's ports, one trunk and the two volumes may result, and removal then
 * leaves nothing. The same for every k of a removal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ServerEngine } from './engine.ts';
import {
  BACKOFF,
  census,
  converge,
  killAfterWrites,
  machineSpec,
  openServerWorld,
  Recorder,
  runUntilKilled,
  teardown,
  type ServerWorld,
} from './testing/fixtures.ts';

describe('server engine: killed between any two writes', () => {
  let w: ServerWorld;

  before(async () => {
    w = await openServerWorld();
  });
  after(async () => {
    await w?.close();
  });

  /** Writes of a clean create and of a clean removal, counted through the same wrapper. */
  async function countWrites(name: string): Promise<{ create: number; remove: number }> {
    const rec = new Recorder();
    const creating = killAfterWrites(w.os, Infinity);
    const create = await converge(
      new ServerEngine(creating.api, { backoff: BACKOFF }),
      machineSpec(name),
      rec,
    );
    assert.equal(create.result.phase, 'Ready', JSON.stringify(create.result));
    const removing = killAfterWrites(w.os, Infinity);
    const removal = await teardown(new ServerEngine(removing.api, { backoff: BACKOFF }), name, rec);
    assert.equal(removal.result.phase, 'Ready', JSON.stringify(removal.result));
    return { create: creating.writes(), remove: removing.writes() };
  }

  it('create: one server, no leaked port, trunk or volume, for every k', async (t) => {
    const baseline = await census(w);
    const n = (await countWrites('probe')).create;
    assert.deepEqual(await census(w), baseline);
    // 2 ports, 2 port tags, 1 trunk, 1 trunk tag, 2 volumes, 1 server.
    assert.equal(n, 9, `a clean create makes ${n} writes`);
    t.diagnostic(`create: killed after each of ${n} writes`);
    const expected = {
      servers: baseline.servers + 1,
      ports: baseline.ports + 2,
      trunks: baseline.trunks + 1,
      volumes: baseline.volumes + 2,
    };

    for (let k = 1; k <= n; k++) {
      const name = `crash-${k}`;
      const spec = machineSpec(name);
      const rec = new Recorder();
      const killed = killAfterWrites(w.os, k);
      assert.equal(
        await runUntilKilled(() =>
          new ServerEngine(killed.api, { backoff: BACKOFF }).ensure(
            { spec, ...rec.state },
            { record: rec.record },
          ),
        ),
        true,
      );
      // Writes sent together (the ports beside the volumes) may all have been under way when the
      // process died: each of them took effect too.
      assert.ok(killed.writes() >= k);

      // A restarted controller: a new engine, only what was recorded.
      const restarted = new ServerEngine(w.os, { backoff: BACKOFF });
      const r = (await converge(restarted, spec, rec)).result;
      assert.equal(r.phase, 'Ready', `k=${k}: ${JSON.stringify(r)}`);
      assert.deepEqual(await census(w), expected, `k=${k}: exactly what one clean create leaves`);
      const servers = await w.os.compute.servers.list({ name: `^${name}$` }).all();
      assert.deepEqual(
        servers.map((s) => s.id),
        [rec.state.instanceID],
        `k=${k}: the recorded server is the one`,
      );
      const ports = await w.os.network.ports.list({ device_id: rec.state.instanceID! }).all();
      assert.deepEqual(
        ports.map((p) => p.id).sort(),
        rec.state.resources!.ports.map((p) => p.id).sort(),
        `k=${k}: the server's ports are the recorded ones`,
      );
      for (const p of ports) assert.ok(p.tags.includes('cluster-test'), `k=${k}: port ${p.name} is tagged`);
      const [trunk] = await w.os.network.trunks.list({ name: `${name}-pods` }).all();
      assert.deepEqual(trunk?.tags, ['cluster-test'], `k=${k}: the trunk is tagged`);

      assert.equal((await teardown(restarted, name, rec)).result.phase, 'Ready');
      assert.deepEqual(await census(w), baseline, `k=${k}: removal leaves nothing`);
    }
  });

  it('removal: nothing left, for every k', async (t) => {
    const baseline = await census(w);
    const m = (await countWrites('rprobe')).remove;
    // The server; its trunk; both ports (Nova deletes the volumes).
    assert.ok(m >= 4, `a removal makes ${m} writes`);
    t.diagnostic(`removal: killed after each of ${m} writes`);

    for (let k = 1; k <= m; k++) {
      const name = `rcrash-${k}`;
      const rec = new Recorder();
      assert.equal(
        (await converge(new ServerEngine(w.os, { backoff: BACKOFF }), machineSpec(name), rec)).result.phase,
        'Ready',
      );
      const killed = killAfterWrites(w.os, k);
      assert.equal(
        await runUntilKilled(() =>
          new ServerEngine(killed.api, { backoff: BACKOFF }).remove(
            { name, ...rec.state },
            { record: rec.record },
          ),
        ),
        true,
      );
      const r = (await teardown(new ServerEngine(w.os, { backoff: BACKOFF }), name, rec)).result;
      assert.equal(r.phase, 'Ready', `k=${k}: ${JSON.stringify(r)}`);
      assert.deepEqual(await census(w), baseline, `k=${k}`);
    }
  });

  it('a removal that finds the create’s answers lost still cleans everything', async () => {
    // Killed after every write of a create in turn, nothing recorded past the resolve but the
    // volumes' names (written before their create, so a lost answer cannot lose them): remove alone
    // (no ensure in between) must find the ports, the trunk and the server by name.
    const baseline = await census(w);
    for (let k = 1; k <= 9; k++) {
      const name = `lost-${k}`;
      const rec = new Recorder();
      const killed = killAfterWrites(w.os, k);
      assert.equal(
        await runUntilKilled(() =>
          new ServerEngine(killed.api, { backoff: BACKOFF }).ensure(
            { spec: machineSpec(name), ...rec.state },
            { record: rec.record },
          ),
        ),
        true,
      );
      const onlyResolved = new Recorder();
      const volumes = rec.state.resources?.volumes;
      onlyResolved.state = {
        resolved: rec.calls[0]!.resolved,
        ...(volumes ? { resources: { ports: [], volumes } } : {}),
      };
      const r = (await teardown(new ServerEngine(w.os, { backoff: BACKOFF }), name, onlyResolved)).result;
      assert.equal(r.phase, 'Ready', `k=${k}: ${JSON.stringify(r)}`);
      assert.deepEqual(await census(w), baseline, `k=${k}`);
    }
  });
});
