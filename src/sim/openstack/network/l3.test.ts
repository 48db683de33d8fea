import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startTestCloud, type TestCloud } from '../testing/harness.ts';
import { neutron, neutronError, type Neutron } from './testing/neutron.ts';

describe('neutron: routers and floating IPs', () => {
  let t: TestCloud;
  let n: Neutron;
  let pub: any;
  before(async () => {
    t = await startTestCloud();
    n = neutron(t);
    pub = await n.publicNet();
  });
  after(async () => t.close());

  it('creates a router with a gateway on the external network', async () => {
    const res = await n.post(
      '/v2.0/routers',
      { router: { name: 'r1', external_gateway_info: { network_id: pub.id } } },
      'demo',
    );
    assert.equal(res.status, 201);
    const r = res.body.router;
    assert.equal(r.status, 'ACTIVE');
    assert.equal(r.external_gateway_info.network_id, pub.id);
    assert.equal(r.external_gateway_info.enable_snat, true);
    assert.match(r.external_gateway_info.external_fixed_ips[0].ip_address, /^172\.24\.4\.\d+$/);
    assert.equal('distributed' in r, false, 'distributed and ha are admin-only');
    assert.equal((await n.get(`/v2.0/routers/${r.id}`)).body.router.distributed, false);
    const gwPorts = await n.get(`/v2.0/ports?device_id=${r.id}`, 'demo');
    assert.equal(gwPorts.body.ports.length, 0, 'the gateway port belongs to no project');
    const asAdmin = await n.get(`/v2.0/ports?device_id=${r.id}`);
    assert.equal(asAdmin.body.ports[0].device_owner, 'network:router_gateway');
    neutronError(
      await n.post(
        '/v2.0/routers',
        { router: { external_gateway_info: { network_id: pub.id, enable_snat: false } } },
        'demo',
      ),
      403,
      'PolicyNotAuthorized',
    );
    assert.equal((await n.del(`/v2.0/routers/${r.id}`, 'demo')).status, 204);
    assert.equal(
      (await n.get(`/v2.0/ports?device_id=${r.id}`)).body.ports.length,
      0,
      'deleting the router freed its gateway port',
    );
  });

  it('attaches subnets and ports, refuses duplicates, and blocks deletes while in use', async () => {
    const { net, subnet } = await n.network('demo', '10.20.0.0/24');
    const router = (
      await n.post(
        '/v2.0/routers',
        { router: { name: 'r2', external_gateway_info: { network_id: pub.id } } },
        'demo',
      )
    ).body.router;
    const added = await n.put(
      `/v2.0/routers/${router.id}/add_router_interface`,
      { subnet_id: subnet.id },
      'demo',
    );
    assert.equal(added.status, 200);
    assert.deepEqual(Object.keys(added.body).sort(), [
      'id',
      'network_id',
      'port_id',
      'subnet_id',
      'subnet_ids',
      'tenant_id',
    ]);
    const iface = (await n.get(`/v2.0/ports/${added.body.port_id}`, 'demo')).body.port;
    assert.deepEqual(iface.fixed_ips, [{ subnet_id: subnet.id, ip_address: '10.20.0.1' }]);
    assert.equal(iface.device_owner, 'network:router_interface');
    assert.equal(iface.status, 'ACTIVE');
    neutronError(
      await n.put(`/v2.0/routers/${router.id}/add_router_interface`, { subnet_id: subnet.id }, 'demo'),
      400,
      'BadRequest',
      `Bad router request: Router already has a port on subnet ${subnet.id}.`,
    );
    neutronError(
      await n.del(`/v2.0/ports/${iface.id}`, 'demo'),
      409,
      'ServicePortInUse',
      `Port ${iface.id} cannot be deleted directly via the port API: has device owner network:router_interface.`,
    );
    neutronError(await n.del(`/v2.0/subnets/${subnet.id}`, 'demo'), 409, 'SubnetInUse');
    neutronError(
      await n.del(`/v2.0/routers/${router.id}`, 'demo'),
      409,
      'RouterInUse',
      `Router ${router.id} has ports still attached: ${iface.id}`,
    );
    const { subnet: other, net: otherNet } = await n.network('demo', '10.21.0.0/24');
    const free = await n.port('demo', { network_id: otherNet.id });
    const byPort = await n.put(
      `/v2.0/routers/${router.id}/add_router_interface`,
      { port_id: free.id },
      'demo',
    );
    assert.equal(byPort.body.subnet_id, other.id);
    const removed = await n.put(
      `/v2.0/routers/${router.id}/remove_router_interface`,
      { port_id: free.id },
      'demo',
    );
    assert.equal(removed.status, 200);
    neutronError(await n.get(`/v2.0/ports/${free.id}`, 'demo'), 404, 'PortNotFound');
    const gone = await n.put(
      `/v2.0/routers/${router.id}/remove_router_interface`,
      { subnet_id: subnet.id },
      'demo',
    );
    assert.equal(gone.body.port_id, iface.id);
    neutronError(
      await n.put(`/v2.0/routers/${router.id}/remove_router_interface`, { subnet_id: subnet.id }, 'demo'),
      404,
      'RouterInterfaceNotFoundForSubnet',
      `Router ${router.id} has no interface on subnet ${subnet.id}`,
    );
    const routed = await n.put(
      `/v2.0/routers/${router.id}`,
      { router: { routes: [{ destination: '10.99.0.0/24', nexthop: '192.0.2.1' }] } },
      'demo',
    );
    neutronError(routed, 400, 'InvalidRoutes');
    assert.equal((await n.del(`/v2.0/routers/${router.id}`, 'demo')).status, 204);
    assert.equal((await n.del(`/v2.0/networks/${net.id}`, 'demo')).status, 204);
  });

  it('floats an IP to a port through the router, then releases it', async () => {
    const { net, subnet } = await n.network('demo', '10.22.0.0/24');
    const router = (
      await n.post(
        '/v2.0/routers',
        { router: { name: 'r3', external_gateway_info: { network_id: pub.id } } },
        'demo',
      )
    ).body.router;
    const port = await n.port('demo', { network_id: net.id });
    neutronError(
      await n.post(
        '/v2.0/floatingips',
        { floatingip: { floating_network_id: pub.id, port_id: port.id } },
        'demo',
      ),
      404,
      'ExternalGatewayForFloatingIPNotFound',
      `External network ${pub.id} is not reachable from subnet ${subnet.id}.  Therefore, cannot associate Port ${port.id} with a Floating IP.`,
    );
    await n.put(`/v2.0/routers/${router.id}/add_router_interface`, { subnet_id: subnet.id }, 'demo');
    const created = await n.post(
      '/v2.0/floatingips',
      { floatingip: { floating_network_id: pub.id, port_id: port.id } },
      'demo',
    );
    assert.equal(created.status, 201);
    const fip = created.body.floatingip;
    assert.equal(fip.router_id, router.id);
    assert.equal(fip.fixed_ip_address, port.fixed_ips[0].ip_address);
    assert.equal(fip.status, 'DOWN');
    assert.equal(fip.port_details.mac_address, port.mac_address);
    assert.match(fip.floating_ip_address, /^172\.24\.4\./);
    await eventually(
      async () => (await n.get(`/v2.0/floatingips/${fip.id}`, 'demo')).body.floatingip.status === 'ACTIVE',
    );
    assert.deepEqual(t.cloud.network.floatingIpsForPort(port.id), [
      { floating_ip_address: fip.floating_ip_address, fixed_ip_address: fip.fixed_ip_address },
    ]);
    assert.deepEqual(
      (await n.get(`/v2.0/floatingips?port_id=${port.id}`, 'demo')).body.floatingips.map(
        (f: { id: string }) => f.id,
      ),
      [fip.id],
    );
    neutronError(
      await n.put(`/v2.0/routers/${router.id}/remove_router_interface`, { subnet_id: subnet.id }, 'demo'),
      409,
      'RouterInterfaceInUseByFloatingIP',
    );
    const released = await n.put(`/v2.0/floatingips/${fip.id}`, { floatingip: { port_id: null } }, 'demo');
    assert.equal(released.body.floatingip.port_id, null);
    assert.equal(released.body.floatingip.router_id, null);
    assert.equal(released.body.floatingip.port_details, null);
    assert.equal(released.body.floatingip.status, 'DOWN');
    await n.put(`/v2.0/floatingips/${fip.id}`, { floatingip: { port_id: port.id } }, 'demo');
    await n.del(`/v2.0/ports/${port.id}`, 'demo');
    assert.equal(
      (await n.get(`/v2.0/floatingips/${fip.id}`, 'demo')).body.floatingip.port_id,
      null,
      'deleting the port disassociates',
    );
    assert.equal((await n.del(`/v2.0/floatingips/${fip.id}`, 'demo')).status, 204);
    neutronError(await n.get(`/v2.0/floatingips/${fip.id}`, 'demo'), 404, 'FloatingIPNotFound');
  });

  it('allocates floating IPs only from external networks, and a given address only once', async () => {
    const { net } = await n.network('demo', '10.23.0.0/24');
    neutronError(
      await n.post('/v2.0/floatingips', { floatingip: { floating_network_id: net.id } }, 'demo'),
      400,
      'BadRequest',
      `Bad floatingip request: Network ${net.id} is not a valid external network.`,
    );
    neutronError(
      await n.post(
        '/v2.0/floatingips',
        { floatingip: { floating_network_id: pub.id, floating_ip_address: '172.24.4.200' } },
        'demo',
      ),
      403,
      'PolicyNotAuthorized',
      '(rule:create_floatingip and rule:create_floatingip:floating_ip_address) is disallowed by policy',
    );
    const fixed = await n.post('/v2.0/floatingips', {
      floatingip: { floating_network_id: pub.id, floating_ip_address: '172.24.4.200' },
    });
    assert.equal(fixed.status, 201);
    neutronError(
      await n.post('/v2.0/floatingips', {
        floatingip: { floating_network_id: pub.id, floating_ip_address: '172.24.4.200' },
      }),
      409,
      'IpAddressAlreadyAllocated',
      `IP address 172.24.4.200 already allocated in subnet ${pub.subnets[0]}`,
    );
    neutronError(
      await n.get(`/v2.0/floatingips/${fixed.body.floatingip.id}`, 'demo'),
      404,
      'FloatingIPNotFound',
    );
  });
});
