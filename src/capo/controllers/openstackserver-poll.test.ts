/**
 * Building servers are seen ACTIVE through one shared Nova list per identity (server/build-poller.ts),
 * not each by its own GETs: with each server's own look pushed to 10 s, servers whose build takes
 * 300 ms are still Ready within a few seconds, each read by id at most twice, and one poll is one list
 * however many servers build.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { apiReader, ScopeCache } from '../identity.ts';
import { BuildPoller, type WatchedObject } from '../server/build-poller.ts';
import { startCapoEnv, type CapoEnv, type RunningCapo } from '../testing/env.ts';
import { openServerFixtures, type ServerFixtures } from '../testing/server-fixtures.ts';

const N = 4;

async function novaOps(env: CapoEnv): Promise<Record<string, number>> {
  const snap = (await (await fetch(`${env.sim.url}/_sim/stats`)).json()) as {
    services: Record<string, { operations: Record<string, { count: number }> }>;
  };
  return Object.fromEntries(
    Object.entries(snap.services['nova']?.operations ?? {}).map(([op, o]) => [op, o.count]),
  );
}

describe('OpenStackServer controller: building servers looked at together', () => {
  let env: CapoEnv;
  let capo: RunningCapo | undefined;
  let fx: ServerFixtures;

  before(async () => {
    env = await startCapoEnv({ overrides: { transitions: { 'nova.server.build': 300 } } });
    fx = await openServerFixtures(env);
  });
  after(async () => {
    await capo?.stop();
    await env?.close();
  });

  it('wakes each server once the shared list shows it ACTIVE; its own GET is only the 10 s safety net', async () => {
    capo = await env.startCapo({
      controllers: ['openstackserver'],
      // Each server's own look after its create, and while it builds, at the 10 s cap.
      server: { backoff: { initialMs: 10_000, maxMs: 10_000, idleMs: 10_000 }, buildPollMs: 50 },
    });
    await fetch(`${env.sim.url}/_sim/stats`, { method: 'DELETE' });
    const names = Array.from({ length: N }, (_, i) => `poll-${i}`);
    // No root volume: its own creating wait would be 10 s too.
    for (const name of names) await fx.create(name, { rootVolume: undefined });

    // Without the shared list, the first look after each create is 10 s away: none could be Ready
    // within 9.5 s of the last object's create.
    await eventually(
      async () => {
        const ready = await Promise.all(names.map(async (n) => (await fx.get(n))?.status?.ready === true));
        return ready.every(Boolean);
      },
      { timeoutMs: 9_500, intervalMs: 25, what: `${N} servers Ready well before their own 10 s look` },
    );
    const ops = await novaOps(env);
    assert.equal(ops['POST /v2.1/servers'], N);
    assert.ok(
      (ops['GET /v2.1/servers/{server_id}'] ?? 0) <= 2 * N,
      `each server read by id at most twice (seen building, woken ACTIVE): ${JSON.stringify(ops)}`,
    );
    // The deletes with the test's short waits (a delete is no build: its 10 s would be waited).
    await capo.stop();
    capo = await env.startCapo({ controllers: ['openstackserver'] });
    for (const name of names) await fx.remove(name);
  });

  it('one poll is one list per identity, whatever the number of servers building', async () => {
    // No controller running: every Nova call counted is the poller's.
    await capo?.stop();
    capo = undefined;
    const woken: WatchedObject[] = [];
    const scopes = new ScopeCache({ reader: apiReader(env.api) });
    const poller = new BuildPoller(scopes, (o) => woken.push(o), { intervalMs: 1_000 });
    const servers = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        env.os.compute.servers.create({
          name: `listed-${i}`,
          flavorRef: fx.flavor.id,
          imageRef: env.boot.imageId,
          networks: 'none',
        }),
      ),
    );
    for (const s of servers) {
      poller.watch(env.namespace, env.identityRef, s.id, { namespace: env.namespace, name: s.id });
    }
    await fetch(`${env.sim.url}/_sim/stats`, { method: 'DELETE' });
    await eventually(
      async () => {
        await poller.pollOnce();
        return woken.length === N;
      },
      { timeoutMs: 10_000, intervalMs: 50, what: `${N} servers woken` },
    );
    const ops = await novaOps(env);
    assert.equal(ops['GET /v2.1/servers/detail'], poller.lists, 'one list per poll');
    assert.equal(ops['GET /v2.1/servers/{server_id}'] ?? 0, 0, 'no server read by id');
    assert.equal(poller.size, 0, 'a server woken is no longer watched');
    for (const s of servers) await env.os.compute.servers.delete(s.id);
    await scopes.close();
  });
});
