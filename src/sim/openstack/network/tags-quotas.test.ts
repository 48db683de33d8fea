import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { neutron, neutronError, type Neutron } from './testing/neutron.ts';

describe('neutron: tags, quotas and state', () => {
  let t: TestCloud;
  let n: Neutron;
  before(async () => {
    t = await startTestCloud();
    n = neutron(t);
  });
  after(async () => t.close());

  it('tags a network one by one and as a whole, bumping its revision', async () => {
    const { net } = await n.network('demo', '10.50.0.0/24');
    const rev = (await n.get(`/v2.0/networks/${net.id}`, 'demo')).body.network.revision_number;
    const put = await n.put(`/v2.0/networks/${net.id}/tags/red`, undefined, 'demo');
    assert.equal(put.status, 201);
    assert.equal(put.body, undefined);
    assert.equal((await n.get(`/v2.0/networks/${net.id}/tags/red`, 'demo')).status, 204);
    neutronError(
      await n.get(`/v2.0/networks/${net.id}/tags/zzz`, 'demo'),
      404,
      'TagNotFound',
      'Tag zzz could not be found.',
    );
    const all = await n.put(`/v2.0/networks/${net.id}/tags`, { tags: ['b', 'a', 'red'] }, 'demo');
    assert.deepEqual(all.body, { tags: ['a', 'b', 'red'] });
    const shown = (await n.get(`/v2.0/networks/${net.id}`, 'demo')).body.network;
    assert.deepEqual(shown.tags, ['a', 'b', 'red']);
    assert.equal(shown.revision_number, rev + 2);
    assert.equal((await n.del(`/v2.0/networks/${net.id}/tags/a`, 'demo')).status, 204);
    neutronError(await n.del(`/v2.0/networks/${net.id}/tags/a`, 'demo'), 404, 'TagNotFound');
    assert.deepEqual((await n.get(`/v2.0/networks/${net.id}/tags`, 'demo')).body, { tags: ['b', 'red'] });
    assert.equal((await n.del(`/v2.0/networks/${net.id}/tags`, 'demo')).status, 204);
    assert.deepEqual((await n.get(`/v2.0/networks/${net.id}/tags`, 'demo')).body, { tags: [] });
    neutronError(
      await n.put(`/v2.0/networks/${net.id}/tags/${'x'.repeat(61)}`, undefined, 'demo'),
      400,
      'InvalidInput',
    );
    neutronError(
      await n.put(`/v2.0/networks/${crypto.randomUUID()}/tags/x`, undefined, 'demo'),
      404,
      'TagResourceNotFound',
    );
    neutronError(
      await n.put(`/v2.0/networks/${net.id}/tags/x`, undefined, 'alt_demo'),
      404,
      'TagResourceNotFound',
    );
  });

  it('filters every collection with tags, tags-any, not-tags and not-tags-any', async () => {
    const { net } = await n.network('demo', '10.51.0.0/24');
    const mk = async (tags: string[]) => {
      const p = await n.port('demo', { network_id: net.id });
      await n.put(`/v2.0/ports/${p.id}/tags`, { tags }, 'demo');
      return p.id as string;
    };
    const ab = await mk(['a', 'b']);
    const a = await mk(['a']);
    const c = await mk(['c']);
    const q = async (filter: string) =>
      (await n.get(`/v2.0/ports?network_id=${net.id}&${filter}`, 'demo')).body.ports
        .map((p: { id: string }) => p.id)
        .sort();
    assert.deepEqual(await q('tags=a,b'), [ab]);
    assert.deepEqual(await q('tags=a&tags=b'), [ab]);
    assert.deepEqual(await q('tags-any=b,c'), [ab, c].sort());
    assert.deepEqual(await q('not-tags=a,b'), [a, c].sort());
    assert.deepEqual(await q('not-tags-any=b,c'), [a]);
    const sg = (await n.post('/v2.0/security-groups', { security_group: { name: 'tagged' } }, 'demo')).body
      .security_group;
    await n.put(`/v2.0/security-groups/${sg.id}/tags/k8s`, undefined, 'demo');
    assert.deepEqual(
      (await n.get('/v2.0/security-groups?tags=k8s', 'demo')).body.security_groups.map(
        (g: { id: string }) => g.id,
      ),
      [sg.id],
    );
  });

  it('reports quota usage in details, and enforces limits an admin sets', async () => {
    const { net } = await n.network('alt_demo', '10.52.0.0/24');
    const project = net.project_id;
    const details = await n.get(`/v2.0/quotas/${project}/details.json`, 'alt_demo');
    assert.equal(details.status, 200);
    assert.deepEqual(Object.keys(details.body.quota), [
      'network',
      'subnet',
      'subnetpool',
      'port',
      'router',
      'floatingip',
      'rbac_policy',
      'security_group',
      'security_group_rule',
      'trunk',
    ]);
    assert.deepEqual(details.body.quota.network, { limit: 10_000, used: 1, reserved: 0 });
    assert.equal(details.body.quota.security_group.used, 1, 'the default group counts');
    assert.equal(details.body.quota.security_group_rule.used, 4);
    neutronError(await n.get(`/v2.0/quotas/${project}`, 'demo'), 403, 'PolicyNotAuthorized');
    neutronError(
      await n.put(`/v2.0/quotas/${project}`, { quota: { port: 1 } }, 'alt_demo'),
      403,
      'PolicyNotAuthorized',
    );
    const set = await n.put(`/v2.0/quotas/${project}`, { quota: { port: 1 } });
    assert.equal(set.body.quota.port, 1);
    await n.port('alt_demo', { network_id: net.id });
    neutronError(
      await n.post('/v2.0/ports', { port: { network_id: net.id } }, 'alt_demo'),
      409,
      'OverQuota',
      "Quota exceeded for resources: ['port'].",
    );
    assert.equal((await n.get('/v2.0/quotas')).body.quotas.length, 1);
    assert.equal((await n.del(`/v2.0/quotas/${project}`)).status, 204);
    await n.port('alt_demo', { network_id: net.id });
  });

  it('reports network IP availability to admins', async () => {
    const { net, subnet } = await n.network('demo', '10.53.0.0/29');
    await n.port('demo', { network_id: net.id });
    const res = await n.get(`/v2.0/network-ip-availabilities/${net.id}`);
    assert.equal(res.body.network_ip_availability.total_ips, 5);
    assert.equal(res.body.network_ip_availability.used_ips, 1);
    assert.equal(res.body.network_ip_availability.subnet_ip_availability[0].subnet_id, subnet.id);
    neutronError(
      await n.get(`/v2.0/network-ip-availabilities/${net.id}`, 'demo'),
      403,
      'PolicyNotAuthorized',
    );
  });

  it('saves and restores its state, IPAM included', async () => {
    const { net } = await n.network('demo', '10.54.0.0/24');
    const p1 = await n.port('demo', { network_id: net.id });
    const snapshot = JSON.parse(JSON.stringify(t.cloud.snapshot()));
    const other = await startTestCloud();
    try {
      other.cloud.restore(snapshot);
      const o = neutron(other);
      const restored = await o.get(`/v2.0/ports/${p1.id}`);
      assert.deepEqual(restored.body.port.fixed_ips, p1.fixed_ips);
      const p2 = await o.port('admin', { network_id: net.id, project_id: net.project_id });
      assert.notEqual(p2.fixed_ips[0].ip_address, p1.fixed_ips[0].ip_address);
      assert.equal(
        (await o.get('/v2.0/networks?name=public')).body.networks.length,
        1,
        'no second seed after a restore',
      );
    } finally {
      await other.close();
    }
  });
});
