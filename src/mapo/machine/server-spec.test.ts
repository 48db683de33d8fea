/**
 * MAPO's translation (§2.4 of the anchors, pkg/machine/convert.go) case by case: the provider spec
 * of a Machine → the OpenStackServer's spec, starting from the installer's worker of
 * examples/mapo/machineset.yaml.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { OpenStackPlatformStatus } from '../../ccm-operator/api/index.ts';
import { decodeProviderSpec, type Machine, type OpenstackProviderSpec } from '../api/index.ts';
import { allowedVIPs, machineToServerSpec, PROVIDER_TAG, type ServerSpecInput } from './server-spec.ts';

const EXAMPLE = join(import.meta.dirname, '..', '..', '..', 'examples', 'mapo', 'machineset.yaml');
const set = parseAllDocuments(readFileSync(EXAMPLE, 'utf8'))[0]!.toJS() as Record<string, any>;
const template = set.spec.template.spec.providerSpec.value as Record<string, unknown>;

const PLATFORM: OpenStackPlatformStatus = {
  apiServerInternalIPs: ['10.0.0.5', 'fd00::5'],
  ingressIPs: ['10.0.0.7'],
  loadBalancer: { type: 'OpenShiftManagedDefault' },
};

function machine(name = 'ostest-7xk2p-worker-0-abcde'): Machine {
  return {
    apiVersion: 'machine.openshift.io/v1beta1',
    kind: 'Machine',
    metadata: {
      name,
      namespace: 'openshift-machine-api',
      labels: { 'machine.openshift.io/cluster-api-cluster': 'ostest-7xk2p' },
    },
    spec: {},
  };
}

function decoded(over: Record<string, unknown> = {}): OpenstackProviderSpec {
  const d = decodeProviderSpec({ ...template, ...over }, 'spec.providerSpec.value');
  assert.ok(d.spec, JSON.stringify(d.problems));
  return d.spec;
}

function translate(over: Record<string, unknown> = {}, input: Partial<ServerSpecInput> = {}) {
  const r = machineToServerSpec({
    spec: decoded(over),
    machine: machine(),
    platform: PLATFORM,
    serverGroupID: undefined,
    ...input,
  });
  assert.ok(r.ok, r.ok ? '' : r.message);
  return r.spec;
}

describe('machineToServerSpec', () => {
  it('the installer’s worker: image and flavor by name, one port per subnet with the VIPs, tags, metadata, identity, user data', () => {
    const s = translate({}, { serverGroupID: 'sg-1' });
    assert.deepEqual(s.image, { filter: { name: 'ostest-7xk2p-rhcos' } });
    assert.equal(s.flavor, 'm1.xlarge');
    assert.deepEqual(s.identityRef, {
      type: 'Secret',
      name: 'openstack-cloud-credentials',
      cloudName: 'openstack',
    });
    assert.deepEqual(s.userDataRef, { name: 'ostest-7xk2p-worker-0-abcde-user-data' });
    assert.deepEqual(s.serverGroup, { id: 'sg-1' });
    assert.deepEqual(s.ports, [
      {
        trunk: true,
        allowedAddressPairs: [{ ipAddress: '10.0.0.5' }, { ipAddress: 'fd00::5' }, { ipAddress: '10.0.0.7' }],
        fixedIPs: [
          { subnet: { filter: { name: 'ostest-7xk2p-nodes', tags: ['openshiftClusterID=ostest-7xk2p'] } } },
        ],
      },
    ]);
    assert.deepEqual(s.securityGroups, [{ filter: { name: 'ostest-7xk2p-worker' } }]);
    assert.deepEqual(s.tags, [
      PROVIDER_TAG,
      'openshift-machine-api-ostest-7xk2p',
      'openshiftClusterID=ostest-7xk2p',
    ]);
    assert.deepEqual(s.serverMetadata, [
      { key: 'Name', value: 'ostest-7xk2p-worker' },
      { key: 'openshiftClusterID', value: 'ostest-7xk2p' },
    ]);
    assert.equal(s.trunk, true);
    assert.equal(s.rootVolume, undefined);
  });

  it('no network and two subnets: two ports, each on its subnet, with the network’s and the subnet’s port tags', () => {
    const s = translate({
      networks: [
        {
          portTags: ['net'],
          subnets: [
            { uuid: '11111111-1111-1111-1111-111111111111', portTags: ['a'] },
            { filter: { id: '22222222-2222-2222-2222-222222222222' }, portTags: ['b', 'net'] },
          ],
        },
      ],
    });
    assert.equal(s.ports.length, 2);
    assert.deepEqual(s.ports[0]!.fixedIPs, [{ subnet: { id: '11111111-1111-1111-1111-111111111111' } }]);
    assert.deepEqual(s.ports[1]!.fixedIPs, [{ subnet: { id: '22222222-2222-2222-2222-222222222222' } }]);
    assert.deepEqual(s.ports[0]!.tags, ['net', 'a']);
    assert.deepEqual(s.ports[1]!.tags, ['net', 'b']);
    assert.equal(s.ports[0]!.network, undefined, 'the engine takes the network from the subnet');
  });

  it('a network and two subnets: one port with a fixed IP on each', () => {
    const s = translate({
      networks: [
        {
          uuid: '33333333-3333-3333-3333-333333333333',
          subnets: [{ filter: { cidr: '10.0.0.0/24' } }, { filter: { name: 'v6', ipVersion: 6 } }],
        },
        { filter: { name: 'storage', tags: 'a,b' } },
      ],
    });
    assert.deepEqual(s.ports[0]!.network, { id: '33333333-3333-3333-3333-333333333333' });
    assert.deepEqual(s.ports[0]!.fixedIPs, [
      { subnet: { filter: { cidr: '10.0.0.0/24' } } },
      { subnet: { filter: { name: 'v6', ipVersion: 6 } } },
    ]);
    assert.deepEqual(s.ports[1]!.network, { filter: { name: 'storage', tags: ['a', 'b'] } });
    assert.equal(s.ports[1]!.fixedIPs, undefined);
  });

  it('the VIPs: not with noAllowedAddressPairs, nor with a user-managed load balancer; the older singular fields', () => {
    const nets = [{ uuid: '33333333-3333-3333-3333-333333333333', noAllowedAddressPairs: true }];
    assert.equal(translate({ networks: nets }).ports[0]!.allowedAddressPairs, undefined);
    const userManaged = translate({}, { platform: { ...PLATFORM, loadBalancer: { type: 'UserManaged' } } });
    assert.equal(userManaged.ports[0]!.allowedAddressPairs, undefined);
    assert.equal(translate({}, { platform: undefined }).ports[0]!.allowedAddressPairs, undefined);
    assert.deepEqual(allowedVIPs({ apiServerInternalIP: '10.1.0.5', ingressIP: '10.1.0.7' }), [
      '10.1.0.5',
      '10.1.0.7',
    ]);
  });

  it('portSecurity inverted (unset stays unset), vnicType, profile switchdev and trusted', () => {
    const s = translate({
      networks: [
        {
          uuid: '33333333-3333-3333-3333-333333333333',
          portSecurity: false,
          vnicType: 'direct',
          profile: { capabilities: '["switchdev"]', trusted: 'true' },
        },
        { uuid: '44444444-4444-4444-4444-444444444444', portSecurity: true },
        { uuid: '55555555-5555-5555-5555-555555555555' },
      ],
    });
    assert.equal(s.ports[0]!.disablePortSecurity, true);
    assert.equal(s.ports[0]!.vnicType, 'direct');
    assert.deepEqual(s.ports[0]!.profile, { ovsHWOffload: true, trustedVF: true });
    assert.equal(s.ports[1]!.disablePortSecurity, false);
    assert.equal('disablePortSecurity' in s.ports[2]!, false);
  });

  it('ports[] one to one, after the networks', () => {
    const s = translate({
      ports: [
        {
          networkID: '66666666-6666-6666-6666-666666666666',
          nameSuffix: 'sriov',
          description: 'fast',
          adminStateUp: true,
          macAddress: 'fa:16:3e:00:00:01',
          fixedIPs: [{ subnetID: '77777777-7777-7777-7777-777777777777', ipAddress: '10.9.0.9' }],
          securityGroups: ['88888888-8888-8888-8888-888888888888'],
          allowedAddressPairs: [{ ipAddress: '10.9.0.100' }],
          tags: ['x'],
          vnicType: 'direct',
          portSecurity: false,
          trunk: false,
        },
      ],
    });
    assert.equal(s.ports.length, 2);
    assert.deepEqual(s.ports[1], {
      network: { id: '66666666-6666-6666-6666-666666666666' },
      nameSuffix: 'sriov',
      description: 'fast',
      adminStateUp: true,
      macAddress: 'fa:16:3e:00:00:01',
      fixedIPs: [{ subnet: { id: '77777777-7777-7777-7777-777777777777' }, ipAddress: '10.9.0.9' }],
      securityGroups: [{ id: '88888888-8888-8888-8888-888888888888' }],
      allowedAddressPairs: [{ ipAddress: '10.9.0.100' }],
      tags: ['x'],
      vnicType: 'direct',
      disablePortSecurity: true,
      trunk: false,
    });
  });

  it('boot from volume: the image is rootVolume.sourceUUID (a name), the volume its size, type and zone', () => {
    const s = translate({
      image: undefined,
      rootVolume: { sourceUUID: 'rhcos-volume', diskSize: 25, volumeType: 'fast', availabilityZone: 'az2' },
    });
    assert.deepEqual(s.image, { filter: { name: 'rhcos-volume' } });
    assert.deepEqual(s.rootVolume, {
      sizeGiB: 25,
      type: 'fast',
      availabilityZone: { from: 'Name', name: 'az2' },
    });
    const noZone = translate({ image: undefined, rootVolume: { sourceUUID: 'r', diskSize: 25 } });
    assert.deepEqual(noZone.rootVolume, { sizeGiB: 25 }, 'the machine’s zone');
  });

  it('AZ, key, config drive, additional block devices; tags sorted and each once', () => {
    const s = translate({
      availabilityZone: 'az1',
      keyName: 'me',
      configDrive: true,
      tags: ['b', PROVIDER_TAG, 'a', 'b'],
      additionalBlockDevices: [
        {
          name: 'etcd',
          sizeGiB: 10,
          storage: { type: 'Volume', volume: { type: 'ssd', availabilityZone: 'az3' } },
        },
        { name: 'scratch', sizeGiB: 5, storage: { type: 'Local' } },
      ],
    });
    assert.equal(s.availabilityZone, 'az1');
    assert.equal(s.sshKeyName, 'me');
    assert.equal(s.configDrive, true);
    assert.deepEqual(s.tags, ['a', 'b', PROVIDER_TAG, 'openshift-machine-api-ostest-7xk2p']);
    assert.deepEqual(s.additionalBlockDevices, [
      {
        name: 'etcd',
        sizeGiB: 10,
        storage: { type: 'Volume', volume: { type: 'ssd', availabilityZone: { from: 'Name', name: 'az3' } } },
      },
      { name: 'scratch', sizeGiB: 5, storage: { type: 'Local' } },
    ]);
  });

  it('security groups by uuid, filter id, name and filter', () => {
    const s = translate({
      securityGroups: [
        { uuid: '99999999-9999-9999-9999-999999999999' },
        { filter: { id: 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa' } },
        { filter: { name: 'by-filter', tags: 'x' } },
      ],
    });
    assert.deepEqual(s.securityGroups, [
      { id: '99999999-9999-9999-9999-999999999999' },
      { id: 'aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa' },
      { filter: { name: 'by-filter', tags: ['x'] } },
    ]);
  });

  it('refuses, naming the field: a clouds Secret of another namespace, a Machine without the cluster label', () => {
    const other = machineToServerSpec({
      spec: decoded({ cloudsSecret: { name: 'creds', namespace: 'elsewhere' } }),
      machine: machine(),
      platform: PLATFORM,
      serverGroupID: undefined,
    });
    assert.equal(other.ok, false);
    assert.ok(!other.ok && other.path === 'spec.providerSpec.value.cloudsSecret.namespace');
    assert.match(!other.ok ? other.message : '', /elsewhere\/creds is not in the Machine's namespace/);
    const m = machine();
    delete m.metadata!.labels;
    const unlabelled = machineToServerSpec({
      spec: decoded(),
      machine: m,
      platform: PLATFORM,
      serverGroupID: undefined,
    });
    assert.ok(!unlabelled.ok && /cluster-api-cluster/.test(unlabelled.message));
  });
});
