/**
 * The crash test: the kuryr controller (pod + kuryrport, pools and all) killed right after
 * its k-th OpenStack write — the write took effect, its answer and everything after it is lost (the
 * kill switch cuts the process's network to both the cloud and the cluster) — then a fresh process,
 * remembering nothing, converges. For every write of a pool populate (the bulk create, each port's
 * tags, add_subports) and of a pod's wiring, and of a pod's release above `ports_pool_max` (the
 * detach, the delete): no orphaned port (every port of ours is a subport held by a KuryrPort or a
 * pool; nothing left unattached, tagged or not) and no VLAN id used twice.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import { isNotFound, kinds } from '../../kube/index.ts';
import { DiscoveryCache } from '../../openstack/core/discovery.ts';
import { TokenCache } from '../../openstack/core/token-cache.ts';
import { kubeconfigText, writeKubeconfig } from '../../sim/kube/kubeconfig.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { startKillSwitch, type KillSwitch } from '../../sim/testing/kill-switch.ts';
import { kuryrKinds } from '../api/index.ts';
import { ownerTags } from '../api/names.ts';
import { defaultVif } from '../api/vif.ts';
import { startKuryrEnv, type KuryrEnv, type RunningKuryr, type StartKuryrOptions } from '../testing/env.ts';
import { KURYR_DEVICE_OWNER, SUBPORT_DEVICE_OWNER } from './nested-vlan.ts';
import { portOwner, vifStack } from './stack.ts';

const WAIT = { timeoutMs: 30_000, intervalMs: 20 };
/** Pools of 2 ports at most: a released port above it is detached and deleted (writes to kill at). */
const OPTIONS: StartKuryrOptions['options'] = {
  vifPool: { portsPoolMin: 1, portsPoolBatch: 3, portsPoolMax: 1, portsPoolUpdateFrequency: 1 },
};
/** Beyond the writes of one scenario; the loop ends at the first k the process survives. */
const MAX_WRITES = 40;

