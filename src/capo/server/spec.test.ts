import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { volumeSpecs, type ServerState } from '../../openstack/services/server/index.ts';
import { validateOpenStackServerSpec, type OpenStackServerSpec } from '../api/index.ts';
import { toServerSpec } from './spec.ts';
import { stateFromStatus, statusFromState } from './status.ts';

const base: OpenStackServerSpec = {
  identityRef: { type: 'Secret', name: 'creds', cloudName: 'openstack' },
  image: { filter: { name: 'ubuntu', tags: ['k8s'] } },
  flavor: 'm1.small',
  ports: [{ network: { filter: { name: 'net', tags: ['a'] } } }],
};

describe('OpenStackServer spec → engine ServerSpec', () => {
  it('carries every field the engine acts on', () => {
    const t = toServerSpec(
      'm-0',
      {
        ...base,
        flavorID: 'f-1',
        serverGroup: { filter: { name: 'workers' } },
        availabilityZone: 'az1',
        sshKeyName: 'key',
        configDrive: true,
        tags: ['t1'],
        trunk: true,
        securityGroups: [{ id: 'sg-1' }, { filter: { name: 'web', notTags: ['x'] } }],
        serverMetadata: [
          { key: 'role', value: 'worker' },
          { key: 'tier', value: 'b' },
        ],
        schedulerHintAdditionalProperties: [
          { name: 'spread', value: { type: 'Bool', bool: true } },
          { name: 'weight', value: { type: 'Number', number: 3 } },
          { name: 'query', value: { type: 'String', string: '[">=","$free_ram_mb",1024]' } },
        ],
        rootVolume: { sizeGiB: 20, type: 'ssd', availabilityZone: { from: 'Name', name: 'vol-az' } },
        additionalBlockDevices: [
          {
            name: 'etcd',
            sizeGiB: 5,
            storage: { type: 'Volume', volume: { availabilityZone: { from: 'Machine' } } },
          },
          { name: 'scratch', sizeGiB: 1, storage: { type: 'Local' } },
        ],
        ports: [
          {
            network: { id: 'n-1' },
            nameSuffix: 'api',
            fixedIPs: [
              { subnet: { filter: { ipVersion: 6, ipv6AddressMode: 'slaac' } } },
              { ipAddress: '10.0.0.5' },
            ],
            allowedAddressPairs: [{ ipAddress: '10.0.0.100' }],
            disablePortSecurity: false,
            vnicType: 'direct',
            profile: { trustedVF: true },
            valueSpecs: [{ name: 'v', key: 'k', value: 'x' }],
          },
        ],
      },
      '#cloud-config\n',
    );
    assert.deepEqual(t.unsupported, []);
    const s = t.spec!;
    assert.deepEqual(s.flavor, { id: 'f-1' }, 'flavorID wins over flavor');
    assert.deepEqual(s.image, { filter: { name: 'ubuntu', tags: ['k8s'] } });
    assert.deepEqual(s.serverGroup, { filter: { name: 'workers' } });
    assert.deepEqual(s.metadata, { role: 'worker', tier: 'b' });
    assert.deepEqual(s.schedulerHints, { spread: true, weight: 3, query: '[">=","$free_ram_mb",1024]' });
    assert.equal(s.userData, '#cloud-config\n');
    assert.deepEqual(s.securityGroups, [{ id: 'sg-1' }, { filter: { name: 'web', notTags: ['x'] } }]);
    assert.deepEqual(s.ports[0], {
      network: { id: 'n-1' },
      nameSuffix: 'api',
      fixedIPs: [
        { subnet: { filter: { ipVersion: 6, ipv6AddressMode: 'slaac' } } },
        { ipAddress: '10.0.0.5' },
      ],
      allowedAddressPairs: [{ ipAddress: '10.0.0.100' }],
      disablePortSecurity: false,
      vnicType: 'direct',
      profile: { trustedVF: true },
      valueSpecs: [{ name: 'v', key: 'k', value: 'x' }],
    });
    assert.deepEqual(
      volumeSpecs(s).map((v) => [v.name, v.sizeGiB, v.availabilityZone]),
      [
        ['m-0-root', 20, 'vol-az'],
        ['m-0-etcd', 5, 'az1'],
      ],
    );
  });

  it('port security from enablePortSecurity (CAPO’s newer spelling) or disablePortSecurity', () => {
    const security = (port: OpenStackServerSpec['ports'][number]) =>
      toServerSpec('m-0', { ...base, ports: [port] }, undefined).spec?.ports[0]?.disablePortSecurity;
    assert.equal(security({ enablePortSecurity: false }), true);
    assert.equal(security({ enablePortSecurity: true }), false);
    assert.equal(security({ disablePortSecurity: true }), true);
    assert.equal(security({}), undefined);
    assert.deepEqual(
      validateOpenStackServerSpec({
        ...base,
        ports: [{ enablePortSecurity: false, disablePortSecurity: false }],
      }).map((p) => p.path),
      ['spec.ports[0].enablePortSecurity'],
    );
    assert.deepEqual(
      validateOpenStackServerSpec({
        ...base,
        ports: [{ enablePortSecurity: false, securityGroups: [{ id: 'sg-1' }] }],
      }).map((p) => p.path),
      ['spec.ports[0].securityGroups'],
    );
  });

  it('refuses what it cannot do instead of dropping it', () => {
    const t = toServerSpec(
      'm-0',
      { ...base, image: { imageRef: { name: 'orc-image' } }, ports: [{ qosPolicy: { id: 'q-1' } }] },
      undefined,
    );
    assert.equal(t.spec, undefined);
    assert.deepEqual(
      t.unsupported.map((u) => u.path),
      ['spec.image.imageRef', 'spec.ports[0].qosPolicy'],
    );
  });

  it('status round trip: what is recorded is what the engine gets back', () => {
    const state: ServerState = {
      resolved: {
        imageID: 'i',
        flavorID: 'f',
        ports: [
          {
            name: 'm-0-0',
            networkID: 'n',
            tags: ['t'],
            trunk: true,
            fixedIPs: [{ subnet: 's' }],
            securityGroups: ['sg'],
            vnicType: 'normal',
          },
        ],
      },
      resources: { ports: [{ id: 'p-1' }] },
      instanceID: 'srv',
    };
    const status = statusFromState(state);
    assert.equal(status.resolved?.ports?.[0]?.description, '', 'CAPO requires a description');
    assert.deepEqual(stateFromStatus(status), {
      ...state,
      resolved: { ...state.resolved!, ports: [{ ...state.resolved!.ports[0]!, description: undefined }] },
    });
    assert.deepEqual(stateFromStatus(undefined), {});
  });
});
