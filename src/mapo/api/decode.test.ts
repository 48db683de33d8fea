import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { decodeProviderSpec, errorMessageOf, NOT_SUPPORTED_YET, type ProviderSpecProblem } from './index.ts';

const WHERE = 'spec.providerSpec.value';
const NET = '3f7c1b2e-5a4d-4e8f-9b6a-0c1d2e3f4a5b';
const SUBNET = '8a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d';

async function example(): Promise<{ machineSet: any; machine: any }> {
  const text = await readFile(
    join(import.meta.dirname, '..', '..', '..', 'examples', 'mapo', 'machineset.yaml'),
    'utf8',
  );
  const [machineSet, machine] = parseAllDocuments(text).map((d) => d.toJS());
  return { machineSet, machine };
}

/** The example Machine's provider spec, with changes. */
async function spec(change: (value: any) => void = () => {}): Promise<Record<string, unknown>> {
  const value = structuredClone((await example()).machine.spec.providerSpec.value);
  change(value);
  return value;
}

const summary = (problems: readonly ProviderSpecProblem[]) => problems.map((p) => `${p.kind} ${p.path}`);

describe('decodeProviderSpec', () => {
  it('decodes the installer’s MachineSet and Machine with no problem', async () => {
    const { machineSet, machine } = await example();
    const fromSet = decodeProviderSpec(
      machineSet.spec.template.spec.providerSpec.value,
      'spec.template.spec.providerSpec.value',
    );
    assert.deepEqual(fromSet.problems, []);
    assert.equal(fromSet.spec?.flavor, 'm1.xlarge');
    assert.equal(fromSet.spec?.networks?.[0]?.subnets?.[0]?.filter?.name, 'ostest-7xk2p-nodes');
    assert.deepEqual(fromSet.spec?.cloudsSecret, {
      name: 'openstack-cloud-credentials',
      namespace: 'openshift-machine-api',
    });
    const fromMachine = decodeProviderSpec(machine.spec.providerSpec.value, WHERE);
    assert.deepEqual(fromMachine.problems, []);
    assert.equal(fromMachine.spec?.serverGroupName, 'ostest-7xk2p-master');
  });

  it('reads every field of OpenstackProviderSpec', async () => {
    const full = await spec((v) => {
      delete v.image;
      Object.assign(v, {
        keyName: 'ops',
        sshUserName: 'core',
        networks: [
          {
            uuid: NET,
            subnets: [{ uuid: SUBNET, portTags: ['a'] }, { filter: { cidr: '10.0.0.0/24', ipVersion: 4 } }],
            noAllowedAddressPairs: true,
            portTags: ['net'],
            vnicType: 'direct',
            profile: { capabilities: '["switchdev"]', trusted: 'true' },
            portSecurity: false,
          },
        ],
        ports: [
          {
            networkID: NET,
            nameSuffix: 'storage',
            description: 'storage network',
            adminStateUp: true,
            macAddress: 'fa:16:3e:00:00:01',
            fixedIPs: [{ subnetID: SUBNET, ipAddress: '10.0.0.9' }],
            securityGroups: [NET],
            allowedAddressPairs: [{ ipAddress: '10.0.0.100' }],
            tags: ['p'],
            vnicType: 'normal',
            portSecurity: true,
            trunk: false,
          },
        ],
        availabilityZone: 'nova',
        configDrive: true,
        rootVolume: { diskSize: 25, sourceUUID: 'rhcos', volumeType: 'ssd', availabilityZone: 'cinder-az' },
        additionalBlockDevices: [
          {
            name: 'etcd',
            sizeGiB: 10,
            storage: { type: 'Volume', volume: { type: 'fast', availabilityZone: 'az1' } },
          },
          { name: 'scratch', sizeGiB: 5, storage: { type: 'Local' } },
        ],
        serverGroupID: '5c4b3a29-1807-4f6e-9d5c-4b3a29180706',
        primarySubnet: SUBNET,
      });
    });
    const out = decodeProviderSpec(full, WHERE);
    assert.deepEqual(out.problems, []);
    assert.equal(out.spec?.rootVolume?.diskSize, 25);
    assert.equal(out.spec?.ports?.[0]?.fixedIPs?.[0]?.ipAddress, '10.0.0.9');
    assert.equal(out.spec?.additionalBlockDevices?.[1]?.storage.type, 'Local');
  });

  it('reads a key written empty as not written, as Go does', async () => {
    const out = decodeProviderSpec(await spec((v) => Object.assign(v, { keyName: null, tags: null })), WHERE);
    assert.deepEqual(out.problems, []);
    assert.equal(out.spec?.keyName, undefined);
  });

  const invalid: [string, (v: any) => void, string, RegExp][] = [
    ['no flavor', (v) => delete v.flavor, `${WHERE}.flavor`, /required key is missing.*Nova flavor/],
    ['empty flavor', (v) => (v.flavor = ''), `${WHERE}.flavor`, /length must be >= 1/],
    ['flavor not a string', (v) => (v.flavor = 4), `${WHERE}.flavor`, /expected a string, got a number 4/],
    ['no cloudName', (v) => delete v.cloudName, `${WHERE}.cloudName`, /cloud of clouds\.yaml/],
    [
      'cloudsSecret without name',
      (v) => (v.cloudsSecret = { namespace: 'x' }),
      `${WHERE}.cloudsSecret.name`,
      /Secret holding clouds\.yaml/,
    ],
    ['no image at all', (v) => delete v.image, `${WHERE}.image`, /neither image nor rootVolume\.sourceUUID/],
    [
      'network uuid not a UUID',
      (v) => (v.networks = [{ uuid: 'ostest-net' }]),
      `${WHERE}.networks[0].uuid`,
      /UUID of the network/,
    ],
    [
      'a network naming nothing',
      (v) => v.networks.push({ filter: {} }),
      `${WHERE}.networks[1]`,
      /names no network/,
    ],
    [
      'a subnet naming nothing',
      (v) => v.networks[0].subnets.push({ filter: {} }),
      `${WHERE}.networks[0].subnets[1]`,
      /names no subnet/,
    ],
    [
      'ipVersion 5',
      (v) => (v.networks[0].subnets[0].filter.ipVersion = 5),
      `${WHERE}.networks[0].subnets[0].filter.ipVersion`,
      /4 or 6/,
    ],
    ['trunk as a string', (v) => (v.trunk = 'yes'), `${WHERE}.trunk`, /expected a boolean/],
    [
      'serverMetadata value not a string',
      (v) => (v.serverMetadata.count = 3),
      `${WHERE}.serverMetadata.count`,
      /expected a string/,
    ],
    [
      'port without networkID',
      (v) => (v.ports = [{ nameSuffix: 'x' }]),
      `${WHERE}.ports[0].networkID`,
      /network the port is created in/,
    ],
    [
      'root volume without size',
      (v) => (v.rootVolume = { volumeType: 'ssd' }),
      `${WHERE}.rootVolume.diskSize`,
      /size of the root volume/,
    ],
    ['root volume of 0 GiB', (v) => (v.rootVolume = { diskSize: 0 }), `${WHERE}.rootVolume.diskSize`, />= 1/],
    [
      'block device of another storage type',
      (v) => (v.additionalBlockDevices = [{ name: 'etcd', sizeGiB: 1, storage: { type: 'Ceph' } }]),
      `${WHERE}.additionalBlockDevices[0].storage.type`,
      /"Local", "Volume"/,
    ],
    [
      'two block devices of one name',
      (v) =>
        (v.additionalBlockDevices = [
          { name: 'etcd', sizeGiB: 1, storage: { type: 'Local' } },
          { name: 'etcd', sizeGiB: 1, storage: { type: 'Local' } },
        ]),
      `${WHERE}.additionalBlockDevices[1].name`,
      /two block devices/,
    ],
    [
      'another provider’s kind',
      (v) => (v.kind = 'AWSMachineProviderConfig'),
      `${WHERE}.kind`,
      /another provider/,
    ],
    [
      'another API version',
      (v) => (v.apiVersion = 'awsproviderconfig.openshift.io/v1beta1'),
      `${WHERE}.apiVersion`,
      /machine\.openshift\.io\/v1alpha1/,
    ],
  ];
  for (const [name, change, path, message] of invalid) {
    it(`refuses ${name}, naming ${path.slice(WHERE.length + 1)}`, async () => {
      const out = decodeProviderSpec(await spec(change), WHERE);
      assert.equal(out.spec, undefined);
      const p = out.problems.find((x) => x.path === path);
      assert.ok(p, `a problem at ${path} in ${JSON.stringify(summary(out.problems))}`);
      assert.equal(p.kind, 'invalid');
      assert.equal(p.fatal, true);
      assert.equal(p.reason, 'InvalidProviderSpec');
      assert.match(errorMessageOf(out.problems), message);
      assert.ok(errorMessageOf(out.problems).includes(path));
    });
  }

  it('refuses a missing or non-object provider spec', () => {
    assert.deepEqual(summary(decodeProviderSpec(undefined, WHERE).problems), [`invalid ${WHERE}`]);
    assert.match(errorMessageOf(decodeProviderSpec('flavor: m1', WHERE).problems), /got string/);
  });

  it('reports each field not supported yet, as such, with its path', async () => {
    const out = decodeProviderSpec(
      await spec((v) => {
        v.floatingIP = '203.0.113.7';
        v.ports = [{ networkID: NET, projectID: 'p1' }];
        v.networks[0].profile = { capabilities: '["switchdev"]', physical_network: 'physnet1' };
      }),
      WHERE,
    );
    assert.equal(out.spec, undefined);
    assert.deepEqual(summary(out.problems), [
      `unsupported ${WHERE}.floatingIP`,
      `unsupported ${WHERE}.ports[0].projectID`,
      `unsupported ${WHERE}.networks[0].profile`,
    ]);
    for (const p of out.problems) {
      assert.equal(p.fatal, true);
      assert.equal(p.reason, 'UnsupportedProviderSpecField');
    }
    assert.match(errorMessageOf(out.problems), /floatingIP \(value "203\.0\.113\.7"\): not supported yet: /);
  });

  it('has a test input for every entry of the not-supported table', () => {
    // A later step that implements a field removes its entry; the list below follows it.
    assert.deepEqual(
      NOT_SUPPORTED_YET.map((e) => e.field),
      ['floatingIP', 'ports[].projectID', 'ports[].tenantID', 'networks[].profile', 'ports[].profile'],
    );
  });

  it('accepts what upstream ignores, saying so: unknown keys (with a did-you-mean) and deprecated fields', async () => {
    const out = decodeProviderSpec(
      await spec((v) => {
        v.flavour = 'm1.small';
        v.networks[0].fixedIp = '10.0.0.5';
        v.networks[0].subnets[0].filter.limit = 10;
        v.rootVolume = { diskSize: 30, sourceType: 'image', deviceType: '' };
      }),
      WHERE,
    );
    assert.ok(out.spec, JSON.stringify(out.problems));
    assert.equal(out.spec.flavor, 'm1.xlarge');
    assert.equal((out.spec as Record<string, unknown>).flavour, undefined, 'an unknown key is dropped');
    assert.deepEqual(summary(out.problems), [
      `ignored ${WHERE}.flavour`,
      `ignored ${WHERE}.networks[0].fixedIp`,
      `ignored ${WHERE}.rootVolume.sourceType`,
      `ignored ${WHERE}.networks[0].subnets[0].filter.limit`,
    ]);
    assert.match(out.problems[0]!.fix, /did you mean "flavor"/);
    assert.ok(out.problems.every((p) => !p.fatal && p.reason === 'IgnoredProviderSpecField'));
    assert.equal(errorMessageOf(out.problems), '');
  });

  it('reports an invalid value and an unknown key together, so a typo explains the missing field', async () => {
    const out = decodeProviderSpec(
      await spec((v) => {
        v.flavour = v.flavor;
        delete v.flavor;
      }),
      WHERE,
    );
    assert.equal(out.spec, undefined);
    assert.deepEqual(summary(out.problems).sort(), [`ignored ${WHERE}.flavour`, `invalid ${WHERE}.flavor`]);
  });

  it('takes image over a different rootVolume.sourceUUID, as openshift/api documents, and says so', async () => {
    const out = decodeProviderSpec(
      await spec((v) => (v.rootVolume = { diskSize: 25, sourceUUID: 'other' })),
      WHERE,
    );
    assert.ok(out.spec);
    assert.deepEqual(summary(out.problems), [`ignored ${WHERE}.rootVolume.sourceUUID`]);
  });

  it('boots from rootVolume.sourceUUID when image is empty, as the installer’s root-volume MachineSets have it', async () => {
    const out = decodeProviderSpec(
      await spec((v) => {
        v.image = '';
        v.rootVolume = { diskSize: 25, sourceUUID: 'ostest-7xk2p-rhcos', volumeType: 'performance' };
      }),
      WHERE,
    );
    assert.deepEqual(out.problems, []);
    assert.equal(out.spec?.rootVolume?.sourceUUID, 'ostest-7xk2p-rhcos');
  });
});
