/**
 * The VIF a KuryrPort carries, in os-vif's primitive form: what upstream's controller wrote (the
 * sample of KURYR doc/source/specs/rocky/npwg_spec_support / port_crd_usage) reads as the flat Vif,
 * and ours written and read back is the same VIF.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultVif, readVif, VifFormatError, vifName, vifPrimitive, type Vif } from './vif.ts';

const vo = (name: string, version: string, data: Record<string, unknown>) => ({
  'versioned_object.data': data,
  'versioned_object.name': name,
  'versioned_object.namespace': 'os_vif',
  'versioned_object.version': version,
});

/** Upstream's documented VIF of a nested pod (port 18f968a5…, VLAN 1346). */
const upstream = vo('VIFVlanNested', '1.0', {
  active: true,
  address: 'fa:16:3e:bf:84:ff',
  has_traffic_filtering: false,
  id: '18f968a5-c420-4318-92d7-941eb5f9e60e',
  network: vo('Network', '1.1', {
    id: '144164d9-8c21-4274-acec-43245de0aed0',
    label: 'ns/luis-net',
    mtu: 1350,
    multi_host: false,
    should_provide_bridge: false,
    should_provide_vlan: false,
    subnets: vo('SubnetList', '1.0', {
      objects: [
        vo('Subnet', '1.0', {
          cidr: '10.11.9.0/24',
          dns: [],
          gateway: '10.11.9.1',
          ips: vo('FixedIPList', '1.0', { objects: [vo('FixedIP', '1.0', { address: '10.11.9.5' })] }),
          routes: vo('RouteList', '1.0', { objects: [] }),
        }),
      ],
    }),
  }),
  plugin: 'noop',
  preserve_on_delete: false,
  vif_name: 'tap18f968a5-c4',
  vlan_id: 1346,
});

describe('kuryr VIF primitive', () => {
  it("reads upstream's VIFVlanNested", () => {
    const vif = readVif(upstream);
    assert.equal(vif.id, '18f968a5-c420-4318-92d7-941eb5f9e60e');
    assert.equal(vif.address, 'fa:16:3e:bf:84:ff');
    assert.equal(vif.vlanId, 1346);
    assert.equal(vif.vifName, 'tap18f968a5-c4');
    assert.equal(vif.active, true);
    assert.deepEqual(vif.network, {
      id: '144164d9-8c21-4274-acec-43245de0aed0',
      label: 'ns/luis-net',
      mtu: 1350,
      subnets: [{ cidr: '10.11.9.0/24', gateway: '10.11.9.1', ips: ['10.11.9.5'], routes: [], dns: [] }],
    });
  });

  it('writes what upstream writes, and reads it back unchanged', () => {
    const vif = readVif(upstream);
    assert.deepEqual(vifPrimitive(vif), upstream);
    const ours: Vif = {
      id: 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee',
      address: 'fa:16:3e:00:00:01',
      vifName: vifName('aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee'),
      vlanId: 7,
      active: false,
      network: {
        id: 'n1',
        mtu: 1450,
        subnets: [
          {
            cidr: '10.128.0.0/14',
            gateway: '10.128.0.1',
            ips: ['10.128.0.9'],
            routes: [{ cidr: '0.0.0.0/0', gateway: '10.128.0.1' }],
            dns: ['10.0.0.10'],
          },
        ],
      },
      hasTrafficFiltering: false,
      preserveOnDelete: false,
      plugin: 'noop',
    };
    assert.equal(ours.vifName, 'tapaaaaaaaa-bb');
    assert.deepEqual(readVif(JSON.parse(JSON.stringify(vifPrimitive(ours)))), ours);
  });

  it('names the field a malformed VIF lacks', () => {
    const broken = structuredClone(upstream) as any;
    delete broken['versioned_object.data'].network['versioned_object.data'].subnets['versioned_object.data']
      .objects[0]['versioned_object.data'].cidr;
    assert.throws(
      () => readVif(broken),
      (err: unknown) => err instanceof VifFormatError && /subnets\[0\]\.cidr/.test(err.message),
    );
    assert.throws(() => readVif({}), VifFormatError);
  });

  it('finds the default VIF of a KuryrPort status', () => {
    assert.equal(defaultVif(undefined), undefined);
    assert.equal(defaultVif({}), undefined);
    const found = defaultVif({
      net1: { default: false, vif: upstream },
      eth0: { default: true, vif: upstream },
    });
    assert.equal(found?.ifname, 'eth0');
    assert.equal(found?.vif.vlanId, 1346);
  });
});
