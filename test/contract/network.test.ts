import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Cleanup, network } from './fixtures.ts';
import { openTarget, unique, type Target } from './target.ts';

describe('contract: network', () => {
  let t: Target;
  before(async () => (t = await openTarget()));
  after(async () => t?.close());

  it('allocates addresses from the subnet pool and refuses a taken one', async () => {
    const cleanup = new Cleanup();
    try {
      const { network: net, subnet } = await network(t.demo, cleanup, '10.250.1.0/24');
      assert.equal(subnet.gateway_ip, '10.250.1.1');
      assert.deepEqual(subnet.allocation_pools, [{ start: '10.250.1.2', end: '10.250.1.254' }]);
      const p1 = await t.demo.request('network', 'POST', '/v2.0/ports', {
        port: { network_id: net.id, name: 'p1' },
      });
      assert.equal(p1.status, 201);
      cleanup.add(() => t.demo.request('network', 'DELETE', `/v2.0/ports/${p1.body.port.id}`));
      const ip: string = p1.body.port.fixed_ips[0].ip_address;
      assert.match(ip, /^10\.250\.1\.\d+$/);
      assert.equal(p1.body.port.fixed_ips[0].subnet_id, subnet.id);

      const taken = await t.demo.request('network', 'POST', '/v2.0/ports', {
        port: { network_id: net.id, fixed_ips: [{ subnet_id: subnet.id, ip_address: ip }] },
      });
      assert.equal(taken.status, 409);
      assert.equal(taken.body.NeutronError.type, 'IpAddressAlreadyAllocated');

      const outside = await t.demo.request('network', 'POST', '/v2.0/ports', {
        port: { network_id: net.id, fixed_ips: [{ subnet_id: subnet.id, ip_address: '192.0.2.10' }] },
      });
      assert.equal(outside.status, 400);
      assert.equal(outside.body.NeutronError.type, 'InvalidIpForSubnet');

      const byIp = await t.demo.request(
        'network',
        'GET',
        `/v2.0/ports?fixed_ips=ip_address%3D${ip}&network_id=${net.id}`,
      );
      assert.deepEqual(
        byIp.body.ports.map((p: { id: string }) => p.id),
        [p1.body.port.id],
      );

      const inUse = await t.demo.request('network', 'DELETE', `/v2.0/networks/${net.id}`);
      assert.equal(inUse.status, 409);
      assert.equal(inUse.body.NeutronError.type, 'NetworkInUse');
    } finally {
      await cleanup.run();
    }
  });

  it('creates ports in bulk all or nothing', async () => {
    const cleanup = new Cleanup();
    try {
      const { network: net, subnet } = await network(t.demo, cleanup, '10.250.2.0/24');
      const bulk = await t.demo.request('network', 'POST', '/v2.0/ports', {
        ports: [1, 2, 3].map((i) => ({ network_id: net.id, name: `bulk-${i}` })),
      });
      assert.equal(bulk.status, 201);
      assert.equal(bulk.body.ports.length, 3);
      for (const p of bulk.body.ports)
        cleanup.add(() => t.demo.request('network', 'DELETE', `/v2.0/ports/${p.id}`));
      const taken: string = bulk.body.ports[0].fixed_ips[0].ip_address;
      const conflict = await t.demo.request('network', 'POST', '/v2.0/ports', {
        ports: [
          { network_id: net.id, name: 'ok-1' },
          { network_id: net.id, name: 'clash', fixed_ips: [{ subnet_id: subnet.id, ip_address: taken }] },
        ],
      });
      assert.equal(conflict.status, 409);
      const left = await t.demo.request('network', 'GET', `/v2.0/ports?network_id=${net.id}&name=ok-1`);
      assert.equal(left.body.ports.length, 0, 'a failed bulk create leaves nothing behind');
    } finally {
      await cleanup.run();
    }
  });

  it('pages through ports with limit and next links', async () => {
    const cleanup = new Cleanup();
    try {
      const { network: net } = await network(t.demo, cleanup);
      const bulk = await t.demo.request('network', 'POST', '/v2.0/ports', {
        ports: [1, 2, 3].map((i) => ({ network_id: net.id, name: `page-${i}` })),
      });
      for (const p of bulk.body.ports)
        cleanup.add(() => t.demo.request('network', 'DELETE', `/v2.0/ports/${p.id}`));
      const seen: string[] = [];
      let path: string | undefined = `/v2.0/ports?network_id=${net.id}&limit=2`;
      for (let page = 0; path && page < 5; page++) {
        const res: { body: { ports: { id: string }[]; ports_links?: { rel: string; href: string }[] } } =
          await t.demo.request('network', 'GET', path);
        seen.push(...res.body.ports.map((p) => p.id));
        const next = res.body.ports_links?.find((l) => l.rel === 'next')?.href;
        path = next ? next.slice(t.demo.url('network').length) : undefined;
      }
      assert.deepEqual(seen.sort(), bulk.body.ports.map((p: { id: string }) => p.id).sort());
    } finally {
      await cleanup.run();
    }
  });

  it('tags resources and filters by tags', async () => {
    const cleanup = new Cleanup();
    try {
      const { network: net } = await network(t.demo, cleanup);
      assert.equal(
        (await t.demo.request('network', 'PUT', `/v2.0/networks/${net.id}/tags/cluster-a`)).status,
        201,
      );
      assert.equal(
        (await t.demo.request('network', 'PUT', `/v2.0/networks/${net.id}/tags/role-x`)).status,
        201,
      );
      const all = await t.demo.request('network', 'GET', `/v2.0/networks?tags=cluster-a,role-x`);
      assert.deepEqual(
        all.body.networks.map((n: { id: string }) => n.id),
        [net.id],
      );
      const none = await t.demo.request(
        'network',
        'GET',
        `/v2.0/networks?tags=cluster-a&not-tags-any=role-x`,
      );
      assert.equal(none.body.networks.length, 0);
      const replaced = await t.demo.request('network', 'PUT', `/v2.0/networks/${net.id}/tags`, {
        tags: ['only'],
      });
      assert.equal(replaced.status, 200);
      assert.deepEqual(replaced.body.tags, ['only']);
    } finally {
      await cleanup.run();
    }
  });

  it('builds a trunk with a subport and protects its parent port', async () => {
    const cleanup = new Cleanup();
    try {
      const { network: net } = await network(t.demo, cleanup);
      const { network: subNet } = await network(t.demo, cleanup);
      const parent = await t.demo.request('network', 'POST', '/v2.0/ports', {
        port: { network_id: net.id, name: 'parent' },
      });
      cleanup.add(() => t.demo.request('network', 'DELETE', `/v2.0/ports/${parent.body.port.id}`));
      const child = await t.demo.request('network', 'POST', '/v2.0/ports', {
        port: { network_id: subNet.id, name: 'child' },
      });
      cleanup.add(() => t.demo.request('network', 'DELETE', `/v2.0/ports/${child.body.port.id}`));
      const trunk = await t.demo.request('network', 'POST', '/v2.0/trunks', {
        trunk: {
          port_id: parent.body.port.id,
          name: unique('contract-trunk'),
          sub_ports: [{ port_id: child.body.port.id, segmentation_type: 'vlan', segmentation_id: 101 }],
        },
      });
      assert.equal(trunk.status, 201, JSON.stringify(trunk.body));
      const trunkId: string = trunk.body.trunk.id;
      cleanup.add(() => t.demo.request('network', 'DELETE', `/v2.0/trunks/${trunkId}`));
      const subports = await t.demo.request('network', 'GET', `/v2.0/trunks/${trunkId}/get_subports`);
      assert.deepEqual(
        subports.body.sub_ports.map((s: { segmentation_id: number }) => s.segmentation_id),
        [101],
      );
      const protectedParent = await t.demo.request('network', 'DELETE', `/v2.0/ports/${parent.body.port.id}`);
      assert.equal(protectedParent.status, 409);
      assert.equal(protectedParent.body.NeutronError.type, 'PortInUseAsTrunkParent');
      const removed = await t.demo.request('network', 'PUT', `/v2.0/trunks/${trunkId}/remove_subports`, {
        sub_ports: [{ port_id: child.body.port.id }],
      });
      assert.equal(removed.status, 200);
      assert.deepEqual(removed.body.sub_ports, []);
      assert.equal((await t.demo.request('network', 'DELETE', `/v2.0/trunks/${trunkId}`)).status, 204);
    } finally {
      await cleanup.run();
    }
  });

  it('rejects a duplicate security group rule', async () => {
    const cleanup = new Cleanup();
    try {
      const sg = await t.demo.request('network', 'POST', '/v2.0/security-groups', {
        security_group: { name: unique('contract-sg') },
      });
      assert.equal(sg.status, 201);
      cleanup.add(() =>
        t.demo.request('network', 'DELETE', `/v2.0/security-groups/${sg.body.security_group.id}`),
      );
      const rule = {
        security_group_rule: {
          security_group_id: sg.body.security_group.id,
          direction: 'ingress',
          protocol: 'tcp',
          port_range_min: 6443,
          port_range_max: 6443,
          ethertype: 'IPv4',
        },
      };
      assert.equal((await t.demo.request('network', 'POST', '/v2.0/security-group-rules', rule)).status, 201);
      const dup = await t.demo.request('network', 'POST', '/v2.0/security-group-rules', rule);
      assert.equal(dup.status, 409);
      assert.equal(dup.body.NeutronError.type, 'SecurityGroupRuleExists');
    } finally {
      await cleanup.run();
    }
  });

  it('routes a subnet to an external network and floats an IP to a port', async (ctx) => {
    if (!t.admin) return ctx.skip('needs admin credentials (OS_CLOUD_ADMIN) to create an external network');
    const cleanup = new Cleanup();
    try {
      const ext = await t.admin.request('network', 'POST', '/v2.0/networks', {
        network: {
          name: unique('contract-ext'),
          'router:external': true,
          'provider:network_type': 'flat',
          'provider:physical_network': unique('physnet'),
        },
      });
      assert.equal(ext.status, 201, JSON.stringify(ext.body));
      cleanup.add(() => t.admin!.request('network', 'DELETE', `/v2.0/networks/${ext.body.network.id}`));
      const extSubnet = await t.admin.request('network', 'POST', '/v2.0/subnets', {
        subnet: {
          network_id: ext.body.network.id,
          cidr: '203.0.113.0/24',
          ip_version: 4,
          enable_dhcp: false,
        },
      });
      assert.equal(extSubnet.status, 201);

      const { network: net, subnet } = await network(t.demo, cleanup);
      const router = await t.demo.request('network', 'POST', '/v2.0/routers', {
        router: {
          name: unique('contract-router'),
          external_gateway_info: { network_id: ext.body.network.id },
        },
      });
      assert.equal(router.status, 201, JSON.stringify(router.body));
      const routerId: string = router.body.router.id;
      cleanup.add(() => t.demo.request('network', 'DELETE', `/v2.0/routers/${routerId}`));
      assert.match(
        router.body.router.external_gateway_info.external_fixed_ips[0].ip_address,
        /^203\.0\.113\./,
      );
      const iface = await t.demo.request('network', 'PUT', `/v2.0/routers/${routerId}/add_router_interface`, {
        subnet_id: subnet.id,
      });
      assert.equal(iface.status, 200);
      cleanup.add(() =>
        t.demo.request('network', 'PUT', `/v2.0/routers/${routerId}/remove_router_interface`, {
          subnet_id: subnet.id,
        }),
      );

      const port = await t.demo.request('network', 'POST', '/v2.0/ports', { port: { network_id: net.id } });
      cleanup.add(() => t.demo.request('network', 'DELETE', `/v2.0/ports/${port.body.port.id}`));
      const fip = await t.demo.request('network', 'POST', '/v2.0/floatingips', {
        floatingip: { floating_network_id: ext.body.network.id, port_id: port.body.port.id },
      });
      assert.equal(fip.status, 201, JSON.stringify(fip.body));
      cleanup.add(() => t.demo.request('network', 'DELETE', `/v2.0/floatingips/${fip.body.floatingip.id}`));
      assert.equal(fip.body.floatingip.fixed_ip_address, port.body.port.fixed_ips[0].ip_address);
      assert.equal(fip.body.floatingip.router_id, routerId);
      const byPort = await t.demo.request('network', 'GET', `/v2.0/floatingips?port_id=${port.body.port.id}`);
      assert.deepEqual(
        byPort.body.floatingips.map((f: { id: string }) => f.id),
        [fip.body.floatingip.id],
      );
      const released = await t.demo.request('network', 'PUT', `/v2.0/floatingips/${fip.body.floatingip.id}`, {
        floatingip: { port_id: null },
      });
      assert.equal(released.body.floatingip.port_id, null);
      assert.equal(released.body.floatingip.fixed_ip_address, null);
    } finally {
      await cleanup.run();
    }
  });
});
