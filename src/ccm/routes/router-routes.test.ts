/** Writing route plans to a Neutron router, both ways, against the emulator (or OS_CLOUD). */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createRegistry } from '../../lib/metrics.ts';
import type { OpenStackClient } from '../../openstack/client.ts';
import { requestCount } from '../../openstack/core/testing/metrics.ts';
import { openClientTarget, unique, type ClientTarget } from '../../openstack/core/testing/target.ts';
import type { NetworkV2 } from '../../openstack/network/v2/index.ts';
import type { Route } from '../../openstack/network/v2/routers.ts';
import { Cleanup, scratchNetwork } from '../../openstack/network/v2/testing/fixtures.ts';
import { routeKey } from './plan.ts';
import { RouterRoutes } from './router-routes.ts';

const sorted = (routes: readonly Route[]) => routes.map(routeKey).sort();

describe('router routes writer', () => {
  let t: ClientTarget;
  let os: OpenStackClient;
  const registry = createRegistry({ defaultMetrics: false });
  const cleanup = new Cleanup();
  let routerId: string;
  let hop: (n: number) => string;
  const signal = new AbortController().signal;

  before(async () => {
    t = await openClientTarget();
    os = await t.client(t.demo, { registry });
    const { subnet } = await scratchNetwork(os, cleanup, 'ccm-routes');
    const router = await os.network.routers.create({ name: unique('ccm-routes') });
    cleanup.add(`router ${router.id}`, () => os.network.routers.delete(router.id));
    routerId = router.id;
    await os.network.routers.addInterface(routerId, { subnet_id: subnet.id });
    cleanup.add(`router interface ${subnet.id}`, async () => {
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
  beforeEach(async () => {
    await os.network.routers.update(routerId, { routes: [] });
  });

  const routes = async () => sorted((await os.network.routers.get(routerId)).routes);

  for (const atomic of [true, false]) {
    const mode = atomic ? 'extraroute-atomic' : 'read-modify-write';

    it(`${mode}: removes and adds a whole plan, leaving the other routes`, async () => {
      const foreign = { destination: '192.168.60.0/24', nexthop: hop(60) };
      const stale = { destination: '10.244.9.0/24', nexthop: hop(19) };
      await os.network.routers.update(routerId, { routes: [foreign, stale] });
      const add = [
        { destination: '10.244.1.0/24', nexthop: hop(11) },
        { destination: '10.244.2.0/24', nexthop: hop(12) },
        { destination: '10.244.3.0/24', nexthop: hop(13) },
      ];
      const calls = await requestCount(registry, 'router_add_extraroutes');
      const failures = await new RouterRoutes(os.network, routerId, { atomic, ifMatch: true }).apply(
        add,
        [stale],
        signal,
      );
      assert.deepEqual([...failures], []);
      assert.deepEqual(await routes(), sorted([foreign, ...add]));
      // One call for the three routes, not one each.
      assert.equal((await requestCount(registry, 'router_add_extraroutes')) - calls, atomic ? 1 : 0);
    });

    it(`${mode}: a batch Neutron refuses is retried route by route, and only the bad one fails`, async () => {
      const good = { destination: '10.244.4.0/24', nexthop: hop(14) };
      const bad = { destination: '10.244.5.0/24', nexthop: '198.51.100.5' };
      const failures = await new RouterRoutes(os.network, routerId, { atomic, ifMatch: true }).apply(
        [good, bad],
        [],
        signal,
      );
      assert.deepEqual([...failures.keys()], [routeKey(bad)]);
      assert.match(failures.get(routeKey(bad))!, /nexthop/);
      assert.deepEqual(await routes(), sorted([good]));
    });
  }

  /** The client, with a second writer adding `foreign` right after each of the first router reads. */
  function racing(foreign: Route, times: number): NetworkV2 {
    let left = times;
    const get: NetworkV2['routers']['get'] = async (id, o) => {
      const router = await os.network.routers.get(id, o);
      if (left-- > 0) {
        const now = await os.network.routers.get(id);
        await os.network.routers.update(id, { routes: [...now.routes, foreign] });
      }
      return router;
    };
    return { ...os.network, routers: { ...os.network.routers, get } };
  }

  it('read-modify-write with If-Match keeps a route another writer adds between the read and the write', async () => {
    const foreign = { destination: '192.168.61.0/24', nexthop: hop(61) };
    const ours = { destination: '10.244.6.0/24', nexthop: hop(16) };
    const failures = await new RouterRoutes(racing(foreign, 1), routerId, {
      atomic: false,
      ifMatch: true,
    }).apply([ours], [], signal);
    assert.deepEqual([...failures], []);
    assert.deepEqual(await routes(), sorted([foreign, ours]));
  });

  it('without If-Match the same race loses the other writer’s route (why the revision is sent)', async (s) => {
    if (!t.sim) return s.skip('shows a lost update; not something to do to a real cloud');
    const foreign = { destination: '192.168.62.0/24', nexthop: hop(62) };
    const ours = { destination: '10.244.7.0/24', nexthop: hop(17) };
    await new RouterRoutes(racing(foreign, 1), routerId, { atomic: false, ifMatch: false }).apply(
      [ours],
      [],
      signal,
    );
    assert.deepEqual(await routes(), sorted([ours]));
  });

  it('gives up after a bounded number of rewrites on a router that never stops changing', async () => {
    let n = 70;
    const endless: NetworkV2['routers']['get'] = async (id, o) => {
      const router = await os.network.routers.get(id, o);
      const now = await os.network.routers.get(id);
      n++;
      await os.network.routers.update(id, {
        routes: [...now.routes, { destination: `192.168.${n}.0/24`, nexthop: hop(n) }],
      });
      return router;
    };
    const network = { ...os.network, routers: { ...os.network.routers, get: endless } };
    await assert.rejects(
      new RouterRoutes(network, routerId, { atomic: false, ifMatch: true }).apply(
        [{ destination: '10.244.8.0/24', nexthop: hop(18) }],
        [],
        signal,
      ),
      /changed under every one of 5/,
    );
  });
});
