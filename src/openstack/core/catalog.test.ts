import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { selectEndpoint } from './catalog.ts';
import { EndpointNotFoundError } from './errors.ts';
import type { CatalogService } from './keystone.ts';

const ep = (iface: string, region: string, url: string) => ({
  interface: iface,
  region_id: region,
  region,
  url,
});

const CATALOG: CatalogService[] = [
  {
    type: 'network',
    name: 'neutron',
    endpoints: [
      ep('public', 'RegionOne', 'https://pub-one/network'),
      ep('internal', 'RegionOne', 'http://int-one:9696'),
      ep('public', 'RegionTwo', 'https://pub-two/network'),
    ],
  },
  { type: 'volumev3', name: 'cinderv3', endpoints: [ep('public', 'RegionOne', 'https://cinder/v3/p1')] },
  { type: 'compute', name: 'nova', endpoints: [ep('publicURL', 'RegionOne', 'https://nova/v2.1')] },
];

describe('endpoint selection', () => {
  it('picks by type, interface and region', () => {
    const pick = (iface: string, region?: string) =>
      selectEndpoint(CATALOG, { type: 'network', interface: iface, region }).url;
    assert.equal(pick('public', 'RegionOne'), 'https://pub-one/network');
    assert.equal(pick('internal', 'RegionOne'), 'http://int-one:9696');
    assert.equal(pick('public', 'RegionTwo'), 'https://pub-two/network');
    assert.equal(pick('internal'), 'http://int-one:9696');
  });

  it('finds a service under an alias and reads v2-style interface names', () => {
    const cinder = selectEndpoint(CATALOG, {
      type: 'block-storage',
      interface: 'public',
      region: 'RegionOne',
    });
    assert.deepEqual([cinder.url, cinder.type], ['https://cinder/v3/p1', 'volumev3']);
    assert.equal(selectEndpoint(CATALOG, { type: 'compute', interface: 'public' }).url, 'https://nova/v2.1');
  });

  it('refuses to guess a region when the service is in several', () => {
    assert.throws(
      () => selectEndpoint(CATALOG, { type: 'network', interface: 'public' }),
      (e: unknown) =>
        EndpointNotFoundError.is(e) &&
        /several regions \(RegionOne, RegionTwo\); set the region/.test(e.message),
    );
  });

  it('names the type, interface, region and what the catalog has when nothing matches', () => {
    assert.throws(
      () => selectEndpoint(CATALOG, { type: 'network', interface: 'admin', region: 'RegionOne' }),
      (e: unknown) =>
        EndpointNotFoundError.is(e) &&
        e.serviceType === 'network' &&
        e.message ===
          'no network endpoint for interface admin, region RegionOne; the catalog has: network (public RegionOne, internal RegionOne, public RegionTwo); volumev3 (public RegionOne); compute (public RegionOne)',
    );
    assert.throws(
      () => selectEndpoint(CATALOG, { type: 'load-balancer', interface: 'public' }),
      /no load-balancer endpoint/,
    );
  });
});
