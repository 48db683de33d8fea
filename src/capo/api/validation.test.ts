import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  formatProblems,
  validateOpenStackClusterIdentitySpec,
  validateOpenStackClusterSpec,
  validateOpenStackClusterTemplateSpec,
  validateOpenStackFloatingIPPoolSpec,
  validateOpenStackMachineSpec,
  validateOpenStackMachineTemplateSpec,
  validateOpenStackServerSpec,
  type OpenStackClusterSpec,
  type OpenStackMachineSpec,
  type OpenStackServerSpec,
  type Problem,
} from './index.ts';

const ID = '3c6f1b2e-8a4d-4f4e-9b1a-2d7c5e0f9a11';
const identityRef = { name: 'cloud-config', cloudName: 'openstack' };
const machine = (extra: Partial<OpenStackMachineSpec> = {}): OpenStackMachineSpec => ({
  flavor: 'm1.small',
  image: { filter: { name: 'ubuntu-22.04' } },
  ...extra,
});
const cluster = (extra: Partial<OpenStackClusterSpec> = {}): OpenStackClusterSpec => ({
  identityRef,
  ...extra,
});

function paths(problems: Problem[]): string[] {
  for (const p of problems) {
    assert.ok(
      p.message.length > 0 && p.fix.length > 0,
      `problem without message or fix: ${JSON.stringify(p)}`,
    );
  }
  return problems.map((p) => p.path);
}

describe('validateOpenStackClusterSpec', () => {
  it('accepts a CAPO template cluster', () => {
    const spec = cluster({
      managedSubnets: [{ cidr: '10.6.0.0/24', dnsNameservers: ['8.8.8.8'] }],
      externalNetwork: { id: ID },
      apiServerLoadBalancer: { enabled: true },
      bastion: { enabled: true, spec: machine() },
      managedSecurityGroups: {
        allowAllInClusterTraffic: false,
        allNodesSecurityGroupRules: [
          {
            name: 'bgp',
            direction: 'ingress',
            protocol: 'tcp',
            portRangeMin: 179,
            portRangeMax: 179,
            remoteManagedGroups: ['controlplane', 'worker'],
          },
        ],
      },
    });
    assert.deepEqual(validateOpenStackClusterSpec(spec), []);
  });

  it('requires disableAPIServerFloatingIP with disableExternalNetwork (CEL)', () => {
    assert.deepEqual(paths(validateOpenStackClusterSpec(cluster({ disableExternalNetwork: true }))), [
      'spec.disableAPIServerFloatingIP',
    ]);
    assert.deepEqual(
      paths(
        validateOpenStackClusterSpec(
          cluster({ disableExternalNetwork: true, disableAPIServerFloatingIP: false }),
        ),
      ),
      ['spec.disableAPIServerFloatingIP'],
    );
    assert.deepEqual(
      validateOpenStackClusterSpec(
        cluster({ disableExternalNetwork: true, disableAPIServerFloatingIP: true }),
      ),
      [],
    );
  });

  it('forbids a bastion floating IP without an external network (CEL)', () => {
    const spec = cluster({
      disableExternalNetwork: true,
      disableAPIServerFloatingIP: true,
      bastion: { spec: machine(), floatingIP: '172.24.4.9' },
    });
    assert.deepEqual(paths(validateOpenStackClusterSpec(spec)), ['spec.bastion.floatingIP']);
  });

  it('needs a bastion spec while the bastion is enabled, which it is by default (CEL)', () => {
    assert.deepEqual(paths(validateOpenStackClusterSpec(cluster({ bastion: {} }))), ['spec.bastion.spec']);
    assert.deepEqual(paths(validateOpenStackClusterSpec(cluster({ bastion: { enabled: true } }))), [
      'spec.bastion.spec',
    ]);
    assert.deepEqual(validateOpenStackClusterSpec(cluster({ bastion: { enabled: false } })), []);
  });

  it('checks the bastion spec as a machine spec, with its own path', () => {
    const spec = cluster({ bastion: { spec: { image: { id: ID, filter: { name: 'x' } } } } });
    assert.deepEqual(paths(validateOpenStackClusterSpec(spec)), [
      'spec.bastion.spec.flavor',
      'spec.bastion.spec.image',
    ]);
  });

  it('wants params to name their resource exactly one way', () => {
    const spec = cluster({
      network: { id: ID, filter: { name: 'private' } },
      router: {},
      externalNetwork: { filter: {} },
      subnets: [{ filter: { name: 'a' } }, { id: ID, filter: { cidr: '10.0.0.0/24' } }],
    });
    assert.deepEqual(paths(validateOpenStackClusterSpec(spec)), [
      'spec.subnets[1]',
      'spec.router',
      'spec.network',
      'spec.externalNetwork.filter',
    ]);
  });

  it('bounds managedSubnets to one and subnets to two', () => {
    const spec = cluster({
      managedSubnets: [{ cidr: '10.0.0.0/24' }, { cidr: '10.0.1.0/24' }],
      subnets: [{ id: ID }, { id: ID }, { id: ID }],
    });
    assert.deepEqual(paths(validateOpenStackClusterSpec(spec)), ['spec.managedSubnets', 'spec.subnets']);
  });

  it('allows one remote per security group rule (webhook)', () => {
    const spec = cluster({
      managedSecurityGroups: {
        allowAllInClusterTraffic: false,
        workerNodesSecurityGroupRules: [
          { name: 'a', direction: 'ingress', remoteIPPrefix: '0.0.0.0/0', remoteGroupID: ID },
          { name: 'b', direction: 'ingress', remoteManagedGroups: ['worker'] },
        ],
      },
    });
    const problems = validateOpenStackClusterSpec(spec);
    assert.deepEqual(paths(problems), ['spec.managedSecurityGroups.workerNodesSecurityGroupRules[0]']);
    assert.match(formatProblems(problems), /remoteGroupID and remoteIPPrefix cannot be used together/);
  });

  it('requires the identityRef name and cloudName', () => {
    const spec = { identityRef: { name: '', cloudName: '' } } as OpenStackClusterSpec;
    assert.deepEqual(paths(validateOpenStackClusterSpec(spec)), [
      'spec.identityRef.name',
      'spec.identityRef.cloudName',
    ]);
    assert.deepEqual(paths(validateOpenStackClusterSpec(undefined)), ['spec']);
  });
});

