import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eventually, startTestCloud, type TestCloud } from '../testing/harness.ts';
import {
  boot,
  getPort,
  imageId,
  makeNetwork,
  makePort,
  nova,
  waitFor,
  waitGone,
} from './testing/fixtures.ts';

describe('nova server actions, attachments and faults', () => {
  let t: TestCloud;
  let image: string;
  let net: { networkId: string; subnetId: string };
  let demoProject: string;

  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${t.url}/_sim${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const action = (id: string, body: unknown, user: 'demo' | 'admin' = 'demo') =>
    nova(t, 'POST', `/servers/${id}/action`, { user, body });
  const volume = (id: string) => t.cloud.volume.getVolume(id);

  before(async () => {
    t = await startTestCloud();
    image = await imageId(t);
    net = await makeNetwork(t, 'demo', 'app-net', '10.50.0.0/24');
    demoProject = (await t.request('keystone', 'GET', '/v3/auth/projects', { user: 'demo' })).body.projects[0]
      .id;
  });
  after(() => t.close());

  it('stops (409 while powering-off, as the sample), starts and reboots', async () => {
    const id = await boot(t, 'demo', { name: 'power', imageRef: image });
    await waitFor(t, 'demo', id, 'ACTIVE');
    // Slow power actions, so the second call surely lands while the first is in progress.
    const transitions = t.cloud.timing.profile.transitions;
    const saved = { ...transitions };
    transitions['nova.server.stop'] = 250;
    transitions['nova.server.reboot'] = 250;
    assert.equal((await action(id, { 'os-stop': null })).status, 202);
    const again = await action(id, { 'os-stop': null });
    assert.equal(again.status, 409);
    assert.deepEqual(again.body, {
      conflictingRequest: {
        code: 409,
        message: `Cannot 'stop' instance ${id} while it is in task_state powering-off`,
      },
    });
    const off = await waitFor(t, 'demo', id, 'SHUTOFF');
    transitions['nova.server.stop'] = saved['nova.server.stop'];
    assert.equal(off['OS-EXT-STS:power_state'], 4);
    assert.equal(off['OS-EXT-STS:vm_state'], 'stopped');
    assert.equal(off.progress, undefined, 'SHUTOFF shows no progress');
    const stopStopped = await action(id, { 'os-stop': null });
    assert.equal(
      stopStopped.body.conflictingRequest.message,
      `Cannot 'stop' instance ${id} while it is in vm_state stopped`,
    );
    const soft = await action(id, { reboot: { type: 'SOFT' } });
    assert.equal(soft.status, 409, 'a soft reboot needs a running server');

    assert.equal((await action(id, { 'os-start': null })).status, 202);
    await waitFor(t, 'demo', id, 'ACTIVE');
    assert.equal((await action(id, { reboot: { type: 'HARD' } })).status, 202);
    const rebooting = (await nova(t, 'GET', `/servers/${id}`, { user: 'demo' })).body.server;
    assert.equal(rebooting.status, 'HARD_REBOOT');
    await waitFor(t, 'demo', id, 'ACTIVE');
    transitions['nova.server.reboot'] = saved['nova.server.reboot'];
    assert.equal((await action(id, { reboot: { type: 'sideways' } })).status, 400);
    assert.equal((await action(id, { pause: null })).status, 202);
    await waitFor(t, 'demo', id, 'PAUSED');
    assert.equal((await action(id, { unpause: null })).status, 202);
    await waitFor(t, 'demo', id, 'ACTIVE');

    const unknown = await action(id, { fly: null });
    assert.deepEqual(unknown.body, { badRequest: { code: 400, message: 'There is no such action: fly' } });
    const resize = await action(id, { resize: { flavorRef: '2' } });
    assert.equal(resize.status, 501);
    assert.ok(resize.body.notImplemented);
    const consoleOut = await action(id, { 'os-getConsoleOutput': { length: 1 } });
    assert.equal(consoleOut.status, 200);
    assert.equal(consoleOut.body.output, 'power login: ');
  });

  it('locks a server against its members until unlocked', async () => {
    const id = await boot(t, 'demo', { name: 'locked', imageRef: image });
    await waitFor(t, 'demo', id, 'ACTIVE');
    assert.equal(
      (
        await nova(t, 'POST', `/servers/${id}/action`, {
          user: 'demo',
          version: '2.73',
          body: { lock: { locked_reason: 'maintenance' } },
        })
      ).status,
      202,
    );
    const s = (await nova(t, 'GET', `/servers/${id}`, { user: 'demo', version: '2.73' })).body.server;
    assert.equal(s.locked, true);
    assert.equal(s.locked_reason, 'maintenance');
    const del = await nova(t, 'DELETE', `/servers/${id}`, { user: 'demo' });
    assert.equal(del.status, 409);
    assert.equal(del.body.conflictingRequest.message, `Instance ${id} is locked`);
    assert.equal((await action(id, { unlock: null })).status, 202);
    assert.equal((await nova(t, 'DELETE', `/servers/${id}`, { user: 'demo' })).status, 204);
  });

  it('attaches and detaches interfaces by port and by network (os-interface)', async () => {
    const first = await makePort(t, 'demo', net.networkId, 'vm-port-1');
    const extra = await makePort(t, 'demo', net.networkId, 'vm-port-2');
    const id = await boot(t, 'demo', { name: 'nics', imageRef: image, networks: [{ port: first.id }] });
    await waitFor(t, 'demo', id, 'ACTIVE');

    const attached = await nova(t, 'POST', `/servers/${id}/os-interface`, {
      user: 'demo',
      body: { interfaceAttachment: { port_id: extra.id } },
    });
    assert.equal(attached.status, 200);
    assert.deepEqual(attached.body.interfaceAttachment, {
      net_id: net.networkId,
      port_id: extra.id,
      mac_addr: extra.mac_address,
      port_state: attached.body.interfaceAttachment.port_state,
      fixed_ips: extra.fixed_ips.map((f) => ({ subnet_id: f.subnet_id, ip_address: f.ip_address })),
      tag: null,
    });
    const list = await nova(t, 'GET', `/servers/${id}/os-interface`, { user: 'demo' });
    assert.deepEqual(
      list.body.interfaceAttachments.map((i: any) => i.port_id).sort(),
      [first.id, extra.id].sort(),
    );
    assert.equal(
      (await nova(t, 'GET', `/servers/${id}/os-interface/${extra.id}`, { user: 'demo' })).status,
      200,
    );
    const inUse = await nova(t, 'POST', `/servers/${id}/os-interface`, {
      user: 'demo',
      body: { interfaceAttachment: { port_id: first.id } },
    });
    assert.equal(inUse.status, 409);

    assert.equal(
      (await nova(t, 'DELETE', `/servers/${id}/os-interface/${extra.id}`, { user: 'demo' })).status,
      202,
    );
    assert.equal((await getPort(t, extra.id)).body.port.device_id, '');
    assert.equal(
      (await nova(t, 'DELETE', `/servers/${id}/os-interface/${extra.id}`, { user: 'demo' })).status,
      404,
    );

    const byNet = await nova(t, 'POST', `/servers/${id}/os-interface`, {
      user: 'demo',
      body: { interfaceAttachment: { net_id: net.networkId } },
    });
    assert.equal(byNet.status, 200);
    const created = byNet.body.interfaceAttachment.port_id;
    assert.equal((await getPort(t, created)).body.port.device_owner, 'compute:nova');
    const s = (await nova(t, 'GET', `/servers/${id}`, { user: 'demo' })).body.server;
    assert.equal(s.addresses['app-net'].length, 2);
    await nova(t, 'DELETE', `/servers/${id}/os-interface/${created}`, { user: 'demo' });
    assert.equal(
      (await getPort(t, created)).status,
      404,
      'a port Nova created for the attach is deleted on detach',
    );
  });

  it('boots from a volume built from an image, and deletes it on termination', async () => {
    const res = await nova(t, 'POST', '/servers', {
      user: 'demo',
      body: {
        server: {
          name: 'bfv',
          flavorRef: '1',
          networks: 'none',
          block_device_mapping_v2: [
            {
              boot_index: 0,
              uuid: image,
              source_type: 'image',
              destination_type: 'volume',
              volume_size: 2,
              delete_on_termination: true,
            },
          ],
        },
      },
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const id = res.body.server.id;
    const s = await waitFor(t, 'demo', id, 'ACTIVE');
    assert.equal(s.image, '');
    assert.equal(s['os-extended-volumes:volumes_attached'].length, 1);
    const { id: volumeId, delete_on_termination } = s['os-extended-volumes:volumes_attached'][0];
    assert.equal(delete_on_termination, true);
    assert.equal(volume(volumeId)?.status, 'in-use');
    assert.equal(volume(volumeId)?.size, 2);

    const attachments = await nova(t, 'GET', `/servers/${id}/os-volume_attachments`, { user: 'demo' });
    assert.equal(attachments.body.volumeAttachments[0].device, '/dev/vda');
    const root = await nova(t, 'DELETE', `/servers/${id}/os-volume_attachments/${volumeId}`, {
      user: 'demo',
    });
    assert.equal(root.status, 400);

    await nova(t, 'DELETE', `/servers/${id}`, { user: 'demo' });
    await waitGone(t, 'demo', id);
    await eventually(() => volume(volumeId) === undefined, { what: 'boot volume deleted' });
  });

  it('boots from an existing volume and leaves it available after delete; attaches data volumes', async () => {
    const boot0 = t.cloud.volume.createVolume({ project_id: demoProject, size: 1, imageRef: image });
    const data = t.cloud.volume.createVolume({ project_id: demoProject, size: 1 });
    await eventually(
      () => volume(boot0.id)?.status === 'available' && volume(data.id)?.status === 'available',
    );
    const bad = await nova(t, 'POST', '/servers', {
      user: 'demo',
      body: {
        server: {
          name: 'x',
          flavorRef: '1',
          networks: 'none',
          block_device_mapping_v2: [
            {
              boot_index: 0,
              uuid: 'f0000000-0000-4000-8000-000000000000',
              source_type: 'volume',
              destination_type: 'volume',
            },
          ],
        },
      },
    });
    assert.equal(
      bad.body.badRequest.message,
      'Block Device Mapping is Invalid: failed to get volume f0000000-0000-4000-8000-000000000000.',
    );

    const id = await boot(t, 'demo', {
      name: 'from-volume',
      block_device_mapping_v2: [
        { boot_index: 0, uuid: boot0.id, source_type: 'volume', destination_type: 'volume' },
      ],
    });
    await waitFor(t, 'demo', id, 'ACTIVE');
    assert.equal(volume(boot0.id)?.status, 'in-use');

    const att = await nova(t, 'POST', `/servers/${id}/os-volume_attachments`, {
      user: 'demo',
      body: { volumeAttachment: { volumeId: data.id } },
    });
    assert.equal(att.status, 200);
    assert.deepEqual(att.body.volumeAttachment, {
      id: data.id,
      serverId: id,
      volumeId: data.id,
      device: '/dev/vdb',
      tag: null,
      delete_on_termination: false,
    });
    const twice = await nova(t, 'POST', `/servers/${id}/os-volume_attachments`, {
      user: 'demo',
      body: { volumeAttachment: { volumeId: data.id } },
    });
    assert.equal(twice.status, 400);
    assert.equal(
      (await nova(t, 'DELETE', `/servers/${id}/os-volume_attachments/${data.id}`, { user: 'demo' })).status,
      202,
    );
    assert.equal(volume(data.id)?.status, 'available');

    await nova(t, 'DELETE', `/servers/${id}`, { user: 'demo' });
    await waitGone(t, 'demo', id);
    assert.equal(volume(boot0.id)?.status, 'available', 'a volume the user brought survives');
  });

  it('ends in ERROR with a fault when error-on-create is injected, releasing its ports', async () => {
    const fault = await admin('POST', '/faults', {
      kind: 'error-on-create',
      service: 'nova',
      resource: 'server',
      times: 1,
    });
    assert.equal(fault.status, 201);
    const id = await boot(t, 'demo', {
      name: 'doomed',
      imageRef: image,
      networks: [{ uuid: net.networkId }],
    });
    const s = await waitFor(t, 'demo', id, 'ERROR');
    assert.equal(s.fault.code, 500);
    assert.match(s.fault.message, /^Build of instance .* aborted: /);
    assert.match(s.fault.created, /Z$/);
    assert.deepEqual(s.addresses, {});
    const ports = await t.request('neutron', 'GET', `/v2.0/ports?device_id=${id}`, { user: 'demo' });
    assert.equal(ports.body.ports.length, 0);
    assert.equal(
      (await action(id, { 'os-stop': null })).body.conflictingRequest.message,
      `Cannot 'stop' instance ${id} while it is in launched_at None`,
    );
    assert.equal((await nova(t, 'DELETE', `/servers/${id}`, { user: 'demo' })).status, 204);
    await waitGone(t, 'demo', id);
  });

  it('keeps a stuck server in BUILD, deletable at once; the admin API forces states', async () => {
    await admin('POST', '/faults', { kind: 'stuck', service: 'nova', resource: 'server', times: 1 });
    const stuck = await boot(t, 'demo', { name: 'stuck', imageRef: image });
    await new Promise((r) => setTimeout(r, 60));
    const s = (await nova(t, 'GET', `/servers/${stuck}`, { user: 'demo' })).body.server;
    assert.equal(s.status, 'BUILD');
    assert.equal(s['OS-EXT-STS:task_state'], 'scheduling');
    assert.equal((await nova(t, 'DELETE', `/servers/${stuck}`, { user: 'demo' })).status, 204);
    assert.equal(
      (await nova(t, 'GET', `/servers/${stuck}`, { user: 'demo' })).status,
      404,
      'never scheduled: gone at once',
    );

    const id = await boot(t, 'demo', { name: 'forced', imageRef: image });
    await waitFor(t, 'demo', id, 'ACTIVE');
    assert.equal((await admin('POST', `/state/nova/server/${id}`, { status: 'ERROR' })).status, 204);
    const err = (await nova(t, 'GET', `/servers/${id}`, { user: 'demo' })).body.server;
    assert.equal(err.status, 'ERROR');
    assert.equal(err.fault.code, 500);
    assert.equal((await admin('POST', `/state/nova/server/${id}`, { status: 'SHUTOFF' })).status, 204);
    assert.equal((await nova(t, 'GET', `/servers/${id}`, { user: 'demo' })).body.server.status, 'SHUTOFF');
    assert.equal((await admin('POST', '/state/nova/server/nope', { status: 'ERROR' })).status, 404);
    const reset = await action(id, { 'os-resetState': { state: 'active' } }, 'admin');
    assert.equal(reset.status, 202);
    assert.equal((await action(id, { 'os-resetState': { state: 'active' } })).status, 403);
    assert.equal((await nova(t, 'GET', `/servers/${id}`, { user: 'demo' })).body.server.status, 'ACTIVE');
  });

  it('places server group members: anti-affinity fills the single host, soft policies always fit', async () => {
    const group = await nova(t, 'POST', '/os-server-groups', {
      user: 'demo',
      body: { server_group: { name: 'spread', policy: 'anti-affinity' } },
    });
    const gid = group.body.server_group.id;
    const hints = { 'os:scheduler_hints': { group: gid } };
    const one = await boot(t, 'demo', { name: 'aa-1', imageRef: image }, hints);
    await waitFor(t, 'demo', one, 'ACTIVE');
    const two = await boot(t, 'demo', { name: 'aa-2', imageRef: image }, hints);
    const failed = await waitFor(t, 'demo', two, 'ERROR');
    assert.equal(failed.fault.message, 'No valid host was found. There are not enough hosts available.');
    const shown = (await nova(t, 'GET', `/servers/${one}`, { user: 'demo' })).body.server;
    assert.deepEqual(shown.server_groups, [gid]);
    const members = (await nova(t, 'GET', `/os-server-groups/${gid}`, { user: 'demo' })).body.server_group
      .members;
    assert.deepEqual(members.sort(), [one, two].sort());
    await nova(t, 'DELETE', `/servers/${two}`, { user: 'demo' });
    await waitGone(t, 'demo', two);
    assert.deepEqual(
      (await nova(t, 'GET', `/os-server-groups/${gid}`, { user: 'demo' })).body.server_group.members,
      [one],
    );

    const soft = await nova(t, 'POST', '/os-server-groups', {
      user: 'demo',
      body: { server_group: { name: 'soft', policy: 'soft-anti-affinity' } },
    });
    const softHints = { 'os:scheduler_hints': { group: soft.body.server_group.id } };
    const ids = [
      await boot(t, 'demo', { name: 'saa-1', imageRef: image }, softHints),
      await boot(t, 'demo', { name: 'saa-2', imageRef: image }, softHints),
    ];
    for (const sid of ids) await waitFor(t, 'demo', sid, 'ACTIVE');
    const missing = await nova(t, 'POST', '/servers', {
      user: 'demo',
      body: {
        server: { name: 'x', imageRef: image, flavorRef: '1', networks: 'none' },
        'os:scheduler_hints': { group: 'f0000000-0000-4000-8000-000000000000' },
      },
    });
    assert.equal(missing.status, 400);
  });
});
