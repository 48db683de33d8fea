import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';

const PATCH = { 'content-type': 'application/openstack-images-v2.1-json-patch' };

describe('glance', () => {
  let t: TestCloud;
  before(async () => {
    t = await startTestCloud();
  });
  after(() => t.close());

  async function upload(id: string, bytes: Buffer, headers: Record<string, string> = {}) {
    const res = await fetch(`${t.cloud.serviceUrl('glance')}/v2/images/${id}/file`, {
      method: 'PUT',
      headers: {
        'x-auth-token': await t.token('admin'),
        'content-type': 'application/octet-stream',
        ...headers,
      },
      body: bytes,
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  it('serves the version documents without a token', async () => {
    const root = await t.request('glance', 'GET', '', { token: null });
    assert.equal(root.status, 300);
    assert.equal(root.body.versions[0].id, 'v2.15');
    assert.equal(root.body.versions[0].status, 'CURRENT');
    assert.equal(root.body.versions[0].links[0].href, `${t.cloud.serviceUrl('glance')}/v2/`);
    const versions = await t.request('glance', 'GET', '/versions', { token: null });
    assert.equal(versions.status, 200);
    assert.equal(versions.body.versions.length, 15);
  });

  it('seeds public active cirros and ubuntu images owned by the admin project', async () => {
    const res = await t.request('glance', 'GET', '/v2/images?visibility=public&sort=name:asc', {
      user: 'demo',
    });
    const names = res.body.images.map((i: { name: string }) => i.name);
    assert.ok(names.includes('cirros-0.6.2-x86_64-disk'));
    assert.ok(names.includes('ubuntu-22.04'));
    const cirros = res.body.images.find((i: { name: string }) => i.name === 'cirros-0.6.2-x86_64-disk');
    assert.equal(cirros.status, 'active');
    assert.equal(cirros.min_disk, 1);
    assert.equal(cirros.disk_format, 'qcow2');
    assert.equal(cirros.stores, 'file');
    assert.match(cirros.owner, /^[0-9a-f]{32}$/);
    assert.deepEqual(t.cloud.image.getImage(cirros.id), {
      id: cirros.id,
      name: 'cirros-0.6.2-x86_64-disk',
      status: 'active',
      owner: cirros.owner,
      visibility: 'public',
      min_disk: 1,
      min_ram: 0,
      size: cirros.size,
    });
  });

  it('creates, uploads, patches, tags and deletes an image as the real lifecycle goes', async () => {
    const created = await t.request('glance', 'POST', '/v2/images', {
      body: {
        name: 'probe-img',
        disk_format: 'raw',
        container_format: 'bare',
        visibility: 'public',
        tags: ['probe'],
        os_distro: 'cirros',
      },
    });
    assert.equal(created.status, 201);
    const img = created.body;
    assert.equal(created.headers.get('location'), `${t.cloud.serviceUrl('glance')}/v2/images/${img.id}`);
    assert.equal(created.headers.get('openstack-image-store-ids'), 'file');
    assert.equal(img.status, 'queued');
    assert.equal(img.size, null);
    assert.equal(img.checksum, null);
    assert.equal(img.os_distro, 'cirros');
    assert.equal(Object.keys(img)[0], 'os_distro', 'free-form properties come first');
    assert.equal('stores' in img, false);
    assert.equal(img.self, `/v2/images/${img.id}`);

    const data = Buffer.alloc(4096);
    const up = await upload(img.id, data);
    assert.equal(up.status, 204);
    assert.equal(up.text, '');

    const active = await t.request('glance', 'GET', `/v2/images/${img.id}`);
    assert.equal(active.body.status, 'active');
    assert.equal(active.body.size, 4096);
    assert.equal(active.body.virtual_size, 4096);
    assert.equal(active.body.checksum, '620f0b67a91f7f74151bc5be745b7110');
    assert.equal(active.body.os_hash_algo, 'sha512');
    assert.equal(active.body.os_hash_value, createHash('sha512').update(data).digest('hex'));
    assert.equal(active.body.stores, 'file');

    // requests' default Accept is */*, and webob answers HTML then.
    const again = await upload(img.id, Buffer.alloc(16), { accept: '*/*' });
    assert.equal(again.status, 409);
    assert.match(again.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(
      again.text,
      '<html>\n <head>\n  <title>409 Conflict</title>\n </head>\n <body>\n  <h1>409 Conflict</h1>\n  Image status transition from active to saving is not allowed<br /><br />\n\n\n\n </body>\n</html>',
    );
    const againJson = await upload(img.id, Buffer.alloc(16), { accept: 'application/json' });
    assert.equal(JSON.parse(againJson.text).code, '409 Conflict');

    const download = await fetch(`${t.cloud.serviceUrl('glance')}/v2/images/${img.id}/file`, {
      headers: { 'x-auth-token': await t.token('admin') },
    });
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('content-md5'), '620f0b67a91f7f74151bc5be745b7110');
    assert.equal((await download.arrayBuffer()).byteLength, 4096);

    const patched = await t.request('glance', 'PATCH', `/v2/images/${img.id}`, {
      raw: JSON.stringify([
        { op: 'replace', path: '/name', value: 'probe-img-2' },
        { op: 'add', path: '/hw_disk_bus', value: 'scsi' },
      ]),
      headers: PATCH,
    });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.name, 'probe-img-2');
    assert.deepEqual(Object.keys(patched.body).slice(0, 2), ['os_distro', 'hw_disk_bus']);

    const wrongType = await t.request('glance', 'PATCH', `/v2/images/${img.id}`, {
      raw: JSON.stringify([{ op: 'replace', path: '/name', value: 'x' }]),
    });
    assert.equal(wrongType.status, 415);
    assert.equal(
      wrongType.headers.get('accept-patch'),
      'application/openstack-images-v2.0-json-patch, application/openstack-images-v2.1-json-patch',
    );
    assert.deepEqual(wrongType.body, {
      message: 'The request media type application/json is not supported by this server.\n<br /><br />\n',
      code: '415 Unsupported Media Type',
      title: 'Unsupported Media Type',
    });

    const missingProp = await t.request('glance', 'PATCH', `/v2/images/${img.id}`, {
      raw: JSON.stringify([{ op: 'remove', path: '/nope' }]),
      headers: PATCH,
    });
    assert.equal(missingProp.status, 409);
    const readOnly = await t.request('glance', 'PATCH', `/v2/images/${img.id}`, {
      raw: JSON.stringify([{ op: 'replace', path: '/status', value: 'queued' }]),
      headers: PATCH,
    });
    assert.equal(readOnly.status, 403);
    assert.equal(readOnly.body.message, "Attribute 'status' is read-only.<br /><br />\n\n\n");

    assert.equal((await t.request('glance', 'PUT', `/v2/images/${img.id}/tags/extra`)).status, 204);
    assert.deepEqual((await t.request('glance', 'GET', `/v2/images/${img.id}`)).body.tags, [
      'probe',
      'extra',
    ]);
    assert.equal((await t.request('glance', 'DELETE', `/v2/images/${img.id}/tags/extra`)).status, 204);
    assert.equal((await t.request('glance', 'DELETE', `/v2/images/${img.id}/tags/extra`)).status, 404);

    const dup = await t.request('glance', 'POST', '/v2/images', { body: { id: img.id, name: 'dup' } });
    assert.equal(dup.status, 409);
    assert.deepEqual(dup.body, {
      message: `Image ID ${img.id} already exists!<br /><br />\n\n\n`,
      code: '409 Conflict',
      title: 'Conflict',
    });

    const notOwner = await t.request('glance', 'DELETE', `/v2/images/${img.id}`, { user: 'demo' });
    assert.equal(notOwner.status, 403);
    assert.deepEqual(notOwner.body, {
      message: 'You do not own this image<br /><br />\n\n\n',
      code: '403 Forbidden',
      title: 'Forbidden',
    });
    const deleted = await t.request('glance', 'DELETE', `/v2/images/${img.id}`);
    assert.equal(deleted.status, 204);
    const gone = await t.request('glance', 'DELETE', `/v2/images/${img.id}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.message, `Failed to find image ${img.id} to delete<br /><br />\n\n\n`);
    assert.equal(
      (await t.request('glance', 'POST', '/v2/images', { body: { id: img.id } })).status,
      409,
      'ids are never reused',
    );
  });

  it('validates formats with jsonschema’s message, as the real 400', async () => {
    const res = await t.request('glance', 'POST', '/v2/images', {
      body: { name: 'bad', disk_format: 'floppy' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, '400 Bad Request');
    assert.ok(
      res.body.message.startsWith(
        "Provided object does not match schema 'image': 'floppy' is not one of [None, 'ami', 'ari', 'aki', 'vhd', 'vhdx', 'vmdk', 'raw', 'qcow2', 'vdi', 'iso', 'ploop']\n\nFailed validating 'enum' in schema['properties']['disk_format']:\n    {'description': 'Format of the disk',\n     'enum': [None,\n              'ami',",
      ),
    );
    assert.ok(res.body.message.endsWith("On instance['disk_format']:\n    'floppy'<br /><br />\n\n\n"));
    const readOnly = await t.request('glance', 'POST', '/v2/images', { body: { status: 'active' } });
    assert.equal(readOnly.status, 403);
    const notString = await t.request('glance', 'POST', '/v2/images', { body: { foo: 1 } });
    assert.equal(notString.status, 400);
    assert.match(notString.body.message, /1 is not of type 'string'/);
  });

  it('answers 404 in Glance’s format and 401 in keystonemiddleware’s', async () => {
    const id = randomUUID();
    const res = await t.request('glance', 'GET', `/v2/images/${id}`);
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, {
      message: `No image found with ID ${id}<br /><br />\n\n\n`,
      code: '404 Not Found',
      title: 'Not Found',
    });
    const noToken = await t.request('glance', 'GET', '/v2/images', { token: null });
    assert.equal(noToken.status, 401);
    assert.equal(noToken.body.error.code, 401);
    assert.match(noToken.headers.get('www-authenticate') ?? '', /^Keystone uri=/);
  });

  it('keeps private images to their project, shows public ones to all, and lets only admins publish', async () => {
    const priv = await t.request('glance', 'POST', '/v2/images', {
      user: 'demo',
      body: { name: 'demo-private', visibility: 'private', disk_format: 'qcow2', container_format: 'bare' },
    });
    assert.equal(priv.status, 201);
    assert.equal(
      (await t.request('glance', 'GET', `/v2/images/${priv.body.id}`, { user: 'alt_demo' })).status,
      404,
    );
    assert.equal(
      (await t.request('glance', 'DELETE', `/v2/images/${priv.body.id}`, { user: 'alt_demo' })).status,
      404,
    );
    assert.equal(
      (await t.request('glance', 'GET', `/v2/images/${priv.body.id}`, { user: 'demo' })).status,
      200,
    );
    assert.equal(
      (await t.request('glance', 'GET', `/v2/images/${priv.body.id}`, { user: 'admin' })).status,
      200,
    );
    const altList = await t.request('glance', 'GET', '/v2/images?limit=100', { user: 'alt_demo' });
    assert.ok(!altList.body.images.some((i: { id: string }) => i.id === priv.body.id));
    const demoList = await t.request('glance', 'GET', '/v2/images?limit=100', { user: 'demo' });
    assert.ok(demoList.body.images.some((i: { id: string }) => i.id === priv.body.id));

    const shared = await t.request('glance', 'POST', '/v2/images', {
      user: 'demo',
      body: { name: 'default-vis' },
    });
    assert.equal(shared.body.visibility, 'shared');
    const publish = await t.request('glance', 'POST', '/v2/images', {
      user: 'demo',
      body: { name: 'x', visibility: 'public' },
    });
    assert.equal(publish.status, 403);
    assert.equal(
      publish.body.message,
      'You are not authorized to complete publicize_image action.<br /><br />\n\n\n',
    );
  });

  it('filters by name, status, tag and properties, and pages with relative next links', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.request('glance', 'POST', '/v2/images', {
        body: {
          name: `page-${i}`,
          tags: i % 2 === 0 ? ['even', 'page'] : ['page'],
          hw_arch: i < 2 ? 'x86_64' : 'aarch64',
        },
      });
      ids.push(res.body.id);
    }
    const even = await t.request('glance', 'GET', '/v2/images?tag=page&tag=even&sort=name:asc');
    assert.deepEqual(
      even.body.images.map((i: { name: string }) => i.name),
      ['page-0', 'page-2', 'page-4'],
    );
    assert.equal(
      even.body.first,
      '/v2/images?tag=even&sort=name%3Aasc',
      'dict(request.params) keeps the last tag',
    );
    const byProp = await t.request('glance', 'GET', '/v2/images?hw_arch=x86_64&tag=page');
    assert.equal(byProp.body.images.length, 2);
    const byName = await t.request('glance', 'GET', '/v2/images?name=page-3');
    assert.deepEqual(
      byName.body.images.map((i: { id: string }) => i.id),
      [ids[3]],
    );
    const queued = await t.request('glance', 'GET', '/v2/images?status=queued&tag=page&limit=100');
    assert.equal(queued.body.images.length, 5);

    // Default order is newest first.
    const page1 = await t.request('glance', 'GET', '/v2/images?tag=page&limit=2');
    assert.deepEqual(
      page1.body.images.map((i: { id: string }) => i.id),
      [ids[4], ids[3]],
    );
    assert.equal(page1.body.first, '/v2/images?tag=page&limit=2');
    assert.equal(page1.body.next, `/v2/images?tag=page&limit=2&marker=${ids[3]}`);
    assert.equal(page1.body.schema, '/v2/schemas/images');
    const page2 = await t.request('glance', 'GET', page1.body.next);
    assert.deepEqual(
      page2.body.images.map((i: { id: string }) => i.id),
      [ids[2], ids[1]],
    );
    const page3 = await t.request('glance', 'GET', page2.body.next);
    assert.deepEqual(
      page3.body.images.map((i: { id: string }) => i.id),
      [ids[0]],
    );
    assert.equal(page3.body.next, undefined);

    const badMarker = await t.request('glance', 'GET', `/v2/images?marker=${randomUUID()}`);
    assert.equal(badMarker.status, 400);
    const badSort = await t.request('glance', 'GET', '/v2/images?sort_key=color');
    assert.equal(badSort.status, 400);
    const badLimit = await t.request('glance', 'GET', '/v2/images?limit=-1');
    assert.equal(badLimit.status, 400);
  });

  it('serves the image schema as recorded', async () => {
    const res = await t.request('glance', 'GET', '/v2/schemas/image');
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'image');
    assert.deepEqual(res.body.additionalProperties, { type: 'string' });
    assert.ok('disk_format' in res.body.properties);
  });

  it('lets the admin API force an image state', async () => {
    const img = await t.request('glance', 'POST', '/v2/images', { body: { name: 'forced' } });
    assert.equal(t.cloud.forceState('glance', 'image', img.body.id, { status: 'killed' }), true);
    assert.equal((await t.request('glance', 'GET', `/v2/images/${img.body.id}`)).body.status, 'killed');
    assert.equal(t.cloud.forceState('glance', 'image', randomUUID(), { status: 'killed' }), false);
  });

  it('restores from a snapshot with data', async () => {
    const img = await t.request('glance', 'POST', '/v2/images', {
      body: { name: 'persisted', disk_format: 'raw', container_format: 'bare' },
    });
    await upload(img.body.id, Buffer.from('hello'));
    const snap = t.cloud.snapshot();
    const other = await startTestCloud();
    try {
      other.cloud.restore(snap);
      const res = await other.request('glance', 'GET', `/v2/images/${img.body.id}`);
      assert.equal(res.body.status, 'active');
      const file = await fetch(`${other.cloud.serviceUrl('glance')}/v2/images/${img.body.id}/file`, {
        headers: { 'x-auth-token': await other.token('admin') },
      });
      assert.equal(await file.text(), 'hello');
    } finally {
      await other.close();
    }
  });
});
