import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event, V1Node } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import type { Server } from '../../openstack/compute/v2/servers.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { LABEL_INSTANCE_TYPE, LABEL_REGION, LABEL_ZONE } from '../node-metadata.ts';
import {
  LABEL_BETA_INSTANCE_TYPE,
  LABEL_BETA_REGION,
  LABEL_BETA_ZONE,
  TAINT_UNINITIALIZED,
} from '../node-spec.ts';
import { counterValue, startCcmEnv, type CcmEnv } from '../testing/env.ts';

const wait = { timeoutMs: 15_000, intervalMs: 20 };

/** `eventually`, typed to what it found. */
async function until<T>(fn: () => Promise<T | undefined | false>, what: string): Promise<T> {
  return (await eventually(fn, { ...wait, what })) as T;
}

describe('cloud-node controller (end to end: kube and OpenStack emulators)', () => {
  let env: CcmEnv;
  before(async () => {
    // Servers stay in BUILD long enough for the controller to see it.
    env = await startCcmEnv({ overrides: { transitions: { 'nova.server.build': 300 } } });
  });
  after(async () => {
    await env?.close();
  });

  async function network(name: string, cidr: string, v6?: string) {
    const net = await env.os.network.networks.create({ name });
    await env.os.network.subnets.create({ network_id: net.id, cidr, ip_version: 4 });
    if (v6) await env.os.network.subnets.create({ network_id: net.id, cidr: v6, ip_version: 6 });
    return net;
  }

  async function server(name: string, networkIds: string[], wantActive = true): Promise<Server> {
    const ports = [];
    for (const id of networkIds) ports.push(await env.os.network.ports.create({ network_id: id }));
    const created = await env.os.compute.servers.create({
      name,
      flavorRef: env.boot.flavorId,
      imageRef: env.boot.imageId,
      networks: ports.map((p) => ({ port: p.id })),
    });
    if (!wantActive) return env.os.compute.servers.get(created.id);
    await env.os.compute.servers.waitForActive(created.id, { intervalMs: 20, timeoutMs: 10_000 });
    // Ports turn ACTIVE once bound: wait, so the addresses are the settled ones.
    await eventually(
      async () =>
        (await env.os.network.ports.list({ device_id: created.id }).all()).every(
          (p) => p.status === 'ACTIVE',
        ),
      { ...wait, what: 'ports ACTIVE' },
    );
    return env.os.compute.servers.get(created.id);
  }

  const initialized = (name: string) =>
    until<V1Node>(async () => {
      const n = await env.api.get(kinds.Node, { name });
      const done = !(n.spec?.taints ?? []).some((t) => t.key === TAINT_UNINITIALIZED);
      return done && (n.status?.addresses ?? []).length > 0 ? n : undefined;
    }, `node ${name} initialized`);

  async function events(name: string): Promise<EventsV1Event[]> {
    const list = await env.api.listAll(kinds.EventsV1Event, { namespace: 'default' });
    return list.items.filter((e) => e.regarding?.name === name);
  }

  it('initializes a Node: providerID, labels, addresses of two ports with a public network, taint removed', async () => {
    const nodes = await network('cn-nodes', '10.20.0.0/24');
    const pub = await network('cn-public', '172.30.0.0/24');
    const s = await server('worker-a', [nodes.id, pub.id]);
    const conf = await env.cloudConf('[Networking]\npublic-network-name = cn-public\n');
    const ccm = await env.startCcm({ cloudConfig: conf, controllers: ['cloud-node'] });
    try {
      await env.createNode('worker-a', {
        spec: {
          taints: [
            { key: TAINT_UNINITIALIZED, value: 'true', effect: 'NoSchedule' },
            { key: 'example.com/other', effect: 'NoExecute' },
          ],
        },
      });
      const node = await initialized('worker-a');
      assert.equal(node.spec?.providerID, `openstack:///${s.id}`);
      assert.deepEqual(node.spec?.taints, [{ key: 'example.com/other', effect: 'NoExecute' }]);
      const flavor = (s.flavor as { original_name?: string }).original_name;
      assert.ok(flavor);
      const zone = s['OS-EXT-AZ:availability_zone'];
      assert.ok(zone);
      const labels = node.metadata?.labels ?? {};
      assert.equal(labels[LABEL_INSTANCE_TYPE], flavor);
      assert.equal(labels[LABEL_BETA_INSTANCE_TYPE], flavor);
      assert.equal(labels[LABEL_ZONE], zone);
      assert.equal(labels[LABEL_BETA_ZONE], zone);
      assert.equal(labels[LABEL_REGION], 'RegionOne');
      assert.equal(labels[LABEL_BETA_REGION], 'RegionOne');
      const a = s.addresses['cn-nodes']![0]!.addr;
      const b = s.addresses['cn-public']![0]!.addr;
      assert.deepEqual(node.status?.addresses, [
        { type: 'InternalIP', address: a },
        { type: 'ExternalIP', address: b },
      ]);
      const synced = await until<EventsV1Event>(
        async () => (await events('worker-a')).find((e) => e.reason === 'Synced'),
        'Synced event',
      );
      assert.equal(synced.note, 'Node synced successfully');
    } finally {
      await ccm.stop();
    }
  });

  it('leaves IPv6 addresses out with ipv6-support-disabled', async () => {
    const dual = await network('cn-dual', '10.21.0.0/24', 'fd00:21::/64');
    const s = await server('worker-v6', [dual.id]);
    const all = s.addresses['cn-dual']!.map((x) => x.addr);
    assert.ok(
      all.some((x) => x.includes(':')),
      'the server has an IPv6 address',
    );
    const conf = await env.cloudConf('[Networking]\nipv6-support-disabled = true\n');
    const ccm = await env.startCcm({ cloudConfig: conf, controllers: ['cloud-node'] });
    try {
      await env.createNode('worker-v6');
      const node = await initialized('worker-v6');
      assert.deepEqual(node.status?.addresses, [
        { type: 'InternalIP', address: all.find((x) => !x.includes(':'))! },
      ]);
    } finally {
      await ccm.stop();
    }
  });

  it('writes the regional providerID with OS_CCM_REGIONAL=true', async () => {
    const net = await network('cn-regional', '10.22.0.0/24');
    const s = await server('worker-r', [net.id]);
    const ccm = await env.startCcm({ controllers: ['cloud-node'] }, { OS_CCM_REGIONAL: 'true' });
    try {
      await env.createNode('worker-r');
      const node = await initialized('worker-r');
      assert.equal(node.spec?.providerID, `openstack://RegionOne/${s.id}`);
    } finally {
      await ccm.stop();
    }
  });

  it('keeps a Node whose server does not exist yet uninitialized, then initializes it once ACTIVE', async () => {
    const net = await network('cn-late', '10.23.0.0/24');
    const ccm = await env.startCcm({ controllers: ['cloud-node'] });
    try {
      await env.createNode('worker-late');
      const warning = await until<EventsV1Event>(
        async () => (await events('worker-late')).find((e) => e.reason === 'NodeInstanceNotFound'),
        'NodeInstanceNotFound event',
      );
      assert.equal(warning.type, 'Warning');
      const before = await env.api.get(kinds.Node, { name: 'worker-late' });
      assert.ok((before.spec?.taints ?? []).some((t) => t.key === TAINT_UNINITIALIZED));
      const s = await server('worker-late', [net.id], false);
      assert.equal(s.status, 'BUILD');
      const node = await initialized('worker-late');
      assert.equal(node.spec?.providerID, `openstack:///${s.id}`);
    } finally {
      await ccm.stop();
    }
  });

  it('refreshes addresses on its period: no write while nothing changes, one write when an address does', async () => {
    const net = await network('cn-refresh', '10.24.0.0/24');
    const s = await server('worker-p', [net.id]);
    const ccm = await env.startCcm({ controllers: ['cloud-node'], nodeStatusUpdateFrequencyMs: 50 });
    const writes: string[] = [];
    const remove = env.kube.emulator.reactors.prepend('*', 'nodes', (action) => {
      if (action.name === 'worker-p' && ['patch', 'update'].includes(action.verb)) {
        writes.push(`${action.verb} ${action.subresource}`);
      }
      return { handled: false };
    });
    try {
      await env.createNode('worker-p');
      await initialized('worker-p');
      const reads = () =>
        counterValue(ccm.registry, 'controller_runtime_reconcile_total', { controller: 'cloud-node' });
      // Initialization: the spec patch (providerID, labels, taint) and the status patch.
      await eventually(() => writes.length === 2, { ...wait, what: 'the two initialization writes' });
      const settled = await reads();
      await eventually(async () => (await reads()) >= settled + 5, { ...wait, what: 'five refreshes' });
      assert.deepEqual(writes, ['patch ', 'patch status']);

      await env.os.compute.servers.update(s.id, { accessIPv4: '203.0.113.9' });
      const node = await until<V1Node>(async () => {
        const n = await env.api.get(kinds.Node, { name: 'worker-p' });
        return n.status?.addresses?.some((x) => x.address === '203.0.113.9') ? n : undefined;
      }, 'the new address');
      assert.deepEqual(node.status?.addresses?.at(-1), { type: 'ExternalIP', address: '203.0.113.9' });
      const after = await reads();
      await eventually(async () => (await reads()) >= after + 5, { ...wait, what: 'five more refreshes' });
      assert.deepEqual(writes, ['patch ', 'patch status', 'patch status']);
    } finally {
      remove();
      await ccm.stop();
    }
  });

  it('with two leader-elected managers, only the leader initializes', async () => {
    const net = await network('cn-leader', '10.25.0.0/24');
    await server('worker-l', [net.id]);
    const election = {
      controllers: ['cloud-node'],
      leaderElect: true,
      leaseName: 'ccm-test',
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 500,
    };
    const one = await env.startCcm(election);
    const two = await env.startCcm(election);
    try {
      await env.createNode('worker-l');
      await initialized('worker-l');
      const leaders = [one, two].filter((c) => c.ccm.manager.isLeader());
      assert.equal(leaders.length, 1);
      const follower = leaders[0] === one ? two : one;
      assert.equal(
        await counterValue(follower.registry, 'controller_runtime_reconcile_total', {
          controller: 'cloud-node',
        }),
        0,
      );
      await eventually(async () => (await events('worker-l')).some((e) => e.reason === 'Synced'), wait);
      assert.equal((await events('worker-l')).filter((e) => e.reason === 'Synced').length, 1);
    } finally {
      await one.stop();
      await two.stop();
    }
  });
});
