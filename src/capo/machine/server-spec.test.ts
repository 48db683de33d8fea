import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  validateOpenStackServerSpec,
  type Machine,
  type OpenStackCluster,
  type OpenStackMachineSpec,
} from '../api/index.ts';
import { openStackMachineSpecToOpenStackServerSpec, instanceTags } from './server-spec.ts';

const NET = '11111111-1111-4111-8111-111111111111';
const SUBNET = '22222222-2222-4222-8222-222222222222';
const CP_SG = '33333333-3333-4333-8333-333333333333';
const WORKER_SG = '44444444-4444-4444-8444-444444444444';

function cluster(
  extra: { spec?: Partial<OpenStackCluster['spec']>; status?: OpenStackCluster['status'] } = {},
) {
  return {
    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
    kind: 'OpenStackCluster',
    metadata: { name: 'c1', namespace: 'ns', labels: { 'cluster.x-k8s.io/cluster-name': 'c1' } },
    spec: {
      identityRef: { type: 'Secret', name: 'cloud', cloudName: 'openstack' },
      managedSecurityGroups: { allowAllInClusterTraffic: false },
      tags: ['cluster-tag', 'shared'],
      ...extra.spec,
    },
    status: extra.status ?? {
      ready: true,
      network: {
        id: NET,
        name: 'k8s-net',
        subnets: [{ id: SUBNET, name: 'k8s-subnet', cidr: '10.6.0.0/24' }],
      },
      controlPlaneSecurityGroup: { id: CP_SG, name: 'cp' },
      workerSecurityGroup: { id: WORKER_SG, name: 'worker' },
    },
  } as OpenStackCluster;
}

function machine(opts: { controlPlane?: boolean; failureDomain?: string; secret?: string } = {}): Machine {
  return {
    apiVersion: 'cluster.x-k8s.io/v1beta1',
    kind: 'Machine',
    metadata: {
      name: 'm1',
      namespace: 'ns',
      labels: {
        'cluster.x-k8s.io/cluster-name': 'c1',
        ...(opts.controlPlane ? { 'cluster.x-k8s.io/control-plane': '' } : {}),
      },
    },
    spec: {
      clusterName: 'c1',
      bootstrap:
        opts.secret === undefined ? { dataSecretName: 'm1-bootstrap' } : { dataSecretName: opts.secret },
      infrastructureRef: { kind: 'OpenStackMachine', name: 'm1' },
      ...(opts.failureDomain ? { failureDomain: opts.failureDomain } : {}),
    },
  };
}

const base: OpenStackMachineSpec = {
  flavor: 'm1.small',
  image: { filter: { name: 'ubuntu-22.04' } },
  sshKeyName: 'key',
};

function convert(machineSpec: OpenStackMachineSpec, c = cluster(), m = machine()) {
  const r = openStackMachineSpecToOpenStackServerSpec({ machineSpec, cluster: c, machine: m });
  assert.ok(r.ok, r.ok ? '' : r.message);
  assert.deepEqual(validateOpenStackServerSpec(r.spec), [], 'the server spec passes CAPO rules');
  return r.spec;
}

