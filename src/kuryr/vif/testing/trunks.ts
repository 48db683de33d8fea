/**
 * A small cloud for the VIF driver's own tests: a pod network and subnet, and worker "nodes" as
 * bound parent ports with a trunk each (what Nova and CAPO make for a real worker), reached by the
 * client over HTTP. The controllers' tests use src/kuryr/testing/env.ts instead.
 */
import { systemClock } from '../../../lib/clock.ts';
import type { OpenStackClient } from '../../../openstack/client.ts';
import { Limiter } from '../../../openstack/core/limiter.ts';
import { openClientTargetOn, silentLog, type ClientTarget } from '../../../openstack/core/testing/target.ts';
import type { CloudOptions } from '../../../sim/openstack/core/cloud.ts';
import { eventually, startTestCloud, type TestCloud } from '../../../sim/openstack/testing/harness.ts';
import { NestedVlanDriver, type PortOwner } from '../nested-vlan.ts';
import { VifPools, type PoolLimits, type PoolRequest } from '../pool.ts';

export const OWNER: PortOwner = {
  tags: ['kuryr-test-cluster'],
  name: 'available-port',
  description: 'kuryr-kubernetes port of cluster kuryr-test-cluster',
};

export interface TrunkBed {
  sim: TestCloud;
  target: ClientTarget;
  os: OpenStackClient;
  networkId: string;
  subnetId: string;
  projectId: string;
  trunks: { trunkId: string; parentId: string }[];
  request(trunk: number, securityGroups?: readonly string[]): PoolRequest;
  driver(owner?: PortOwner, bulkCreates?: Limiter): NestedVlanDriver;
  pools(
    limits: Partial<PoolLimits>,
    opts?: { driver?: NestedVlanDriver; onPopulated?: (r: readonly string[]) => void },
  ): VifPools;
  /** Operations on Neutron since the bed started: `POST /v2.0/ports` etc. */
  count(operation: string): number;
  close(): Promise<void>;
}

export async function startTrunkBed(nodes: number, options: CloudOptions = {}): Promise<TrunkBed> {
  const sim = await startTestCloud(options);
  const target = await openClientTargetOn(sim);
  const os = await target.client(target.demo, { log: silentLog });
  const network = await os.network.networks.create({ name: 'pods' });
  const subnet = await os.network.subnets.create({
    network_id: network.id,
    cidr: '10.128.0.0/16',
    ip_version: 4,
    name: 'pods-v4',
  });
  const trunks: { trunkId: string; parentId: string }[] = [];
  for (let i = 0; i < nodes; i++) {
    const parent = await os.network.ports.create({ network_id: network.id, name: `worker-${i}-0` });
    const trunk = await os.network.trunks.create({ port_id: parent.id, name: `worker-${i}-0` });
    // What Nova does when the worker boots: the parent is bound, the trunk follows it to ACTIVE.
    sim.cloud.network.updatePort(parent.id, {
      device_id: crypto.randomUUID(),
      device_owner: 'compute:nova',
      'binding:host_id': `compute-${i}`,
    });
    trunks.push({ trunkId: trunk.id, parentId: parent.id });
  }
  await eventually(async () => {
    const all = await os.network.trunks.list({ id: trunks.map((t) => t.trunkId) }).all();
    return all.every((t) => t.status === 'ACTIVE');
  });
  const defaultGroup = (await os.network.securityGroups.list({ name: 'default' }).all())[0]!.id;
  const bulk = new Limiter(20);
  const driver = (owner = OWNER, bulkCreates = bulk) =>
    new NestedVlanDriver({ api: os, owner, bulkCreates, log: silentLog });
  return {
    sim,
    target,
    os,
    networkId: network.id,
    subnetId: subnet.id,
    projectId: network.project_id,
    trunks,
    request: (trunk, securityGroups = [defaultGroup]) => ({
      trunkId: trunks[trunk]!.trunkId,
      projectId: network.project_id,
      networkId: network.id,
      subnetIds: [subnet.id],
      securityGroups,
    }),
    driver,
    pools(limits, opts = {}) {
      return new VifPools({
        driver: opts.driver ?? driver(),
        limits: { min: 0, max: 0, batch: 3, updateFrequencyMs: 20_000, ...limits },
        clock: systemClock,
        log: silentLog,
        ...(opts.onPopulated ? { onPopulated: opts.onPopulated } : {}),
      });
    },
    count: (operation) => sim.cloud.stats.count('neutron', operation),
    close: () => target.close(),
  };
}
