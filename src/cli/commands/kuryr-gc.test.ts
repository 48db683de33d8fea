/**
 * `shiftstack kuryr gc` on both emulators: orphans planted beside referenced, foreign and untagged
 * objects; the dry run lists exactly the orphans and deletes nothing, `--delete` removes exactly
 * them (a network with its subnet and router interface, a port, a load balancer), and everything
 * else is still there.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Command } from 'commander';
import { isNotFound } from '../../openstack/core/errors.ts';
import { writeCloudsYaml } from '../../openstack/core/testing/target.ts';
import { kuryrKinds, vifName, vifPrimitive } from '../../kuryr/api/index.ts';
import { startKuryrEnv, type KuryrEnv } from '../../kuryr/testing/env.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { createLogger } from '../../lib/log.ts';
import { ExitCodeError } from '../context.ts';
import { configureKuryrGc } from './kuryr-gc.ts';

const TAG = 'kuryr-cluster:gc-test';

describe('shiftstack kuryr gc', () => {
  let env: KuryrEnv;
  let clouds: string;
  const planted: Record<string, string> = {};

  async function gc(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const command = new Command('gc').exitOverride();
    configureKuryrGc(command, {
      out: (t) => out.push(t),
      err: (t) => err.push(t),
      log: () => createLogger({ level: 'silent' }),
      signal: AbortSignal.timeout(60_000),
    });
    let code = 0;
    try {
      await command.parseAsync(
        ['--kubeconfig', env.kube.kubeconfigPath, '--clouds-yaml', clouds, '--os-cloud', 'demo', ...args],
        { from: 'user' },
      );
    } catch (e) {
      if (!(e instanceof ExitCodeError)) throw e;
      code = e.code;
    }
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  const exists = async (get: () => Promise<unknown>) =>
    get().then(
      () => true,
      (e: unknown) => {
        if (isNotFound(e)) return false;
        throw e;
      },
    );

  before(async () => {
    env = await startKuryrEnv({ nodes: 0 });
    clouds = await writeCloudsYaml(env.sim, env.dir);
    const net = env.os.network;
    const tag = (r: 'ports' | 'networks' | 'subnets', id: string, t = TAG) => net.tags.replace(r, id, [t]);
    const pods = env.net.pods.networkId;

    const orphanPort = await net.ports.create({ network_id: pods, name: 'orphan-port' });
    await tag('ports', orphanPort.id);
    planted.orphanPort = orphanPort.id;
    const podPort = await net.ports.create({ network_id: pods, name: 'pod-port' });
    await tag('ports', podPort.id);
    planted.podPort = podPort.id;
    const parent = await net.ports.create({ network_id: env.net.nodes.networkId });
    const pooled = await net.ports.create({ network_id: pods, name: 'kuryr-pool-port' });
    await tag('ports', pooled.id);
    await net.trunks.create({
      port_id: parent.id,
      sub_ports: [{ port_id: pooled.id, segmentation_type: 'vlan', segmentation_id: 100 }],
    });
    planted.pooled = pooled.id;
    planted.untagged = (await net.ports.create({ network_id: pods, name: 'users' })).id;
    const foreign = await net.ports.create({ network_id: pods, name: 'other-cluster' });
    await tag('ports', foreign.id, 'kuryr-cluster:other');
    planted.foreign = foreign.id;

    const orphanNet = await net.networks.create({ name: 'orphan-ns' });
    await tag('networks', orphanNet.id);
    const orphanSubnet = await net.subnets.create({
      network_id: orphanNet.id,
      cidr: '10.250.0.0/24',
      ip_version: 4,
    });
    await tag('subnets', orphanSubnet.id);
    await net.routers.addInterface(env.net.routerId, { subnet_id: orphanSubnet.id });
    planted.orphanNet = orphanNet.id;
    planted.orphanSubnet = orphanSubnet.id;
    const liveNet = await net.networks.create({ name: 'live-ns' });
    await tag('networks', liveNet.id);
    const liveSubnet = await net.subnets.create({
      network_id: liveNet.id,
      cidr: '10.251.0.0/24',
      ip_version: 4,
    });
    await tag('subnets', liveSubnet.id);
    planted.liveNet = liveNet.id;

    const lb = env.os.loadBalancer.loadBalancers;
    const orphanLb = await lb.create({
      name: 'orphan-lb',
      vip_subnet_id: env.net.services.subnetId,
      tags: [TAG],
    });
    const liveLb = await lb.create({
      name: 'live-lb',
      vip_subnet_id: env.net.services.subnetId,
      tags: [TAG],
    });
    planted.orphanLb = orphanLb.id;
    planted.liveLb = liveLb.id;
    for (const id of [orphanLb.id, liveLb.id]) {
      await eventually(async () => (await lb.get(id)).provisioning_status === 'ACTIVE', {
        what: `lb ${id} ACTIVE`,
      });
    }

    await env.ensureNamespace('apps');
    await env.api.create(kuryrKinds.KuryrPort, {
      apiVersion: 'openstack.org/v1',
      kind: 'KuryrPort',
      metadata: { name: 'web-0', namespace: 'apps' },
      spec: { podUid: 'u-1', podNodeName: 'worker-0' },
      status: {
        vifs: {
          eth0: {
            default: true,
            vif: vifPrimitive({
              id: podPort.id,
              address: podPort.mac_address,
              vifName: vifName(podPort.id),
              vlanId: 101,
              active: true,
              network: { id: pods, subnets: [] },
            }),
          },
        },
      },
    } as never);
    await env.api.create(kuryrKinds.KuryrNetwork, {
      apiVersion: 'openstack.org/v1',
      kind: 'KuryrNetwork',
      metadata: { name: 'apps', namespace: 'apps' },
      spec: { nsName: 'apps', projectId: env.projectId, nsLabels: {} },
      status: { netId: liveNet.id, subnetId: liveSubnet.id },
    });
    await env.api.create(kuryrKinds.KuryrLoadBalancer, {
      apiVersion: 'openstack.org/v1',
      kind: 'KuryrLoadBalancer',
      metadata: { name: 'web', namespace: 'apps' },
      spec: {},
      status: {
        loadbalancer: {
          id: liveLb.id,
          ip: liveLb.vip_address,
          name: liveLb.name,
          port_id: liveLb.vip_port_id,
          project_id: env.projectId,
          provider: liveLb.provider,
          security_groups: [],
          subnet_id: env.net.services.subnetId,
        },
      },
    });
  });
  after(async () => env?.close());

  it('leaves objects younger than --min-age (default 10m) alone', async () => {
    const r = await gc('--cluster-name', 'gc-test');
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, '');
    assert.match(r.err, /no orphans tagged kuryr-cluster:gc-test/);
  });

  it('lists exactly the orphans on a dry run and deletes nothing', async () => {
    const r = await gc('--cluster-name', 'gc-test', '--min-age', '0s', '-o', 'json');
    assert.equal(r.code, 0, r.err);
    const listed = (JSON.parse(r.out) as { kind: string; id: string }[])
      .map((o) => `${o.kind}:${o.id}`)
      .sort();
    assert.deepEqual(
      listed,
      [
        `loadbalancer:${planted.orphanLb}`,
        `network:${planted.orphanNet}`,
        `port:${planted.orphanPort}`,
      ].sort(),
    );
    assert.ok(await exists(() => env.os.network.ports.get(planted.orphanPort!)));
    assert.ok(await exists(() => env.os.network.networks.get(planted.orphanNet!)));
    const table = await gc('--resource-tag', TAG, '--min-age', '0s');
    assert.match(table.out, /^KIND +ID +NAME +REASON$/m);
    assert.match(table.out, new RegExp(`^port +${planted.orphanPort} +orphan-port +tagged ours`, 'm'));
    assert.match(table.err, /3 orphan\(s\); run again with --delete/);
  });

  it('--delete removes exactly the orphans, the network with its subnet and router interface', async () => {
    const r = await gc('--cluster-name', 'gc-test', '--min-age', '0s', '--delete');
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out.split('\n').filter((l) => / deleted$/.test(l)).length, 3, r.out);
    const net = env.os.network;
    assert.equal(await exists(() => net.ports.get(planted.orphanPort!)), false);
    assert.equal(await exists(() => net.networks.get(planted.orphanNet!)), false);
    assert.equal(await exists(() => net.subnets.get(planted.orphanSubnet!)), false);
    await eventually(
      async () => !(await exists(() => env.os.loadBalancer.loadBalancers.get(planted.orphanLb!))),
      {
        what: 'the orphaned load balancer gone',
      },
    );
    for (const id of [planted.podPort, planted.pooled, planted.untagged, planted.foreign])
      assert.ok(await exists(() => net.ports.get(id!)), `port ${id} kept`);
    assert.ok(await exists(() => net.networks.get(planted.liveNet!)), 'the recorded network kept');
    assert.ok(
      await exists(() => env.os.loadBalancer.loadBalancers.get(planted.liveLb!)),
      'the recorded LB kept',
    );
    const again = await gc('--cluster-name', 'gc-test', '--min-age', '0s');
    assert.equal(again.out, '', 'nothing left to collect');
  });
});
