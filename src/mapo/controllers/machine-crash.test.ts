/**
 * Crash consistency of the mapo process (the machine controller and capo's OpenStackServer
 * controller on one Manager and one ScopeCache, as `shiftstack mapo` runs them): killed right after
 * its k-th OpenStack write of a Machine's create or delete (the kill switch cuts its network to the
 * cloud and the cluster: the call took effect, its answer and everything after it is lost), then a
 * fresh process (new caches, new token cache) converges. A create: exactly one server, one server
 * group of the name, the recorded port, trunk and root volume, nothing more. A delete: the cloud as
 * before the Machine (census), but the server group, which MAPO never deletes. For every write of a
 * clean create (token, server group by name, port, trunk, volume, server, …) and of a clean delete;
 * the switch counts writes, since how many reads come between two of them depends on timing.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { capoKinds, type OpenStackServer } from '../../capo/api/index.ts';
import { openServerFixtures, type Census, type ServerFixtures } from '../../capo/testing/server-fixtures.ts';
import { isNotFound } from '../../kube/index.ts';
import { kubeconfigText, writeKubeconfig } from '../../sim/kube/kubeconfig.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { startKillSwitch, type KillSwitch } from '../../sim/testing/kill-switch.ts';
import { mapoKinds, type Machine } from '../api/index.ts';
import { MAPI_NAMESPACE, startMapoEnv, type MapoEnv, type RunningMapo } from '../testing/env.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 20 };

interface MapoCensus extends Census {
  serverGroups: number;
}

describe('mapo killed after any OpenStack write of a Machine’s create or delete', () => {
  let env: MapoEnv;
  let fx: ServerFixtures;
  let baseline: MapoCensus;
  let switches = 0;
  const dying: Promise<void>[] = [];

  before(async () => {
    env = await startMapoEnv();
    fx = await openServerFixtures(env);
    baseline = await census();
  });
  after(async () => {
    await Promise.all(dying);
    await env?.close();
  });

  async function census(): Promise<MapoCensus> {
    return { ...(await fx.census()), serverGroups: (await env.os.compute.serverGroups.list()).length };
  }
  const groupsNamed = async (name: string) =>
    (await env.os.compute.serverGroups.list()).filter((g) => g.name === name);
  const key = (name: string) => ({ namespace: MAPI_NAMESPACE, name });
  const getMachine = async (name: string): Promise<Machine | undefined> => {
    try {
      return await env.api.get(mapoKinds.Machine, key(name));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  const provisioned = async (name: string): Promise<Machine | undefined> => {
    const m = await getMachine(name);
    return m?.status?.phase === 'Provisioned' && m.spec?.providerID ? m : undefined;
  };
  const gone = async (name: string) => (await getMachine(name)) === undefined;

  /**
   * A worker of the installer's MachineSet with its own credentials Secret (so that each process
   * reaches the cloud its own way), its own server group name (so that each create makes one) and
   * a root volume (Cinder's writes too).
   */
  async function createMachine(name: string): Promise<void> {
    await env.api.create(
      mapoKinds.Machine,
      env.machineFrom(name, (p) => {
        p['cloudsSecret'] = { name: credsOf(name), namespace: MAPI_NAMESPACE };
        p['serverGroupName'] = groupOf(name);
        p['rootVolume'] = { diskSize: 1, sourceUUID: p['image'] };
      }),
    );
  }
  const credsOf = (name: string) => `${name}-creds`;
  const groupOf = (name: string) => `${name}-group`;

  /** A mapo process whose network dies right after its k-th OpenStack write. */
  async function doomed(k: number, name: string): Promise<{ mapo: RunningMapo; sw: KillSwitch }> {
    const sw = await startKillSwitch({
      cloudUrl: env.sim.url,
      kubeUrl: env.kube.url,
      after: Infinity,
      afterWrites: k,
    });
    const kubeconfig = join(env.dir, `kubeconfig-mapo-switch-${++switches}`);
    await writeKubeconfig(
      kubeconfig,
      kubeconfigText({ server: sw.kubeUrl, token: env.kube.token, caPem: env.kube.caPem }),
    );
    await env.identitySecret(credsOf(name), {
      namespace: MAPI_NAMESPACE,
      authUrl: env.sim.authUrl.replace(env.sim.url, sw.cloudUrl),
    });
    const mapo = await env.startMapo({ kubeconfig });
    return { mapo, sw };
  }

  /** The process is dead: its graceful stop only frees what it held here, so it runs in the background. */
  async function bury(d: { mapo: RunningMapo; sw: KillSwitch }): Promise<void> {
    await d.sw.close();
    dying.push(d.mapo.stop());
  }

  /** A fresh process reaching the cloud directly (the Secret says so, as a rotation would). */
  async function restarted(name: string): Promise<RunningMapo> {
    await env.identitySecret(credsOf(name), { namespace: MAPI_NAMESPACE });
    return env.startMapo();
  }

  /** Exactly what one Machine's create leaves: its server, port, trunk, volume and one group. */
  async function assertOneOfEach(name: string, m: Machine, groupsBefore: number): Promise<void> {
    const expected: MapoCensus = {
      servers: baseline.servers + 1,
      ports: baseline.ports + 1,
      trunks: baseline.trunks + 1,
      volumes: baseline.volumes + 1,
      serverGroups: groupsBefore + 1,
    };
    assert.deepEqual(await census(), expected, `${name}: exactly what one clean create leaves`);
    const oss: OpenStackServer = await env.api.get(capoKinds.OpenStackServer, key(name));
    const id = oss.status!.instanceID!;
    assert.equal(m.spec?.providerID, `openstack:///${id}`, `${name}: the providerID is the recorded server`);
    const servers = await env.admin.compute.servers.list({ all_tenants: true, name: `^${name}$` }).all();
    assert.deepEqual(
      servers.map((s) => s.id),
      [id],
      `${name}: one server`,
    );
    const groups = await groupsNamed(groupOf(name));
    assert.equal(groups.length, 1, `${name}: one server group of the name`);
    assert.equal(oss.status?.resolved?.serverGroupID, groups[0]!.id, `${name}: the server is in it`);
    const ports = await env.admin.network.ports.list({ device_id: id }).all();
    assert.deepEqual(
      ports.map((p) => p.id).sort(),
      oss.status.resources!.ports!.map((p) => p.id).sort(),
      `${name}: the server's ports are the recorded ones`,
    );
  }

  /** Deletes the Machine, waits for it to go, and checks the cloud is as before but for its group. */
  async function assertDeletedClean(name: string, groupsBefore: number): Promise<void> {
    await eventually(() => gone(name), { ...WAIT, what: `${name}: deleted` });
    assert.deepEqual(
      await census(),
      { ...baseline, serverGroups: groupsBefore + 1 },
      `${name}: the delete leaves nothing but the server group (MAPO never deletes one)`,
    );
    // The group is the test's to remove, so that the next run makes its own.
    for (const g of await groupsNamed(groupOf(name))) await env.os.compute.serverGroups.delete(g.id);
  }

  it('a create killed after any write: a fresh process converges to one server and one group, and nothing leaks', async (t) => {
    // A clean create through the switch counts the calls and the writes (the Keystone token is one).
    const probe = await doomed(Infinity, 'probe');
    await createMachine('probe');
    const m = await eventually(() => provisioned('probe'), { ...WAIT, what: 'probe Provisioned' });
    const writes = probe.sw.writes;
    t.diagnostic(
      `a clean create makes ${probe.sw.forwarded.length} OpenStack calls, ${writes} of them writes: ` +
        probe.sw.forwarded.filter((c) => !/^(GET|HEAD|OPTIONS) /.test(c)).join(', '),
    );
    await assertOneOfEach('probe', m!, baseline.serverGroups);
    await env.api.delete(mapoKinds.Machine, key('probe'));
    await assertDeletedClean('probe', baseline.serverGroups);
    await bury(probe);
    // Token, server group, port, port tags, trunk, trunk tags, root volume, server.
    assert.equal(writes, 8);

    for (let k = 1; k <= writes; k++) {
      const name = `crash-${k}`;
      const d = await doomed(k, name);
      await createMachine(name);
      await eventually(async () => d.sw.dead || (await provisioned(name)), {
        ...WAIT,
        what: `${name}: killed`,
      });
      assert.ok(d.sw.dead, `${name}: killed before it was Provisioned`);
      assert.equal(d.sw.writes, k, `${name}: killed right after write ${k}`);
      assert.doesNotMatch(
        d.sw.forwarded.at(-1)!,
        /^(GET|HEAD|OPTIONS) /,
        `${name}: the last call was the write`,
      );
      await bury(d);

      const fresh = await restarted(name);
      try {
        const m = await eventually(() => provisioned(name), {
          ...WAIT,
          what: `${name}: Provisioned after restart`,
        });
        await assertOneOfEach(name, m!, baseline.serverGroups);
        await env.api.delete(mapoKinds.Machine, key(name));
        await assertDeletedClean(name, baseline.serverGroups);
      } finally {
        await fresh.stop();
      }
    }
  });

  it('a delete killed after any write is finished by a fresh process: nothing left', async (t) => {
    /** A Provisioned Machine whose delete is asked for while no process runs. */
    async function provisionedThenDeleted(name: string): Promise<void> {
      const mapo = await restarted(name);
      try {
        await createMachine(name);
        await eventually(() => provisioned(name), { ...WAIT, what: `${name} Provisioned` });
      } finally {
        await mapo.stop();
      }
      // The finalizer holds it: the doomed process's first act is the delete.
      await env.api.delete(mapoKinds.Machine, key(name));
    }

    await provisionedThenDeleted('del-probe');
    const probe = await doomed(Infinity, 'del-probe');
    await assertDeletedClean('del-probe', baseline.serverGroups);
    const writes = probe.sw.writes;
    t.diagnostic(
      `a clean delete makes ${probe.sw.forwarded.length} OpenStack calls, ${writes} of them writes: ` +
        probe.sw.forwarded.filter((c) => !/^(GET|HEAD|OPTIONS) /.test(c)).join(', '),
    );
    await bury(probe);
    // Token, server, trunk, port (Nova takes the root volume with the server).
    assert.equal(writes, 4);

    for (let k = 1; k <= writes; k++) {
      const name = `del-${k}`;
      await provisionedThenDeleted(name);
      const d = await doomed(k, name);
      await eventually(async () => d.sw.dead || (await gone(name)), { ...WAIT, what: `${name}: killed` });
      assert.ok(d.sw.dead, `${name}: killed before the delete finished`);
      assert.equal(d.sw.writes, k, `${name}: killed right after write ${k}`);
      await bury(d);
      const fresh = await restarted(name);
      try {
        await assertDeletedClean(name, baseline.serverGroups);
      } finally {
        await fresh.stop();
      }
    }
  });
});