describe('validateOpenStackMachineSpec', () => {
  it('accepts a machine with every optional part', () => {
    const spec = machine({
      flavor: undefined,
      flavorID: '3',
      image: { id: ID },
      ports: [
        {
          network: { filter: { name: 'private' } },
          fixedIPs: [{ subnet: { id: ID } }],
          securityGroups: [{ filter: { name: 'default' } }],
        },
      ],
      rootVolume: { sizeGiB: 20, availabilityZone: { from: 'Machine' } },
      additionalBlockDevices: [
        {
          name: 'data',
          sizeGiB: 5,
          storage: { type: 'Volume', volume: { availabilityZone: { name: 'az1' } } },
        },
      ],
      schedulerHintAdditionalProperties: [{ name: 'n', value: { type: 'Number', number: 3 } }],
      identityRef,
    });
    assert.deepEqual(validateOpenStackMachineSpec(spec), []);
  });

  it('needs a flavor or a flavorID (CEL) and an image', () => {
    assert.deepEqual(paths(validateOpenStackMachineSpec({ image: { id: ID } })), ['spec.flavor']);
    assert.deepEqual(paths(validateOpenStackMachineSpec({ flavor: 'x' } as OpenStackMachineSpec)), [
      'spec.image',
    ]);
    assert.deepEqual(
      paths(validateOpenStackMachineSpec(machine({ image: { id: ID, imageRef: { name: 'x' } } }))),
      ['spec.image'],
    );
  });

  it('reserves the name root for the root volume and wants unique device names', () => {
    const root = { name: 'root', sizeGiB: 1, storage: { type: 'Local' as const } };
    assert.deepEqual(validateOpenStackMachineSpec(machine({ additionalBlockDevices: [root] })), []);
    const spec = machine({
      rootVolume: { sizeGiB: 10 },
      additionalBlockDevices: [
        { name: 'root', sizeGiB: 1, storage: { type: 'Local' } },
        { name: 'data', sizeGiB: 1, storage: { type: 'Local' } },
        { name: 'data', sizeGiB: 2, storage: { type: 'Local' } },
      ],
    });
    assert.deepEqual(paths(validateOpenStackMachineSpec(spec)), [
      'spec.additionalBlockDevices[0].name',
      'spec.additionalBlockDevices[2].name',
    ]);
  });

  it('ties a volume availability zone name to from: Name (CEL)', () => {
    const spec = machine({
      rootVolume: { sizeGiB: 10, availabilityZone: {} },
      additionalBlockDevices: [
        {
          name: 'a',
          sizeGiB: 1,
          storage: { type: 'Volume', volume: { availabilityZone: { from: 'Machine', name: 'az1' } } },
        },
      ],
    });
    assert.deepEqual(paths(validateOpenStackMachineSpec(spec)), [
      'spec.rootVolume.availabilityZone.name',
      'spec.additionalBlockDevices[0].storage.volume.availabilityZone.name',
    ]);
  });

  it('matches a scheduler hint value to its type (CEL)', () => {
    const spec = machine({
      schedulerHintAdditionalProperties: [{ name: 'x', value: { type: 'Bool', string: 'yes' } }],
    });
    assert.deepEqual(paths(validateOpenStackMachineSpec(spec)), [
      'spec.schedulerHintAdditionalProperties[0].value.bool',
      'spec.schedulerHintAdditionalProperties[0].value.string',
    ]);
  });

  it('forbids security groups on a port without port security', () => {
    const spec = machine({ ports: [{ disablePortSecurity: true, securityGroups: [{ id: ID }] }] });
    assert.deepEqual(paths(validateOpenStackMachineSpec(spec)), ['spec.ports[0].securityGroups']);
  });
});

