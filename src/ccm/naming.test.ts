import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  clusterNameOf,
  cut255,
  floatingIpDescription,
  hasOldClusterName,
  isCreatedByCcm,
  isFloatingIpCreatedByCcm,
  legacyLoadBalancerName,
  listenerName,
  loadBalancerDescription,
  loadBalancerName,
  mayShare,
  memberName,
  monitorName,
  parseLoadBalancerName,
  poolName,
  replaceClusterName,
  securityGroupDescription,
  securityGroupName,
  serialMemberName,
  serviceTags,
  shouldDeleteLoadBalancer,
} from './naming.ts';

describe('naming', () => {
  const lb = loadBalancerName('prod', 'shop', 'web');

  it('names the load balancer and its children as OCCM', () => {
    assert.equal(lb, 'kube_service_prod_shop_web');
    assert.equal(listenerName(0, lb), 'listener_0_kube_service_prod_shop_web');
    assert.equal(poolName(1, lb), 'pool_1_kube_service_prod_shop_web');
    assert.equal(monitorName(2, lb), 'monitor_2_kube_service_prod_shop_web');
    assert.equal(memberName('node-1'), 'node-1');
    assert.equal(serialMemberName('node-1', '10.0.0.5', 31000), 'member_node-1_10.0.0.5_31000');
    assert.equal(
      loadBalancerDescription('shop', 'web', 'prod'),
      'Kubernetes external service shop/web from cluster prod',
    );
    assert.equal(
      floatingIpDescription('shop', 'web', 'prod'),
      'Floating IP for Kubernetes external service shop/web from cluster prod',
    );
    assert.equal(
      securityGroupName('6f1c4c3e-1b2d-4e5f-8a9b-0c1d2e3f4a5b', 'shop', 'web'),
      'lb-sg-6f1c4c3e-1b2d-4e5f-8a9b-0c1d2e3f4a5b-shop-web',
    );
    assert.equal(
      securityGroupDescription('shop', 'web', 'prod'),
      'Security Group for shop/web Service LoadBalancer in cluster prod',
    );
  });

  it('gives the in-tree name: a + the UID without dashes, cut to 32', () => {
    const name = legacyLoadBalancerName('6f1c4c3e-1b2d-4e5f-8a9b-0c1d2e3f4a5b');
    assert.equal(name, 'a6f1c4c3e1b2d4e5f8a9b0c1d2e3f4a5');
    assert.equal(name.length, 32);
  });

  it('cuts at 255 bytes, like Go, a split character becoming U+FFFD per leftover byte', () => {
    const long = loadBalancerName('c'.repeat(200), 'ns', 'n'.repeat(100));
    assert.equal(Buffer.byteLength(long), 255);
    assert.ok(long.startsWith('kube_service_ccc'));
    assert.equal(Buffer.byteLength(listenerName(0, long)), 255);
    assert.equal(cut255('x'.repeat(254) + 'é'), 'x'.repeat(254) + '\uFFFD');
    assert.equal(cut255('x'.repeat(253) + '€'), 'x'.repeat(253) + '\uFFFD\uFFFD');
    assert.equal(cut255('x'.repeat(252) + '€'), 'x'.repeat(252) + '€');
    assert.equal(cut255('short'), 'short');
  });

  it('recognises floating IPs by the description marker only', () => {
    assert.ok(isFloatingIpCreatedByCcm(floatingIpDescription('a', 'b', 'c')));
    assert.ok(isFloatingIpCreatedByCcm('Floating IP for Kubernetes external service x/y'));
    assert.ok(!isFloatingIpCreatedByCcm('my reserved address'));
    assert.ok(!isFloatingIpCreatedByCcm(undefined));
  });

  it('parses names back: the last two parts are namespace and name, the rest the cluster', () => {
    assert.deepEqual(parseLoadBalancerName(lb), {
      clusterName: 'prod',
      namespace: 'shop',
      name: 'web',
      mayBeCut: false,
    });
    assert.deepEqual(parseLoadBalancerName('kube_service_my_cluster_ns_svc'), {
      clusterName: 'my_cluster',
      namespace: 'ns',
      name: 'svc',
      mayBeCut: false,
    });
    assert.equal(parseLoadBalancerName('a6f1c4c3e1b2d4e5f8a9b0c1d2e3f4a5'), undefined);
    assert.equal(clusterNameOf(listenerName(3, lb)), 'prod');
    assert.equal(clusterNameOf(monitorName(0, 'kube_service_x_y_ns_n')), 'x_y');
    const cut = loadBalancerName('c', 'n'.repeat(63), 's'.repeat(250));
    assert.deepEqual(parseLoadBalancerName(cut)?.mayBeCut, true);
  });

  it('finds an old cluster name and replaces it (PR #2552)', () => {
    assert.ok(hasOldClusterName('kube_service_kubernetes_shop_web', 'prod'));
    assert.ok(!hasOldClusterName(lb, 'prod'));
    assert.ok(!hasOldClusterName('user-made-lb', 'prod'));
    assert.equal(replaceClusterName('kubernetes', 'prod', 'kube_service_kubernetes_shop_web'), lb);
    assert.equal(
      replaceClusterName('kubernetes', 'prod', 'listener_0_kube_service_kubernetes_shop_web'),
      'listener_0_kube_service_prod_shop_web',
    );
  });

  it('decides sharing and deletion from the kube_service_ tags', () => {
    const tags = ['kube_service_prod_shop_web', 'kube_service_prod_shop_api', 'team=a'];
    assert.deepEqual(serviceTags(tags), ['kube_service_prod_shop_web', 'kube_service_prod_shop_api']);
    assert.ok(mayShare(tags, 'kube_service_prod_shop_web', 2), 'already on it');
    assert.ok(!mayShare(tags, 'kube_service_prod_shop_db', 2), 'max-shared-lb reached');
    assert.ok(mayShare(tags, 'kube_service_prod_shop_db', 3));
    assert.ok(!mayShare([], 'kube_service_prod_shop_db', 0), 'max-shared-lb 0 turns sharing off');
    assert.ok(isCreatedByCcm(lb) && !isCreatedByCcm('manual'));
    assert.ok(!shouldDeleteLoadBalancer({ name: lb, tags }, lb, true), 'another Service is on it');
    assert.ok(shouldDeleteLoadBalancer({ name: lb, tags: [lb] }, lb, true));
    assert.ok(
      shouldDeleteLoadBalancer({ name: lb, tags }, lb, false),
      'without tags OCCM cannot see the others',
    );
    assert.ok(!shouldDeleteLoadBalancer({ name: 'manual', tags: [lb] }, lb, true), 'never a user-made one');
  });
});
