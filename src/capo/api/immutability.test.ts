import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Conditions,
  immutableChanges,
  Reasons,
  reviewSpec,
  type OpenStackCluster,
  type OpenStackClusterSpec,
  type OpenStackMachine,
  type OpenStackMachineSpec,
  type OpenStackServer,
  type Problem,
} from './index.ts';

const ID = '3c6f1b2e-8a4d-4f4e-9b1a-2d7c5e0f9a11';
const ID2 = '9e2b7c41-0d3a-4b6e-8f15-6a4c2d1e7b90';
const identityRef = { type: 'Secret' as const, name: 'cloud-config', cloudName: 'openstack' };

const machine = (extra: Partial<OpenStackMachineSpec> = {}): OpenStackMachineSpec => ({
  flavor: 'm1.small',
  image: { filter: { name: 'ubuntu-22.04' } },
  sshKeyName: 'key',
  ...extra,
});

const cluster = (extra: Partial<OpenStackClusterSpec> = {}): OpenStackClusterSpec => ({
  identityRef,
  managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['8.8.8.8'] }],
  externalNetwork: { filter: { name: 'public' } },
  apiServerLoadBalancer: { enabled: true, allowedCIDRs: ['0.0.0.0/0'] },
  managedSecurityGroups: { allowAllInClusterTraffic: false },
  bastion: { enabled: true, spec: machine() },
  ...extra,
});

const paths = (problems: Problem[]) => problems.map((p) => p.path);

describe('immutableChanges: OpenStackServer', () => {
  it('refuses any change of the spec, path by path', () => {
    const old = { identityRef, flavor: 'm1.small', image: { id: ID }, ports: [{ nameSuffix: 'a' }] };
    assert.deepEqual(immutableChanges('OpenStackServer', old, structuredClone(old)), []);
    const changed = { ...old, flavor: 'm1.large', ports: [{ nameSuffix: 'b' }], tags: ['x'] };
    const problems = immutableChanges('OpenStackServer', old, changed);
    assert.deepEqual(paths(problems), ['spec.flavor', 'spec.ports[0].nameSuffix', 'spec.tags']);
    assert.match(problems[0]!.message, /OpenStackServer spec is immutable/);
    assert.match(problems[0]!.fix, /create a new one/);
  });

  it('treats an absent field and null alike', () => {
    const old = { identityRef, flavor: 'm1.small', image: { id: ID }, ports: [{}] };
    assert.deepEqual(
      immutableChanges('OpenStackServer', old, { ...old, sshKeyName: null as unknown as string }),
      [],
    );
  });
});

describe('immutableChanges: OpenStackMachine', () => {
  it('lets providerID be set once', () => {
    const old = machine();
    assert.deepEqual(
      immutableChanges('OpenStackMachine', old, machine({ providerID: 'openstack:///a' })),
      [],
    );
    assert.deepEqual(
      paths(
        immutableChanges(
          'OpenStackMachine',
          machine({ providerID: 'openstack:///a' }),
          machine({ providerID: 'openstack:///b' }),
        ),
      ),
      ['spec.providerID'],
    );
  });

  it('lets identityRef change, but not its region', () => {
    assert.deepEqual(
      immutableChanges(
        'OpenStackMachine',
        machine({ identityRef }),
        machine({ identityRef: { ...identityRef, name: 'other' } }),
      ),
      [],
    );
    assert.deepEqual(immutableChanges('OpenStackMachine', machine(), machine({ identityRef })), []);
    const problems = immutableChanges(
      'OpenStackMachine',
      machine({ identityRef: { ...identityRef, region: 'RegionOne' } }),
      machine({ identityRef: { ...identityRef, region: 'RegionTwo' } }),
    );
    assert.deepEqual(paths(problems), ['spec.identityRef.region']);
    assert.match(problems[0]!.fix, /RegionOne/);
  });

  it('refuses everything else', () => {
    const problems = immutableChanges(
      'OpenStackMachine',
      machine(),
      machine({
        flavor: 'm1.large',
        image: { filter: { name: 'ubuntu-24.04' } },
        rootVolume: { sizeGiB: 10 },
      }),
    );
    assert.deepEqual(paths(problems), ['spec.flavor', 'spec.image.filter.name', 'spec.rootVolume']);
  });
});

