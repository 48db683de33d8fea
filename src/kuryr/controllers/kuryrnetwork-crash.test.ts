/**
 * The kuryrnetwork controller killed right after each of its Neutron writes — of a namespace
 * network's create, then of its removal — and started again as a new process (a new manager and
 * client, nothing in memory): exactly one network, one subnet and one router interface result, the
 * KuryrNetwork's status names them, and deleting the namespace then leaves nothing of ours.
 * The kill is at the client (src/openstack/services/testing/kill.ts): the write takes effect, its
 * answer is lost, and the status write that would have recorded it never happens.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kinds } from '../../kube/index.ts';
import { killable } from '../../openstack/services/testing/kill.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { kuryrKinds } from '../api/index.ts';
import { isPending } from '../drivers.ts';
import { startKuryrEnv, type KuryrEnv, type RunningKuryr, type StartKuryrOptions } from '../testing/env.ts';

/** network, its tags, subnet, its tags, router interface. */
const CREATE_WRITES = 5;
/** router interface off, network delete. */
const REMOVE_WRITES = 2;

describe('kuryrnetwork controller: killed after each Neutron write', () => {
  let env: KuryrEnv;
  let start: (dies?: number) => Promise<{ kuryr: RunningKuryr; writes: () => number }>;

  before(async () => {
    env = await startKuryrEnv({ nodes: 0 });
    const pool = await env.os.network.subnetPools.create({
      prefixes: ['10.136.0.0/14'],
      default_prefixlen: 24,
    });
    const base: StartKuryrOptions = {
      controllers: ['namespace', 'kuryrnetwork'],
      options: {
        kubernetes: { podSubnetsDriver: 'namespace' },
        namespaceSubnet: { podSubnetPool: pool.id, podRouter: env.net.routerId },
      },
    };
    start = async (dies = Infinity) => {
      let writes = () => 0;
      const kuryr = await env.startKuryr({
        ...base,
        context: (ctx) => {
          const k = killable(ctx.os, (_m, count) => count >= dies);
          ctx.os = k.api;
          writes = k.writes;
        },
      });
      return { kuryr, writes: () => writes() };
    };
  });
  after(async () => env?.close());

  const census = async (ns: string) => {
    const { metadata } = await env.api
      .get(kinds.Namespace, { name: ns })
      .catch(() => ({ metadata: undefined }));
    const name = metadata?.uid ? `${metadata.uid}/${ns}` : undefined;
    const networks = name ? await env.admin.network.networks.list({ name }).all() : [];
    const subnets = name ? await env.admin.network.subnets.list({ name }).all() : [];
    const ifaces = await env.admin.network.ports
      .list({ device_id: env.net.routerId, device_owner: 'network:router_interface' })
      .all();
    return {
      networks: networks.length,
      subnets: subnets.length,
      interfaces: ifaces.filter((p) => p.fixed_ips.some((f) => subnets.some((s) => s.id === f.subnet_id)))
        .length,
    };
  };

  const ready = async (kuryr: RunningKuryr, ns: string) =>
    eventually(
      async () => {
        const r = await kuryr.ctx.subnets.forNamespace(ns, AbortSignal.timeout(10_000));
        return isPending(r) ? undefined : r;
      },
      { timeoutMs: 30_000, what: `${ns}'s subnet` },
    );

  it('create killed after write k, removal after write j: one of each, then nothing', async (t) => {
    const ours = async () =>
      (await env.admin.network.networks.list({ tags: ['kuryr-cluster:kubernetes'] }).all()).length;
    const before = await ours();
    for (let k = 1; k <= CREATE_WRITES; k++) {
      const ns = `crash-${k}`;
      await env.ensureNamespace(ns);
      const dying = await start(k);
      // The namespace's first pod asks: the KuryrNetwork appears, the controller starts writing.
      assert.ok(isPending(await dying.kuryr.ctx.subnets.forNamespace(ns, AbortSignal.timeout(10_000))));
      await eventually(() => dying.writes() >= k, { timeoutMs: 30_000, what: `write ${k} of ${ns}` });
      await dying.kuryr.stop();

      const fresh = await start();
      const subnet = await ready(fresh.kuryr, ns);
      assert.deepEqual(await census(ns), { networks: 1, subnets: 1, interfaces: 1 }, `${ns}: one of each`);
      const kns = await env.api.get(kuryrKinds.KuryrNetwork, { namespace: ns, name: ns });
      assert.equal(kns.status?.subnetId, subnet?.subnetId);
      await fresh.kuryr.stop();

      const j = ((k - 1) % REMOVE_WRITES) + 1;
      const removing = await start(j);
      await env.api.delete(kinds.Namespace, { name: ns });
      await eventually(() => removing.writes() >= j, {
        timeoutMs: 30_000,
        what: `removal write ${j} of ${ns}`,
      });
      await removing.kuryr.stop();
      const last = await start();
      await eventually(
        async () => (await env.api.list(kuryrKinds.KuryrNetwork, { namespace: ns })).items.length === 0,
        { timeoutMs: 30_000, what: `${ns}'s KuryrNetwork gone` },
      );
      assert.equal(await ours(), before, `${ns}: removal killed after write ${j}, nothing of ours left`);
      await last.kuryr.stop();
    }
    t.diagnostic(
      `killed after each of ${CREATE_WRITES} create writes and each of ${REMOVE_WRITES} removal writes`,
    );
  });
});
