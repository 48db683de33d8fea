/**
 * One scenario across services, as CAPO and OCCM use the client together: a worker server on a
 * port with its own security group, then a load balancer in front of it. Runs on the emulator, or on
 * the real cloud of OS_CLOUD (OS_CLOUD_ADMIN for a flavor when the cloud has none). Checks the
 * OCCM-compatible metric labels the calls were counted under.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRegistry } from '../../src/lib/metrics.ts';
import type { OpenStackClient } from '../../src/openstack/client.ts';
import { requestCount } from '../../src/openstack/core/testing/metrics.ts';
import { openClientTarget, unique, type ClientTarget } from '../../src/openstack/core/testing/target.ts';
import { bootSources } from '../../src/openstack/compute/v2/testing/boot.ts';
import { Cleanup, scratchNetwork, waitTimings } from '../../src/openstack/network/v2/testing/fixtures.ts';

describe('openstack client: a worker behind a load balancer', () => {
  let t: ClientTarget;
  let os: OpenStackClient;
  const registry = createRegistry({ defaultMetrics: false });
  const cleanup = new Cleanup();

  before(async () => {
    t = await openClientTarget();
    os = await t.client(t.demo, { registry });
  });
  after(async () => {
    await cleanup.run();
    await t?.close();
  });

  it('boots a worker on a secured port and balances TCP to it', async (s) => {
    const wait = waitTimings(t);
    const sources = await bootSources(t, os, cleanup);
    if (!sources)
      return s.skip('no image and flavor, and no admin cloud (OS_CLOUD_ADMIN) to create a flavor');
    const { network, subnet } = await scratchNetwork(os, cleanup, 'client-scenario');

    const sg = await os.network.securityGroups.create({ name: unique('client-scenario-sg') });
    cleanup.add(`security group ${sg.id}`, () => os.network.securityGroups.delete(sg.id));
    await os.network.securityGroupRules.create({
      security_group_id: sg.id,
      direction: 'ingress',
      protocol: 'tcp',
      port_range_min: 30080,
      port_range_max: 30080,
      remote_ip_prefix: subnet.cidr,
    });
    const port = await os.network.ports.create({
      network_id: network.id,
      name: unique('client-scenario-port'),
      security_groups: [sg.id],
    });
    cleanup.add(`port ${port.id}`, () => os.network.ports.delete(port.id));
    const address = port.fixed_ips[0]!.ip_address;

    const server = await os.compute.servers.create({
      name: unique('client-scenario-worker'),
      flavorRef: sources.flavorId,
      imageRef: sources.imageId,
      networks: [{ port: port.id }],
      tags: ['worker'],
    });
    cleanup.add(`server ${server.id}`, async () => {
      await os.compute.servers.delete(server.id);
      await os.compute.servers.waitForDeleted(server.id, wait);
    });

    const lb = await os.loadBalancer.loadBalancers.create({
      name: unique('client-scenario-lb'),
      vip_subnet_id: subnet.id,
      listeners: [
        {
          name: 'tcp-80',
          protocol: 'TCP',
          protocol_port: 80,
          default_pool: {
            name: 'workers',
            protocol: 'TCP',
            lb_algorithm: 'ROUND_ROBIN',
            members: [{ address, protocol_port: 30080, subnet_id: subnet.id }],
          },
        },
      ],
    });
    cleanup.add(`load balancer ${lb.id}`, async () => {
      await os.loadBalancer.loadBalancers.waitForActive(lb.id, wait).catch(() => undefined);
      await os.loadBalancer.loadBalancers.delete(lb.id, { cascade: true });
      await os.loadBalancer.loadBalancers.waitForDeleted(lb.id, wait);
    });

    const [worker, balancer] = await Promise.all([
      os.compute.servers.waitForActive(server.id, wait),
      os.loadBalancer.loadBalancers.waitForActive(lb.id, wait),
    ]);
    assert.equal(worker.addresses[network.name]?.[0]?.addr, address);
    assert.equal(balancer.provisioning_status, 'ACTIVE');
    const tree = await os.loadBalancer.loadBalancers.statusTree(lb.id);
    assert.deepEqual(
      tree.listeners.flatMap((l) => l.pools.flatMap((p) => p.members.map((m) => m.address))),
      [address],
    );
    const bound = await os.network.ports.get(port.id);
    assert.equal(bound.device_id, server.id);
    assert.deepEqual(bound.security_groups, [sg.id]);

    for (const label of [
      'network_create',
      'subnet_create',
      'security_group_create',
      'security_group_rule_create',
      'port_create',
      'server_create',
      'server_get',
      'loadbalancer_create',
      'loadbalancer_get',
      'loadbalancer_status_get',
    ]) {
      assert.ok((await requestCount(registry, label)) >= 1, `no request counted as ${label}`);
    }
  });
});
