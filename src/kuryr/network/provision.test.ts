/**
 * A namespace network made and removed step by step against the emulated Neutron, and the same
 * killed right after each of its writes (the write took effect, its answer is lost, the status
 * never heard of it): a restart that starts from the recorded status alone ends with exactly one
 * network, one subnet from the pool and one router interface, and removal then leaves nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { OpenStackClient } from '../../openstack/client.ts';
import { openClientTargetOn, silentLog, type ClientTarget } from '../../openstack/core/testing/target.ts';
import { Killed, killable } from '../../openstack/services/testing/kill.ts';
import { startTestCloud } from '../../sim/openstack/testing/harness.ts';
import { namespaceResourceName, type NamespaceRef } from './names.ts';
import { provisionStep, type NamespaceNetworkSettings, type NamespaceNetworkStatus } from './provision.ts';
import { teardownNamespaceNetwork } from './teardown.ts';

const TAGS = ['kuryr-cluster-test'];

/** The kill, as thrown or as the cause of the step's error. */
const killedWrite = (err: unknown): boolean =>
  err instanceof Killed || (err instanceof Error && err.cause instanceof Killed);

describe('kuryr namespace network: provision and teardown', () => {
  let target: ClientTarget;
  let os: OpenStackClient;
  let settings: NamespaceNetworkSettings;
  const signal = new AbortController().signal;

  before(async () => {
    const sim = await startTestCloud();
    target = await openClientTargetOn(sim);
    os = await target.client(target.demo, { log: silentLog });
    const projectId = (await os.session.token()).token.project!.id;
    const pool = await os.network.subnetPools.create({
      name: 'pods',
      prefixes: ['10.128.0.0/14'],
      default_prefixlen: 23,
    });
    const router = await os.network.routers.create({ name: 'pods' });
    settings = { projectId, subnetPoolId: pool.id, routerId: router.id, mtu: 1400, tags: TAGS };
  });
  after(async () => target?.close());

  /** Steps until ready, recording each outcome as the controller's status write would. */
  async function provision(
    api: OpenStackClient,
    ns: NamespaceRef,
    status: NamespaceNetworkStatus,
  ): Promise<NamespaceNetworkStatus> {
    for (let i = 0; i < 10; i++) {
      const step = await provisionStep(api.network, ns, status, settings, signal);
      if (step.kind === 'ready') return status;
      Object.assign(status, step.status);
    }
    throw new Error('provisioning did not converge');
  }

  async function teardown(
    api: OpenStackClient,
    ns: NamespaceRef,
    status: NamespaceNetworkStatus,
  ): Promise<void> {
    for (let i = 0; i < 10; i++) {
      const r = await teardownNamespaceNetwork(api.network, ns, status, settings, {
        referencedPorts: new Set(),
        signal,
      });
      if (r.kind === 'done') return;
    }
    throw new Error('teardown did not converge');
  }

  async function census(ns: NamespaceRef) {
    const name = namespaceResourceName(ns);
    const networks = await os.network.networks.list({ name }).all();
    const subnets = await os.network.subnets.list({ name }).all();
    const interfaces = await os.network.ports
      .list({ device_id: settings.routerId, device_owner: 'network:router_interface' })
      .all();
    return {
      networks,
      subnets,
      interfaces: interfaces.filter((p) =>
        subnets.some((s) => p.fixed_ips.some((f) => f.subnet_id === s.id)),
      ),
    };
  }

  it('makes a tagged network with the MTU, a subnet from the pool and a router interface, then removes them', async () => {
    const ns = { name: 'team-a', uid: crypto.randomUUID() };
    const status = await provision(os, ns, {});
    const net = await os.network.networks.get(status.netId!);
    assert.equal(net.name, `${ns.uid}/team-a`);
    assert.equal(net.mtu, 1400);
    assert.deepEqual(net.tags, TAGS);
    const subnet = await os.network.subnets.get(status.subnetId!);
    assert.equal(subnet.subnetpool_id, settings.subnetPoolId);
    assert.equal(subnet.cidr, status.subnetCIDR);
    assert.match(subnet.cidr, /^10\.1(2[89]|3[01])\.\d+\.0\/23$/);
    assert.equal(subnet.enable_dhcp, false);
    assert.deepEqual(subnet.tags, TAGS);
    assert.equal(status.routerId, settings.routerId);
    assert.equal(status.populated, false);
    assert.equal((await census(ns)).interfaces.length, 1);
    // Steady state: nothing more to do, nothing written.
    const counted = killable(os, () => false);
    assert.deepEqual(await provisionStep(counted.api.network, ns, status, settings, signal), {
      kind: 'ready',
    });
    assert.equal(counted.writes(), 0);

    await teardown(os, ns, status);
    assert.deepEqual(await census(ns), { networks: [], subnets: [], interfaces: [] });
  });

  it('killed after each write of a create, then of a removal: one of each, then nothing', async (t) => {
    const probe = { name: 'probe', uid: crypto.randomUUID() };
    const counting = killable(os, () => false);
    const probeStatus = await provision(counting.api, probe, {});
    const creates = counting.writes();
    const removing = killable(os, () => false);
    await teardown(removing.api, probe, probeStatus);
    const removals = removing.writes();
    // network, its tags, subnet, its tags, router interface / interface off, network delete.
    assert.equal(creates, 5, counting.log().join(','));
    assert.equal(removals, 2, removing.log().join(','));
    t.diagnostic(`killed after each of ${creates} create writes and ${removals} removal writes`);

    for (let k = 1; k <= creates; k++) {
      const ns = { name: `crash-${k}`, uid: crypto.randomUUID() };
      const status: NamespaceNetworkStatus = {};
      const killed = killable(os, (_m, count) => count >= k);
      await assert.rejects(provision(killed.api, ns, status), killedWrite);
      // Restarted: only what was recorded.
      await provision(os, ns, status);
      const c = await census(ns);
      assert.equal(c.networks.length, 1, `k=${k}: one network`);
      assert.equal(c.subnets.length, 1, `k=${k}: one subnet`);
      assert.equal(c.interfaces.length, 1, `k=${k}: one router interface`);
      assert.deepEqual(c.networks[0]!.tags, TAGS, `k=${k}: the network is tagged`);
      assert.deepEqual(c.subnets[0]!.tags, TAGS, `k=${k}: the subnet is tagged`);

      // Its removal killed after one of its writes too (each j in turn), then restarted.
      const j: number = ((k - 1) % removals) + 1;
      const dying = killable(os, (_m, count) => count >= j);
      await assert.rejects(teardown(dying.api, ns, { ...status }), killedWrite);
      await teardown(os, ns, status);
      assert.deepEqual(
        await census(ns),
        { networks: [], subnets: [], interfaces: [] },
        `k=${k}, removal killed after write ${j}: nothing left`,
      );
    }
  });

  it('finds a network whose create was never recorded and removes only that one', async () => {
    const ns = { name: 'lost', uid: crypto.randomUUID() };
    const killed = killable(os, (_m, count) => count >= 1);
    await assert.rejects(provision(killed.api, ns, {}), killedWrite);
    // Another namespace of the same name (recreated): a different uid, never touched.
    const other = { name: 'lost', uid: crypto.randomUUID() };
    const otherStatus = await provision(os, other, {});
    await teardown(os, ns, {});
    assert.equal((await census(ns)).networks.length, 0);
    assert.equal((await census(other)).networks.length, 1);
    await teardown(os, other, otherStatus);
  });
});
