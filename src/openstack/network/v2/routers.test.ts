/** Router extra routes through `client.network.routers`, against the emulator or the real cloud of OS_CLOUD. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRegistry } from '../../../lib/metrics.ts';
import type { OpenStackClient } from '../../client.ts';
import { isBadRequest, isPreconditionFailed } from '../../core/errors.ts';
import { requestCount } from '../../core/testing/metrics.ts';
import { openClientTarget, unique, type ClientTarget } from '../../core/testing/target.ts';
import type { Route } from './routers.ts';
import type { Subnet } from './subnets.ts';
import { Cleanup, scratchNetwork } from './testing/fixtures.ts';

/** Routes as a sorted list of `destination via nexthop`, so order never matters. */
const text = (routes: readonly Route[]) => routes.map((r) => `${r.destination} via ${r.nexthop}`).sort();

describe('network v2 routers: extra routes', () => {
  let t: ClientTarget;
  let os: OpenStackClient;
  const registry = createRegistry({ defaultMetrics: false });
  const cleanup = new Cleanup();
  let subnet: Subnet;
  let routerId: string;
  /** An address inside the scratch subnet, as a nexthop. */
  let hop: (n: number) => string;

  before(async () => {
    t = await openClientTarget();
    os = await t.client(t.demo, { registry });
    ({ subnet } = await scratchNetwork(os, cleanup, 'client-extraroute'));
    const router = await os.network.routers.create({ name: unique('client-extraroute') });
    cleanup.add(`router ${router.id}`, () => os.network.routers.delete(router.id));
    routerId = router.id;
    await os.network.routers.addInterface(routerId, { subnet_id: subnet.id });
    cleanup.add(`router interface ${subnet.id}`, async () => {
      // Neutron refuses to detach a subnet that routes still use.
      await os.network.routers.update(routerId, { routes: [] });
      await os.network.routers.removeInterface(routerId, { subnet_id: subnet.id });
    });
    const base = subnet.cidr.split('/')[0]!.split('.').slice(0, 3).join('.');
    hop = (n) => `${base}.${n}`;
  });
  after(async () => {
    await cleanup.run();
    await t?.close();
  });

  it('adds several routes in one call, next to the ones already there, and never twice', async (s) => {
    if (!(await os.network.extensions.has('extraroute-atomic'))) return s.skip('no extraroute-atomic');
    const foreign = { destination: '192.168.77.0/24', nexthop: hop(77) };
    const start = await os.network.routers.get(routerId);
    await os.network.routers.update(routerId, { routes: [foreign] }, { ifRevision: start.revision_number });

    const a = { destination: '10.244.1.0/24', nexthop: hop(11) };
    const b = { destination: '10.244.2.0/24', nexthop: hop(12) };
    const calls = await requestCount(registry, 'router_add_extraroutes');
    const added = await os.network.routers.addExtraRoutes(routerId, [a, b]);
    assert.equal((await requestCount(registry, 'router_add_extraroutes')) - calls, 1);
    assert.deepEqual(text(added.routes), text([foreign, a, b]));

    // Adding one already present changes nothing for it.
    const again = await os.network.routers.addExtraRoutes(routerId, [a]);
    assert.deepEqual(text(again.routes), text([foreign, a, b]));
    assert.deepEqual(text((await os.network.routers.get(routerId)).routes), text([foreign, a, b]));
  });

  it('removes exactly the routes given and keeps the others', async (s) => {
    if (!(await os.network.extensions.has('extraroute-atomic'))) return s.skip('no extraroute-atomic');
    const c = { destination: '10.244.3.0/24', nexthop: hop(13) };
    const d = { destination: '10.244.4.0/24', nexthop: hop(14) };
    const before = (await os.network.routers.addExtraRoutes(routerId, [c, d])).routes;
    // Same destination, other nexthop: not the route named, so it stays.
    const removed = await os.network.routers.removeExtraRoutes(routerId, [
      c,
      { destination: d.destination, nexthop: hop(99) },
    ]);
    assert.deepEqual(text(removed.routes), text(before.filter((r) => r.destination !== c.destination)));
    assert.ok(removed.routes.some((r) => r.destination === d.destination && r.nexthop === d.nexthop));
  });

  it('refuses a batch with a nexthop off the router’s subnets, adding none of it', async (s) => {
    if (!(await os.network.extensions.has('extraroute-atomic'))) return s.skip('no extraroute-atomic');
    const before = (await os.network.routers.get(routerId)).routes;
    const good = { destination: '10.244.5.0/24', nexthop: hop(15) };
    const bad = { destination: '10.244.6.0/24', nexthop: '198.51.100.7' };
    const err = await os.network.routers.addExtraRoutes(routerId, [good, bad]).catch((e: unknown) => e);
    assert.ok(isBadRequest(err), String(err));
    assert.deepEqual(text((await os.network.routers.get(routerId)).routes), text(before));
  });

  it('refuses a whole-list update at a stale revision (the fallback without extraroute-atomic)', async () => {
    const current = await os.network.routers.get(routerId);
    const e = { destination: '10.244.7.0/24', nexthop: hop(17) };
    const next = await os.network.routers.update(
      routerId,
      { routes: [...current.routes, e] },
      { ifRevision: current.revision_number },
    );
    assert.ok(next.revision_number > current.revision_number);
    const stale = await os.network.routers
      .update(routerId, { routes: current.routes }, { ifRevision: current.revision_number })
      .catch((err: unknown) => err);
    assert.ok(isPreconditionFailed(stale), String(stale));
    assert.ok((await os.network.routers.get(routerId)).routes.some((r) => r.destination === e.destination));
  });
});