describe('the other kinds', () => {
  it('OpenStackServer needs identityRef and at least one port', () => {
    const base: OpenStackServerSpec = { identityRef, flavor: 'm1.small', image: { id: ID }, ports: [{}] };
    assert.deepEqual(validateOpenStackServerSpec(base), []);
    assert.deepEqual(paths(validateOpenStackServerSpec({ ...base, ports: [] })), ['spec.ports']);
    const { identityRef: _r, ...noIdentity } = base;
    assert.deepEqual(paths(validateOpenStackServerSpec(noIdentity as OpenStackServerSpec)), [
      'spec.identityRef',
    ]);
  });

  it('templates are checked under spec.template.spec', () => {
    assert.deepEqual(
      paths(validateOpenStackMachineTemplateSpec({ template: { spec: { image: { id: ID } } } })),
      ['spec.template.spec.flavor'],
    );
    assert.deepEqual(
      paths(
        validateOpenStackClusterTemplateSpec({
          template: { spec: cluster({ disableExternalNetwork: true }) },
        }),
      ),
      ['spec.template.spec.disableAPIServerFloatingIP'],
    );
  });

  it('OpenStackFloatingIPPool and OpenStackClusterIdentity', () => {
    assert.deepEqual(
      paths(
        validateOpenStackFloatingIPPoolSpec({
          identityRef,
          floatingIPNetwork: { id: ID, filter: { name: 'public' } },
        }),
      ),
      ['spec.floatingIPNetwork'],
    );
    assert.deepEqual(
      paths(validateOpenStackClusterIdentitySpec({ secretRef: { name: 'creds', namespace: '' } })),
      ['spec.secretRef.namespace'],
    );
    assert.deepEqual(
      validateOpenStackClusterIdentitySpec({ secretRef: { name: 'creds', namespace: 'capo-system' } }),
      [],
    );
  });
});
