/**
 * Cinder v3 through `client.blockStorage`, against the emulator or the real cloud of OS_CLOUD
 * (skipped where the catalog has no block-storage endpoint, as on the os-real test cloud).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { OpenStackClient } from '../../client.ts';
import {
  EndpointNotFoundError,
  isNotFound,
  ResourceErrorStateError,
  WaitTimeoutError,
} from '../../core/errors.ts';
import {
  addFault,
  clearFaults,
  openClientTarget,
  unique,
  type ClientTarget,
} from '../../core/testing/target.ts';
import { Cleanup, waitTimings } from '../../network/v2/testing/fixtures.ts';
import type { Volume } from './volumes.ts';

describe('block-storage v3', () => {
  let t: ClientTarget;
  let os: OpenStackClient;
  let available = true;
  const cleanup = new Cleanup();
  let wait: ReturnType<typeof waitTimings>;

  before(async () => {
    t = await openClientTarget();
    os = await t.client(t.demo);
    wait = waitTimings(t);
    try {
      await os.session.endpoint('block-storage');
    } catch (err) {
      if (!EndpointNotFoundError.is(err)) throw err;
      available = false;
    }
  });
  after(async () => {
    await cleanup.run();
    await t?.close();
  });

  const create = async (extra: Record<string, unknown> = {}): Promise<Volume> => {
    const volume = await os.blockStorage.volumes.create({ size: 1, name: unique('client-vol'), ...extra });
    cleanup.add(`volume ${volume.id}`, async () => {
      await os.blockStorage.volumes.delete(volume.id);
      await os.blockStorage.volumes.waitForDeleted(volume.id, wait);
    });
    return volume;
  };

  it('creates, reads, lists, updates, extends and deletes a volume', async (s) => {
    if (!available) return s.skip('the cloud has no block-storage endpoint');
    assert.equal(await os.blockStorage.microversion(), '3.42');
    const created = await create({ metadata: { role: 'data' } });
    assert.equal(created.size, 1);
    const ready = await os.blockStorage.volumes.waitForAvailable(created.id, wait);
    assert.equal(ready.status, 'available');
    assert.deepEqual(ready.metadata, { role: 'data' });
    assert.deepEqual(
      (await os.blockStorage.volumes.list({ name: created.name! }).all()).map((v) => v.id),
      [created.id],
    );
    const updated = await os.blockStorage.volumes.update(created.id, { description: 'updated' });
    assert.equal(updated.description, 'updated');
    await os.blockStorage.volumes.extend(created.id, 2);
    const grown = await os.blockStorage.volumes.waitForAvailable(created.id, wait);
    assert.equal(grown.size, 2);
    await os.blockStorage.volumes.delete(created.id);
    await os.blockStorage.volumes.waitForDeleted(created.id, wait);
    await assert.rejects(os.blockStorage.volumes.get(created.id), isNotFound);
  });

  it('pages through volumes', async (s) => {
    if (!available) return s.skip('the cloud has no block-storage endpoint');
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await create()).id);
    const pages = [];
    for await (const page of os.blockStorage.volumes.list({ limit: 1 }).pages()) pages.push(page);
    assert.ok(pages.length >= 3, `${pages.length} pages`);
    const seen = new Set(pages.flatMap((p) => p.items.map((v) => v.id)));
    assert.ok(ids.every((id) => seen.has(id)));
  });

  it('lists volume types and availability zones', async (s) => {
    if (!available) return s.skip('the cloud has no block-storage endpoint');
    const types = await os.blockStorage.volumeTypes.list();
    assert.ok(types.length > 0);
    assert.equal((await os.blockStorage.volumeTypes.get(types[0]!.id)).name, types[0]!.name);
    const zones = await os.blockStorage.availabilityZones.list();
    assert.ok(zones.some((z) => z.zoneState.available));
  });

  it('ends a wait on error, times out on creating, and aborts (emulator)', async (s) => {
    if (!available) return s.skip('the cloud has no block-storage endpoint');
    if (!t.sim) return s.skip('needs the emulator’s fault injection');
    try {
      await addFault(t.sim, { kind: 'error-on-create', service: 'cinder', resource: 'volume', times: 1 });
      const doomed = await create();
      const err = await os.blockStorage.volumes.waitForAvailable(doomed.id, wait).catch((e: unknown) => e);
      assert.ok(ResourceErrorStateError.is(err), String(err));
      assert.equal(err.status, 'error');

      await addFault(t.sim, { kind: 'stuck', service: 'cinder', resource: 'volume', times: 1 });
      const stuck = await create();
      const timeout = await os.blockStorage.volumes
        .waitForAvailable(stuck.id, { timeoutMs: 80, intervalMs: 10 })
        .catch((e: unknown) => e);
      assert.ok(WaitTimeoutError.is(timeout), String(timeout));
      assert.equal(timeout.lastStatus, 'creating');
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('stop')), 20);
      await assert.rejects(
        os.blockStorage.volumes.waitForAvailable(stuck.id, { intervalMs: 5, signal: controller.signal }),
        /stop/,
      );
      await fetch(`${t.sim.url}/_sim/state/cinder/volume/${stuck.id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'available' }),
      });
    } finally {
      await clearFaults(t.sim);
    }
  });
});
