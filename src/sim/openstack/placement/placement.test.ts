import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { PlacementStore } from './store.ts';

const mv = (v: string) => ({ headers: { 'OpenStack-API-Version': `placement ${v}` } });

describe('placement', () => {
  let t: TestCloud;
  let rp: string;

  before(async () => {
    t = await startTestCloud();
    const res = await t.request('placement', 'GET', '/resource_providers');
    rp = res.body.resource_providers[0].uuid;
  });
  after(() => t.close());

  it('serves the version document without a token', async () => {
    const res = await t.request('placement', 'GET', '', { token: null });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      versions: [
        {
          id: 'v1.0',
          max_version: '1.39',
          min_version: '1.0',
          status: 'CURRENT',
          links: [{ rel: 'self', href: '' }],
        },
      ],
    });
    assert.equal(res.headers.get('openstack-api-version'), 'placement 1.0');
    assert.equal(res.headers.get('vary'), 'openstack-api-version');
  });

  it('lists the compute node with links and tree fields by microversion', async () => {
    const old = await t.request('placement', 'GET', '/resource_providers');
    assert.equal(old.status, 200);
    const node = old.body.resource_providers[0];
    assert.equal(node.name, 'compute-0');
    assert.equal(node.generation, 2);
    assert.deepEqual(
      node.links.map((l: { rel: string }) => l.rel),
      ['self', 'inventories', 'usages'],
    );
    assert.equal('root_provider_uuid' in node, false);
    assert.equal(old.headers.get('last-modified'), null);

    const recent = await t.request('placement', 'GET', '/resource_providers', mv('1.39'));
    const r = recent.body.resource_providers[0];
    assert.deepEqual(
      r.links.map((l: { rel: string }) => l.rel),
      ['self', 'inventories', 'usages', 'aggregates', 'traits', 'allocations'],
    );
    assert.equal(r.parent_provider_uuid, null);
    assert.equal(r.root_provider_uuid, r.uuid);
    assert.equal(recent.headers.get('openstack-api-version'), 'placement 1.39');
    assert.equal(recent.headers.get('cache-control'), 'no-cache');
    assert.ok(recent.headers.get('last-modified'));
    const byName = await t.request('placement', 'GET', '/resource_providers?name=nope');
    assert.deepEqual(byName.body.resource_providers, []);
  });

  it('shows inventories and usages like the fake driver', async () => {
    const inv = await t.request('placement', 'GET', `/resource_providers/${rp}/inventories`);
    assert.equal(inv.body.resource_provider_generation, 2);
    assert.deepEqual(inv.body.inventories.VCPU, {
      total: 1000,
      reserved: 0,
      min_unit: 1,
      max_unit: 1000,
      step_size: 1,
      allocation_ratio: 16,
    });
    assert.equal(inv.body.inventories.MEMORY_MB.reserved, 512);
    const usages = await t.request('placement', 'GET', `/resource_providers/${rp}/usages`);
    assert.deepEqual(usages.body, {
      resource_provider_generation: 2,
      usages: { VCPU: 0, MEMORY_MB: 0, DISK_GB: 0 },
    });
  });

  it('answers 404, 406 and 403 in the errors[] format', async () => {
    const id = randomUUID();
    const missing = await t.request('placement', 'GET', `/resource_providers/${id}`);
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('openstack-api-version'), 'placement 1.0');
    assert.equal(missing.headers.get('vary'), null);
    const [err] = missing.body.errors;
    assert.equal(err.status, 404);
    assert.equal(err.title, 'Not Found');
    assert.equal(
      err.detail,
      `The resource could not be found.\n\n No resource provider with uuid ${id} found  `,
    );
    assert.equal(err.request_id, missing.headers.get('x-openstack-request-id'));
    assert.equal('code' in err, false);
    const coded = await t.request('placement', 'GET', `/resource_providers/${id}`, mv('1.23'));
    assert.equal(coded.body.errors[0].code, 'placement.undefined_code');

    const tooNew = await t.request('placement', 'GET', '/resource_providers', mv('9.99'));
    assert.equal(tooNew.status, 406);
    assert.equal(tooNew.headers.get('openstack-api-version'), null);
    assert.deepEqual(tooNew.body.errors[0], {
      status: 406,
      title: 'Not Acceptable',
      detail:
        'The resource could not be generated that was acceptable to your browser (content of type application/json. \n\n Invalid microversion: Unacceptable version header: 9.99',
      request_id: tooNew.headers.get('x-openstack-request-id'),
      max_version: '1.39',
      min_version: '1.0',
    });

    const demo = await t.request('placement', 'GET', '/resource_providers', { user: 'demo' });
    assert.equal(demo.status, 403);
    assert.equal(
      demo.body.errors[0].detail,
      'Access was denied to this resource.\n\n Policy does not allow placement:resource_providers:list to be performed.  ',
    );
    assert.equal(demo.headers.get('openstack-api-version'), 'placement 1.0');

    const tooOld = await t.request('placement', 'GET', '/traits');
    assert.equal(tooOld.status, 404, 'traits need 1.6');
    const noToken = await t.request('placement', 'GET', '/resource_providers', { token: null });
    assert.equal(noToken.status, 401);
    assert.equal(noToken.body.error.code, 401);
  });

  it('filters traits by prefix in database order', async () => {
    const res = await t.request('placement', 'GET', '/traits?name=startswith:COMPUTE_NET', mv('1.6'));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.traits.slice(0, 4), [
      'COMPUTE_NET_ATTACH_INTERFACE',
      'COMPUTE_NET_VIF_MODEL_E1000E',
      'COMPUTE_NET_VIF_MODEL_RTL8139',
      'COMPUTE_NET_VIF_MODEL_VIRTIO',
    ]);
    assert.equal(res.body.traits.length, 14);
    const bad = await t.request('placement', 'GET', '/traits?name=COMPUTE', mv('1.6'));
    assert.equal(bad.status, 400);
    assert.equal((await t.request('placement', 'PUT', '/traits/CUSTOM_GOLD', mv('1.6'))).status, 201);
    assert.equal((await t.request('placement', 'PUT', '/traits/CUSTOM_GOLD', mv('1.6'))).status, 204);
    assert.equal((await t.request('placement', 'GET', '/traits/CUSTOM_GOLD', mv('1.6'))).status, 204);
    assert.equal((await t.request('placement', 'PUT', '/traits/GOLD', mv('1.6'))).status, 400);
    const rpTraits = await t.request('placement', 'GET', `/resource_providers/${rp}/traits`, mv('1.6'));
    assert.ok(rpTraits.body.traits.includes('COMPUTE_NODE'));
  });

  it('offers allocation candidates and accounts allocations in usages', async () => {
    const res = await t.request(
      'placement',
      'GET',
      '/allocation_candidates?resources=VCPU:1,MEMORY_MB:128',
      mv('1.36'),
    );
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.allocation_requests, [
      { allocations: { [rp]: { resources: { VCPU: 1, MEMORY_MB: 128 } } }, mappings: { '': [rp] } },
    ]);
    const summary = res.body.provider_summaries[rp];
    assert.deepEqual(summary.resources.VCPU, { capacity: 16000, used: 0 });
    assert.deepEqual(summary.resources.MEMORY_MB, { capacity: 1199232, used: 0 });
    assert.deepEqual(summary.resources.DISK_GB, { capacity: 600000, used: 0 });
    assert.ok(summary.traits.includes('COMPUTE_NODE'));
    assert.equal(summary.root_provider_uuid, rp);

    const old = await t.request('placement', 'GET', '/allocation_candidates?resources=VCPU:1', mv('1.10'));
    assert.deepEqual(old.body.allocation_requests, [
      { allocations: [{ resource_provider: { uuid: rp }, resources: { VCPU: 1 } }] },
    ]);
    assert.deepEqual(Object.keys(old.body.provider_summaries[rp].resources), ['VCPU']);
    const none = await t.request(
      'placement',
      'GET',
      '/allocation_candidates?resources=VCPU:20000',
      mv('1.36'),
    );
    assert.deepEqual(none.body.allocation_requests, []);
    const malformed = await t.request(
      'placement',
      'GET',
      '/allocation_candidates?resources=VCPU',
      mv('1.36'),
    );
    assert.equal(malformed.status, 400);

    const consumer = randomUUID();
    const put = await t.request('placement', 'PUT', `/allocations/${consumer}`, {
      ...mv('1.36'),
      body: {
        allocations: { [rp]: { resources: { VCPU: 2, MEMORY_MB: 512 } } },
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
      },
    });
    assert.equal(put.status, 204);
    const usages = await t.request('placement', 'GET', `/resource_providers/${rp}/usages`);
    assert.equal(usages.body.usages.VCPU, 2);
    assert.equal(usages.body.resource_provider_generation, 3);
    const shown = await t.request('placement', 'GET', `/allocations/${consumer}`, mv('1.36'));
    assert.equal(shown.body.consumer_generation, 1);
    assert.deepEqual(shown.body.allocations[rp].resources, { VCPU: 2, MEMORY_MB: 512 });
    const stale = await t.request('placement', 'PUT', `/allocations/${consumer}`, {
      ...mv('1.36'),
      body: {
        allocations: { [rp]: { resources: { VCPU: 1 } } },
        project_id: 'p',
        user_id: 'u',
        consumer_generation: null,
      },
    });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.errors[0].code, 'placement.concurrent_update');
    const projectUsage = await t.request('placement', 'GET', '/usages?project_id=p', mv('1.9'));
    assert.deepEqual(projectUsage.body.usages, { VCPU: 2, MEMORY_MB: 512 });
    assert.equal((await t.request('placement', 'DELETE', `/allocations/${consumer}`)).status, 204);
    assert.equal((await t.request('placement', 'DELETE', `/allocations/${consumer}`)).status, 404);
    const after = await t.request('placement', 'GET', `/resource_providers/${rp}/usages`);
    assert.equal(after.body.usages.VCPU, 0);
  });

  it('lets Nova claim and release a flavor on the compute node', () => {
    const store = new PlacementStore(() => {});
    const node = store.seedComputeNode('compute-0');
    store.allocate('server-1', 'p', 'u', { VCPU: 4, MEMORY_MB: 2048, DISK_GB: 20 });
    assert.deepEqual(store.usage(node), { VCPU: 4, MEMORY_MB: 2048, DISK_GB: 20 });
    assert.throws(() => store.allocate('server-2', 'p', 'u', { VCPU: 20_000 }), /exceed the capacity/);
    store.release('server-1');
    assert.deepEqual(store.usage(node), { VCPU: 0, MEMORY_MB: 0, DISK_GB: 0 });
  });
});