describe('OpenStackMachine spec → OpenStackServer spec', () => {
  it('no ports: one port on the cluster network with a fixed IP on each cluster subnet and the worker group', () => {
    const spec = convert(base, cluster(), machine({ failureDomain: 'nova' }));
    assert.deepEqual(spec, {
      identityRef: { type: 'Secret', name: 'cloud', cloudName: 'openstack' },
      image: { filter: { name: 'ubuntu-22.04' } },
      flavor: 'm1.small',
      sshKeyName: 'key',
      ports: [
        { network: { id: NET }, fixedIPs: [{ subnet: { id: SUBNET } }], securityGroups: [{ id: WORKER_SG }] },
      ],
      tags: ['cluster-tag', 'shared'],
      availabilityZone: 'nova',
      userDataRef: { name: 'm1-bootstrap' },
    });
  });

  it('a control-plane machine gets the control-plane group', () => {
    const spec = convert(base, cluster(), machine({ controlPlane: true }));
    assert.deepEqual(spec.ports[0]!.securityGroups, [{ id: CP_SG }]);
  });

  it('without managed security groups no group is added; machine groups go on every port', () => {
    const c = cluster({ spec: { managedSecurityGroups: undefined } });
    const plain = convert(base, c);
    assert.equal(plain.ports[0]!.securityGroups, undefined);
    const sg = { filter: { name: 'extra' } };
    const withMachineGroups = convert({ ...base, securityGroups: [sg] }, cluster());
    assert.deepEqual(withMachineGroups.ports[0]!.securityGroups, [{ id: WORKER_SG }, sg]);
  });

  it('given ports: network defaulted where missing, own groups kept, managed group only where none', () => {
    const other = '55555555-5555-4555-8555-555555555555';
    const spec = convert(
      {
        ...base,
        securityGroups: [{ id: other }],
        ports: [
          { nameSuffix: 'a' },
          { network: { filter: { name: 'storage' } }, securityGroups: [{ filter: { name: 'mine' } }] },
          { network: {}, disablePortSecurity: true, trunk: true },
        ],
      },
      cluster(),
    );
    assert.deepEqual(spec.ports, [
      { nameSuffix: 'a', network: { id: NET }, securityGroups: [{ id: WORKER_SG }, { id: other }] },
      {
        network: { filter: { name: 'storage' } },
        securityGroups: [{ filter: { name: 'mine' } }, { id: other }],
      },
      // Port security off: Neutron refuses any security group on the port.
      { network: { id: NET }, disablePortSecurity: true, trunk: true },
    ]);
  });

  it('port security off on the cluster network is inherited unless the port turns it on', () => {
    const c = cluster({ spec: { disablePortSecurity: true } });
    const spec = convert({ ...base, ports: [{}, { disablePortSecurity: false }] }, c);
    assert.equal(spec.ports[0]!.securityGroups, undefined);
    assert.deepEqual(spec.ports[1]!.securityGroups, [{ id: WORKER_SG }]);
  });

  it('the cluster subnets from spec when the status has none resolved', () => {
    const filter = { filter: { name: 'nodes' } };
    const c = cluster({
      spec: { subnets: [filter], managedSecurityGroups: undefined },
      status: { ready: true, network: { id: NET, name: 'net' } },
    });
    assert.deepEqual(convert(base, c).ports, [{ network: { id: NET }, fixedIPs: [{ subnet: filter }] }]);
  });

  it('every machine field the server has is copied; machine identityRef wins; trunk only when true', () => {
    const full: OpenStackMachineSpec = {
      ...base,
      flavorID: 'f-1',
      configDrive: true,
      trunk: true,
      rootVolume: { sizeGiB: 20, type: 'ssd' },
      additionalBlockDevices: [{ name: 'etcd', sizeGiB: 5, storage: { type: 'Volume' } }],
      serverMetadata: [{ key: 'role', value: 'worker' }],
      serverGroup: { filter: { name: 'anti' } },
      schedulerHintAdditionalProperties: [{ name: 'hint', value: { type: 'Bool', bool: true } }],
      identityRef: { type: 'Secret', name: 'mine', cloudName: 'other', region: 'RegionTwo' },
      tags: ['shared', 'machine-tag'],
    };
    const spec = convert(full);
    assert.equal(spec.flavorID, 'f-1');
    assert.equal(spec.configDrive, true);
    assert.equal(spec.trunk, true);
    assert.deepEqual(spec.rootVolume, full.rootVolume);
    assert.deepEqual(spec.additionalBlockDevices, full.additionalBlockDevices);
    assert.deepEqual(spec.serverMetadata, full.serverMetadata);
    assert.deepEqual(spec.serverGroup, full.serverGroup);
    assert.deepEqual(spec.schedulerHintAdditionalProperties, full.schedulerHintAdditionalProperties);
    assert.deepEqual(spec.identityRef, full.identityRef);
    assert.deepEqual(spec.tags, ['cluster-tag', 'machine-tag', 'shared']);
    assert.equal(convert({ ...base, trunk: false }).trunk, undefined);
  });

  it('does not change its input', () => {
    const input: OpenStackMachineSpec = { ...base, ports: [{}], securityGroups: [{ id: CP_SG }] };
    const before = structuredClone(input);
    const c = cluster();
    const cBefore = structuredClone(c);
    convert(input, c);
    assert.deepEqual(input, before);
    assert.deepEqual(c, cBefore);
  });

  it('no cluster network and no port network: refused with a message', () => {
    const c = cluster({ status: { ready: true } });
    const none = openStackMachineSpecToOpenStackServerSpec({
      machineSpec: base,
      cluster: c,
      machine: machine(),
    });
    assert.equal(none.ok, false);
    assert.match(none.ok ? '' : none.message, /no network configured/);
    const bare = openStackMachineSpecToOpenStackServerSpec({
      machineSpec: { ...base, ports: [{ description: 'x' }] },
      cluster: c,
      machine: machine(),
    });
    assert.match(bare.ok ? '' : bare.message, /ports\[0\] has neither a network nor fixed IPs/);
    // A port with fixed IPs names its network through the subnet: the server controller resolves it.
    const bySubnet = openStackMachineSpecToOpenStackServerSpec({
      machineSpec: { ...base, ports: [{ fixedIPs: [{ subnet: { id: SUBNET } }] }] },
      cluster: c,
      machine: machine(),
    });
    assert.ok(bySubnet.ok);
    assert.equal(bySubnet.spec.ports[0]!.network, undefined);
  });

  it('instanceTags: union, sorted, once each', () => {
    assert.deepEqual(instanceTags({ ...base, tags: ['b', 'a', 'b'] }, cluster()), [
      'a',
      'b',
      'cluster-tag',
      'shared',
    ]);
  });
});
