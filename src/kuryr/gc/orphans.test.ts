import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findOrphans, type CloudInventory, type References } from './orphans.ts';

const TAGS = ['kuryr-cluster-a'];
const NOW = Date.parse('2026-11-27T12:00:00Z');
const OLD = '2026-11-27T11:00:00Z';
const FRESH = '2026-11-27T11:59:00Z';

const none: References = {
  ports: new Set(),
  networks: new Set(),
  subnets: new Set(),
  loadBalancers: new Set(),
};

function cloud(partial: Partial<CloudInventory>): CloudInventory {
  return { ports: [], networks: [], subnets: [], loadBalancers: [], trunkSubports: new Set(), ...partial };
}

const port = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  name: id,
  network_id: 'n1',
  device_owner: 'compute:kuryr',
  device_id: '',
  tags: TAGS,
  updated_at: OLD,
  ...extra,
});

describe('kuryr gc: orphans', () => {
  it('lists our tagged objects nothing refers to, old enough, and nothing else', () => {
    const inv = cloud({
      ports: [
        port('p-orphan'),
        port('p-kuryrport'),
        port('p-on-trunk', { device_owner: 'trunk:subport', device_id: 't1' }),
        port('p-untagged', { tags: [] }),
        port('p-other-cluster', { tags: ['kuryr-cluster-b'] }),
        port('p-fresh', { updated_at: FRESH }),
        port('p-router', { device_owner: 'network:router_interface' }),
      ],
      networks: [
        { id: 'n-orphan', name: 'x', tags: TAGS, updated_at: OLD },
        { id: 'n-recorded', name: 'y', tags: TAGS, updated_at: OLD },
        { id: 'n-by-subnet', name: 'z', tags: TAGS, updated_at: OLD },
        { id: 'n-untagged', name: 'w', tags: [], updated_at: OLD },
      ],
      subnets: [
        { id: 's-of-orphan-net', name: 'a', network_id: 'n-orphan', tags: TAGS, updated_at: OLD },
        { id: 's-recorded', name: 'b', network_id: 'n-by-subnet', tags: TAGS, updated_at: OLD },
        { id: 's-extra', name: 'c', network_id: 'n-recorded', tags: TAGS, updated_at: OLD },
      ],
      loadBalancers: [
        { id: 'lb-orphan', name: 'lb1', tags: TAGS, updated_at: OLD },
        { id: 'lb-klb', name: 'lb2', tags: TAGS, updated_at: OLD },
      ],
      trunkSubports: new Set(['p-on-trunk']),
    });
    const refs: References = {
      ports: new Set(['p-kuryrport']),
      networks: new Set(['n-recorded']),
      subnets: new Set(['s-recorded']),
      loadBalancers: new Set(['lb-klb']),
    };
    const found = findOrphans(inv, refs, { tags: TAGS, nowMs: NOW });
    assert.deepEqual(found.map((o) => `${o.kind}:${o.id}`).sort(), [
      'loadbalancer:lb-orphan',
      'network:n-orphan',
      'port:p-orphan',
      'subnet:s-extra',
    ]);
  });

  it('takes nothing without owner tags, and honours a smaller minimum age', () => {
    const inv = cloud({ ports: [port('p-fresh', { updated_at: FRESH })] });
    assert.deepEqual(findOrphans(inv, none, { tags: [], nowMs: NOW }), []);
    assert.deepEqual(
      findOrphans(inv, none, { tags: TAGS, nowMs: NOW, minAgeMs: 0 }).map((o) => o.id),
      ['p-fresh'],
    );
  });
});