describe('immutableChanges: OpenStackCluster', () => {
  const check = (
    old: OpenStackClusterSpec,
    next: OpenStackClusterSpec,
    status?: OpenStackCluster['status'],
  ) => paths(immutableChanges('OpenStackCluster', old, next, status));

  it('lets the bastion change, and go only after it was disabled', () => {
    assert.deepEqual(
      check(cluster(), cluster({ bastion: { enabled: true, spec: machine({ flavor: 'm1.large' }) } })),
      [],
    );
    assert.deepEqual(check(cluster(), cluster({ bastion: { enabled: false, spec: machine() } })), []);
    assert.deepEqual(check(cluster({ bastion: { spec: machine() } }), cluster({ bastion: undefined })), [
      'spec.bastion',
    ]);
    assert.deepEqual(check(cluster({ bastion: { enabled: false } }), cluster({ bastion: undefined })), []);
    const [p] = immutableChanges('OpenStackCluster', cluster(), cluster({ bastion: undefined }));
    assert.match(p!.fix, /enabled: false/);
  });

  it('lets controlPlaneEndpoint be filled in until it has a host', () => {
    const ep = { host: '10.0.0.10', port: 6443 };
    assert.deepEqual(check(cluster(), cluster({ controlPlaneEndpoint: ep })), []);
    assert.deepEqual(
      check(cluster({ controlPlaneEndpoint: { host: '', port: 0 } }), cluster({ controlPlaneEndpoint: ep })),
      [],
    );
    assert.deepEqual(
      check(
        cluster({ controlPlaneEndpoint: ep }),
        cluster({ controlPlaneEndpoint: { ...ep, host: '10.0.0.11' } }),
      ),
      ['spec.controlPlaneEndpoint.host'],
    );
  });

  it('lets the port of a host-only controlPlaneEndpoint be filled in, but not its host change', () => {
    const hostOnly = { host: '10.0.0.10' };
    assert.deepEqual(
      check(
        cluster({ controlPlaneEndpoint: hostOnly }),
        cluster({ controlPlaneEndpoint: { ...hostOnly, port: 6443 } }),
      ),
      [],
    );
    assert.deepEqual(
      check(
        cluster({ controlPlaneEndpoint: hostOnly }),
        cluster({ controlPlaneEndpoint: { host: '10.0.0.11', port: 6443 } }),
      ),
      ['spec.controlPlaneEndpoint.host', 'spec.controlPlaneEndpoint.port'],
    );
    assert.deepEqual(
      check(
        cluster({ controlPlaneEndpoint: { ...hostOnly, port: 6443 } }),
        cluster({ controlPlaneEndpoint: { ...hostOnly, port: 7443 } }),
      ),
      ['spec.controlPlaneEndpoint.port'],
    );
  });

  it('lets rules, DNS servers, allowed CIDRs and availability zones change', () => {
    const next = cluster({
      managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['1.1.1.1'] }],
      apiServerLoadBalancer: { enabled: true, allowedCIDRs: ['10.0.0.0/8'] },
      managedSecurityGroups: {
        allowAllInClusterTraffic: true,
        workerNodesSecurityGroupRules: [{ name: 'x', direction: 'ingress' }],
      },
      controlPlaneAvailabilityZones: ['az-1'],
      controlPlaneOmitAvailabilityZone: true,
      identityRef: { ...identityRef, name: 'rotated' },
    });
    assert.deepEqual(check(cluster(), next), []);
    assert.deepEqual(
      check(cluster({ managedSecurityGroups: undefined }), cluster()),
      [],
      'adding managed groups',
    );
    assert.deepEqual(check(cluster(), cluster({ managedSecurityGroups: undefined })), [
      'spec.managedSecurityGroups',
    ]);
  });

  it('keeps the managed subnets, the load balancer and the external network', () => {
    assert.deepEqual(check(cluster(), cluster({ managedSubnets: [{ cidr: '10.7.0.0/24' }] })), [
      'spec.managedSubnets[0].cidr',
    ]);
    assert.deepEqual(
      check(cluster(), cluster({ managedSubnets: [{ cidr: '10.6.0.0/24' }, { cidr: '10.7.0.0/24' }] })),
      ['spec.managedSubnets'],
    );
    assert.deepEqual(
      check(
        cluster(),
        cluster({ apiServerLoadBalancer: { enabled: true, provider: 'ovn', allowedCIDRs: [] } }),
      ),
      ['spec.apiServerLoadBalancer.provider'],
    );
    assert.deepEqual(check(cluster(), cluster({ externalNetwork: { id: ID } })), [
      'spec.externalNetwork.filter',
      'spec.externalNetwork.id',
    ]);
    assert.deepEqual(
      check(
        cluster({ managedSecurityGroups: undefined }),
        cluster({ managedSecurityGroups: undefined, disablePortSecurity: true }),
      ),
      ['spec.disablePortSecurity'],
    );
  });

  it('lets the API fixed IP and port be set once while the API floating IP is disabled', () => {
    const old = cluster({ disableAPIServerFloatingIP: true });
    assert.deepEqual(check(old, { ...old, apiServerFixedIP: '10.6.0.10', apiServerPort: 6443 }), []);
    const set = { ...old, apiServerFixedIP: '10.6.0.10', apiServerPort: 6443 };
    assert.deepEqual(check(set, { ...set, apiServerFixedIP: '10.6.0.11', apiServerPort: 443 }), [
      'spec.apiServerFixedIP',
      'spec.apiServerPort',
    ]);
    assert.deepEqual(check(cluster(), cluster({ apiServerFixedIP: '10.6.0.10' })), ['spec.apiServerFixedIP']);
  });

  it('lets apiServerFloatingIP become the address the load balancer got', () => {
    const status = {
      apiServerLoadBalancer: { name: 'lb', id: ID, ip: '172.24.4.20', internalIP: '10.6.0.5' },
    };
    assert.deepEqual(check(cluster(), cluster({ apiServerFloatingIP: '172.24.4.20' }), status), []);
    assert.deepEqual(check(cluster(), cluster({ apiServerFloatingIP: '172.24.4.21' }), status), [
      'spec.apiServerFloatingIP',
    ]);
  });

  it('lets network and subnets move from a filter to the IDs it resolved to', () => {
    const old = cluster({
      managedSubnets: undefined,
      network: { filter: { name: 'private' } },
      subnets: [{ filter: { name: 'private-v4' } }],
    });
    const status = {
      network: { name: 'private', id: ID, subnets: [{ name: 'private-v4', id: ID2, cidr: '10.0.0.0/24' }] },
    };
    assert.deepEqual(check(old, { ...old, network: { id: ID }, subnets: [{ id: ID2 }] }, status), []);
    assert.deepEqual(check(old, { ...old, network: { id: ID2 } }, status), [
      'spec.network.filter',
      'spec.network.id',
    ]);
    assert.deepEqual(check(old, { ...old, subnets: [{ id: ID }] }, status), [
      'spec.subnets[0].filter',
      'spec.subnets[0].id',
    ]);
    assert.deepEqual(
      check(old, { ...old, network: { id: ID } }),
      ['spec.network.filter', 'spec.network.id'],
      'no status',
    );
  });

  it('keeps identityRef.region', () => {
    assert.deepEqual(check(cluster(), cluster({ identityRef: { ...identityRef, region: 'RegionTwo' } })), [
      'spec.identityRef.region',
    ]);
  });
});

