import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { OpenStackClusterSpec } from '../api/index.ts';
import { desiredRules, rulesFromSpecs, RuleSpecError, type ResolvedRule } from './security-group-rules.ts';

const ids = { controlplane: 'cp-id', worker: 'worker-id', bastion: 'bastion-id' };
const base: OpenStackClusterSpec = {
  identityRef: { name: 'cloud', cloudName: 'openstack' },
  managedSecurityGroups: { allowAllInClusterTraffic: false },
};

const has = (rules: readonly ResolvedRule[] | undefined, r: Partial<ResolvedRule>) =>
  (rules ?? []).some((x) => Object.entries(r).every(([k, v]) => x[k as keyof ResolvedRule] === v));

test('the default rules of the control-plane, worker and bastion groups are CAPO’s', () => {
  const out = desiredRules({
    spec: base,
    ids,
    subnetCidrs: ['10.6.0.0/24', 'fd00::/64'],
    bastionEnabled: true,
  });
  const cp = out.controlplane!;
  const worker = out.worker!;
  for (const g of [cp, worker, out.bastion!]) {
    assert.ok(has(g, { direction: 'egress', etherType: 'IPv4', description: 'Full open', protocol: '' }));
    assert.ok(has(g, { direction: 'egress', etherType: 'IPv6', description: 'Full open' }));
  }
  assert.ok(
    has(cp, {
      description: 'Kubernetes API',
      portRangeMin: 6443,
      portRangeMax: 6443,
      remoteGroupID: '',
      remoteIPPrefix: '',
    }),
  );
  assert.ok(has(cp, { description: 'Etcd', portRangeMin: 2379, portRangeMax: 2380, remoteGroupID: 'cp-id' }));
  assert.ok(has(cp, { description: 'Kubelet API', portRangeMin: 10250, remoteGroupID: 'cp-id' }));
  assert.ok(has(cp, { description: 'Kubelet API', portRangeMin: 10250, remoteGroupID: 'worker-id' }));
  assert.ok(has(cp, { description: 'SSH', portRangeMin: 22, remoteGroupID: 'bastion-id' }));
  assert.ok(!has(cp, { description: 'Node Port Services' }));
  for (const protocol of ['tcp', 'udp']) {
    assert.ok(
      has(worker, {
        description: 'Node Port Services',
        protocol,
        portRangeMin: 30000,
        portRangeMax: 32767,
        remoteIPPrefix: '10.6.0.0/24',
      }),
    );
    assert.ok(has(worker, { description: 'Node Port Services', protocol, remoteGroupID: 'worker-id' }));
    assert.ok(has(worker, { description: 'Node Port Services', protocol, remoteGroupID: 'cp-id' }));
  }
  // Only IPv4 subnets get a CIDR NodePort rule.
  assert.ok(!has(worker, { remoteIPPrefix: 'fd00::/64' }));
  assert.ok(has(worker, { description: 'Kubelet API', remoteGroupID: 'cp-id' }));
  assert.ok(has(worker, { description: 'SSH', remoteGroupID: 'bastion-id' }));
  assert.ok(!has(worker, { description: 'Etcd' }));
  assert.deepEqual(
    out.bastion!.filter((r) => r.direction === 'ingress'),
    [
      {
        description: 'SSH',
        direction: 'ingress',
        etherType: 'IPv4',
        portRangeMin: 22,
        portRangeMax: 22,
        protocol: 'tcp',
        remoteGroupID: '',
        remoteIPPrefix: '',
      },
    ],
  );
});

test('without a bastion there is no bastion group and no SSH rule', () => {
  const out = desiredRules({
    spec: base,
    ids: { controlplane: 'cp-id', worker: 'worker-id' },
    subnetCidrs: [],
    bastionEnabled: false,
  });
  assert.equal(out.bastion, undefined);
  assert.ok(!has(out.controlplane, { description: 'SSH' }));
  assert.ok(!has(out.worker, { description: 'SSH' }));
});

