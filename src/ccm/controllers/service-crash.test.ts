/**
 * Crash consistency of the whole CCM: a Service of type LoadBalancer (two ports, two nodes,
 * external with a floating IP) is reconciled by a CCM killed right after its k-th OpenStack call —
 * the call took effect, its answer is lost, and nothing the process does afterwards reaches
 * OpenStack or Kubernetes (kill-switch.ts cuts its network). A fresh CCM, remembering nothing, then
 * converges: one load balancer, one floating IP, the Service's status and annotation, no leaked
 * port, floating IP or load balancer. Then the Service is deleted and nothing of ours is left. The
 * same for every k of a deletion.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { V1Node, V1Service } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { testClient } from '../../kube/testing/env.ts';
import type { OpenStackClient } from '../../openstack/client.ts';
import { sharedDiscoveryCache, sharedTokenCache } from '../../openstack/core/index.ts';
import { kubeconfigText, writeKubeconfig } from '../../sim/kube/kubeconfig.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { floatingIpDescription, loadBalancerName } from '../naming.ts';
import { Annotation } from '../service/annotations.ts';
import { startKillSwitch, type KillSwitch } from '../../sim/testing/kill-switch.ts';
import { startCcmEnv, type CcmEnv, type RunningCcm } from '../testing/env.ts';

const WAIT = { timeoutMs: 30_000, intervalMs: 20 };
/** The engine's requeue floor and cap on the fast profile (1 s and 10 s against a real cloud). */
const BACKOFF = { initialMs: 5, maxMs: 50 };

interface Census {
  ports: number;
  fips: number;
  lbs: number;
  listeners: number;
  pools: number;
  securityGroups: number;
}

