import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { eventually, startTestCloud, type SeededUser, type TestCloud } from '../testing/harness.ts';

describe('cinder', () => {
  let t: TestCloud;
  const projects = new Map<SeededUser, string>();

  before(async () => {
    t = await startTestCloud();
  });
  after(() => t.close());

  /** The project of a seeded user, as the catalog URL carries it. */
  async function projectOf(user: SeededUser): Promise<string> {
    const known = projects.get(user);
    if (known) return known;
    const project = t.cloud.identity.validate(await t.token(user)).projectId ?? '';
    projects.set(user, project);
    return project;
  }

  async function api(
    user: SeededUser,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    const project = await projectOf(user);
    return t.request('cinder', method, `/v3/${project}${path}`, {
      user,
      ...(body !== undefined ? { body } : {}),
      headers,
    });
  }

  async function createAvailable(user: SeededUser, volume: Record<string, unknown>) {
    const res = await api(user, 'POST', '/volumes', { volume });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    await eventually(
      async () =>
        (await api(user, 'GET', `/volumes/${res.body.volume.id}`)).body.volume.status === 'available',
    );
    return res.body.volume;
  }

  async function imageId(name: string): Promise<string> {
    const res = await t.request('glance', 'GET', `/v2/images?name=${name}`);
    return res.body.images[0].id;
  }

  it('serves version documents without a token', async () => {
    const root = await t.request('cinder', 'GET', '', { token: null });
    assert.equal(root.status, 300);
    assert.equal(root.body.versions[0].id, 'v3.0');
    assert.equal(root.body.versions[0].version, '3.70');
    assert.equal(root.body.versions[0].min_version, '3.0');
    assert.equal(root.body.versions[0].links[1].href, `${t.cloud.serviceUrl('cinder')}/v3/`);
    const v3 = await t.request('cinder', 'GET', '/v3/', { token: null });
    assert.equal(v3.status, 200);
    assert.equal(v3.body.versions[0].status, 'CURRENT');
  });

  it('negotiates OpenStack-API-Version and echoes it', async () => {
    const plain = await api('demo', 'GET', '/volumes');
    assert.equal(plain.headers.get('openstack-api-version'), 'volume 3.0');
    assert.equal(plain.headers.get('vary'), 'OpenStack-API-Version');
    const latest = await api('demo', 'GET', '/volumes', undefined, {
      'OpenStack-API-Version': 'volume latest',
    });
    assert.equal(latest.headers.get('openstack-api-version'), 'volume 3.70');
    const tooNew = await api('demo', 'GET', '/volumes', undefined, {
      'OpenStack-API-Version': 'volume 9.99',
    });
    assert.equal(tooNew.status, 406);
    assert.deepEqual(tooNew.body, {
      computeFault: {
        code: 406,
        message: 'Version 9.99 is not supported by the API. Minimum is 3.0 and maximum is 3.70.',
      },
    });
    const garbage = await api('demo', 'GET', '/volumes', undefined, {
      'OpenStack-API-Version': 'volume three',
    });
    assert.equal(garbage.status, 400);
    assert.ok(garbage.body.badRequest.message.startsWith('API Version String three is of invalid format'));
  });

  it('creates a volume that goes creating → available, and deletes it through deleting', async () => {
    const res = await api('demo', 'POST', '/volumes', {
      volume: { size: 1, name: 'data', metadata: { role: 'db' } },
    });
    assert.equal(res.status, 202);
    const vol = res.body.volume;
    assert.equal(vol.status, 'creating');
    assert.equal(vol.size, 1);
    assert.equal(vol.bootable, 'false');
    assert.equal(vol.volume_type, 'lvmdriver-1');
    assert.equal(vol.availability_zone, 'nova');
    assert.equal(vol.updated_at, null);
    assert.match(vol.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
    assert.equal(
      'os-vol-tenant-attr:tenant_id' in vol,
      false,
      'create answers carry no extension attributes',
    );
    const project = await projectOf('demo');
    assert.equal(vol.links[0].href, `${t.cloud.serviceUrl('cinder')}/v3/${project}/volumes/${vol.id}`);
    assert.equal(vol.links[1].href, `${t.cloud.serviceUrl('cinder')}/${project}/volumes/${vol.id}`);

    await eventually(
      async () => (await api('demo', 'GET', `/volumes/${vol.id}`)).body.volume.status === 'available',
    );
    const shown = await api('demo', 'GET', `/volumes/${vol.id}`);
    assert.equal(shown.body.volume['os-vol-tenant-attr:tenant_id'], project);
    assert.equal('os-vol-host-attr:host' in shown.body.volume, false, 'host is admin-only');
    assert.deepEqual(shown.body.volume.metadata, { role: 'db' });
    const asAdmin = await t.request('cinder', 'GET', `/v3/${await projectOf('admin')}/volumes/${vol.id}`);
    assert.equal(asAdmin.body.volume['os-vol-host-attr:host'], 'compute-0@lvmdriver-1#lvmdriver-1');

    const deleted = await api('demo', 'DELETE', `/volumes/${vol.id}`);
    assert.equal(deleted.status, 202);
    await eventually(async () => (await api('demo', 'GET', `/volumes/${vol.id}`)).status === 404);
    const gone = await api('demo', 'GET', `/volumes/${vol.id}`);
    assert.deepEqual(gone.body, {
      itemNotFound: { code: 404, message: `Volume ${vol.id} could not be found.` },
    });
  });

  it('validates sizes, types and zones as Cinder does', async () => {
    const zero = await api('demo', 'POST', '/volumes', { volume: { size: 0 } });
    assert.equal(zero.status, 400);
    assert.equal(
      zero.body.badRequest.message,
      'Invalid input for field/attribute size. Value: 0. 0 is less than the minimum of 1',
    );
    const missing = await api('demo', 'POST', '/volumes', { volume: { name: 'x' } });
    assert.equal(
      missing.body.badRequest.message,
      "Invalid input received: Volume size 'None' must be an integer and greater than 0",
    );
    const noBody = await api('demo', 'POST', '/volumes', { size: 1 });
    assert.equal(noBody.body.badRequest.message, "'volume' is a required property");
    const type = await api('demo', 'POST', '/volumes', { volume: { size: 1, volume_type: 'gold' } });
    assert.equal(type.status, 404);
    const zone = await api('demo', 'POST', '/volumes', { volume: { size: 1, availability_zone: 'mars' } });
    assert.equal(zone.status, 400);
    const asString = await api('demo', 'POST', '/volumes', {
      volume: { size: '2', volume_type: '__DEFAULT__' },
    });
    assert.equal(asString.status, 202);
    assert.equal(asString.body.volume.size, 2);
    assert.equal(asString.body.volume.volume_type, '__DEFAULT__');
  });

  it('creates bootable volumes from visible active images, checking minDisk', async () => {
    const cirros = await imageId('cirros-0.6.2-x86_64-disk');
    const vol = await createAvailable('demo', { size: 1, imageRef: cirros });
    assert.equal(vol.bootable, 'true');
    const shown = await api('demo', 'GET', `/volumes/${vol.id}`);
    assert.equal(shown.body.volume.volume_image_metadata.image_id, cirros);
    assert.equal(shown.body.volume.volume_image_metadata.image_name, 'cirros-0.6.2-x86_64-disk');

    const ubuntu = await imageId('ubuntu-22.04');
    const small = await api('demo', 'POST', '/volumes', { volume: { size: 5, imageRef: ubuntu } });
    assert.equal(small.status, 400);
    assert.equal(
      small.body.badRequest.message,
      'Invalid input received: Volume size 5GB cannot be smaller than the image minDisk size 10GB.',
    );
    const unknown = await api('demo', 'POST', '/volumes', { volume: { size: 1, imageRef: randomUUID() } });
    assert.equal(
      unknown.body.badRequest.message,
      'Invalid image identifier or unable to access requested image.',
    );
  });

  it('isolates projects, and shows admins everything only with all_tenants', async () => {
    const mine = await createAvailable('demo', { size: 1, name: 'isolated' });
    assert.equal((await api('alt_demo', 'GET', `/volumes/${mine.id}`)).status, 404);
    assert.equal((await api('alt_demo', 'DELETE', `/volumes/${mine.id}`)).status, 404);
    const altList = await api('alt_demo', 'GET', '/volumes/detail?name=isolated');
    assert.equal(altList.body.volumes.length, 0);
    const adminOwn = await api('admin', 'GET', '/volumes?name=isolated');
    assert.equal(adminOwn.body.volumes.length, 0, 'admins list their own project by default');
    const adminAll = await api('admin', 'GET', '/volumes/detail?name=isolated&all_tenants=1');
    assert.deepEqual(
      adminAll.body.volumes.map((v: { id: string }) => v.id),
      [mine.id],
    );
    const altAll = await api('alt_demo', 'GET', '/volumes?name=isolated&all_tenants=1');
    assert.equal(altAll.body.volumes.length, 0, 'all_tenants is ignored for non-admins');
    const wrongProject = await t.request('cinder', 'GET', `/v3/${await projectOf('alt_demo')}/volumes`, {
      user: 'demo',
    });
    assert.equal(wrongProject.status, 400);
    assert.equal(wrongProject.body.badRequest.message, 'Malformed request url');
    const noProject = await t.request('cinder', 'GET', `/v3/volumes/${mine.id}`, { user: 'demo' });
    assert.equal(noProject.status, 200);
    assert.equal(
      noProject.body.volume.links[0].href,
      `${t.cloud.serviceUrl('cinder')}/v3/volumes/${mine.id}`,
    );
  });

  it('filters by name, status and metadata, and pages with volumes_links', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api('alt_demo', 'POST', '/volumes', {
        volume: { size: 1, name: `page-${i}`, metadata: { batch: 'p', n: String(i) } },
      });
      ids.push(res.body.volume.id);
    }
    await eventually(
      async () => (await api('alt_demo', 'GET', '/volumes/detail?status=available')).body.volumes.length >= 3,
    );
    const byMeta = await api(
      'alt_demo',
      'GET',
      `/volumes/detail?metadata=${encodeURIComponent("{'n': '1'}")}`,
    );
    assert.deepEqual(
      byMeta.body.volumes.map((v: { id: string }) => v.id),
      [ids[1]],
    );
    const byName = await api('alt_demo', 'GET', '/volumes?name=page-2');
    assert.deepEqual(
      byName.body.volumes.map((v: { id: string }) => v.id),
      [ids[2]],
    );
    assert.deepEqual(Object.keys(byName.body.volumes[0]).sort(), ['id', 'links', 'name']);

    const page1 = await api('alt_demo', 'GET', '/volumes?limit=2');
    assert.deepEqual(
      page1.body.volumes.map((v: { id: string }) => v.id),
      [ids[2], ids[1]],
      'newest first',
    );
    const next = page1.body.volumes_links[0];
    assert.equal(next.rel, 'next');
    assert.equal(
      next.href,
      `${t.cloud.serviceUrl('cinder')}/v3/${await projectOf('alt_demo')}/volumes?limit=2&marker=${ids[1]}`,
    );
    const page2 = await t.request('cinder', 'GET', next.href.slice(t.cloud.serviceUrl('cinder').length), {
      user: 'alt_demo',
    });
    assert.deepEqual(
      page2.body.volumes.map((v: { id: string }) => v.id),
      [ids[0]],
    );
    assert.equal(page2.body.volumes_links, undefined);
    const counted = await api('alt_demo', 'GET', '/volumes?limit=1&with_count=true', undefined, {
      'OpenStack-API-Version': 'volume 3.45',
    });
    assert.equal(counted.body.count, 3);
    const sorted = await api('alt_demo', 'GET', '/volumes?sort=name:asc');
    assert.deepEqual(
      sorted.body.volumes.map((v: { name: string }) => v.name),
      ['page-0', 'page-1', 'page-2'],
    );
    const badMarker = await api('alt_demo', 'GET', `/volumes?marker=${randomUUID()}`);
    assert.equal(badMarker.status, 404);
  });

  it('attaches and detaches through the VolumeApi, refusing to delete in-use volumes', async () => {
    const vol = await createAvailable('demo', { size: 1, name: 'attach-me' });
    const server = randomUUID();
    t.cloud.volume.attach(vol.id, server, '/dev/vdb');
    const shown = (await api('demo', 'GET', `/volumes/${vol.id}`)).body.volume;
    assert.equal(shown.status, 'in-use');
    assert.equal(shown.attachments.length, 1);
    assert.equal(shown.attachments[0].server_id, server);
    assert.equal(shown.attachments[0].device, '/dev/vdb');
    assert.equal(shown.attachments[0].volume_id, vol.id);
    assert.match(shown.attachments[0].attachment_id, /^[0-9a-f-]{36}$/);
    assert.throws(() => t.cloud.volume.attach(vol.id, randomUUID(), '/dev/vdc'), /status must be available/);
    const refused = await api('demo', 'DELETE', `/volumes/${vol.id}`);
    assert.equal(refused.status, 400);
    t.cloud.volume.detach(vol.id, server);
    assert.equal(t.cloud.volume.getVolume(vol.id)?.status, 'available');
    assert.deepEqual((await api('demo', 'GET', `/volumes/${vol.id}`)).body.volume.attachments, []);
  });

  it('creates boot volumes for Nova that settle to available, and deletes them on termination', async () => {
    const project = await projectOf('demo');
    const cirros = await imageId('cirros-0.6.2-x86_64-disk');
    const v = t.cloud.volume.createVolume({ project_id: project, size: 1, name: 'boot', imageRef: cirros });
    assert.equal(v.status, 'creating');
    assert.equal(v.project_id, project);
    await eventually(() => t.cloud.volume.getVolume(v.id)?.status === 'available');
    t.cloud.volume.attach(v.id, 'server-1', '/dev/vda');
    t.cloud.volume.deleteVolume(v.id);
    assert.equal(t.cloud.volume.getVolume(v.id)?.status, 'deleting');
    await eventually(() => t.cloud.volume.getVolume(v.id) === undefined);
    assert.doesNotThrow(() => t.cloud.volume.deleteVolume(v.id));
    assert.throws(
      () => t.cloud.volume.createVolume({ project_id: project, size: 1, imageRef: randomUUID() }),
      /Invalid image/,
    );
  });

  it('ends in error with an error-on-create fault, and stays creating when stuck', async () => {
    t.cloud.faults.add({ kind: 'error-on-create', service: 'cinder', resource: 'volume', times: 1 });
    const failed = await api('demo', 'POST', '/volumes', { volume: { size: 1 } });
    await eventually(
      async () =>
        (await api('demo', 'GET', `/volumes/${failed.body.volume.id}`)).body.volume.status === 'error',
    );
    assert.equal(
      (await api('demo', 'DELETE', `/volumes/${failed.body.volume.id}`)).status,
      202,
      'error volumes can be deleted',
    );

    t.cloud.faults.add({ kind: 'stuck', service: 'cinder', resource: 'volume', times: 1 });
    const stuck = await api('demo', 'POST', '/volumes', { volume: { size: 1 } });
    await createAvailable('demo', { size: 1 });
    t.cloud.scheduler.settleAll();
    assert.equal(
      (await api('demo', 'GET', `/volumes/${stuck.body.volume.id}`)).body.volume.status,
      'creating',
    );
    const creating = await api('demo', 'DELETE', `/volumes/${stuck.body.volume.id}`);
    assert.equal(creating.status, 400);
    assert.equal(
      creating.body.badRequest.message,
      'Invalid volume: Volume status must be available or error or error_restoring or error_extending or error_managing and must not be migrating, attached, belong to a group, have snapshots, awaiting a transfer, or be disassociated from snapshots after volume transfer.',
    );
    assert.equal(t.cloud.forceState('cinder', 'volume', stuck.body.volume.id, { status: 'error' }), true);
    assert.equal((await api('demo', 'GET', `/volumes/${stuck.body.volume.id}`)).body.volume.status, 'error');

    // A stuck fault aimed at one volume pins its delete too.
    const pinned = await createAvailable('demo', { size: 1 });
    t.cloud.faults.add({ kind: 'stuck', service: 'cinder', resource: 'volume', target: pinned.id });
    assert.equal((await api('demo', 'DELETE', `/volumes/${pinned.id}`)).status, 202);
    t.cloud.scheduler.settleAll();
    assert.equal((await api('demo', 'GET', `/volumes/${pinned.id}`)).body.volume.status, 'deleting');
  });

  it('updates, extends and keeps metadata', async () => {
    const vol = await createAvailable('demo', { size: 1, name: 'before' });
    const updated = await api('demo', 'PUT', `/volumes/${vol.id}`, {
      volume: { name: 'after', description: 'd' },
    });
    assert.equal(updated.status, 200);
    assert.equal(updated.body.volume.name, 'after');
    const meta = await api('demo', 'POST', `/volumes/${vol.id}/metadata`, { metadata: { a: '1' } });
    assert.deepEqual(meta.body.metadata, { a: '1' });
    assert.deepEqual((await api('demo', 'GET', `/volumes/${vol.id}/metadata/a`)).body, { meta: { a: '1' } });
    const extend = await api('demo', 'POST', `/volumes/${vol.id}/action`, { 'os-extend': { new_size: 3 } });
    assert.equal(extend.status, 202);
    await eventually(async () => {
      const v = (await api('demo', 'GET', `/volumes/${vol.id}`)).body.volume;
      return v.status === 'available' && v.size === 3;
    });
    const shrink = await api('demo', 'POST', `/volumes/${vol.id}/action`, { 'os-extend': { new_size: 2 } });
    assert.equal(shrink.status, 400);
    const unknown = await api('demo', 'POST', `/volumes/${vol.id}/action`, { 'os-fly': {} });
    assert.equal(unknown.body.badRequest.message, 'There is no such action: os-fly');
  });

  it('lists volume types, availability zones and limits', async () => {
    const types = await api('demo', 'GET', '/types');
    assert.deepEqual(types.body.volume_types.map((x: { name: string }) => x.name).sort(), [
      '__DEFAULT__',
      'lvmdriver-1',
    ]);
    const lvm = types.body.volume_types.find((x: { name: string }) => x.name === 'lvmdriver-1');
    assert.deepEqual(lvm.extra_specs, {}, 'backend names are admin-only');
    const adminTypes = await api('admin', 'GET', '/types');
    const adminLvm = adminTypes.body.volume_types.find((x: { name: string }) => x.name === 'lvmdriver-1');
    assert.deepEqual(adminLvm.extra_specs, { volume_backend_name: 'lvmdriver-1' });
    assert.equal((await api('demo', 'GET', `/types/${lvm.id}`)).body.volume_type.name, 'lvmdriver-1');
    const az = await api('demo', 'GET', '/os-availability-zone');
    assert.deepEqual(az.body, {
      availabilityZoneInfo: [{ zoneName: 'nova', zoneState: { available: true } }],
    });
    const limits = await api('demo', 'GET', '/limits');
    assert.equal(typeof limits.body.limits.absolute.totalVolumesUsed, 'number');
  });

  it('renders 401 as keystonemiddleware and detail fields per microversion', async () => {
    const noToken = await t.request('cinder', 'GET', `/v3/${await projectOf('demo')}/volumes`, {
      token: null,
    });
    assert.equal(noToken.status, 401);
    assert.equal(noToken.body.error.code, 401);
    const vol = await createAvailable('demo', { size: 1 });
    const old = (await api('demo', 'GET', `/volumes/${vol.id}`)).body.volume;
    assert.equal('volume_type_id' in old, false);
    const recent = (
      await api('demo', 'GET', `/volumes/${vol.id}`, undefined, { 'OpenStack-API-Version': 'volume 3.65' })
    ).body.volume;
    assert.equal(typeof recent.volume_type_id, 'string');
    assert.equal(recent.consumes_quota, true);
    assert.equal(recent.group_id, null);
    assert.equal(recent.shared_targets, false);
  });
});