test('allowAllInClusterTraffic replaces etcd and kubelet rules with in-cluster ingress', () => {
  const spec = { ...base, managedSecurityGroups: { allowAllInClusterTraffic: true } };
  const out = desiredRules({ spec, ids, subnetCidrs: [], bastionEnabled: false });
  assert.ok(!has(out.controlplane, { description: 'Etcd' }));
  assert.ok(!has(out.worker, { description: 'Kubelet API' }));
  for (const g of [out.controlplane, out.worker]) {
    assert.ok(has(g, { description: 'In-cluster Ingress', protocol: '', remoteGroupID: 'cp-id' }));
    assert.ok(has(g, { description: 'In-cluster Ingress', protocol: '', remoteGroupID: 'worker-id' }));
  }
});

test('additional API ports open on the control plane while the load balancer is enabled', () => {
  const spec = { ...base, apiServerLoadBalancer: { enabled: true, additionalPorts: [8443, 9000] } };
  const cp = desiredRules({ spec, ids, subnetCidrs: [], bastionEnabled: false }).controlplane;
  assert.ok(
    has(cp, { description: 'Additional port', protocol: 'tcp', portRangeMin: 8443, portRangeMax: 8443 }),
  );
  assert.ok(has(cp, { description: 'Additional port', portRangeMin: 9000 }));
  const off = { ...base, apiServerLoadBalancer: { enabled: false, additionalPorts: [8443] } };
  assert.ok(
    !has(desiredRules({ spec: off, ids, subnetCidrs: [], bastionEnabled: false }).controlplane, {
      portRangeMin: 8443,
    }),
  );
});

test('extra rules: remoteManagedGroups become one rule per group; allNodes go to both groups', () => {
  const spec: OpenStackClusterSpec = {
    ...base,
    managedSecurityGroups: {
      allowAllInClusterTraffic: false,
      allNodesSecurityGroupRules: [
        {
          name: 'BGP',
          description: 'BGP (calico)',
          direction: 'ingress',
          etherType: 'IPv4',
          portRangeMin: 179,
          portRangeMax: 179,
          protocol: 'tcp',
          remoteManagedGroups: ['controlplane', 'worker'],
        },
      ],
      workerNodesSecurityGroupRules: [
        {
          name: 'np',
          direction: 'ingress',
          portRangeMin: 30000,
          portRangeMax: 32767,
          protocol: 'tcp',
          remoteIPPrefix: '0.0.0.0/0',
        },
      ],
    },
  };
  const out = desiredRules({ spec, ids, subnetCidrs: [], bastionEnabled: false });
  for (const g of [out.controlplane, out.worker]) {
    assert.ok(has(g, { description: 'BGP (calico)', remoteGroupID: 'cp-id', portRangeMin: 179 }));
    assert.ok(has(g, { description: 'BGP (calico)', remoteGroupID: 'worker-id', portRangeMin: 179 }));
  }
  // The name is not sent; an unset etherType is Neutron's default, IPv4.
  assert.ok(has(out.worker, { description: '', remoteIPPrefix: '0.0.0.0/0', etherType: 'IPv4' }));
  assert.ok(!has(out.controlplane, { remoteIPPrefix: '0.0.0.0/0' }));
});

test('a rule naming the bastion group while the bastion is disabled is refused', () => {
  assert.throws(
    () =>
      rulesFromSpecs([{ name: 'ssh', direction: 'ingress', remoteManagedGroups: ['bastion'] }], {
        controlplane: 'a',
        worker: 'b',
      }),
    (err: unknown) => RuleSpecError.is(err) && /bastion is disabled/.test((err as Error).message),
  );
  assert.throws(
    () =>
      rulesFromSpecs(
        [{ name: 'x', direction: 'ingress', remoteGroupID: 'g', remoteManagedGroups: ['worker'] }],
        { worker: 'b' },
      ),
    RuleSpecError,
  );
});

test('no managedSecurityGroups: no rules at all', () => {
  const { managedSecurityGroups: _, ...spec } = base;
  assert.deepEqual(desiredRules({ spec, ids, subnetCidrs: [], bastionEnabled: true }), {});
});
