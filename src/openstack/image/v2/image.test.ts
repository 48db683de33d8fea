/** Glance v2 through `client.image`, against the emulator or the real cloud of OS_CLOUD. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { OpenStackClient } from '../../client.ts';
import {
  isNotFound,
  MultipleResultsError,
  ResourceErrorStateError,
  WaitTimeoutError,
} from '../../core/errors.ts';
import { openClientTarget, unique, type ClientTarget } from '../../core/testing/target.ts';
import { Cleanup, waitTimings } from '../../network/v2/testing/fixtures.ts';
import type { Image } from './images.ts';

describe('image v2', () => {
  let t: ClientTarget;
  let os: OpenStackClient;
  const cleanup = new Cleanup();
  let wait: ReturnType<typeof waitTimings>;

  before(async () => {
    t = await openClientTarget();
    os = await t.client(t.demo);
    wait = waitTimings(t);
  });
  after(async () => {
    await cleanup.run();
    await t?.close();
  });

  const create = async (name = unique('client-img'), extra: Record<string, unknown> = {}): Promise<Image> => {
    const image = await os.image.images.create({
      name,
      disk_format: 'raw',
      container_format: 'bare',
      ...extra,
    });
    cleanup.add(`image ${image.id}`, () => os.image.images.delete(image.id));
    return image;
  };

  it('creates, uploads, downloads, patches, tags and deletes an image', async () => {
    const tag = unique('client-imgtag');
    const image = await create(undefined, { tags: [tag], os_distro: 'cirros' });
    assert.equal(image.status, 'queued');
    assert.equal(image['os_distro'], 'cirros');
    const data = new Uint8Array(4096).map((_, i) => i % 251);
    await os.image.images.upload(image.id, data);
    const active = await os.image.images.waitForActive(image.id, wait);
    assert.equal(active.size, 4096);
    const stream = await os.image.images.download(image.id);
    const back = new Uint8Array(await new Response(stream).arrayBuffer());
    assert.deepEqual(back, data);

    const patched = await os.image.images.update(image.id, [
      { op: 'replace', path: '/name', value: `${image.name}-2` },
      { op: 'add', path: '/hw_disk_bus', value: 'scsi' },
      { op: 'remove', path: '/os_distro' },
    ]);
    assert.equal(patched.name, `${image.name}-2`);
    assert.equal(patched['hw_disk_bus'], 'scsi');
    assert.equal(patched['os_distro'], undefined);

    await os.image.images.addTag(image.id, 'extra');
    assert.deepEqual((await os.image.images.get(image.id)).tags.sort(), ['extra', tag].sort());
    await os.image.images.removeTag(image.id, 'extra');
    await assert.rejects(os.image.images.removeTag(image.id, 'extra'), isNotFound);
    assert.deepEqual(
      (await os.image.images.list({ tag, status: 'active' }).all()).map((i) => i.id),
      [image.id],
    );

    await os.image.images.delete(image.id);
    await os.image.images.waitForDeleted(image.id, wait);
    await assert.rejects(os.image.images.get(image.id), isNotFound);
  });

  it('uploads from a stream', async () => {
    const image = await create();
    const chunks = [new Uint8Array(1000).fill(1), new Uint8Array(24).fill(2)];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(c);
        controller.close();
      },
    });
    await os.image.images.upload(image.id, stream);
    assert.equal((await os.image.images.waitForActive(image.id, wait)).size, 1024);
  });

  it('pages through images with Glance’s relative next links', async () => {
    const tag = unique('client-imgpage');
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await create(`${tag}-${i}`, { tags: [tag] })).id);
    const pages = [];
    for await (const page of os.image.images.list({ tag, limit: 1 }).pages()) pages.push(page);
    assert.ok(pages.length >= 3, `${pages.length} pages`);
    assert.deepEqual(pages.flatMap((p) => p.items.map((i) => i.id)).sort(), ids.sort());
  });

  it('finds an image by exact name, and refuses to guess between two', async () => {
    const name = unique('client-imgname');
    const one = await create(name);
    assert.equal((await os.image.images.findByName(name))?.id, one.id);
    assert.equal(await os.image.images.findByName(unique('client-none')), undefined);
    const two = await create(name);
    const err = await os.image.images.findByName(name).catch((e: unknown) => e);
    assert.ok(MultipleResultsError.is(err), String(err));
    assert.deepEqual([...err.ids].sort(), [one.id, two.id].sort());
  });

  it('ends a wait on killed, times out on queued, and aborts (emulator)', async (s) => {
    if (!t.sim) return s.skip('needs the emulator’s state forcing');
    const image = await create();
    const timeout = await os.image.images
      .waitForActive(image.id, { timeoutMs: 50, intervalMs: 10 })
      .catch((e: unknown) => e);
    assert.ok(WaitTimeoutError.is(timeout));
    assert.equal(timeout.lastStatus, 'queued');
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    await assert.rejects(os.image.images.waitForActive(image.id, { signal: controller.signal }), /gone/);
    const forced = await fetch(`${t.sim.url}/_sim/state/glance/image/${image.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'killed' }),
    });
    assert.equal(forced.status, 204);
    const err = await os.image.images.waitForActive(image.id, wait).catch((e: unknown) => e);
    assert.ok(ResourceErrorStateError.is(err), String(err));
    assert.equal(err.status, 'killed');
  });
});
