import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startTestCloud, type TestCloud } from '../testing/harness.ts';
import { neutron, neutronError, type Neutron } from './testing/neutron.ts';

describe('neutron: trunks', () => {
  let t: TestCloud;
  let n: Neutron;
  let netId: string;
  before(async () => {
    t = await startTestCloud();
    n = neutron(t);
    netId = (await n.network('demo', '10.40.0.0/24')).net.id;
  });
  after(async () => t.close());

  const port = (name: string) => n.port('demo', { network_id: netId, name });

  it('builds a trunk, shows trunk_details on the parent and marks subports', async () => {
    const parent = await port('parent');
    const [s1, s2] = [await port('s1'), await port('s2')];
    const res = await n.post(
      '/v2.0/trunks',
      {
        trunk: {
          name: 'tr',
          port_id: parent.id,
          sub_ports: [{ port_id: s1.id, segmentation_type: 'vlan', segmentation_id: 101 }],
        },
      },
      'demo',
    );
    assert.equal(res.status, 201);
    const trunk = res.body.trunk;
    assert.equal(trunk.status, 'DOWN');
    assert.equal(trunk.revision_number, 0);
    const added = await n.put(
      `/v2.0/trunks/${trunk.id}/add_subports`,
      { sub_ports: [{ port_id: s2.id, segmentation_type: 'vlan', segmentation_id: 102 }] },
      'demo',
    );
    assert.equal(added.status, 200);
    assert.equal(added.body.id, trunk.id, 'add_subports answers the bare trunk');
    assert.equal(added.body.revision_number, 1);
    const subports = await n.get(`/v2.0/trunks/${trunk.id}/get_subports`, 'demo');
    assert.deepEqual(subports.body, {
      sub_ports: [
        { port_id: s1.id, segmentation_type: 'vlan', segmentation_id: 101 },
        { port_id: s2.id, segmentation_type: 'vlan', segmentation_id: 102 },
      ],
    });
    const shown = (await n.get(`/v2.0/ports/${parent.id}`, 'demo')).body.port;
    assert.equal(shown.trunk_details.trunk_id, trunk.id);
    assert.deepEqual(shown.trunk_details.sub_ports[0], {
      segmentation_id: 101,
      segmentation_type: 'vlan',
      port_id: s1.id,
      mac_address: s1.mac_address,
    });
    const sub = (await n.get(`/v2.0/ports/${s1.id}`, 'demo')).body.port;
    assert.equal(sub.device_owner, 'trunk:subport');
    assert.equal(sub.device_id, trunk.id);

    neutronError(
      await n.put(
        `/v2.0/trunks/${trunk.id}/add_subports`,
        { sub_ports: [{ port_id: s2.id, segmentation_type: 'vlan', segmentation_id: 103 }] },
        'demo',
      ),
      409,
      'TrunkPortInUse',
      `Port ${s2.id} is in use by another trunk.`,
    );
    const s3 = await port('s3');
    neutronError(
      await n.put(
        `/v2.0/trunks/${trunk.id}/add_subports`,
        { sub_ports: [{ port_id: s3.id, segmentation_type: 'vlan', segmentation_id: 101 }] },
        'demo',
      ),
      409,
      'DuplicateSubPort',
      `segmentation_type vlan and segmentation_id 101 already in use on trunk ${trunk.id}.`,
    );
    neutronError(
      await n.post('/v2.0/trunks', { trunk: { port_id: parent.id } }, 'demo'),
      409,
      'ParentPortInUse',
      `Port ${parent.id} is currently in use and is not eligible for use as a parent port.`,
    );
    neutronError(
      await n.del(`/v2.0/ports/${parent.id}`, 'demo'),
      409,
      'PortInUseAsTrunkParent',
      `Port ${parent.id} is currently a parent port for trunk ${trunk.id}.`,
    );
    neutronError(await n.del(`/v2.0/ports/${s1.id}`, 'demo'), 409, 'PortInUseAsSubPort');

    const removed = await n.put(
      `/v2.0/trunks/${trunk.id}/remove_subports`,
      { sub_ports: [{ port_id: s2.id }] },
      'demo',
    );
    assert.deepEqual(
      removed.body.sub_ports.map((s: { port_id: string }) => s.port_id),
      [s1.id],
    );
    assert.equal((await n.get(`/v2.0/ports/${s2.id}`, 'demo')).body.port.device_owner, '');
    neutronError(
      await n.put(`/v2.0/trunks/${trunk.id}/remove_subports`, { sub_ports: [{ port_id: s2.id }] }, 'demo'),
      404,
      'SubPortNotFound',
    );
    assert.equal((await n.del(`/v2.0/trunks/${trunk.id}`, 'demo')).status, 204);
    assert.equal('trunk_details' in (await n.get(`/v2.0/ports/${parent.id}`, 'demo')).body.port, false);
    assert.equal((await n.del(`/v2.0/ports/${parent.id}`, 'demo')).status, 204);
  });

  it('follows the parent port: bound and wired means ACTIVE, subports too', async () => {
    const parent = await port('p-active');
    const child = await port('c-active');
    const trunk = (
      await n.post(
        '/v2.0/trunks',
        {
          trunk: {
            port_id: parent.id,
            sub_ports: [{ port_id: child.id, segmentation_type: 'vlan', segmentation_id: 200 }],
          },
        },
        'demo',
      )
    ).body.trunk;
    t.cloud.network.updatePort(parent.id, {
      device_id: crypto.randomUUID(),
      device_owner: 'compute:nova',
      'binding:host_id': 'compute-0',
    });
    await eventually(
      async () => (await n.get(`/v2.0/trunks/${trunk.id}`, 'demo')).body.trunk.status === 'ACTIVE',
    );
    await eventually(async () => (await n.get(`/v2.0/ports/${child.id}`)).body.port.status === 'ACTIVE');
    const sub = (await n.get(`/v2.0/ports/${child.id}`)).body.port;
    assert.equal(sub['binding:host_id'], 'compute-0');
    t.cloud.network.updatePort(parent.id, { device_id: '', device_owner: '', 'binding:host_id': '' });
    assert.equal((await n.get(`/v2.0/trunks/${trunk.id}`, 'demo')).body.trunk.status, 'DOWN');
    assert.equal((await n.get(`/v2.0/ports/${child.id}`, 'demo')).body.port.status, 'DOWN');
  });

  it('wires a subport added to an ACTIVE trunk like a port binding: DOWN until the agent is done', async () => {
    const parent = await port('p-wire');
    const [wired, held] = [await port('c-wired'), await port('c-held')];
    const trunk = (await n.post('/v2.0/trunks', { trunk: { port_id: parent.id } }, 'demo')).body.trunk;
    t.cloud.network.updatePort(parent.id, {
      device_id: crypto.randomUUID(),
      device_owner: 'compute:nova',
      'binding:host_id': 'compute-0',
    });
    await eventually(
      async () => (await n.get(`/v2.0/trunks/${trunk.id}`, 'demo')).body.trunk.status === 'ACTIVE',
    );
    // The agent never gets to this one: it stays DOWN while the trunk is ACTIVE.
    t.cloud.faults.add({ kind: 'stuck', service: 'neutron', resource: 'port', target: held.id });
    const added = await n.put(
      `/v2.0/trunks/${trunk.id}/add_subports`,
      {
        sub_ports: [
          { port_id: wired.id, segmentation_type: 'vlan', segmentation_id: 300 },
          { port_id: held.id, segmentation_type: 'vlan', segmentation_id: 301 },
        ],
      },
      'demo',
    );
    assert.equal(added.status, 200);
    await eventually(async () => (await n.get(`/v2.0/ports/${wired.id}`)).body.port.status === 'ACTIVE');
    const stuck = (await n.get(`/v2.0/ports/${held.id}`)).body.port;
    assert.equal(stuck.status, 'DOWN');
    assert.equal(stuck.device_owner, 'trunk:subport');
  });

  it('validates sub_ports and hides trunks of other projects', async () => {
    const parent = await port('p-val');
    neutronError(
      await n.post(
        '/v2.0/trunks',
        { trunk: { port_id: parent.id, sub_ports: [{ port_id: crypto.randomUUID() }] } },
        'demo',
      ),
      400,
      'HTTPBadRequest',
      /^Invalid input for sub_ports\. Reason: /,
    );
    neutronError(
      await n.post('/v2.0/trunks', { trunk: { port_id: crypto.randomUUID() } }, 'demo'),
      404,
      'PortNotFound',
    );
    const trunk = (await n.post('/v2.0/trunks', { trunk: { port_id: parent.id } }, 'demo')).body.trunk;
    neutronError(
      await n.get(`/v2.0/trunks/${trunk.id}`, 'alt_demo'),
      404,
      'TrunkNotFound',
      `Trunk ${trunk.id} could not be found.`,
    );
    assert.deepEqual(
      (await n.get(`/v2.0/trunks?port_id=${parent.id}`, 'demo')).body.trunks.map((x: { id: string }) => x.id),
      [trunk.id],
    );
  });
});
