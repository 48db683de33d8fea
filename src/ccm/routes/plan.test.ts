import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatCidr } from '../../lib/cidr.ts';
import { isClusterRoute, parseClusterCidrs, planRoutes, routeKey, type RouteNode } from './plan.ts';

const v4 = parseClusterCidrs('10.244.0.0/16');
const dual = parseClusterCidrs('10.244.0.0/16, fd00:10:244::/56');

const node = (name: string, podCIDRs: string[], internalIPs: string[]): RouteNode => ({
  name,
  podCIDRs,
  internalIPs,
});

describe('route plan', () => {
  it('reads --cluster-cidr: one CIDR or a dual-stack pair, nothing else', () => {
    assert.deepEqual(dual.map(formatCidr), ['10.244.0.0/16', 'fd00:10:244::/56']);
    assert.throws(() => parseClusterCidrs(''), /empty/);
    assert.throws(() => parseClusterCidrs('10.244.0.0'), /not a CIDR/);
    assert.throws(() => parseClusterCidrs('10.244.0.0/16,10.245.0.0/16'), /one IPv4 and one IPv6/);
    assert.throws(() => parseClusterCidrs('10.1.0.0/16,fd00::/64,10.2.0.0/16'), /at most two/);
  });

  it('counts a route as the cluster’s when its destination’s first or last address is in --cluster-cidr', () => {
    assert.equal(isClusterRoute(v4, '10.244.3.0/24'), true);
    assert.equal(isClusterRoute(v4, '10.0.0.0/8'), false, 'a supernet starts and ends outside');
    assert.equal(isClusterRoute(v4, '10.244.0.0/15'), true, 'starts inside');
    assert.equal(isClusterRoute(parseClusterCidrs('10.245.0.0/16'), '10.244.0.0/15'), true, 'ends inside');
    assert.equal(isClusterRoute(v4, '192.168.0.0/24'), false);
    assert.equal(isClusterRoute(v4, 'fd00:10:244:1::/64'), false, 'another family');
    assert.equal(isClusterRoute(dual, 'fd00:10:244:1::/64'), true);
    assert.equal(isClusterRoute(v4, 'garbage'), false);
  });

  it('routes each podCIDR via the first InternalIP of its family', () => {
    const plan = planRoutes(
      [],
      [
        node('a', ['10.244.1.0/24', 'fd00:10:244:1::/64'], ['10.0.0.11', 'fd00::11', '10.0.0.99']),
        node('b', ['10.244.2.0/24'], ['10.0.0.12']),
      ],
      dual,
    );
    assert.deepEqual(plan.add, [
      { node: 'a', destination: '10.244.1.0/24', nexthop: '10.0.0.11' },
      { node: 'a', destination: 'fd00:10:244:1::/64', nexthop: 'fd00::11' },
      { node: 'b', destination: '10.244.2.0/24', nexthop: '10.0.0.12' },
    ]);
    assert.deepEqual(plan.remove, []);
    assert.deepEqual(plan.problems, []);
  });

  it('adds only what is missing and removes only the cluster’s routes nobody asks for', () => {
    const current = [
      { destination: '10.244.1.0/24', nexthop: '10.0.0.11' }, // node a: kept
      { destination: '10.244.9.0/24', nexthop: '10.0.0.19' }, // its node is gone: removed
      { destination: '10.244.2.0/24', nexthop: '10.0.0.50' }, // node b's CIDR via an old address: removed
      { destination: '192.168.50.0/24', nexthop: '10.0.0.11' }, // someone else's, via a node: kept
      { destination: '0.0.0.0/0', nexthop: '10.0.0.1' }, // someone else's default route: kept
    ];
    const plan = planRoutes(
      current,
      [node('a', ['10.244.1.0/24'], ['10.0.0.11']), node('b', ['10.244.2.0/24'], ['10.0.0.12'])],
      v4,
    );
    assert.deepEqual(plan.add, [{ node: 'b', destination: '10.244.2.0/24', nexthop: '10.0.0.12' }]);
    assert.deepEqual(plan.remove, [current[1], current[2]]);
    assert.equal(plan.desired.length, 2);
  });

  it('compares routes canonically, so a route written in another spelling is not added again', () => {
    const plan = planRoutes(
      [{ destination: 'fd00:10:244:0001::/64', nexthop: 'fd00:0:0:0::11' }],
      [node('a', ['fd00:10:244:1::/64'], ['fd00::11'])],
      dual,
    );
    assert.deepEqual(plan.add, []);
    assert.deepEqual(plan.remove, []);
    assert.equal(
      routeKey({ destination: '10.244.1.0/24', nexthop: '10.0.0.11' }),
      routeKey({ destination: '10.244.1.0/24', nexthop: '10.0.0.11' }),
    );
  });

  it('reports podCIDRs it cannot route instead of guessing', () => {
    const plan = planRoutes(
      [],
      [
        node('no-v6', ['fd00:10:244:2::/64'], ['10.0.0.12']),
        node('outside', ['10.99.0.0/24'], ['10.0.0.13']),
        node('bad', ['10.244.x.0/24'], ['10.0.0.14']),
      ],
      dual,
    );
    assert.deepEqual(plan.add, []);
    assert.deepEqual(
      plan.problems.map((p) => [p.node, p.podCIDR]),
      [
        ['no-v6', 'fd00:10:244:2::/64'],
        ['outside', '10.99.0.0/24'],
        ['bad', '10.244.x.0/24'],
      ],
    );
    assert.match(plan.problems[0]!.message, /no InternalIP of IPv6/);
    assert.match(plan.problems[1]!.message, /outside --cluster-cidr/);
  });

  it('adds a route two Nodes share once, and keeps it while either asks for it', () => {
    const nodes = [node('a', ['10.244.1.0/24'], ['10.0.0.11']), node('a2', ['10.244.1.0/24'], ['10.0.0.11'])];
    assert.equal(planRoutes([], nodes, v4).add.length, 1);
    const plan = planRoutes([{ destination: '10.244.1.0/24', nexthop: '10.0.0.11' }], nodes.slice(1), v4);
    assert.deepEqual(plan.remove, []);
  });
});
