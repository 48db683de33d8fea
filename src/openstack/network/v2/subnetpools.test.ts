/** Subnet pools through `client.network.subnetPools`, against the emulator or the real cloud of OS_CLOUD. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { OpenStackClient } from '../../client.ts';
import { isNotFound, OpenStackHttpError } from '../../core/errors.ts';
import { openClientTarget, unique, type ClientTarget } from '../../core/testing/target.ts';
import { Cleanup } from './testing/fixtures.ts';

describe('network v2: subnet pools', () => {
  let t: ClientTarget;
  let os: OpenStackClient;
  const cleanup = new Cleanup();

  before(async () => {
    t = await openClientTarget();
    os = await t.client(t.demo);
  });
  after(async () => {
    await cleanup.run();
    await t?.close();
  });

  it('creates a pool, carves subnets from it by prefix length, and deletes it once empty', async () => {
    const second = 20 + Math.floor(Math.random() * 200);
    const pool = await os.network.subnetPools.create({
      name: unique('client-pool'),
      prefixes: [`10.${second}.0.0/20`],
      default_prefixlen: 24,
      max_prefixlen: 28,
    });
    cleanup.add(`subnet pool ${pool.id}`, () => os.network.subnetPools.delete(pool.id));
    assert.equal(pool.ip_version, 4);
    assert.equal(pool.default_prefixlen, 24);
    assert.deepEqual(pool.prefixes, [`10.${second}.0.0/20`]);
    const network = await os.network.networks.create({ name: unique('client-pool-net') });
    cleanup.add(`network ${network.id}`, () => os.network.networks.delete(network.id));

    const first = await os.network.subnets.create({
      network_id: network.id,
      ip_version: 4,
      subnetpool_id: pool.id,
    });
    cleanup.add(`subnet ${first.id}`, () => os.network.subnets.delete(first.id));
    assert.equal(first.subnetpool_id, pool.id);
    assert.equal(first.cidr, `10.${second}.0.0/24`);
    const other = await os.network.networks.create({ name: unique('client-pool-net') });
    cleanup.add(`network ${other.id}`, () => os.network.networks.delete(other.id));
    const small = await os.network.subnets.create({
      network_id: other.id,
      ip_version: 4,
      subnetpool_id: pool.id,
      prefixlen: 28,
    });
    cleanup.add(`subnet ${small.id}`, () => os.network.subnets.delete(small.id));
    assert.equal(small.cidr, `10.${second}.1.0/28`);
    const fromPool = await os.network.subnets.list({ subnetpool_id: pool.id }).all();
    assert.deepEqual(fromPool.map((s) => s.id).sort(), [first.id, small.id].sort());

    const tooLong = await os.network.subnets
      .create({ network_id: other.id, ip_version: 4, subnetpool_id: pool.id, prefixlen: 30 })
      .catch((e: unknown) => e);
    assert.ok(tooLong instanceof OpenStackHttpError, String(tooLong));
    assert.equal(tooLong.status, 400);
    assert.match(tooLong.message, /maximum allowed prefix is 28/);

    const busy = await os.network.subnetPools.delete(pool.id).catch((e: unknown) => e);
    assert.ok(busy instanceof OpenStackHttpError, String(busy));
    assert.equal(busy.status, 400);
    assert.match(busy.message, /existing allocations/);

    const grown = await os.network.subnetPools.update(pool.id, {
      prefixes: [`10.${second}.0.0/20`, `10.${second}.16.0/20`],
    });
    assert.deepEqual(grown.prefixes, [`10.${second}.0.0/19`]);
    await os.network.tags.add('subnetpools', pool.id, 'kuryr-test');
    const tagged = await os.network.subnetPools.list({ tags: ['kuryr-test'] }).all();
    assert.deepEqual(
      tagged.map((p) => p.id),
      [pool.id],
    );

    await os.network.subnets.delete(small.id);
    await os.network.subnets.delete(first.id);
    await os.network.subnetPools.delete(pool.id);
    const gone = await os.network.subnetPools.get(pool.id).catch((e: unknown) => e);
    assert.ok(isNotFound(gone), String(gone));
  });
});
