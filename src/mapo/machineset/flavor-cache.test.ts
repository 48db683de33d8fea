import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../lib/testing/fake-clock.ts';
import type { Flavor } from '../../openstack/compute/v2/flavors.ts';
import { FlavorCache, FLAVOR_TTL_MS, MISSING_FLAVOR_TTL_MS } from './flavor-cache.ts';

const large = { id: 'f-1', name: 'm1.large', vcpus: 4, ram: 8192 } as Flavor;

function counting(result: () => Flavor | undefined) {
  const calls: number[] = [];
  return {
    calls,
    lookup: () => {
      calls.push(1);
      return Promise.resolve(result());
    },
  };
}

describe('FlavorCache (MAPO flavorcache TTLs)', () => {
  it('a found flavor is looked up again only after 5 minutes', async () => {
    const clock = new FakeClock();
    const cache = new FlavorCache(clock);
    const nova = counting(() => large);
    const first = await cache.get('id', 'm1.large', nova.lookup);
    assert.deepEqual(first.flavor, { name: 'm1.large', vcpus: 4, ramMiB: 8192 });
    await clock.advance(FLAVOR_TTL_MS - 1);
    await cache.get('id', 'm1.large', nova.lookup);
    assert.equal(nova.calls.length, 1);
    await clock.advance(1);
    await cache.get('id', 'm1.large', nova.lookup);
    assert.equal(nova.calls.length, 2);
  });

  it('a missing flavor is looked up again after 1 minute, and found once it exists', async () => {
    const clock = new FakeClock();
    const cache = new FlavorCache(clock);
    let exists = false;
    const nova = counting(() => (exists ? large : undefined));
    const missing = await cache.get('id', 'm1.large', nova.lookup);
    assert.equal(missing.flavor, undefined);
    assert.equal(cache.retryInMs(missing), MISSING_FLAVOR_TTL_MS);
    exists = true;
    await clock.advance(MISSING_FLAVOR_TTL_MS - 1);
    assert.equal((await cache.get('id', 'm1.large', nova.lookup)).flavor, undefined);
    assert.equal(cache.retryInMs(missing), 1);
    await clock.advance(1);
    assert.equal((await cache.get('id', 'm1.large', nova.lookup)).flavor?.vcpus, 4);
    assert.equal(nova.calls.length, 2);
  });

  it('entries are per identity; concurrent lookups of one key share one call; a failed lookup is not cached', async () => {
    const cache = new FlavorCache(new FakeClock());
    const nova = counting(() => large);
    await Promise.all([1, 2, 3].map(() => cache.get('a', 'm1.large', nova.lookup)));
    assert.equal(nova.calls.length, 1);
    await cache.get('b', 'm1.large', nova.lookup);
    assert.equal(nova.calls.length, 2);
    await assert.rejects(
      cache.get('c', 'm1.large', () => Promise.reject(new Error('nova unreachable'))),
      /nova unreachable/,
    );
    await cache.get('c', 'm1.large', nova.lookup);
    assert.equal(nova.calls.length, 3);
  });
});
