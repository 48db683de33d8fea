/**
 * Namespace networks end to end on both emulators: a namespace's first pod asks the namespace
 * driver for its subnet and gets a Pending while the KuryrNetwork it created is being served; the
 * kuryrnetwork controller makes the network, subnet (from the pool) and router interface; labels
 * follow the namespace; deleting the namespace leaves nothing of ours in the cloud.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { kuryrKinds, type KuryrNetwork } from '../api/index.ts';
import { isPending, type PodSubnet } from '../drivers.ts';
import { startKuryrEnv, type KuryrEnv, type RunningKuryr } from '../testing/env.ts';

describe('kuryr namespace networks: the namespace driver and the namespace and kuryrnetwork controllers', () => {
  let env: KuryrEnv;
  let kuryr: RunningKuryr;
  let poolId: string;
  const signal = AbortSignal.timeout(120_000);

  before(async () => {
    env = await startKuryrEnv({ nodes: 0 });
    poolId = (
      await env.os.network.subnetPools.create({
        name: 'kuryr-pods',
        prefixes: ['10.132.0.0/14'],
        default_prefixlen: 24,
      })
    ).id;
    kuryr = await env.startKuryr({
      controllers: ['namespace', 'kuryrnetwork'],
      options: {
        kubernetes: { podSubnetsDriver: 'namespace' },
        namespaceSubnet: { podSubnetPool: poolId, podRouter: env.net.routerId },
        neutronDefaults: { networkDeviceMtu: 1400 },
      },
    });
  });
  after(async () => {
    await kuryr?.stop();
    await env?.close();
  });

  const podIn = (namespace: string): V1Pod => ({ metadata: { name: 'p', namespace } });
  const knsOf = (ns: string) => env.api.get(kuryrKinds.KuryrNetwork, { namespace: ns, name: ns });
  const ours = async () => {
    const tags = [...kuryr.ctx.tags];
    return {
      networks: await env.admin.network.networks.list({ tags }).all(),
      subnets: await env.admin.network.subnets.list({ tags }).all(),
    };
  };

  it('makes a namespace network when the first pod asks, and frees it with the namespace', async () => {
    assert.equal(kuryr.ctx.subnets.name, 'namespace');
    await env.ensureNamespace('team-a', { team: 'a' });
    const ns = await env.api.get(kinds.Namespace, { name: 'team-a' });
    await assert.rejects(knsOf('team-a'), /not found/i, 'no KuryrNetwork before a pod needs it');

    const first = await kuryr.ctx.subnets.forPod(podIn('team-a'), signal);
    assert.ok(isPending(first), JSON.stringify(first));
    const subnet = (await eventually(
      async () => {
        const r = await kuryr.ctx.subnets.forPod(podIn('team-a'), signal);
        return isPending(r) ? undefined : r;
      },
      { timeoutMs: 30_000, what: 'the namespace subnet' },
    )) as PodSubnet;
    const kns: KuryrNetwork = await knsOf('team-a');
    assert.equal(kns.spec.nsName, 'team-a');
    assert.equal(kns.spec.projectId, env.projectId);
    assert.equal((kns.spec.nsLabels as Record<string, string>).team, 'a');
    assert.deepEqual(kns.metadata?.finalizers, ['kuryrnetwork.finalizers.kuryr.openstack.org']);
    assert.equal(kns.metadata?.ownerReferences?.[0]?.uid, ns.metadata?.uid, JSON.stringify(kns.metadata));
    assert.equal(kns.status?.subnetId, subnet.subnetId);
    assert.equal(kns.status?.netId, subnet.networkId);
    assert.equal(kns.status?.subnetCIDR, subnet.cidr);
    assert.equal(kns.status?.routerId, env.net.routerId);
    assert.match(subnet.cidr, /^10\.13[2-5]\.\d+\.0\/24$/);
    assert.equal(subnet.gateway, subnet.cidr.replace(/0\/24$/, '1'));
    assert.equal(subnet.mtu, 1400);

    const net = await env.os.network.networks.get(subnet.networkId);
    assert.equal(net.name, `${ns.metadata?.uid}/team-a`);
    assert.deepEqual(net.tags, [...kuryr.ctx.tags]);
    const neutronSubnet = await env.os.network.subnets.get(subnet.subnetId);
    assert.equal(neutronSubnet.subnetpool_id, poolId);
    const iface = await env.os.network.ports
      .list({ device_id: env.net.routerId, fixed_ips: [{ subnet_id: subnet.subnetId }] })
      .all();
    assert.equal(iface.length, 1, 'one router interface on the namespace subnet');

    // Labels follow the namespace, into the spec and then the status.
    await env.api.patch(kinds.Namespace, { name: 'team-a' }, 'merge', {
      metadata: { labels: { team: null, tier: 'gold' } },
    });
    await eventually(
      async () => {
        const k = await knsOf('team-a');
        const labels = k.status?.nsLabels as Record<string, string> | undefined;
        return (
          labels?.tier === 'gold' &&
          !('team' in labels) &&
          (k.spec.nsLabels as Record<string, string>).tier === 'gold'
        );
      },
      { timeoutMs: 30_000, what: 'nsLabels following the namespace' },
    );

    // A second namespace gets its own block of the pool.
    await env.ensureNamespace('team-b');
    const b = (await eventually(
      async () => {
        const r = await kuryr.ctx.subnets.forNamespace('team-b', signal);
        return isPending(r) ? undefined : r;
      },
      { timeoutMs: 30_000, what: 'team-b subnet' },
    )) as PodSubnet;
    assert.notEqual(b.cidr, subnet.cidr);
    assert.equal((await ours()).networks.length, 2);

    await env.api.delete(kinds.Namespace, { name: 'team-a' });
    await env.api.delete(kinds.Namespace, { name: 'team-b' });
    await eventually(
      async () => (await ours()).networks.length === 0 && (await ours()).subnets.length === 0,
      {
        timeoutMs: 60_000,
        what: 'the namespace networks gone',
      },
    );
    await eventually(
      async () => {
        const left = await env.api.list(kuryrKinds.KuryrNetwork, {});
        return left.items.length === 0;
      },
      { timeoutMs: 60_000, what: 'the KuryrNetworks gone' },
    );
    const routerPorts = await env.os.network.ports.list({ device_id: env.net.routerId }).all();
    assert.ok(
      routerPorts.every(
        (p) => !p.fixed_ips.some((f) => f.subnet_id === subnet.subnetId || f.subnet_id === b.subnetId),
      ),
      'no interface left on the router',
    );
    assert.equal(
      (await env.os.network.subnetPools.get(poolId)).id,
      poolId,
      'the pool itself is not ours to delete',
    );
  });
});
