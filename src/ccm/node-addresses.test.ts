import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { OpenStackClient } from '../openstack/client.ts';
import { bootSources } from '../openstack/compute/v2/testing/boot.ts';
import { openClientTargetOn, type ClientTarget } from '../openstack/core/testing/target.ts';
import { Cleanup, waitTimings } from '../openstack/network/v2/testing/fixtures.ts';
import { eventually, startTestCloud } from '../sim/openstack/testing/harness.ts';
import type { NetworkingOptions } from './config/types.ts';
import {
  gatherAddressSources,
  nodeAddresses,
  type AddressSources,
  type NodeAddress,
} from './node-addresses.ts';

const NONE: NetworkingOptions = {
  ipv6SupportDisabled: false,
  publicNetworkNames: [],
  internalNetworkNames: [],
  addressSortOrder: [],
};

const internal = (address: string): NodeAddress => ({ type: 'InternalIP', address });
const external = (address: string): NodeAddress => ({ type: 'ExternalIP', address });
const hostname = (address: string): NodeAddress => ({ type: 'Hostname', address });

/** A server whose ports and Nova addresses agree, as they do on a real cloud. */
function sources(
  overrides: Partial<AddressSources['server']> = {},
  extra: Partial<AddressSources> = {},
): AddressSources {
  return {
    server: {
      accessIPv4: '',
      accessIPv6: '',
      metadata: {},
      addresses: {
        private: [
          { version: 4, addr: '10.0.0.5', 'OS-EXT-IPS:type': 'fixed' },
          { version: 4, addr: '172.24.4.10', 'OS-EXT-IPS:type': 'floating' },
        ],
        storage: [{ version: 4, addr: '192.168.1.5', 'OS-EXT-IPS:type': 'fixed' }],
      },
      ...overrides,
    },
    ports: [
      { status: 'ACTIVE', fixed_ips: [{ subnet_id: 's-priv', ip_address: '10.0.0.5' }] },
      { status: 'ACTIVE', fixed_ips: [{ subnet_id: 's-stor', ip_address: '192.168.1.5' }] },
    ],
    subports: [],
    ...extra,
  };
}

