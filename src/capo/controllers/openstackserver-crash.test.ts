/**
 * Crash consistency of the OpenStackServer controller: the controller is killed right after its
 * k-th OpenStack write of a create (the call took effect; its answer, and everything the process
 * would have sent afterwards to OpenStack or Kubernetes, is lost: the CCM's kill switch cuts its
 * network). A fresh controller, remembering nothing but what the object's status holds, converges:
 * one server, the spec's two ports, one trunk, one root volume — no duplicate, no leak. Deleting the
 * object then leaves nothing. For every write of a clean create; the switch counts writes, since
 * how many reads come between two of them depends on timing (polls of a creating volume).
 * The same for a delete whose trunk carries pod subports someone else added: killed after any write
 * (the subports' detach among them), a fresh controller deletes everything, those ports included.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startKillSwitch, type KillSwitch } from '../../sim/testing/kill-switch.ts';
import { kubeconfigText, writeKubeconfig } from '../../sim/kube/kubeconfig.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { capoKinds, type OpenStackServer } from '../api/index.ts';
import { startCapoEnv, type CapoEnv, type RunningCapo } from '../testing/env.ts';
import { openServerFixtures, type Census, type ServerFixtures } from '../testing/server-fixtures.ts';

const WAIT = { timeoutMs: 60_000, intervalMs: 20 };

describe('OpenStackServer controller killed after any OpenStack write of a create or a delete', () => {
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

  /** A controller whose network dies right after its k-th OpenStack write; credentials `creds`. */
  async function doomed(k: number, creds: string): Promise<{ capo: RunningCapo; sw: KillSwitch }> {
    const sw = await startKillSwitch({
      cloudUrl: env.sim.url,
      kubeUrl: env.kube.url,
      after: Infinity,
      afterWrites: k,
    });
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
    /** One run killed right after write `k`, then a fresh controller. */
    async function crashAndRestart(k: number): Promise<void> {
      const name = `crash-${k}`;
      const creds = `${name}-creds`;
      const d = await doomed(k, creds);
      await fx.create(name, { identityRef: { type: 'Secret', name: creds, cloudName: 'openstack' } });
      await eventually(async () => d.sw.dead || (await ready(name)), { ...WAIT, what: `${name}: killed` });
      assert.ok(d.sw.dead, `${name}: killed before it was Ready`);
      assert.equal(d.sw.writes, k, `${name}: killed right after write ${k}`);
      assert.doesNotMatch(
        d.sw.forwarded.at(-1)!,
        /^(GET|HEAD|OPTIONS) /,
        `${name}: the last call was the write`,
      );
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
    }

    for (let k = 1; k <= writes; k++) await crashAndRestart(k);
  });
  it('a delete killed after any write, with pod subports on the trunk, is finished by a fresh controller: nothing left', async (t) => {
    /** A Ready server whose trunk carries two pod ports made outside CAPO (as kuryr adds them). */
    async function readyWithSubports(name: string, creds: string): Promise<void> {
      await env.identitySecret(creds);
      const capo = await env.startCapo({ controllers: ['openstackserver'] });
      try {
        await fx.create(name, { identityRef: { type: 'Secret', name: creds, cloudName: 'openstack' } });
        await eventually(() => ready(name), { ...WAIT, what: `${name} Ready` });
      } finally {
        await capo.stop();
      }
      const [trunk] = await env.os.network.trunks.list({ name: `${name}-pods` }).all();
      assert.ok(trunk, `${name}: the trunk`);
      const pods = await Promise.all(
        [1, 2].map((i) =>
          env.os.network.ports.create({ network_id: fx.podNetwork.id, name: `${name}-pod-${i}` }),
        ),
      );
      await env.os.network.trunks.addSubports(
        trunk.id,
        pods.map((p, i) => ({ port_id: p.id, segmentation_type: 'vlan', segmentation_id: 100 + i })),
      );
      // The delete is asked for while no controller runs: the doomed one's first act is to delete.
      await env.api.delete(capoKinds.OpenStackServer, { namespace: env.namespace, name });
    }

    await readyWithSubports('del-probe', 'del-probe-creds');
    const probe = await doomed(Infinity, 'del-probe-creds');
    await eventually(async () => (await fx.get('del-probe')) === undefined, {
      ...WAIT,
      what: 'probe deleted',
    });
    assert.deepEqual(await fx.census(), baseline, 'a clean delete leaves nothing');
    const writes = probe.sw.writes;
    t.diagnostic(
      `a clean delete makes ${probe.sw.forwarded.length} OpenStack calls, ${writes} of them writes: ` +
        probe.sw.forwarded.filter((c) => !c.startsWith('GET')).join(', '),
    );
    // Token, server, subports detached, trunk, 2 ports, 2 pod ports.
    assert.equal(writes, 8);
    await bury(probe);

    for (let k = 1; k <= writes; k++) {
      const name = `del-${k}`;
      const creds = `${name}-creds`;
      await readyWithSubports(name, creds);
      const d = await doomed(k, creds);
      await eventually(async () => d.sw.dead || (await fx.get(name)) === undefined, {
        ...WAIT,
        what: `${name}: killed`,
      });
      assert.ok(d.sw.dead, `${name}: killed before the delete finished`);
      assert.equal(d.sw.writes, k, `${name}: killed right after write ${k}`);
      await bury(d);
      await env.identitySecret(creds);
      const fresh = await env.startCapo({ controllers: ['openstackserver'] });
      try {
        await eventually(async () => (await fx.get(name)) === undefined, {
          ...WAIT,
          what: `${name}: deleted after restart`,
        });
        assert.deepEqual(await fx.census(), baseline, `${name}: the delete leaves nothing`);
      } finally {
        await fresh.stop();
      }
    }
  });
});