describe('kuryr killed after any Neutron write of a populate, a wiring or a release', () => {
  let env: KuryrEnv;
  let switches = 0;
  const dying: Promise<void>[] = [];

  before(async () => {
    env = await startKuryrEnv({ nodes: 1 });
  });
  after(async () => {
    await Promise.all(dying);
    await env?.close();
  });

  const node = () => env.workers[0]!.name;

  async function pods(ns: string, names: string[]): Promise<void> {
    await env.ensureNamespace(ns);
    for (const name of names) {
      await env.api.create(kinds.Pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: ns },
        spec: { nodeName: node(), containers: [{ name: 'c', image: 'busybox' }] },
      });
    }
  }

  async function allActive(ns: string, names: string[]): Promise<boolean> {
    for (const name of names) {
      try {
        const kp = await env.api.get(kuryrKinds.KuryrPort, { namespace: ns, name });
        if (defaultVif(kp.status?.vifs)?.vif.active !== true) return false;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    }
    return true;
  }

  async function allGone(ns: string, names: string[]): Promise<boolean> {
    const exists = async (get: () => Promise<unknown>) =>
      get().then(
        () => true,
        (err: unknown) => {
          if (isNotFound(err)) return false;
          throw err;
        },
      );
    for (const name of names) {
      const key = { namespace: ns, name };
      if (await exists(() => env.api.get(kinds.Pod, key))) return false;
      if (await exists(() => env.api.get(kuryrKinds.KuryrPort, key))) return false;
    }
    return true;
  }

  /** A kuryr process whose network dies right after its k-th OpenStack write. */
  async function doomed(k: number): Promise<{ kuryr: RunningKuryr; sw: KillSwitch }> {
    const sw = await startKillSwitch({
      cloudUrl: env.sim.url,
      kubeUrl: env.kube.url,
      after: Infinity,
      afterWrites: k,
    });
    const kubeconfig = join(env.dir, `kubeconfig-kuryr-switch-${++switches}`);
    await writeKubeconfig(
      kubeconfig,
      kubeconfigText({ server: sw.kubeUrl, token: env.kube.token, caPem: env.kube.caPem }),
    );
    const os = await env.target.client(
      { ...env.target.demo, authUrl: env.sim.authUrl.replace(env.sim.url, sw.cloudUrl) },
      {
        tokenCache: new TokenCache(),
        discoveryCache: new DiscoveryCache(),
        retry: { baseDelayMs: 10, maxDelayMs: 50 },
      },
    );
    const kuryr = await env.startKuryr({
      controllers: ['pod', 'kuryrport'],
      options: OPTIONS,
      kubeconfig,
      context: (ctx) => {
        ctx.os = os;
      },
    });
    dying.push(sw.died.then(() => undefined));
    return { kuryr, sw };
  }

  async function bury(d: { kuryr: RunningKuryr; sw: KillSwitch }): Promise<void> {
    await d.sw.close();
    dying.push(d.kuryr.stop().catch(() => undefined));
  }

  /** Nothing of ours but subports held by a KuryrPort or a pool; no VLAN id twice; VIFs match the trunk. */
  async function assertConsistent(fresh: RunningKuryr, what: string): Promise<void> {
    const owner = portOwner(fresh.ctx);
    const ours = await env.os.network.ports.list({ tags: [...owner.tags] }).all();
    const trunk = await env.os.network.trunks.get(env.workers[0]!.trunkId);
    for (const p of ours) {
      assert.equal(p.device_owner, SUBPORT_DEVICE_OWNER, `${what}: port ${p.id} is a subport, not an orphan`);
      assert.equal(p.device_id, trunk.id, `${what}: port ${p.id} is on the node's trunk`);
    }
    const untagged = await env.os.network.ports
      .list({ device_owner: KURYR_DEVICE_OWNER, description: owner.description })
      .all();
    assert.deepEqual(
      untagged.map((p) => p.id),
      [],
      `${what}: no untagged port left from a bulk create`,
    );
    const detached = (await env.os.network.ports.list({ name: owner.name }).all()).filter(
      (p) => p.device_owner === '',
    );
    assert.deepEqual(
      detached.map((p) => p.id),
      [],
      `${what}: no port left detached`,
    );
    const ids = trunk.sub_ports.map((s) => s.segmentation_id);
    assert.equal(new Set(ids).size, ids.length, `${what}: no VLAN id twice on the trunk`);
    const kps = (await env.api.listAll(kuryrKinds.KuryrPort)).items;
    const held = new Set<string>();
    for (const kp of kps) {
      const vif = defaultVif(kp.status?.vifs)?.vif;
      if (!vif) continue;
      assert.ok(!held.has(vif.id), `${what}: port ${vif.id} held by one KuryrPort only`);
      held.add(vif.id);
      const sub = trunk.sub_ports.find((s) => s.port_id === vif.id);
      assert.equal(
        sub?.segmentation_id,
        vif.vlanId,
        `${what}: ${kp.metadata?.name}'s VLAN id is the trunk's`,
      );
    }
  }

  /**
   * Every iteration of the wiring starts on empty pools, so that its pods miss and the populate's
   * writes are on their path: the ports the last one left pooled are detached and deleted.
   */
  async function emptyPools(tags: readonly string[]): Promise<void> {
    const trunk = await env.os.network.trunks.get(env.workers[0]!.trunkId);
    const ours = new Set((await env.os.network.ports.list({ tags: [...tags] }).all()).map((p) => p.id));
    const pooled = trunk.sub_ports.filter((s) => ours.has(s.port_id));
    if (pooled.length > 0) await env.os.network.trunks.removeSubports(trunk.id, pooled);
    for (const s of pooled) await env.os.network.ports.delete(s.port_id);
  }

  /** The process has nothing under way: pools recovered, no populate, nothing to recycle. */
  function settled(kuryr: RunningKuryr): boolean {
    const stack = vifStack(kuryr.manager, kuryr.ctx);
    const stats = stack.pools.stats();
    return stack.ready() && stats.populating === 0 && stats.recyclable === 0;
  }

  it('converges without an orphan or a VLAN id twice, whichever write of the wiring it died after', async () => {
    let survived = false;
    const killedAfter: string[] = [];
    for (let k = 1; k <= MAX_WRITES && !survived; k++) {
      const ns = `wire-${k}`;
      // Two pods miss one empty pool: one populate of a batch (3) wires both and keeps the minimum.
      const names = ['p-0', 'p-1'];
      await emptyPools(
        ownerTags({
          resourceTags: env.options.neutronDefaults.resourceTags,
          clusterName: env.options.clusterName,
        }),
      );
      const d = await doomed(k);
      await pods(ns, names);
      await Promise.race([
        d.sw.died,
        eventually(() => allActive(ns, names), { ...WAIT, what: `pods of ${ns}` }),
      ]);
      survived = !d.sw.dead;
      if (!survived) killedAfter.push(lastWrite(d.sw));
      await bury(d);
      const fresh = await env.startKuryr({ controllers: ['pod', 'kuryrport'], options: OPTIONS });
      await eventually(() => allActive(ns, names), {
        ...WAIT,
        what: `pods of ${ns} after the restart (k=${k})`,
      });
      await eventually(() => settled(fresh), { ...WAIT, what: 'populates done' });
      await assertConsistent(fresh, `wiring, killed after write ${k}`);
      for (const name of names) await env.api.delete(kinds.Pod, { namespace: ns, name });
      await eventually(() => allGone(ns, names), { ...WAIT, what: `pods of ${ns} deleted` });
      await fresh.stop();
    }
    assert.ok(survived, `a process that is never killed wires the pods within ${MAX_WRITES} writes`);
    // The kills covered the populate's writes: the bulk create, the tags, the attach.
    for (const write of [/^POST \S*\/v2\.0\/ports$/, /^PUT \S*\/tags$/, /^PUT \S*\/add_subports$/])
      assert.ok(
        killedAfter.some((c) => write.test(c)),
        `killed after ${String(write)}: ${killedAfter.join(', ')}`,
      );
  });

  it('converges whichever write of a release (detach and delete above ports_pool_max) it died after', async () => {
    let survived = false;
    const killedAfter: string[] = [];
    for (let k = 1; k <= MAX_WRITES && !survived; k++) {
      const ns = `release-${k}`;
      const names = ['r-0', 'r-1', 'r-2'];
      const setup = await env.startKuryr({ controllers: ['pod', 'kuryrport'], options: OPTIONS });
      await pods(ns, names);
      await eventually(() => allActive(ns, names), { ...WAIT, what: `pods of ${ns}` });
      await eventually(() => settled(setup), { ...WAIT, what: 'populates done' });
      await setup.stop();
      const d = await doomed(k);
      for (const name of names) await env.api.delete(kinds.Pod, { namespace: ns, name });
      await Promise.race([
        d.sw.died,
        eventually(async () => (await allGone(ns, names)) && settled(d.kuryr), {
          ...WAIT,
          what: `pods of ${ns} released`,
        }),
      ]);
      survived = !d.sw.dead;
      if (!survived) killedAfter.push(lastWrite(d.sw));
      await bury(d);
      const fresh = await env.startKuryr({ controllers: ['pod', 'kuryrport'], options: OPTIONS });
      await eventually(() => allGone(ns, names), {
        ...WAIT,
        what: `pods of ${ns} gone after the restart (k=${k})`,
      });
      await eventually(() => settled(fresh), { ...WAIT, what: 'pools recovered and recycled' });
      await assertConsistent(fresh, `release, killed after write ${k}`);
      await fresh.stop();
    }
    assert.ok(survived, `a process that is never killed releases the pods within ${MAX_WRITES} writes`);
    for (const write of [/^PUT \S*\/remove_subports$/, /^DELETE \S*\/v2\.0\/ports\/\S+$/])
      assert.ok(
        killedAfter.some((c) => write.test(c)),
        `killed after ${String(write)}: ${killedAfter.join(', ')}`,
      );
  });
});

/** The fatal write: the last call the switch forwarded that was not a read. */
function lastWrite(sw: KillSwitch): string {
  return sw.forwarded.filter((c) => !/^(GET|HEAD|OPTIONS) /.test(c)).at(-1) ?? '';
}