describe('node addresses', () => {
  it('lists port addresses first, then floating ones by network name', () => {
    assert.deepEqual(nodeAddresses(sources(), NONE), [
      internal('10.0.0.5'),
      internal('192.168.1.5'),
      external('172.24.4.10'),
    ]);
  });

  it('follows Neutron port order, whatever Nova says, and skips ports that are not ACTIVE', () => {
    const s = sources(
      {},
      {
        ports: [
          { status: 'ACTIVE', fixed_ips: [{ subnet_id: 's-stor', ip_address: '192.168.1.5' }] },
          { status: 'DOWN', fixed_ips: [{ subnet_id: 's-x', ip_address: '10.9.9.9' }] },
          { status: 'ACTIVE', fixed_ips: [{ subnet_id: 's-priv', ip_address: '10.0.0.5' }] },
        ],
      },
    );
    assert.deepEqual(nodeAddresses(s, NONE), [
      internal('192.168.1.5'),
      internal('10.0.0.5'),
      external('172.24.4.10'),
    ]);
  });

  it('adds access IPs as ExternalIP and the metadata hostname, before the Nova addresses', () => {
    const s = sources({
      accessIPv4: '203.0.113.7',
      accessIPv6: '2001:db8::7',
      metadata: { hostname: 'worker-0.example' },
    });
    assert.deepEqual(nodeAddresses(s, NONE), [
      internal('10.0.0.5'),
      internal('192.168.1.5'),
      external('203.0.113.7'),
      external('2001:db8::7'),
      hostname('worker-0.example'),
      external('172.24.4.10'),
    ]);
  });

  it('makes public-network-name addresses ExternalIP only', () => {
    assert.deepEqual(nodeAddresses(sources(), { ...NONE, publicNetworkNames: ['storage'] }), [
      internal('10.0.0.5'),
      external('172.24.4.10'),
      external('192.168.1.5'),
    ]);
  });

  it('keeps only internal-network-name networks, dropping the others even from the ports', () => {
    assert.deepEqual(nodeAddresses(sources(), { ...NONE, internalNetworkNames: ['storage'] }), [
      internal('192.168.1.5'),
      external('172.24.4.10'),
    ]);
  });

  it('adds trunk subport addresses under their network, next to a direct attachment to it', () => {
    const s = sources(
      {},
      {
        subports: [
          { networkName: 'vlan100', fixedIps: [{ ip_address: '172.16.0.9' }] },
          { networkName: 'storage', fixedIps: [{ ip_address: '192.168.1.50' }] },
        ],
      },
    );
    assert.deepEqual(nodeAddresses(s, NONE), [
      internal('10.0.0.5'),
      internal('192.168.1.5'),
      external('172.24.4.10'),
      internal('192.168.1.50'),
      internal('172.16.0.9'),
    ]);
    assert.deepEqual(nodeAddresses(s, { ...NONE, internalNetworkNames: ['vlan100'] }), [
      external('172.24.4.10'),
      internal('172.16.0.9'),
    ]);
  });

  it('drops IPv6 at every step with ipv6-support-disabled', () => {
    const s = sources(
      {
        accessIPv4: '203.0.113.7',
        accessIPv6: '2001:db8::7',
        addresses: { private: [{ version: 6, addr: '2001:db8:1::5', 'OS-EXT-IPS:type': 'fixed' }] },
      },
      {
        ports: [
          {
            status: 'ACTIVE',
            fixed_ips: [
              { subnet_id: 'a', ip_address: '10.0.0.5' },
              { subnet_id: 'b', ip_address: '2001:db8:1::5' },
            ],
          },
        ],
        subports: [
          { networkName: 'vlan', fixedIps: [{ ip_address: 'fd00::9' }, { ip_address: '172.16.0.9' }] },
        ],
      },
    );
    assert.deepEqual(nodeAddresses(s, { ...NONE, ipv6SupportDisabled: true }), [
      internal('10.0.0.5'),
      external('203.0.113.7'),
      internal('172.16.0.9'),
    ]);
    assert.equal(nodeAddresses(s, NONE).length, 6);
  });

  it('lists a (type, address) pair once, but the same address under two types', () => {
    const s = sources({ accessIPv4: '10.0.0.5' });
    assert.deepEqual(nodeAddresses(s, NONE), [
      internal('10.0.0.5'),
      internal('192.168.1.5'),
      external('10.0.0.5'),
      external('172.24.4.10'),
    ]);
  });

  it('sorts by address-sort-order: CIDR priority, bytes within a CIDR, the rest in place after', () => {
    const s = sources(
      { metadata: { hostname: 'w0' } },
      {
        ports: [
          { status: 'ACTIVE', fixed_ips: [{ subnet_id: 'a', ip_address: '10.0.0.20' }] },
          { status: 'ACTIVE', fixed_ips: [{ subnet_id: 'b', ip_address: '192.168.1.5' }] },
          { status: 'ACTIVE', fixed_ips: [{ subnet_id: 'a', ip_address: '10.0.0.3' }] },
        ],
      },
    );
    assert.deepEqual(nodeAddresses(s, { ...NONE, addressSortOrder: ['192.168.0.0/16', '10.0.0.0/8'] }), [
      internal('192.168.1.5'),
      internal('10.0.0.3'),
      internal('10.0.0.5'),
      internal('10.0.0.20'),
      hostname('w0'),
      external('172.24.4.10'),
    ]);
  });

  describe('against the emulator', () => {
    let t: ClientTarget;
    let os: OpenStackClient;
    const cleanup = new Cleanup();
    before(async () => {
      t = await openClientTargetOn(await startTestCloud());
      os = await t.client(t.demo);
    });
    after(async () => {
      await cleanup.run();
      await t.close();
    });

    async function network(name: string, cidr: string) {
      const net = await os.network.networks.create({ name });
      cleanup.add(`network ${name}`, () => os.network.networks.delete(net.id));
      const subnet = await os.network.subnets.create({ network_id: net.id, cidr, ip_version: 4 });
      cleanup.add(`subnet ${name}`, () => os.network.subnets.delete(subnet.id));
      return { net, subnet };
    }

    it('reads a server with two ports, a trunk subport and a floating IP as OCCM does', async () => {
      const wait = waitTimings(t);
      const boot = (await bootSources(t, os, cleanup))!;
      const nodeNet = await network('ccm-a-nodes', '10.10.0.0/24');
      const storage = await network('ccm-b-storage', '192.168.50.0/24');
      const vlan = await network('ccm-c-vlan', '172.16.40.0/24');

      const parent = await os.network.ports.create({ network_id: nodeNet.net.id, name: 'ccm-parent' });
      cleanup.add('parent port', () => os.network.ports.delete(parent.id));
      const second = await os.network.ports.create({ network_id: storage.net.id, name: 'ccm-storage' });
      cleanup.add('storage port', () => os.network.ports.delete(second.id));
      const sub = await os.network.ports.create({ network_id: vlan.net.id, name: 'ccm-sub' });
      cleanup.add('subport', () => os.network.ports.delete(sub.id));
      const trunk = await os.network.trunks.create({
        port_id: parent.id,
        sub_ports: [{ port_id: sub.id, segmentation_type: 'vlan', segmentation_id: 100 }],
      });
      cleanup.add('trunk', () => os.network.trunks.delete(trunk.id));

      const router = await os.network.routers.create({
        name: 'ccm-router',
        external_gateway_info: {
          network_id: (await os.network.networks.list({ name: 'public' }).all())[0]!.id,
        },
      });
      cleanup.add('router', () => os.network.routers.delete(router.id));
      await os.network.routers.addInterface(router.id, { subnet_id: nodeNet.subnet.id });
      cleanup.add('router interface', () =>
        os.network.routers.removeInterface(router.id, { subnet_id: nodeNet.subnet.id }),
      );

      const server = await os.compute.servers.create({
        name: 'ccm-worker-0',
        flavorRef: boot.flavorId,
        imageRef: boot.imageId,
        networks: [{ port: parent.id }, { port: second.id }],
        metadata: { hostname: 'worker-0.example' },
      });
      cleanup.add('server', async () => {
        await os.compute.servers.delete(server.id);
        await os.compute.servers.waitForDeleted(server.id, wait);
      });
      await os.compute.servers.waitForActive(server.id, wait);
      const fip = await os.network.floatingIps.create({
        floating_network_id: router.external_gateway_info!.network_id,
        port_id: parent.id,
      });
      cleanup.add('floating ip', () => os.network.floatingIps.delete(fip.id));

      const found = await eventually(
        async () => {
          const srv = await os.compute.servers.get(server.id);
          const g = await gatherAddressSources(os.network, srv);
          const ready =
            g.ports.every((p) => p.status === 'ACTIVE') && Object.keys(srv.addresses).length === 2;
          const floating = srv.addresses['ccm-a-nodes']?.some((a) => a['OS-EXT-IPS:type'] === 'floating');
          return ready && floating ? g : undefined;
        },
        { what: 'ports ACTIVE and the floating IP in server.addresses' },
      );
      assert.ok(found);
      const gathered = found;
      assert.deepEqual(gathered.skipped, []);

      const p1 = parent.fixed_ips[0]!.ip_address;
      const p2 = second.fixed_ips[0]!.ip_address;
      const s1 = sub.fixed_ips[0]!.ip_address;
      const ports = gathered.ports.map((p) => p.fixed_ips[0]!.ip_address);
      assert.deepEqual(new Set(ports), new Set([p1, p2]));
      assert.deepEqual(nodeAddresses(gathered, NONE), [
        ...ports.map(internal),
        hostname('worker-0.example'),
        external(fip.floating_ip_address),
        internal(s1),
      ]);
      assert.deepEqual(
        nodeAddresses(gathered, {
          ...NONE,
          publicNetworkNames: ['ccm-b-storage'],
          internalNetworkNames: ['ccm-a-nodes'],
        }),
        [internal(p1), hostname('worker-0.example'), external(fip.floating_ip_address), external(p2)],
      );
    });
  });
});
