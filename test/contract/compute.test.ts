import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cleanup, network } from './fixtures.ts';
import { openTarget, unique, waitFor, type Session, type Target } from './target.ts';

const MICROVERSION = { 'OpenStack-API-Version': 'compute 2.72' };

/** An active image and the smallest flavor that fits it: created (and cleaned up) when the cloud has none. */
async function bootSources(t: Target, cleanup: Cleanup): Promise<{ flavorRef: string; imageRef: string }> {
  const images = await t.demo.request('image', 'GET', '/v2/images?status=active');
  type Image = { id: string; min_disk: number; min_ram: number };
  let image: Image | undefined = [...(images.body.images as Image[])].sort(
    (a, b) => a.min_disk - b.min_disk || a.min_ram - b.min_ram,
  )[0];
  if (!image) {
    const created = await t.demo.request('image', 'POST', '/v2/images', {
      name: unique('contract-image'),
      disk_format: 'raw',
      container_format: 'bare',
    });
    image = created.body as Image;
    const id = image.id;
    cleanup.add(() => t.demo.request('image', 'DELETE', `/v2/images/${id}`));
    await t.demo.request('image', 'PUT', `/v2/images/${id}/file`, new Uint8Array(1024), {
      'content-type': 'application/octet-stream',
    });
  }
  type Flavor = { id: string; ram: number; disk: number };
  const flavors = await t.demo.request('compute', 'GET', '/flavors/detail', undefined, MICROVERSION);
  let flavor: Flavor | undefined = [...(flavors.body.flavors as Flavor[])]
    .filter((f) => f.disk >= image.min_disk && f.ram >= image.min_ram)
    .sort((a, b) => a.ram - b.ram)[0];
  if (!flavor) {
    assert.ok(t.admin, 'the cloud has no fitting flavor and no admin credentials to create one');
    const created = await t.admin.request('compute', 'POST', '/flavors', {
      flavor: {
        name: unique('contract-flavor'),
        ram: Math.max(128, image.min_ram),
        vcpus: 1,
        disk: Math.max(1, image.min_disk),
      },
    });
    flavor = created.body.flavor as Flavor;
    const id = flavor.id;
    cleanup.add(() => t.admin!.request('compute', 'DELETE', `/flavors/${id}`));
  }
  return { flavorRef: flavor.id, imageRef: image.id };
}

const server = (s: Session, id: string) =>
  s.request('compute', 'GET', `/servers/${id}`, undefined, MICROVERSION);

describe('contract: compute', () => {
  let t: Target;
  before(async () => (t = await openTarget()));
  after(async () => t?.close());

  it('negotiates microversions', async () => {
    const none = await t.demo.request('compute', 'GET', '/servers');
    assert.equal(none.headers.get('openstack-api-version'), 'compute 2.1');
    const v = await t.demo.request('compute', 'GET', '/servers', undefined, MICROVERSION);
    assert.equal(v.headers.get('openstack-api-version'), 'compute 2.72');
    const bad = await t.demo.request('compute', 'GET', '/servers', undefined, {
      'OpenStack-API-Version': 'compute 9.99',
    });
    assert.equal(bad.status, 406);
    assert.ok(bad.body.computeFault);
  });

  it('boots a server on a pre-created port, stops it, deletes it and releases the port', async () => {
    const cleanup = new Cleanup();
    try {
      const { flavorRef, imageRef } = await bootSources(t, cleanup);
      const { network: net } = await network(t.demo, cleanup);
      const port = await t.demo.request('network', 'POST', '/v2.0/ports', {
        port: { network_id: net.id, name: unique('contract-port') },
      });
      cleanup.add(() => t.demo.request('network', 'DELETE', `/v2.0/ports/${port.body.port.id}`));
      const created = await t.demo.request(
        'compute',
        'POST',
        '/servers',
        {
          server: {
            name: unique('contract-vm'),
            flavorRef,
            imageRef,
            networks: [{ port: port.body.port.id }],
            metadata: { role: 'worker' },
          },
        },
        MICROVERSION,
      );
      assert.equal(created.status, 202, JSON.stringify(created.body));
      const id: string = created.body.server.id;
      assert.ok(created.headers.get('location')?.endsWith(`/servers/${id}`));
      cleanup.add(() => t.demo.request('compute', 'DELETE', `/servers/${id}`));

      const active = await waitFor('server ACTIVE', async () => {
        const s = (await server(t.demo, id)).body.server;
        assert.notEqual(s.status, 'ERROR', JSON.stringify(s.fault));
        return s.status === 'ACTIVE' ? s : undefined;
      });
      const addr = active.addresses[net.name];
      assert.ok(addr, `addresses list network ${net.name}: ${JSON.stringify(active.addresses)}`);
      assert.equal(addr[0].addr, port.body.port.fixed_ips[0].ip_address);
      assert.equal(addr[0]['OS-EXT-IPS:type'], 'fixed');
      assert.deepEqual(active.metadata, { role: 'worker' });

      const bound = await t.demo.request('network', 'GET', `/v2.0/ports/${port.body.port.id}`);
      assert.equal(bound.body.port.device_id, id);
      assert.match(bound.body.port.device_owner, /^compute:/);

      const inUse = await t.demo.request(
        'compute',
        'POST',
        '/servers',
        {
          server: {
            name: unique('contract-vm2'),
            flavorRef,
            imageRef,
            networks: [{ port: port.body.port.id }],
          },
        },
        MICROVERSION,
      );
      assert.equal(inUse.status, 409);

      assert.equal(
        (await t.demo.request('compute', 'POST', `/servers/${id}/action`, { 'os-stop': null }, MICROVERSION))
          .status,
        202,
      );
      await waitFor('server SHUTOFF', async () =>
        (await server(t.demo, id)).body.server.status === 'SHUTOFF' ? true : undefined,
      );

      const listed = await t.demo.request(
        'compute',
        'GET',
        `/servers/detail?name=${active.name.slice(0, 12)}`,
        undefined,
        MICROVERSION,
      );
      assert.ok(
        listed.body.servers.some((s: { id: string }) => s.id === id),
        'name filter is a regex match',
      );

      assert.equal((await t.demo.request('compute', 'DELETE', `/servers/${id}`)).status, 204);
      await waitFor('server gone', async () =>
        (await server(t.demo, id)).status === 404 ? true : undefined,
      );
      const released = await waitFor('port released', async () => {
        const p = (await t.demo.request('network', 'GET', `/v2.0/ports/${port.body.port.id}`)).body.port;
        return p.device_id === '' ? p : undefined;
      });
      assert.equal(released.device_owner, '');
    } finally {
      await cleanup.run();
    }
  });

  it('answers 404 for a server that does not exist, in Nova’s format', async () => {
    const res = await server(t.demo, '00000000-0000-0000-0000-000000000000');
    assert.equal(res.status, 404);
    assert.equal(res.body.itemNotFound.code, 404);
  });
});
