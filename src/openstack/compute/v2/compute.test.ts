/** Nova v2.1 through `client.compute`, against the emulator or the real cloud of OS_CLOUD. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRegistry } from '../../../lib/metrics.ts';
import type { OpenStackClient } from '../../client.ts';
import { ApiVersionError, isNotFound, ResourceErrorStateError, WaitTimeoutError } from '../../core/errors.ts';
import { requestCount } from '../../core/testing/metrics.ts';
import {
  addFault,
  clearFaults,
  openClientTarget,
  unique,
  type ClientTarget,
} from '../../core/testing/target.ts';
import type { Network } from '../../network/v2/networks.ts';
import { Cleanup, scratchNetwork, waitTimings } from '../../network/v2/testing/fixtures.ts';
import { computeV2 } from './index.ts';
import { encodeUserData } from './servers.ts';
import { serverGroupPolicy } from './server-groups.ts';
import { bootSources } from './testing/boot.ts';

describe('compute v2', () => {
  let t: ClientTarget;
  let os: OpenStackClient;
  let net: Network;
  let sources: { flavorId: string; imageId: string } | undefined;
  const registry = createRegistry({ defaultMetrics: false });
  const cleanup = new Cleanup();
  let wait: ReturnType<typeof waitTimings>;

  before(async () => {
    t = await openClientTarget();
    os = await t.client(t.demo, { registry });
    wait = waitTimings(t);
    ({ network: net } = await scratchNetwork(os, cleanup, 'client-nova'));
    sources = await bootSources(t, os, cleanup);
  });
  after(async () => {
    await cleanup.run();
    await t?.close();
  });

  /** A server deleted (and awaited) by the suite's cleanup. */
  const boot = async (
    extra: Parameters<OpenStackClient['compute']['servers']['create']>[0] | Record<string, unknown> = {},
    options: Parameters<OpenStackClient['compute']['servers']['create']>[1] = {},
  ) => {
    const created = await os.compute.servers.create(
      {
        name: unique('client-vm'),
        flavorRef: sources!.flavorId,
        imageRef: sources!.imageId,
        networks: [{ uuid: net.id }],
        ...extra,
      },
      options,
    );
    cleanup.add(`server ${created.id}`, async () => {
      await os.compute.servers.delete(created.id);
      await os.compute.servers.waitForDeleted(created.id, wait);
    });
    return created;
  };

  it('negotiates 2.79 once per client and sends it on every call', async () => {
    assert.equal(await os.compute.microversion(), '2.79');
    const discovered = await requestCount(registry, 'version_get');
    await os.compute.flavors.list().all();
    await os.compute.availabilityZones.list();
    assert.equal(await requestCount(registry, 'version_get'), discovered);
    const res = await os.compute.client.request({ method: 'GET', path: 'servers', label: 'server_list' });
    assert.equal(res.headers.get('openstack-api-version'), 'compute 2.79');
  });

  it('boots a server on a pre-created port, reads, lists, updates, powers and deletes it', async (s) => {
    if (!sources)
      return s.skip('no image and flavor, and no admin cloud (OS_CLOUD_ADMIN) to create a flavor');
    const local = new Cleanup();
    try {
      const [port, extra] = await os.network.ports.createBulk(
        ['boot', 'extra'].map((n) => ({ network_id: net.id, name: unique(`client-vm-${n}`) })),
      );
      for (const p of [port!, extra!]) local.add(`port ${p.id}`, () => os.network.ports.delete(p.id));
      const group = await os.compute.serverGroups.create({
        name: unique('client-sg'),
        policy: 'anti-affinity',
      });
      local.add(`server group ${group.id}`, () => os.compute.serverGroups.delete(group.id));
      const name = unique('client-vm');
      const created = await boot(
        {
          name,
          networks: [{ port: port!.id }],
          metadata: { role: 'worker' },
          tags: ['client', 'worker'],
          user_data: '#cloud-config\nruncmd: [echo hi]\n',
          description: 'booted by the client test',
        },
        { schedulerHints: { group: group.id } },
      );
      assert.ok(created.id);
      const active = await os.compute.servers.waitForActive(created.id, wait);
      assert.equal(active.name, name);
      assert.deepEqual(active.metadata, { role: 'worker' });
      assert.deepEqual([...(active.tags ?? [])].sort(), ['client', 'worker']);
      assert.equal(active.description, 'booted by the client test');
      assert.deepEqual(active.server_groups, [group.id]);
      assert.equal(active.addresses[net.name]?.[0]?.addr, port!.fixed_ips[0]!.ip_address);
      assert.ok('vcpus' in active.flavor, 'the flavor is embedded from 2.47');
      assert.deepEqual((await os.compute.serverGroups.get(group.id)).members, [created.id]);
      if (t.admin) {
        const admin = await t.client(t.admin);
        const seen = (await admin.compute.servers.get(created.id)) as unknown as Record<string, unknown>;
        assert.equal(seen['OS-EXT-SRV-ATTR:user_data'], encodeUserData('#cloud-config\nruncmd: [echo hi]\n'));
      }
      assert.equal((await os.network.ports.get(port!.id)).device_id, created.id);

      assert.deepEqual(
        (await os.compute.servers.list({ name: `^${name.slice(0, -3)}` }).all()).map((x) => x.id),
        [created.id],
        'name is a regular expression',
      );
      assert.deepEqual(
        (await os.compute.servers.list({ tags: ['client', 'worker'], name }).all()).map((x) => x.id),
        [created.id],
      );
      assert.deepEqual(await os.compute.servers.list({ name, status: 'SHUTOFF' }).all(), []);

      const renamed = await os.compute.servers.update(created.id, {
        name: `${name}-x`,
        description: 'renamed',
      });
      assert.equal(renamed.name, `${name}-x`);
      assert.deepEqual(await os.compute.servers.metadata.update(created.id, { zone: 'a' }), {
        role: 'worker',
        zone: 'a',
      });
      assert.deepEqual(await os.compute.servers.metadata.replace(created.id, { only: 'this' }), {
        only: 'this',
      });
      await os.compute.servers.metadata.delete(created.id, 'only');
      assert.deepEqual(await os.compute.servers.metadata.get(created.id), {});

      await os.compute.servers.tags.add(created.id, 'extra');
      assert.equal(await os.compute.servers.tags.has(created.id, 'extra'), true);
      await os.compute.servers.tags.remove(created.id, 'extra');
      assert.equal(await os.compute.servers.tags.has(created.id, 'extra'), false);
      assert.deepEqual(await os.compute.servers.tags.replace(created.id, ['only']), ['only']);
      await os.compute.servers.tags.removeAll(created.id);
      assert.deepEqual(await os.compute.servers.tags.list(created.id), []);

      const attached = await os.compute.servers.interfaces.attach(created.id, { port_id: extra!.id });
      assert.equal(attached.port_id, extra!.id);
      assert.deepEqual(
        (await os.compute.servers.interfaces.list(created.id)).map((i) => i.port_id).sort(),
        [port!.id, extra!.id].sort(),
      );
      await os.compute.servers.interfaces.detach(created.id, extra!.id);

      await os.compute.servers.stop(created.id);
      await os.compute.servers.waitForStatus(created.id, 'SHUTOFF', wait);
      await os.compute.servers.start(created.id);
      await os.compute.servers.waitForActive(created.id, wait);

      await os.compute.servers.delete(created.id);
      await os.compute.servers.waitForDeleted(created.id, wait);
      await assert.rejects(os.compute.servers.get(created.id), isNotFound);
      const released = await os.network.ports.get(port!.id);
      assert.ok(released.device_id === '' || released.device_id === created.id);
      assert.ok((await requestCount(registry, 'server_os_interface_list')) >= 1);
    } finally {
      await local.run();
    }
  });

  it('pages through servers', async (s) => {
    if (!sources)
      return s.skip('no image and flavor, and no admin cloud (OS_CLOUD_ADMIN) to create a flavor');
    const prefix = unique('client-vmpage');
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await boot({ name: `${prefix}-${i}` })).id);
    // While a server is still a build request (not yet in a cell), Nova's merged listing can show it
    // on two pages of a marker walk: page through settled servers.
    for (const id of ids) await os.compute.servers.waitForActive(id, wait);
    const pages = [];
    for await (const page of os.compute.servers.list({ name: `^${prefix}-`, limit: 1 }).pages())
      pages.push(page);
    assert.ok(pages.length >= 3, `${pages.length} pages`);
    assert.deepEqual(pages.flatMap((p) => p.items.map((x) => x.id)).sort(), ids.sort());
  });

  it('lists, gets and finds flavors', async (s) => {
    if (!sources) return s.skip('no flavor');
    const flavor = await os.compute.flavors.get(sources.flavorId);
    assert.equal((await os.compute.flavors.findByName(flavor.name))?.id, flavor.id);
    assert.equal(await os.compute.flavors.findByName(unique('no-such-flavor')), undefined);
    assert.ok((await os.compute.flavors.list({ minRam: flavor.ram }).all()).some((f) => f.id === flavor.id));
  });

  it('creates, reads, lists and deletes keypairs', async () => {
    const name = unique('client-key');
    const generated = await os.compute.keypairs.create({ name, type: 'ssh' });
    try {
      assert.match(generated.private_key ?? '', /PRIVATE KEY/);
      assert.equal((await os.compute.keypairs.get(name)).fingerprint, generated.fingerprint);
      assert.ok((await os.compute.keypairs.list()).some((k) => k.name === name));
    } finally {
      await os.compute.keypairs.delete(name);
    }
    await assert.rejects(os.compute.keypairs.get(name), isNotFound);
  });

  it('creates server groups with policy (2.64+) or policies (before)', async () => {
    const modern = await os.compute.serverGroups.create({
      name: unique('client-group'),
      policy: 'anti-affinity',
      rules: { max_server_per_host: 2 },
    });
    try {
      assert.equal(modern.policy, 'anti-affinity');
      assert.deepEqual(modern.rules, { max_server_per_host: 2 });
      assert.ok((await os.compute.serverGroups.list()).some((g) => g.id === modern.id));
    } finally {
      await os.compute.serverGroups.delete(modern.id);
    }
    await assert.rejects(os.compute.serverGroups.get(modern.id), isNotFound);

    const old = computeV2(os.compute.client.withMicroversion('2.50'));
    const legacy = await old.serverGroups.create({ name: unique('client-group'), policy: 'soft-affinity' });
    try {
      assert.deepEqual(legacy.policies, ['soft-affinity']);
      assert.equal(legacy.policy, undefined);
      assert.equal(serverGroupPolicy(legacy), 'soft-affinity');
      await assert.rejects(
        old.serverGroups.create({ name: 'x', policy: 'anti-affinity', rules: { max_server_per_host: 1 } }),
        ApiVersionError.is,
      );
    } finally {
      await old.serverGroups.delete(legacy.id);
    }
  });

  it('refuses fields the microversion does not have before sending anything', async () => {
    const old = computeV2(os.compute.client.withMicroversion('2.50'));
    const before = await requestCount(registry, 'server_create');
    const err = await old.servers
      .create({ name: 'x', flavorRef: 'f', networks: 'none', tags: ['a'] })
      .catch((e: unknown) => e);
    assert.ok(ApiVersionError.is(err), String(err));
    assert.match(err.message, /tags at server create needs compute microversion 2\.52, but calls use 2\.50/);
    const tagErr = await computeV2(os.compute.client.withMicroversion('2.20'))
      .servers.tags.list('any')
      .catch((e: unknown) => e);
    assert.ok(ApiVersionError.is(tagErr));
    assert.equal(await requestCount(registry, 'server_create'), before);
  });

  it('lists availability zones', async () => {
    const zones = await os.compute.availabilityZones.list();
    assert.ok(zones.some((z) => z.zoneName === 'nova' && z.zoneState.available));
  });

  it('ends a wait on ERROR with Nova’s fault message, times out and aborts (emulator)', async (s) => {
    if (!t.sim) return s.skip('needs the emulator’s fault injection');
    if (!sources) return s.skip('no image and flavor');
    try {
      await addFault(t.sim, { kind: 'error-on-create', service: 'nova', resource: 'server', times: 1 });
      const doomed = await boot();
      const err = await os.compute.servers.waitForActive(doomed.id, wait).catch((e: unknown) => e);
      assert.ok(ResourceErrorStateError.is(err), String(err));
      assert.equal(err.status, 'ERROR');
      assert.ok(err.fault && err.fault.length > 0, 'the fault message is carried');
      assert.ok(err.message.endsWith(err.fault));

      await addFault(t.sim, { kind: 'stuck', service: 'nova', resource: 'server', times: 1 });
      const stuck = await boot();
      const timeout = await os.compute.servers
        .waitForActive(stuck.id, { timeoutMs: 100, intervalMs: 10 })
        .catch((e: unknown) => e);
      assert.ok(WaitTimeoutError.is(timeout), String(timeout));
      assert.equal(timeout.lastStatus, 'BUILD');
      const controller = new AbortController();
      setTimeout(() => controller.abort(new Error('stop')), 30);
      await assert.rejects(
        os.compute.servers.waitForActive(stuck.id, { intervalMs: 10, signal: controller.signal }),
        /stop/,
      );
    } finally {
      await clearFaults(t.sim);
    }
  });
});
