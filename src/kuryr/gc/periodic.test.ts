/**
 * Upstream's periodic cleanups against the emulated Neutron: what each pass deletes, and above all
 * what it leaves (anything untagged but a dead kuryr port in a kuryr network, anything on a live
 * trunk, anything seen once).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../lib/clock.ts';
import type { OpenStackClient } from '../../openstack/client.ts';
import { isNotFound } from '../../openstack/core/errors.ts';
import { openClientTargetOn, silentLog, type ClientTarget } from '../../openstack/core/testing/target.ts';
import { startTestCloud } from '../../sim/openstack/testing/harness.ts';
import { PeriodicCleanups, runPeriodicCleanups, type RecordedNetwork } from './periodic.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';

const TAGS = ['kuryr-cluster-periodic'];
/** Ten minutes and more from now: everything made in the test is past ZOMBIE_AGE. */
const later = { ...systemClock, now: () => Date.now() + 700_000 };

describe('kuryr periodic cleanups', () => {
  let target: ClientTarget;
  let os: OpenStackClient;
  const signal = new AbortController().signal;

  before(async () => {
    target = await openClientTargetOn(await startTestCloud());
    os = await target.client(target.demo, { log: silentLog });
  });
  after(async () => target?.close());

  const exists = async (get: () => Promise<unknown>) => {
    try {
      await get();
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  };
  const portExists = (id: string) => exists(() => os.network.ports.get(id));
  const tag = (resource: 'networks' | 'subnets' | 'ports', id: string) =>
    os.network.tags.replace(resource, id, TAGS);

  it('dead resources: untagged DOWN kuryr ports in kuryr networks, tagged networks nobody records', async () => {
    const net = await os.network.networks.create({ name: 'kns' });
    await tag('networks', net.id);
    const subnet = await os.network.subnets.create({
      network_id: net.id,
      cidr: '10.200.0.0/24',
      ip_version: 4,
    });
    await tag('subnets', subnet.id);
    const extra = await os.network.subnets.create({
      network_id: net.id,
      cidr: '10.200.1.0/24',
      ip_version: 4,
    });
    const dead = await os.network.ports.create({ network_id: net.id, device_owner: 'compute:kuryr' });
    const tagged = await os.network.ports.create({ network_id: net.id, device_owner: 'compute:kuryr' });
    await tag('ports', tagged.id);
    const foreign = await os.network.ports.create({ network_id: net.id, device_owner: 'compute:nova' });
    const unrecorded = await os.network.networks.create({ name: 'gone-ns' });
    await tag('networks', unrecorded.id);
    const busy = await os.network.networks.create({ name: 'busy' });
    await tag('networks', busy.id);
    await os.network.subnets.create({ network_id: busy.id, cidr: '10.201.0.0/24', ip_version: 4 });
    const busyPort = await os.network.ports.create({ network_id: busy.id });
    const users = await os.network.networks.create({ name: 'not-ours' });

    const recorded: RecordedNetwork[] = [{ netId: net.id, subnetId: subnet.id }];
    const cleanups = new PeriodicCleanups({
      os,
      tags: TAGS,
      recordedNetworks: () => recorded,
      clock: later,
      log: silentLog,
    });
    const report = await cleanups.deadResources(signal);
    assert.deepEqual(
      report.deleted.map((d) => `${d.kind}:${d.id}`).sort(),
      [`network:${unrecorded.id}`, `port:${dead.id}`, `subnet:${extra.id}`].sort(),
    );
    assert.deepEqual(report.failed, []);
    for (const id of [tagged.id, foreign.id, busyPort.id]) assert.ok(await portExists(id), id);
    for (const id of [net.id, busy.id, users.id])
      assert.ok(await exists(() => os.network.networks.get(id)), id);
    assert.ok(await exists(() => os.network.subnets.get(subnet.id)));

    // Nothing is old enough when the clock says now.
    const now = new PeriodicCleanups({
      os,
      tags: TAGS,
      recordedNetworks: () => recorded,
      clock: systemClock,
      log: silentLog,
    });
    const n2 = await os.network.networks.create({ name: 'young' });
    await tag('networks', n2.id);
    assert.deepEqual((await now.deadResources(signal)).deleted, []);
  });

  it('removed nodes: detached subports of our pod subnets go on the second sighting, trunk members never', async () => {
    const pool = await os.network.subnetPools.create({ prefixes: ['10.210.0.0/16'], default_prefixlen: 24 });
    const net = await os.network.networks.create({ name: 'kns-nodes' });
    const subnet = await os.network.subnets.create({
      network_id: net.id,
      ip_version: 4,
      subnetpool_id: pool.id,
    });
    await tag('subnets', subnet.id);
    const detached = await os.network.ports.create({ network_id: net.id });
    await tag('ports', detached.id);
    const unbound = await os.network.ports.create({ network_id: net.id, device_owner: 'compute:kuryr' });
    await tag('ports', unbound.id);
    const parent = await os.network.ports.create({ network_id: net.id });
    const member = await os.network.ports.create({ network_id: net.id });
    await tag('ports', member.id);
    await os.network.trunks.create({
      port_id: parent.id,
      sub_ports: [{ port_id: member.id, segmentation_type: 'vlan', segmentation_id: 101 }],
    });
    const untaggedNet = await os.network.networks.create({ name: 'elsewhere' });
    await os.network.subnets.create({ network_id: untaggedNet.id, cidr: '10.211.0.0/24', ip_version: 4 });
    const elsewhere = await os.network.ports.create({ network_id: untaggedNet.id });
    await tag('ports', elsewhere.id);

    const cleanups = new PeriodicCleanups({
      os,
      tags: TAGS,
      podSubnetPool: pool.id,
      recordedNetworks: () => [],
      clock: later,
      log: silentLog,
    });
    const first = await cleanups.removedNodes(signal);
    assert.deepEqual(first.deleted, [], 'nothing goes on its first sighting');
    const second = await cleanups.removedNodes(signal);
    const gone = second.deleted.map((d) => d.id);
    assert.ok(gone.includes(detached.id) && gone.includes(unbound.id), JSON.stringify(second));
    for (const kept of [member.id, elsewhere.id, parent.id]) assert.ok(!gone.includes(kept), kept);
    assert.ok(await portExists(member.id), 'a port on a live trunk stays');
    assert.ok(await portExists(elsewhere.id), 'a port outside our pod subnets stays');
    assert.ok(await portExists(parent.id));
  });

  it('runs both passes on their periods until stopped, and goes on after a failed pass', async () => {
    const net = await os.network.networks.create({ name: 'loop-orphan' });
    await tag('networks', net.id);
    let calls = 0;
    const flaky = new PeriodicCleanups({
      os,
      tags: TAGS,
      // The first pass fails reading the cluster; the loop must survive it and try again.
      recordedNetworks: () => {
        if (calls++ === 0) throw new Error('cache not ready');
        return [];
      },
      clock: later,
      log: silentLog,
    });
    const stop = new AbortController();
    const loop = runPeriodicCleanups(flaky, { clock: later, log: silentLog }, stop.signal, {
      deadMs: 10,
      nodesMs: 10,
    });
    await eventually(async () => !(await exists(() => os.network.networks.get(net.id))), {
      timeoutMs: 10_000,
      what: 'the orphaned network deleted by the loop',
    });
    assert.ok(calls >= 2, 'a pass after the failed one');
    stop.abort();
    await loop;
  });
});