describe('service controller: the CCM killed between any two OpenStack calls', () => {
  let env: CcmEnv;
  let admin: OpenStackClient;
  let conf: string;
  let lbSection: string;
  let baseline: Census;
  let switches = 0;
  const dying: Promise<void>[] = [];

  before(async () => {
    env = await startCcmEnv();
    admin = await env.target.client(env.target.admin!);
    const { subnet, publicNetwork: pub } = await env.routedSubnet('10.30.0.0/16');
    for (let i = 1; i <= 2; i++) await node(`node-${i}`, `10.30.0.${10 + i}`);
    lbSection = `[LoadBalancer]\nsubnet-id = ${subnet.id}\nfloating-network-id = ${pub.id}\n`;
    conf = await env.cloudConf(lbSection);
    baseline = await census();
  });
  after(async () => {
    await Promise.all(dying);
    await env?.close();
  });

  function node(name: string, ip: string): Promise<V1Node> {
    return env.api.create(kinds.Node, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      status: { addresses: [{ type: 'InternalIP', address: ip }] },
    });
  }

  function service(name: string): Promise<V1Service> {
    return env.api.create(kinds.Service, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'default' },
      spec: {
        type: 'LoadBalancer',
        selector: { app: name },
        ports: [
          { name: 'http', protocol: 'TCP', port: 80 },
          { name: 'dns', protocol: 'UDP', port: 53 },
        ],
      },
    });
  }

  const get = (name: string) => env.api.get(kinds.Service, { namespace: 'default', name });

  async function census(): Promise<Census> {
    const live = <T extends { provisioning_status?: string }>(xs: T[]) =>
      xs.filter((x) => x.provisioning_status !== 'DELETED').length;
    return {
      ports: (await admin.network.ports.list().all()).length,
      fips: (await admin.network.floatingIps.list().all()).length,
      lbs: live(await admin.loadBalancer.loadBalancers.list().all()),
      listeners: live(await admin.loadBalancer.listeners.list().all()),
      pools: live(await admin.loadBalancer.pools.list().all()),
      securityGroups: (await admin.network.securityGroups.list().all()).length,
    };
  }

  /** The Service advertises an address and names its load balancer. */
  async function converged(name: string): Promise<V1Service | undefined> {
    const s = await get(name);
    return s.status?.loadBalancer?.ingress?.[0]?.ip && s.metadata?.annotations?.[Annotation.LoadBalancerId]
      ? s
      : undefined;
  }

  async function gone(name: string): Promise<boolean> {
    const list = await env.api.list(kinds.Service, { namespace: 'default' });
    return list.items.every((s) => s.metadata?.name !== name);
  }

  /** A restarted process: none of the dead one's tokens or version documents survive. */
  function forget(): void {
    sharedTokenCache.clear();
    sharedDiscoveryCache.clear();
  }

  /** A fresh CCM reaching the cloud and the cluster directly. */
  function fresh(): Promise<RunningCcm> {
    forget();
    return env.startCcm({ controllers: ['service'], cloudConfig: conf }, {}, { serviceBackoff: BACKOFF });
  }

  /** A CCM whose network dies right after the answer of its `k`-th OpenStack call arrives. */
  async function doomed(k: number): Promise<{ ccm: RunningCcm; sw: KillSwitch; stop(): Promise<void> }> {
    const sw = await startKillSwitch({ cloudUrl: env.sim.url, kubeUrl: env.kube.url, after: k });
    const kubeconfig = join(env.dir, `kubeconfig-switch-${++switches}`);
    await writeKubeconfig(
      kubeconfig,
      kubeconfigText({ server: sw.kubeUrl, token: env.kube.token, caPem: env.kube.caPem }),
    );
    forget();
    const ccm = await env.startCcm(
      {
        controllers: ['service'],
        cloudConfig: await env.cloudConf(lbSection, env.sim.authUrl.replace(env.sim.url, sw.cloudUrl)),
        kubeconfig,
      },
      {},
      { serviceBackoff: BACKOFF },
    );
    return {
      ccm,
      sw,
      async stop() {
        await sw.close();
        // The process is dead: the next one does not wait for it. Its graceful stop (in-flight
        // reconciles retrying their calls into the cut network) only frees what it held in this
        // test process, so it runs in the background and is awaited at the end.
        dying.push(ccm.stop());
      },
    };
  }

  /** The kills of one scenario: how many, and after which write when the fatal call was one. */
  interface Kills {
    count: number;
    afterWrite: Set<number>;
  }

  /**
   * Waits until `done` or the switch kills the CCM, and records the kill. A clean run's polls
   * depend on timing, so a run can finish in fewer calls than `k` and never be killed.
   */
  async function runUntilKilled(
    sw: KillSwitch,
    k: number,
    done: () => Promise<unknown>,
    kills: Kills,
  ): Promise<void> {
    const deadline = Date.now() + WAIT.timeoutMs;
    while (!sw.dead && !(await done())) {
      if (Date.now() > deadline)
        throw new Error(`neither killed nor done after ${sw.forwarded.length} calls`);
      await sleep(WAIT.intervalMs);
    }
    if (!sw.dead) return;
    assert.equal(sw.forwarded.length, k, `k=${k}: no call after the kill reached the cloud`);
    kills.count++;
    if (!/^(GET|HEAD|OPTIONS) /.test(sw.forwarded.at(-1)!)) kills.afterWrite.add(sw.writes);
  }

  /** Every write of a clean run was, in some run, the last thing the process did. */
  function assertEveryWrite(kills: Kills, writes: number): void {
    assert.deepEqual(
      [...kills.afterWrite].sort((a, b) => a - b),
      Array.from({ length: writes }, (_, i) => i + 1),
    );
  }

  /** The calls of a clean run until `done`, once no more come (the last reconcile may trail). */
  async function cleanCalls(
    done: () => Promise<unknown>,
  ): Promise<{ calls: number; writes: number; ops: readonly string[] }> {
    const run = await doomed(Infinity);
    await eventually(done, { ...WAIT, what: 'a clean run' });
    let seen = -1;
    for (let i = 0; i < 50 && seen !== run.sw.forwarded.length; i++) {
      seen = run.sw.forwarded.length;
      await sleep(100);
    }
    const out = { calls: run.sw.forwarded.length, writes: run.sw.writes, ops: [...run.sw.forwarded] };
    await run.stop();
    return out;
  }

  /** One load balancer, one floating IP on its VIP, status and annotation, nothing else. */
  async function assertOne(name: string, withOne: Census, label: string): Promise<void> {
    const svc = (await eventually(() => converged(name), { ...WAIT, what: `${label}: ${name} converged` }))!;
    const lbName = loadBalancerName('kubernetes', 'default', name);
    const lbs = (await admin.loadBalancer.loadBalancers.list({ name: lbName }).all()).filter(
      (l) => l.provisioning_status !== 'DELETED',
    );
    assert.equal(lbs.length, 1, `${label}: one load balancer`);
    const lb = lbs[0]!;
    assert.equal(lb.provisioning_status, 'ACTIVE', `${label}: ACTIVE`);
    assert.equal(svc.metadata!.annotations![Annotation.LoadBalancerId], lb.id, `${label}: annotation`);
    const fips = await admin.network.floatingIps
      .list({ description: floatingIpDescription('default', name, 'kubernetes') })
      .all();
    assert.equal(fips.length, 1, `${label}: one floating IP`);
    assert.equal(fips[0]!.port_id, lb.vip_port_id, `${label}: the floating IP is on the VIP`);
    assert.equal(svc.status!.loadBalancer!.ingress![0]!.ip, fips[0]!.floating_ip_address, `${label}: status`);
    const listeners = await admin.loadBalancer.listeners.list({ loadbalancer_id: lb.id }).all();
    assert.equal(listeners.length, 2, `${label}: no duplicate listener`);
    assert.deepEqual(await census(), withOne, `${label}: nothing more than one clean create leaves`);
  }

  async function deleteAndCheck(name: string, label: string): Promise<void> {
    await env.api.delete(kinds.Service, { namespace: 'default', name });
    await eventually(() => gone(name), { ...WAIT, what: `${label}: ${name} deleted` });
    assert.deepEqual(await census(), baseline, `${label}: the deletion leaves nothing of ours`);
  }

  it('the kill: the fatal call takes effect, its answer is lost, and nothing after it gets through', async () => {
    const sw = await startKillSwitch({ cloudUrl: env.sim.url, kubeUrl: env.kube.url, after: 2 });
    const kubeconfig = join(env.dir, 'kubeconfig-switch-probe');
    await writeKubeconfig(
      kubeconfig,
      kubeconfigText({ server: sw.kubeUrl, token: env.kube.token, caPem: env.kube.caPem }),
    );
    const kube = testClient(kubeconfig);
    try {
      const headers = { 'x-auth-token': await env.sim.token('demo'), 'content-type': 'application/json' };
      const neutron = env.sim.cloud.serviceUrl('neutron').replace(env.sim.url, sw.cloudUrl);
      const first = await fetch(`${neutron}/v2.0/networks?limit=1`, { headers });
      assert.equal(first.status, 200);
      assert.ok(!(await first.text()).includes(env.sim.url), 'links in answers lead back through the switch');
      assert.equal((await kube.list(kinds.Namespace)).items.length > 0, true);

      const create = (name: string) =>
        fetch(`${neutron}/v2.0/networks`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ network: { name } }),
        });
      await assert.rejects(create('fatal'));
      assert.equal(sw.dead, true);
      assert.equal((await admin.network.networks.list({ name: 'fatal' }).all()).length, 1, 'it took effect');
      await assert.rejects(create('after'));
      assert.equal((await admin.network.networks.list({ name: 'after' }).all()).length, 0);
      await assert.rejects(kube.list(kinds.Namespace));
      assert.deepEqual(sw.forwarded, [
        'GET /networking/v2.0/networks?limit=1',
        'POST /networking/v2.0/networks',
      ]);
    } finally {
      await kube.close();
      await sw.close();
    }
  });

  it('create: one load balancer, one floating IP, no leaks, for every k', async (t) => {
    await service('probe');
    const clean = await cleanCalls(() => converged('probe'));
    const withOne = await census();
    assert.equal(withOne.lbs, baseline.lbs + 1);
    assert.equal(withOne.fips, baseline.fips + 1);
    const ccm = await fresh();
    await deleteAndCheck('probe', 'probe');
    await ccm.stop();
    assert.ok(clean.writes >= 3, `a clean create makes ${clean.writes} writes: ${clean.ops.join(', ')}`);
    t.diagnostic(`a clean create: ${clean.calls} calls, ${clean.writes} writes: ${clean.ops.join(', ')}`);

    const kills: Kills = { count: 0, afterWrite: new Set() };
    for (let k = 1; k <= clean.calls; k++) {
      const name = `c-${k}`;
      await service(name);
      const run = await doomed(k);
      await runUntilKilled(run.sw, k, () => converged(name), kills);
      await run.stop();

      const restarted = await fresh();
      await assertOne(name, withOne, `k=${k}`);
      await deleteAndCheck(name, `k=${k}`);
      await restarted.stop();
    }
    t.diagnostic(`killed after ${kills.count} of the ${clean.calls} calls`);
    assertEveryWrite(kills, clean.writes);
  });

  it('deletion: nothing of ours left, for every k', async (t) => {
    /** A converged Service, deleted while no CCM runs: the next CCM's first work is its cleanup. */
    async function converge(name: string): Promise<void> {
      await service(name);
      const ccm = await fresh();
      await eventually(() => converged(name), { ...WAIT, what: `${name} converged` });
      await ccm.stop();
      await env.api.delete(kinds.Service, { namespace: 'default', name });
    }

    await converge('rprobe');
    const clean = await cleanCalls(() => gone('rprobe'));
    assert.deepEqual(await census(), baseline);
    assert.ok(clean.writes >= 2, `a clean deletion makes ${clean.writes} writes: ${clean.ops.join(', ')}`);
    t.diagnostic(`a clean deletion: ${clean.calls} calls, ${clean.writes} writes: ${clean.ops.join(', ')}`);

    const kills: Kills = { count: 0, afterWrite: new Set() };
    for (let k = 1; k <= clean.calls; k++) {
      const name = `d-${k}`;
      await converge(name);
      const run = await doomed(k);
      await runUntilKilled(run.sw, k, () => gone(name), kills);
      await run.stop();

      const restarted = await fresh();
      await eventually(() => gone(name), { ...WAIT, what: `k=${k}: ${name} deleted` });
      assert.deepEqual(await census(), baseline, `k=${k}: the deletion leaves nothing of ours`);
      await restarted.stop();
    }
    t.diagnostic(`killed after ${kills.count} of the ${clean.calls} calls`);
    assertEveryWrite(kills, clean.writes);
  });
});
