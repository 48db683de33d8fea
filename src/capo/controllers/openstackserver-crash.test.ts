/**
 * Crash consistency of the OpenStackServer controller: the controller is killed right after its
 * k-th OpenStack call of a create (the call took effect; its answer, and everything the process
 * would have sent afterwards to OpenStack or Kubernetes, is lost: the CCM's kill switch cuts its
 * network). A fresh controller, remembering nothing but what the object's status holds, converges:
 * one server, the spec's two ports, one trunk, one root volume — no duplicate, no leak. Deleting the
 * object then leaves nothing. For every k-th write of a clean create: the switch counts calls, and
 * how many reads come between two writes depends on timing (polls of a creating volume), so the
 * call that is the k-th write is searched for, each try being a full crash-and-restart run itself.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startKillSwitch, type KillSwitch } from '../../ccm/testing/kill-switch.ts';
import { kubeconfigText, writeKubeconfig } from '../../sim/kube/kubeconfig.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import type { OpenStackServer } from '../api/index.ts';
import { startCapoEnv, type CapoEnv, type RunningCapo } from '../testing/env.ts';
import { openServerFixtures, type Census, type ServerFixtures } from '../testing/server-fixtures.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 20 };

describe('OpenStackServer controller killed after any OpenStack write of a create', () => {
  let env: CapoEnv;
  let fx: ServerFixtures;
  let baseline: Census;
  let switches = 0;
  const dying: Promise<void>[] = [];

  before(async () => {
    env = await startCapoEnv();
    fx = await openServerFixtures(env);
    baseline = await fx.census();
  });
  after(async () => {
    await Promise.all(dying);
    await env?.close();
  });

  const ready = async (name: string): Promise<OpenStackServer | undefined> => {
    const s = await fx.get(name);
    return s?.status?.ready === true ? s : undefined;
  };

  /** A controller whose network dies right after its k-th OpenStack call; credentials `creds`. */
  async function doomed(k: number, creds: string): Promise<{ capo: RunningCapo; sw: KillSwitch }> {
    const sw = await startKillSwitch({ cloudUrl: env.sim.url, kubeUrl: env.kube.url, after: k });
    const kubeconfig = join(env.dir, `kubeconfig-switch-${++switches}`);
    await writeKubeconfig(
      kubeconfig,
      kubeconfigText({ server: sw.kubeUrl, token: env.kube.token, caPem: env.kube.caPem }),
    );
    await env.identitySecret(creds, { authUrl: env.sim.authUrl.replace(env.sim.url, sw.cloudUrl) });
    const capo = await env.startCapo({ controllers: ['openstackserver'], kubeconfig });
    return { capo, sw };
  }

  /** The process is dead: its graceful stop only frees what it held here, so it runs in the background. */
  async function bury(d: { capo: RunningCapo; sw: KillSwitch }): Promise<void> {
    await d.sw.close();
    dying.push(d.capo.stop());
  }

  it('a fresh controller converges to one server with no leaked port, trunk or volume, for every k', async (t) => {
    // A clean create through the switch counts the calls and the writes (the Keystone token is one).
    const probe = await doomed(Infinity, 'probe-creds');
    await fx.create('probe', {
      identityRef: { type: 'Secret', name: 'probe-creds', cloudName: 'openstack' },
    });
    await eventually(() => ready('probe'), { ...WAIT, what: 'probe Ready' });
    const calls = probe.sw.forwarded.length;
    const writes = probe.sw.writes;
    t.diagnostic(
      `a clean create makes ${calls} OpenStack calls, ${writes} of them writes: ` +
        probe.sw.forwarded.filter((c) => !c.startsWith('GET')).join(', '),
    );
    // Token, 2 ports, 2 port tags, trunk, trunk tags, root volume, server.
    assert.equal(writes, 9);
    await fx.remove('probe');
    assert.deepEqual(await fx.census(), baseline);
    await bury(probe);

    const expected: Census = {
      servers: baseline.servers + 1,
      ports: baseline.ports + 2,
      trunks: baseline.trunks + 1,
      volumes: baseline.volumes + 1,
    };
    /** Where each write was among the calls of the clean create (1-based). */
    const positions = probe.sw.forwarded.flatMap((c, i) => (/^(GET|HEAD|OPTIONS) /.test(c) ? [] : [i + 1]));
    let runs = 0;

    /** One run killed after call `k`, then a fresh controller; says where the kill fell. */
    async function crashAndRestart(k: number): Promise<{ writes: number; atWrite: boolean }> {
      const name = `crash-${++runs}`;
      const creds = `${name}-creds`;
      const d = await doomed(k, creds);
      await fx.create(name, { identityRef: { type: 'Secret', name: creds, cloudName: 'openstack' } });
      await eventually(async () => d.sw.dead || (await ready(name)), { ...WAIT, what: `${name}: killed` });
      const at = {
        writes: d.sw.writes,
        atWrite: d.sw.dead && !/^(GET|HEAD|OPTIONS) /.test(d.sw.forwarded.at(-1)!),
      };
      if (d.sw.dead)
        assert.equal(d.sw.forwarded.length, k, `${name}: no call after the kill reached the cloud`);
      await bury(d);

      // The restarted process reaches the cloud directly; the Secret says so (a rotation, too).
      await env.identitySecret(creds);
      const fresh = await env.startCapo({ controllers: ['openstackserver'] });
      try {
        const s = (await eventually(() => ready(name), { ...WAIT, what: `${name}: Ready after restart` }))!;
        assert.deepEqual(await fx.census(), expected, `${name}: exactly what one clean create leaves`);
        const servers = await env.admin.compute.servers.list({ all_tenants: true, name: `^${name}$` }).all();
        assert.deepEqual(
          servers.map((x) => x.id),
          [s.status!.instanceID],
          `${name}: the recorded server is the one`,
        );
        const ports = await env.admin.network.ports.list({ device_id: s.status!.instanceID! }).all();
        assert.deepEqual(
          ports.map((p) => p.id).sort(),
          s.status!.resources!.ports!.map((p) => p.id).sort(),
          `${name}: the server's ports are the recorded ones`,
        );
        for (const p of ports)
          assert.ok(p.tags.includes('cluster-test'), `${name}: port ${p.name} is tagged`);
        const [trunk] = await env.admin.network.trunks.list({ name: `${name}-pods` }).all();
        assert.deepEqual(trunk?.tags, ['cluster-test'], `${name}: the trunk is tagged`);

        await fx.remove(name);
        assert.deepEqual(await fx.census(), baseline, `${name}: the delete leaves nothing`);
      } finally {
        await fresh.stop();
      }
      return at;
    }

    for (let w = 1; w <= writes; w++) {
      let k = positions[w - 1]!;
      let hit = false;
      for (let attempt = 0; attempt < 12 && !hit; attempt++) {
        const at = await crashAndRestart(k);
        hit = at.atWrite && at.writes === w;
        t.diagnostic(
          `write ${w}: k=${k} → killed after ${at.writes} writes${at.atWrite ? ' (at a write)' : ''}`,
        );
        // Before the w-th write: it comes later; past it (or after a read following it): earlier.
        if (!hit) k += at.writes < w ? 1 : -1;
      }
      assert.ok(hit, `no run was killed right after write ${w}`);
    }
    t.diagnostic(`${runs} crash-and-restart runs for ${writes} writes`);
  });
});
