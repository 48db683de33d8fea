import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiVersions, parseApiVersion } from './api-version.ts';
import { DiscoveryCache, parseVersionDocument, versionDocumentUrl } from './discovery.ts';

describe('version discovery', () => {
  it('finds the version document of versioned and unversioned endpoints', () => {
    assert.equal(versionDocumentUrl('http://h:8774/v2.1'), 'http://h:8774/v2.1/');
    assert.equal(versionDocumentUrl('http://h/volume/v3/p1'), 'http://h/volume/v3/');
    assert.equal(versionDocumentUrl('http://h:9876'), 'http://h:9876/');
    assert.equal(versionDocumentUrl('http://h/load-balancer/'), 'http://h/load-balancer/');
  });

  it("reads Nova's microversion range, Octavia's version list and Placement's range", () => {
    const nova = parseVersionDocument('http://h/v2.1', {
      version: { id: 'v2.1', status: 'CURRENT', version: '2.93', min_version: '2.1' },
    });
    assert.equal(nova.toString(), '2.1 – 2.93');
    assert.ok(
      nova.supports('2.79') && nova.supports('2.93') && !nova.supports('2.94') && !nova.supports('2.0'),
    );
    const octavia = parseVersionDocument('http://h:9876', {
      versions: ['v2.0', 'v2.1', 'v2.10', 'v2.26'].map((id) => ({ id, status: 'SUPPORTED' })),
    });
    assert.equal(octavia.toString(), '2.0 – 2.26');
    assert.ok(octavia.supports('2.10') && !octavia.supports('2.27'));
    const placement = parseVersionDocument('http://h:8778', {
      versions: [{ id: 'v1.0', max_version: '1.39', min_version: '1.0' }],
    });
    assert.equal(placement.toString(), '1.0 – 1.39');
    const nova2 = parseVersionDocument('http://h/v2.1', {
      versions: [
        { id: 'v2.0', version: '', min_version: '' },
        { id: 'v2.1', version: '2.93', min_version: '2.1' },
      ],
    });
    assert.equal(nova2.toString(), '2.1 – 2.93');
    const keystone = parseVersionDocument('http://k:5000', { versions: { values: [{ id: 'v3.14' }] } });
    assert.equal(keystone.toString(), '3.14 – 3.14');
  });

  it('compares versions as numbers', () => {
    const v = new ApiVersions({ endpoint: 'x', min: parseApiVersion('2.1'), max: parseApiVersion('2.10') });
    assert.ok(v.supports('2.9') && v.supports('v2.10') && !v.supports('2.11'));
    assert.throws(() => v.supports('latest'), /not an API version/);
    assert.throws(() => parseVersionDocument('x', { nothing: true }), /neither "version" nor "versions"/);
  });

  it('loads each document once, even for concurrent callers', async () => {
    const cache = new DiscoveryCache();
    let loads = 0;
    const load = async () => {
      loads++;
      await new Promise((r) => setTimeout(r, 5));
      return new ApiVersions({ endpoint: 'x', listed: [parseApiVersion('2.0')!] });
    };
    await Promise.all(Array.from({ length: 10 }, () => cache.get('u', load, Date.now())));
    await cache.get('u', load, Date.now());
    assert.equal(loads, 1);
    await cache.get('u', load, Date.now() + cache.ttlMs + 1);
    assert.equal(loads, 2);
  });
});
