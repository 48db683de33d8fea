/**
 * What N OpenStackServers of one identity created together cost the cloud: their image, flavor,
 * networks, subnets and security groups are looked up once for all of them (the identity's
 * LookupCache), not once each.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import type { StatsSnapshot } from '../../sim/openstack/core/stats.ts';
import { startCapoEnv, type CapoEnv, type RunningCapo } from '../testing/env.ts';
import { openServerFixtures, type ServerFixtures } from '../testing/server-fixtures.ts';

const N = 4;

async function ops(env: CapoEnv): Promise<Record<string, number>> {
  const snap = (await (await fetch(`${env.sim.url}/_sim/stats`)).json()) as StatsSnapshot;
  const out: Record<string, number> = {};
  for (const [service, s] of Object.entries(snap.services))
    for (const [op, o] of Object.entries(s.operations)) out[`${service} ${op}`] = o.count;
  return out;
}

describe('OpenStackServer controller: calls per server', () => {
  let env: CapoEnv;
  let capo: RunningCapo | undefined;
  let fx: ServerFixtures;

  before(async () => {
    env = await startCapoEnv();
    fx = await openServerFixtures(env);
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  it(`${N} servers of one identity created together resolve their references once`, async () => {
    capo = await env.startCapo({ controllers: ['openstackserver'] });
    await fetch(`${env.sim.url}/_sim/stats`, { method: 'DELETE' });
    const names = Array.from({ length: N }, (_, i) => `calls-${i}`);
    await Promise.all(names.map((name) => fx.create(name)));
    await eventually(
      async () =>
        (await Promise.all(names.map(async (n) => (await fx.get(n))?.status?.ready === true))).every(Boolean),
      { timeoutMs: 60_000, intervalMs: 25, what: `${N} servers Ready` },
    );
    const seen = await ops(env);
    assert.equal(seen['nova POST /v2.1/servers'], N);
    // The spec's references: one image, one flavor, two networks (by name, by tag), one subnet, one
    // security group — each looked up once for all N.
    const once: Record<string, number> = {
      'glance GET /v2/images': 1,
      'nova GET /v2.1/flavors/detail': 1,
      'neutron GET /v2.0/networks': 2,
      'neutron GET /v2.0/subnets': 1,
      'neutron GET /v2.0/security-groups': 1,
    };
    for (const [lookup, count] of Object.entries(once))
      assert.equal(seen[lookup], count, `${lookup}: ${count} for ${N} servers: ${JSON.stringify(seen)}`);
    for (const name of names) await fx.remove(name);
  });
});
