import type { V1Node } from '@kubernetes/client-node';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { eligibleNodes, memberAddress, memberKey } from './members.ts';
import { matchesNodeSelector, parseNodeSelector } from './node-selector.ts';

const node = (name: string, labels: Record<string, string> = {}, extra: Partial<V1Node> = {}): V1Node => ({
  metadata: { name, labels },
  status: {
    addresses: [
      { type: 'Hostname', address: name },
      { type: 'ExternalIP', address: '203.0.113.5' },
      { type: 'InternalIP', address: '2001:db8::5' },
      { type: 'InternalIP', address: '10.0.0.5' },
    ],
  },
  ...extra,
});

describe('members', () => {
  it('leaves out excluded, autoscaler-doomed and unselected nodes', () => {
    const nodes = [
      node('a', { role: 'lb' }),
      node('b', { role: 'lb', 'node.kubernetes.io/exclude-from-external-load-balancers': '' }),
      node(
        'c',
        { role: 'lb' },
        { spec: { taints: [{ key: 'ToBeDeletedByClusterAutoscaler', effect: 'NoSchedule' }] } },
      ),
      node('d', { role: 'db' }),
      node('e'),
    ];
    assert.deepEqual(
      eligibleNodes(nodes, new Map()).map((n) => n.metadata?.name),
      ['a', 'd', 'e'],
    );
    assert.deepEqual(
      eligibleNodes(nodes, parseNodeSelector('role=lb').selector).map((n) => n.metadata?.name),
      ['a'],
    );
    assert.deepEqual(
      eligibleNodes(nodes, parseNodeSelector('role').selector).map((n) => n.metadata?.name),
      ['a', 'd'],
    );
  });

  it('reads node selectors as StringToMap, blanks around = kept', () => {
    assert.deepEqual(
      parseNodeSelector(' a=1, b ,c=, d=x=y').selector,
      new Map([
        ['a', '1'],
        ['b', ''],
        ['c', ''],
        ['d', 'x=y'],
      ]),
    );
    const spaced = parseNodeSelector('a = 1');
    assert.deepEqual(spaced.selector, new Map([['a ', ' 1']]));
    assert.deepEqual(spaced.suspicious, ['a = 1']);
    assert.deepEqual(parseNodeSelector('').selector, new Map());
    assert.ok(!matchesNodeSelector({}, new Map([['a', '']])));
    assert.ok(matchesNodeSelector(undefined, new Map()));
  });

  it('takes the first InternalIP of the family, else the first ExternalIP', () => {
    const n = node('a');
    assert.equal(memberAddress(n, undefined), '2001:db8::5');
    assert.equal(memberAddress(n, 'IPv4'), '10.0.0.5');
    assert.equal(memberAddress(n, 'IPv6'), '2001:db8::5');
    const onlyExternal: V1Node = { status: { addresses: [{ type: 'ExternalIP', address: '203.0.113.5' }] } };
    assert.equal(memberAddress(onlyExternal, 'IPv4'), '203.0.113.5');
    assert.equal(memberAddress(onlyExternal, 'IPv6'), undefined);
    assert.equal(
      memberKey({ name: 'a', address: '10.0.0.5', protocolPort: 30080, monitorPort: 0 }),
      'a-10.0.0.5-30080-0',
    );
  });

  it('a cached (frozen) Node answers per family as an unfrozen one does', () => {
    const cached = Object.freeze(node('c'));
    for (let round = 0; round < 2; round++) {
      assert.equal(memberAddress(cached, 'IPv4'), '10.0.0.5');
      assert.equal(memberAddress(cached, 'IPv6'), '2001:db8::5');
      assert.equal(memberAddress(cached, undefined), '2001:db8::5');
    }
  });
});
