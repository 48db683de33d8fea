import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { nova } from './testing/fixtures.ts';

describe('nova flavors, key pairs, server groups and the compute host', () => {
  let t: TestCloud;
  before(async () => {
    t = await startTestCloud();
  });
  after(() => t.close());

  describe('flavors', () => {
    it('seeds the devstack flavors and lists them by flavorid', async () => {
      const res = await nova(t, 'GET', '/flavors/detail', { user: 'demo' });
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.flavors.map((f: any) => [f.id, f.name, f.vcpus, f.ram, f.disk]),
        [
          ['1', 'm1.tiny', 1, 512, 1],
          ['2', 'm1.small', 1, 2048, 20],
          ['3', 'm1.medium', 2, 4096, 40],
          ['4', 'm1.large', 4, 8192, 80],
          ['5', 'm1.xlarge', 8, 16384, 160],
        ],
      );
      const tiny = res.body.flavors[0];
      assert.deepEqual(Object.keys(tiny).sort(), [
        'OS-FLV-DISABLED:disabled',
        'OS-FLV-EXT-DATA:ephemeral',
        'description',
        'disk',
        'extra_specs',
        'id',
        'links',
        'name',
        'os-flavor-access:is_public',
        'ram',
        'rxtx_factor',
        'swap',
        'vcpus',
      ]);
      assert.equal(tiny.swap, 0);
      assert.equal(tiny.links[0].href, `${t.cloud.serviceUrl('nova')}/v2.1/flavors/1`);
      // Before 2.75 a zero swap is an empty string, and 2.1 has no description or extra_specs.
      const old = await nova(t, 'GET', '/flavors/1', { user: 'demo', version: '2.1' });
      assert.equal(old.body.flavor.swap, '');
      assert.equal('description' in old.body.flavor, false);
    });

    it('filters by minRam/minDisk and pages with flavors_links', async () => {
      const big = await nova(t, 'GET', '/flavors?minRam=4096&minDisk=50', { user: 'demo' });
      assert.deepEqual(
        big.body.flavors.map((f: any) => f.name),
        ['m1.large', 'm1.xlarge'],
      );
      const page = await nova(t, 'GET', '/flavors?limit=2', { user: 'demo' });
      assert.deepEqual(
        page.body.flavors.map((f: any) => f.id),
        ['1', '2'],
      );
      assert.equal(
        page.body.flavors_links[0].href,
        `${t.cloud.serviceUrl('nova')}/v2.1/flavors?limit=2&marker=2`,
      );
      const rest = await nova(t, 'GET', '/flavors?limit=2&marker=4', { user: 'demo' });
      assert.deepEqual(
        rest.body.flavors.map((f: any) => f.id),
        ['5'],
      );
      assert.equal(rest.body.flavors_links, undefined);
      const bad = await nova(t, 'GET', '/flavors?marker=nope', { user: 'demo' });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.badRequest.message, 'marker [nope] not found');
    });

    it('lets admins create flavors (200, as the sample) and refuses members and duplicates', async () => {
      const body = { flavor: { name: 'probe.tiny', vcpus: 1, ram: 128, disk: 1 } };
      const demo = await nova(t, 'POST', '/flavors', { user: 'demo', body });
      assert.equal(demo.status, 403);
      assert.equal(
        demo.body.forbidden.message,
        "Policy doesn't allow os_compute_api:os-flavor-manage:create to be performed.",
      );
      const res = await nova(t, 'POST', '/flavors', { user: 'admin', body });
      assert.equal(res.status, 200);
      assert.match(res.body.flavor.id, /^[0-9a-f-]{36}$/);
      assert.equal(res.body.flavor.rxtx_factor, 1);
      assert.deepEqual(res.body.flavor.extra_specs, {});
      const dup = await nova(t, 'POST', '/flavors', { user: 'admin', body });
      assert.equal(dup.status, 409);
      assert.equal(dup.body.conflictingRequest.message, 'Flavor with name probe.tiny already exists.');
      const missing = await nova(t, 'POST', '/flavors', {
        user: 'admin',
        body: { flavor: { name: 'x', vcpus: 1, ram: 1 } },
      });
      assert.equal(missing.status, 400);
      assert.match(missing.body.badRequest.message, /'disk' is a required property$/);

      const specs = await nova(t, 'POST', `/flavors/${res.body.flavor.id}/os-extra_specs`, {
        user: 'admin',
        body: { extra_specs: { 'hw:cpu_policy': 'dedicated' } },
      });
      assert.equal(specs.status, 200);
      const read = await nova(t, 'GET', `/flavors/${res.body.flavor.id}/os-extra_specs/hw:cpu_policy`, {
        user: 'demo',
      });
      assert.deepEqual(read.body, { 'hw:cpu_policy': 'dedicated' });
      assert.equal(
        (await nova(t, 'DELETE', `/flavors/${res.body.flavor.id}`, { user: 'admin' })).status,
        202,
      );
      assert.equal((await nova(t, 'GET', `/flavors/${res.body.flavor.id}`, { user: 'demo' })).status, 404);
    });
  });

  describe('key pairs', () => {
    it('generates a key pair when no public key is given, and shows it per user', async () => {
      const res = await nova(t, 'POST', '/os-keypairs', { user: 'demo', body: { keypair: { name: 'gen' } } });
      assert.equal(res.status, 201);
      const kp = res.body.keypair;
      assert.match(kp.public_key, /^ssh-rsa AAAA\S+ Generated-by-Nova$/);
      assert.match(kp.private_key, /^-----BEGIN RSA PRIVATE KEY-----/);
      assert.equal(kp.type, 'ssh');
      const blob = Buffer.from(kp.public_key.split(' ')[1], 'base64');
      assert.equal(kp.fingerprint, createHash('md5').update(blob).digest('hex').match(/../g)!.join(':'));

      const shown = await nova(t, 'GET', '/os-keypairs/gen', { user: 'demo' });
      assert.equal(shown.body.keypair.private_key, undefined);
      assert.equal(shown.body.keypair.deleted, false);
      assert.equal(typeof shown.body.keypair.id, 'number');
      assert.equal((await nova(t, 'GET', '/os-keypairs/gen', { user: 'alt_demo' })).status, 404);

      const dup = await nova(t, 'POST', '/os-keypairs', { user: 'demo', body: { keypair: { name: 'gen' } } });
      assert.equal(dup.status, 409);
      assert.equal(dup.body.conflictingRequest.message, "Key pair 'gen' already exists.");

      // 2.92 requires the public key.
      const latest = await nova(t, 'POST', '/os-keypairs', {
        user: 'demo',
        version: '2.92',
        body: { keypair: { name: 'x' } },
      });
      assert.equal(latest.status, 400);
    });

    it('imports a public key, lists, deletes (204 from 2.2, 202 before)', async () => {
      const gen = (
        await nova(t, 'POST', '/os-keypairs', { user: 'alt_demo', body: { keypair: { name: 'tmp' } } })
      ).body.keypair;
      const imported = await nova(t, 'POST', '/os-keypairs', {
        user: 'alt_demo',
        body: { keypair: { name: 'imported', public_key: gen.public_key } },
      });
      assert.equal(imported.status, 201);
      assert.equal(imported.body.keypair.fingerprint, gen.fingerprint);
      assert.equal(imported.body.keypair.private_key, undefined);
      const bad = await nova(t, 'POST', '/os-keypairs', {
        user: 'alt_demo',
        body: { keypair: { name: 'bad', public_key: 'ssh-rsa notbase64!!' } },
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.badRequest.message, 'Keypair data is invalid: failed to generate fingerprint');
      const list = await nova(t, 'GET', '/os-keypairs', { user: 'alt_demo' });
      assert.deepEqual(
        list.body.keypairs.map((k: any) => k.keypair.name),
        ['imported', 'tmp'],
      );
      assert.equal((await nova(t, 'DELETE', '/os-keypairs/tmp', { user: 'alt_demo' })).status, 204);
      assert.equal(
        (await nova(t, 'DELETE', '/os-keypairs/imported', { user: 'alt_demo', version: '2.1' })).status,
        202,
      );
      const gone = await nova(t, 'DELETE', '/os-keypairs/imported', { user: 'alt_demo' });
      assert.equal(gone.status, 404);
      assert.match(gone.body.itemNotFound.message, /^Keypair imported not found for user [0-9a-f]{32}$/);
    });
  });

  describe('server groups', () => {
    it('creates groups with 2.1 policies and 2.64 policy/rules, scoped to the project', async () => {
      const old = await nova(t, 'POST', '/os-server-groups', {
        user: 'demo',
        version: '2.1',
        body: { server_group: { name: 'g1', policies: ['anti-affinity'] } },
      });
      assert.equal(old.status, 200);
      assert.deepEqual(Object.keys(old.body.server_group).sort(), [
        'id',
        'members',
        'metadata',
        'name',
        'policies',
      ]);
      const soft = await nova(t, 'POST', '/os-server-groups', {
        user: 'demo',
        version: '2.1',
        body: { server_group: { name: 'g', policies: ['soft-affinity'] } },
      });
      assert.equal(soft.status, 400, 'soft policies need 2.15');

      const now = await nova(t, 'POST', '/os-server-groups', {
        user: 'demo',
        version: '2.64',
        body: { server_group: { name: 'g2', policy: 'anti-affinity', rules: { max_server_per_host: 2 } } },
      });
      assert.equal(now.status, 200);
      assert.equal(now.body.server_group.policy, 'anti-affinity');
      assert.deepEqual(now.body.server_group.rules, { max_server_per_host: 2 });
      const badRules = await nova(t, 'POST', '/os-server-groups', {
        user: 'demo',
        version: '2.64',
        body: { server_group: { name: 'g3', policy: 'affinity', rules: { max_server_per_host: 2 } } },
      });
      assert.equal(badRules.status, 400);
      assert.equal(badRules.body.badRequest.message, 'Only anti-affinity policy supports rules.');

      const list = await nova(t, 'GET', '/os-server-groups', { user: 'demo' });
      assert.equal(list.body.server_groups.length, 2);
      assert.equal(
        (await nova(t, 'GET', '/os-server-groups', { user: 'alt_demo' })).body.server_groups.length,
        0,
      );
      const foreign = await nova(t, 'GET', `/os-server-groups/${now.body.server_group.id}`, {
        user: 'alt_demo',
      });
      assert.equal(foreign.status, 403);
      const all = await nova(t, 'GET', '/os-server-groups?all_projects=True', { user: 'admin' });
      assert.equal(all.body.server_groups.length, 2);
      assert.equal(
        (await nova(t, 'DELETE', `/os-server-groups/${old.body.server_group.id}`, { user: 'demo' })).status,
        204,
      );
    });
  });

  describe('the compute host', () => {
    it('lists availability zones, with the detail for admins only', async () => {
      const res = await nova(t, 'GET', '/os-availability-zone', { user: 'demo' });
      assert.deepEqual(res.body, {
        availabilityZoneInfo: [{ zoneName: 'nova', zoneState: { available: true }, hosts: null }],
      });
      assert.equal((await nova(t, 'GET', '/os-availability-zone/detail', { user: 'demo' })).status, 403);
      const detail = await nova(t, 'GET', '/os-availability-zone/detail', { user: 'admin' });
      assert.deepEqual(
        detail.body.availabilityZoneInfo.map((z: any) => [z.zoneName, Object.keys(z.hosts['compute-0'])]),
        [
          ['internal', ['nova-scheduler', 'nova-conductor']],
          ['nova', ['nova-compute']],
        ],
      );
    });

    it('shows hypervisors and services to admins, in the 2.79 shapes', async () => {
      assert.equal((await nova(t, 'GET', '/os-hypervisors/detail', { user: 'demo' })).status, 403);
      const hv = await nova(t, 'GET', '/os-hypervisors/detail', { user: 'admin' });
      assert.equal(hv.status, 200);
      const h = hv.body.hypervisors[0];
      assert.equal(h.hypervisor_hostname, 'compute-0');
      assert.equal(h.service.host, 'compute-0');
      assert.match(h.id, /^[0-9a-f-]{36}$/);
      assert.equal(typeof h.cpu_info, 'object');
      assert.equal(h.memory_mb_used, 512);
      const modern = await nova(t, 'GET', '/os-hypervisors/detail', { user: 'admin', version: '2.88' });
      assert.equal(modern.body.hypervisors[0].vcpus, undefined);
      assert.equal(typeof modern.body.hypervisors[0].uptime, 'string');

      const svc = await nova(t, 'GET', '/os-services', { user: 'admin' });
      assert.deepEqual(
        svc.body.services.map((s: any) => [s.binary, s.host, s.zone, s.state]),
        [
          ['nova-scheduler', 'compute-0', 'internal', 'up'],
          ['nova-conductor', 'compute-0', 'internal', 'up'],
          ['nova-compute', 'compute-0', 'nova', 'up'],
        ],
      );
      assert.match(svc.body.services[0].updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000000$/);
      assert.equal((await nova(t, 'GET', '/os-services', { user: 'demo' })).status, 403);
    });

    it('reports limits with unlimited project quotas', async () => {
      const res = await nova(t, 'GET', '/limits', { user: 'demo' });
      assert.equal(res.status, 200);
      assert.equal(res.body.limits.absolute.maxServerMeta, 128);
      assert.equal(res.body.limits.absolute.maxTotalInstances, -1);
      assert.equal(res.body.limits.absolute.maxSecurityGroups, undefined, 'gone since 2.36');
    });
  });
});
