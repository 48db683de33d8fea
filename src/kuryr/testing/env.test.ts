/**
 * The bed itself: each worker's primary port is its trunk's parent, its Node names the server, and
 * the default options point at the bed's pod and service subnets — what every kuryr test stands on.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kinds } from '../../kube/index.ts';
import { startKuryrEnv, type KuryrEnv } from './env.ts';

describe('kuryr test bed', () => {
  let env: KuryrEnv;
  before(async () => {
    env = await startKuryrEnv({ nodes: 2 });
  });
  after(async () => {
    await env?.close();
  });

  it('has workers with a trunk on their primary port and a Node naming their server', async () => {
    assert.equal(env.workers.length, 2);
    for (const w of env.workers) {
      const trunk = await env.os.network.trunks.get(w.trunkId);
      assert.equal(trunk.port_id, w.parentPortId);
      const server = await env.os.compute.servers.get(w.serverId);
      assert.equal(server.status, 'ACTIVE');
      const node = await env.api.get(kinds.Node, { name: w.name });
      assert.equal(node.spec?.providerID, `openstack:///${w.serverId}`);
      assert.equal(node.status?.addresses?.find((a) => a.type === 'InternalIP')?.address, w.address);
    }
  });

  it('points the default options at its subnets, and a started context reads the pod subnet', async () => {
    assert.equal(env.options.neutronDefaults.podSubnet, env.net.pods.subnetId);
    assert.equal(env.options.kubernetes.podSubnetsDriver, 'default');
    const running = await env.startKuryr({ controllers: [] });
    try {
      const subnet = await running.ctx.subnets.forPod({}, AbortSignal.timeout(10_000));
      assert.deepEqual(subnet, {
        networkId: env.net.pods.networkId,
        subnetId: env.net.pods.subnetId,
        cidr: env.net.pods.cidr,
        gateway: '10.128.0.1',
        mtu: (await env.os.network.networks.get(env.net.pods.networkId)).mtu,
      });
      assert.deepEqual(running.ctx.tags, ['kuryr-cluster:kubernetes']);
      assert.deepEqual(await running.ctx.securityGroups.forPod({}, AbortSignal.timeout(1000)), [
        env.net.podSecurityGroupId,
      ]);
    } finally {
      await running.stop();
    }
  });
});
