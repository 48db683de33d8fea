import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';
import { nova } from './testing/fixtures.ts';

describe('nova versions and microversions', () => {
  let t: TestCloud;
  before(async () => {
    t = await startTestCloud();
  });
  after(() => t.close());

  it('serves the version list at the root without a token or microversion headers', async () => {
    const res = await t.request('nova', 'GET', '/', { token: null });
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.versions.map((v: any) => [v.id, v.status, v.version, v.min_version]),
      [
        ['v2.0', 'SUPPORTED', '', ''],
        ['v2.1', 'CURRENT', '2.93', '2.1'],
      ],
    );
    assert.equal(res.body.versions[1].links[0].href, `${t.cloud.serviceUrl('nova')}/v2.1/`);
    assert.equal(res.headers.get('openstack-api-version'), null);
  });

  it('serves the v2.1 document with the default microversion echoed', async () => {
    const res = await t.request('nova', 'GET', '/v2.1', { token: null });
    assert.equal(res.status, 200);
    assert.equal(res.body.version.id, 'v2.1');
    assert.equal(res.body.version.version, '2.93');
    assert.equal(
      res.body.version['media-types'][0].type,
      'application/vnd.openstack.compute+json;version=2.1',
    );
    assert.equal(res.headers.get('openstack-api-version'), 'compute 2.1');
    assert.equal(res.headers.get('x-openstack-nova-api-version'), '2.1');
    assert.equal(res.headers.get('vary'), 'OpenStack-API-Version, X-OpenStack-Nova-API-Version');
    assert.equal(res.headers.get('x-compute-request-id'), res.headers.get('x-openstack-request-id'));
  });

  it('defaults to 2.1, accepts the legacy header and latest', async () => {
    const plain = await t.request('nova', 'GET', '/v2.1/servers', { user: 'demo' });
    assert.equal(plain.status, 200);
    assert.deepEqual(plain.body, { servers: [] });
    assert.equal(plain.headers.get('openstack-api-version'), 'compute 2.1');

    const legacy = await t.request('nova', 'GET', '/v2.1/servers', {
      user: 'demo',
      headers: { 'X-OpenStack-Nova-API-Version': '2.60' },
    });
    assert.equal(legacy.headers.get('openstack-api-version'), 'compute 2.60');

    const latest = await nova(t, 'GET', '/servers', { user: 'demo', version: 'latest' });
    assert.equal(latest.headers.get('x-openstack-nova-api-version'), '2.93');

    // Another service's entry in the standard header is ignored.
    const other = await t.request('nova', 'GET', '/v2.1/servers', {
      user: 'demo',
      headers: { 'OpenStack-API-Version': 'placement 1.10, compute 2.53' },
    });
    assert.equal(other.headers.get('x-openstack-nova-api-version'), '2.53');
  });

  it('answers 406 computeFault outside 2.1-2.93, echoing the asked version', async () => {
    const res = await nova(t, 'GET', '/servers', { user: 'demo', version: '9.99' });
    assert.equal(res.status, 406);
    assert.deepEqual(res.body, {
      computeFault: {
        code: 406,
        message: 'Version 9.99 is not supported by the API. Minimum is 2.1 and maximum is 2.93.',
      },
    });
    assert.equal(res.headers.get('openstack-api-version'), 'compute 9.99');
    assert.match(res.headers.get('content-type') ?? '', /application\/json; charset=UTF-8/);
    assert.equal((await nova(t, 'GET', '/servers', { user: 'demo', version: '2.94' })).status, 406);
    assert.equal((await nova(t, 'GET', '/servers', { user: 'demo', version: '2.0' })).status, 406);
  });

  it('answers 400 for a malformed version, without version headers', async () => {
    const res = await nova(t, 'GET', '/servers', { user: 'demo', version: '2.x' });
    assert.equal(res.status, 400);
    assert.match(res.body.badRequest.message, /API Version String 2.x is of invalid format/);
    assert.equal(res.headers.get('openstack-api-version'), null);
  });

  it("renders keystonemiddleware's 401 and webob's 404 for unknown paths", async () => {
    const unauth = await t.request('nova', 'GET', '/v2.1/servers', { token: null });
    assert.equal(unauth.status, 401);
    assert.deepEqual(unauth.body, {
      error: {
        code: 401,
        title: 'Unauthorized',
        message: 'The request you have made requires authentication.',
      },
    });
    assert.match(
      unauth.headers.get('www-authenticate') ?? '',
      /^Keystone uri="http:\/\/127\.0\.0\.1:\d+\/identity"$/,
    );
    assert.equal(unauth.headers.get('openstack-api-version'), null);

    const missing = await nova(t, 'GET', '/no-such-thing', { user: 'demo' });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, '404 Not Found');
  });

  it('renders malformed JSON as badRequest with the negotiated version', async () => {
    const res = await nova(t, 'POST', '/servers', { user: 'demo', raw: '{"server": ' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { badRequest: { code: 400, message: 'Malformed request body' } });
    assert.equal(res.headers.get('openstack-api-version'), 'compute 2.79');
  });
});
