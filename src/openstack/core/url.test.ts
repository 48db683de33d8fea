import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hasVersionSegment, joinUrl, pathOf, resolveLink, safeUrl, withQuery } from './url.ts';

describe('URLs', () => {
  it('appends queries, repeating keys for lists and leaving out undefined', () => {
    assert.equal(
      withQuery('https://n/v2.0/ports?fields=id', {
        id: ['a', 'b'],
        admin_state_up: true,
        limit: 2,
        name: undefined,
      }),
      'https://n/v2.0/ports?fields=id&id=a&id=b&admin_state_up=true&limit=2',
    );
  });

  it('redacts secret query values and credentials in URLs meant for logs', () => {
    assert.equal(
      safeUrl('https://u:p@s/x?temp_url_sig=abc&marker=m'),
      'https://s/x?temp_url_sig=%5BREDACTED%5D&marker=m',
    );
    assert.equal(safeUrl('https://s/x?password=abc'), 'https://s/x?password=%5BREDACTED%5D');
    assert.equal(safeUrl('https://s/x?limit=1'), 'https://s/x?limit=1');
    assert.equal(pathOf('https://s/v2.0/ports?token=t'), '/v2.0/ports?token=%5BREDACTED%5D');
  });

  it('joins with one slash and detects versioned endpoints', () => {
    assert.equal(joinUrl('https://n/', '/v2.0/ports'), 'https://n/v2.0/ports');
    assert.ok(hasVersionSegment('https://nova/v2.1') && hasVersionSegment('https://cinder/v3/p1'));
    assert.ok(!hasVersionSegment('https://neutron:9696') && !hasVersionSegment('https://c/load-balancer'));
  });

  it('follows links under the endpoint as they are', () => {
    const link = 'http://127.0.0.1:9696/v2.0/networks?limit=1&marker=m';
    assert.equal(resolveLink(link, 'http://127.0.0.1:9696'), link);
  });

  it('rebases links that name another host or scheme onto the configured endpoint, never sending the token there', () => {
    assert.equal(
      resolveLink('http://neutron-internal:9696/v2.0/networks?marker=m', 'https://cloud.example/network'),
      'https://cloud.example/network/v2.0/networks?marker=m',
    );
    assert.equal(
      resolveLink('http://nova:8774/v2.1/servers/detail?marker=m', 'https://cloud.example:8774/v2.1'),
      'https://cloud.example:8774/v2.1/servers/detail?marker=m',
    );
    assert.equal(
      resolveLink('http://evil.example/steal', 'https://cloud.example/x'),
      'https://cloud.example/steal',
    );
  });

  it("resolves Glance's relative next under a path-prefixed endpoint", () => {
    assert.equal(
      resolveLink('http://h/v2/images?limit=1&marker=m', 'http://h/image'),
      'http://h/image/v2/images?limit=1&marker=m',
    );
  });
});
