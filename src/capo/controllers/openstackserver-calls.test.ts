/**
 * What N OpenStackServers of one identity created together cost the cloud: their image, flavor,
 * networks, subnets and security groups are looked up once for all of them (the identity's
 * LookupCache), not once each. And what a reconcile of a server that exists costs the API server:
 * no Secret read (the identity's client is kept while its Secret's resourceVersion stands, the
 * bootstrap data is Nova's once the server exists).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kinds } from '../../kube/index.ts';
import type { Action } from '../../sim/kube/reactors.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { capoKinds } from '../api/index.ts';
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

  it(`reconciles of ${N} servers that exist read no Secret and write no status`, async () => {
    capo ??= await env.startCapo({ controllers: ['openstackserver'] });
    const names = Array.from({ length: N }, (_, i) => `settled-${i}`);
    for (const name of names)
      await fx.bootstrapSecret(`${name}-bootstrap`, `#cloud-config\nhostname: ${name}\n`);
    await Promise.all(names.map((name) => fx.create(name, { userDataRef: { name: `${name}-bootstrap` } })));
    await eventually(
      async () =>
        (await Promise.all(names.map(async (n) => (await fx.get(n))?.status?.ready === true))).every(Boolean),
      { timeoutMs: 60_000, intervalMs: 25, what: `${N} servers Ready` },
    );
    const seen: Action[] = [];
    const stop = env.kube.emulator.reactors.prepend('*', '*', (a) => {
      if (a.resource === 'secrets' || a.resource === 'openstackservers') seen.push(a);
      return { handled: false };
    });
    try {
      const before = await reconciled(capo);
      // An annotation wakes each one (a metadata change): a reconcile of a Ready server.
      for (const name of names)
        await env.api.patch(capoKinds.OpenStackServer, { namespace: env.namespace, name }, 'merge', {
          metadata: { annotations: { poke: '1' } },
        });
      await eventually(async () => (await reconciled(capo!)) >= before + N, {
        timeoutMs: 30_000,
        what: `${N} reconciles`,
      });
      const secretReads = seen.filter((a) => a.resource === kinds.Secret.plural && a.verb === 'get');
      assert.deepEqual(
        secretReads.map((a) => a.name),
        [],
        'neither the identity Secret (unchanged) nor the bootstrap data (the server exists) is read',
      );
      const statusWrites = seen.filter((a) => a.subresource === 'status');
      assert.equal(statusWrites.length, 0, 'nothing changed: no status write');
    } finally {
      stop();
    }
    for (const name of names) await fx.remove(name);
  });
});

async function reconciled(capo: RunningCapo): Promise<number> {
  const metric = (await capo.registry.getMetricsAsJSON()).find(
    (m) => m.name === 'controller_runtime_reconcile_total',
  );
  return (metric?.values ?? [])
    .filter((v) => v.labels['controller'] === 'openstackserver')
    .reduce((sum, v) => sum + v.value, 0);
}