describe('immutableChanges: templates', () => {
  it('refuses a change to spec.template.spec', () => {
    const problems = immutableChanges(
      'OpenStackMachineTemplate',
      { template: { spec: machine() } },
      { template: { spec: machine({ flavor: 'm1.large' }) } },
    );
    assert.deepEqual(paths(problems), ['spec.template.spec.flavor']);
    assert.match(problems[0]!.message, /OpenStackMachineTemplate spec\.template\.spec is immutable/);
    assert.deepEqual(
      paths(
        immutableChanges(
          'OpenStackClusterTemplate',
          { template: { spec: cluster() } },
          { template: { spec: cluster({ tags: ['a'] }) } },
        ),
      ),
      ['spec.template.spec.tags'],
    );
  });
});

describe('reviewSpec', () => {
  const osm = (
    spec: OpenStackMachineSpec,
    status?: OpenStackMachine['status'],
    generation = 1,
  ): OpenStackMachine => ({
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'OpenStackMachine',
    metadata: { name: 'm', namespace: 'ns', generation },
    spec,
    ...(status ? { status } : {}),
  });

  it('accepts and records the first valid spec', () => {
    const r = reviewSpec('OpenStackMachine', osm(machine()));
    assert.deepEqual(r.spec, machine());
    assert.deepEqual(r.refused, []);
    assert.deepEqual(r.record, { acceptedSpec: machine(), acceptedGeneration: 1 });
    assert.equal(r.condition.type, Conditions.SpecAccepted);
    assert.equal(r.condition.status, 'True');
  });

  it('has nothing to record when the record is up to date', () => {
    const r = reviewSpec(
      'OpenStackMachine',
      osm(machine(), { acceptedSpec: machine(), acceptedGeneration: 1 }),
    );
    assert.equal(r.record, undefined);
    assert.equal(r.condition.status, 'True');
  });

  it('records an allowed change', () => {
    const spec = machine({ providerID: 'openstack:///abc' });
    const r = reviewSpec(
      'OpenStackMachine',
      osm(spec, { acceptedSpec: machine(), acceptedGeneration: 1 }, 2),
    );
    assert.deepEqual(r.spec, spec);
    assert.deepEqual(r.record, { acceptedSpec: spec, acceptedGeneration: 2 });
  });

  it('refuses an immutable change and keeps acting on the accepted spec', () => {
    const r = reviewSpec(
      'OpenStackMachine',
      osm(machine({ flavor: 'm1.large' }), { acceptedSpec: machine(), acceptedGeneration: 1 }, 2),
    );
    assert.deepEqual(r.spec, machine());
    assert.equal(r.record, undefined);
    assert.deepEqual(paths(r.refused), ['spec.flavor']);
    assert.equal(r.condition.status, 'False');
    assert.equal(r.condition.reason, Reasons.ImmutableFieldChanged);
    assert.match(r.condition.message, /acting on the last accepted spec.*spec\.flavor: cannot be modified/);
  });

  it('accepts the spec again once the change is reverted', () => {
    const r = reviewSpec(
      'OpenStackMachine',
      osm(machine(), { acceptedSpec: machine(), acceptedGeneration: 1 }, 3),
    );
    assert.equal(r.condition.status, 'True');
    assert.deepEqual(r.record, { acceptedSpec: machine(), acceptedGeneration: 3 });
  });

  it('refuses an invalid first spec, leaving nothing to act on', () => {
    const r = reviewSpec('OpenStackMachine', osm({ image: { id: ID } }));
    assert.equal(r.spec, undefined);
    assert.equal(r.record, undefined);
    assert.equal(r.condition.reason, Reasons.InvalidSpec);
    assert.deepEqual(paths(r.refused), ['spec.flavor']);
  });

  it('reads the cluster status for the changes it allows', () => {
    const accepted = cluster();
    const obj: OpenStackCluster = {
      metadata: { name: 'c', generation: 2 },
      spec: cluster({ apiServerFloatingIP: '172.24.4.20' }),
      status: {
        acceptedSpec: accepted,
        acceptedGeneration: 1,
        apiServerLoadBalancer: { name: 'lb', id: ID, ip: '172.24.4.20', internalIP: '10.6.0.5' },
      },
    };
    assert.equal(reviewSpec('OpenStackCluster', obj).condition.status, 'True');
    const server: OpenStackServer = {
      metadata: { name: 's', generation: 1 },
      spec: { identityRef, flavor: 'm1.small', image: { id: ID }, ports: [{}] },
      status: { acceptedSpec: { identityRef, flavor: 'm1.tiny', image: { id: ID }, ports: [{}] } },
    };
    assert.deepEqual(paths(reviewSpec('OpenStackServer', server).refused), ['spec.flavor']);
  });
});
