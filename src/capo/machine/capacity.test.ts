import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { binaryQuantity, templateCapacity } from './capacity.ts';

describe('OpenStackMachineTemplate capacity', () => {
  it('writes byte counts as Kubernetes does', () => {
    assert.equal(binaryQuantity(4 * 1024 ** 3), '4Gi');
    assert.equal(binaryQuantity(1536 * 1024 ** 2), '1536Mi');
    assert.equal(binaryQuantity(1024 ** 4), '1Ti');
    assert.equal(binaryQuantity(1000), '1000');
    assert.equal(binaryQuantity(0), '0');
  });

  it('cpu, memory, ephemeral-storage and the root disk from the flavor', () => {
    const flavor = { vcpus: 4, ram: 8192, disk: 40, 'OS-FLV-EXT-DATA:ephemeral': 10 };
    assert.deepEqual(templateCapacity(flavor, {}), {
      cpu: '4',
      memory: '8Gi',
      'ephemeral-storage': '10Gi',
      storage: '40Gi',
    });
  });

  it('a root volume decides the storage; zero values are left out', () => {
    const flavor = { vcpus: 2, ram: 1536, disk: 0, 'OS-FLV-EXT-DATA:ephemeral': 0 };
    assert.deepEqual(templateCapacity(flavor, { rootVolume: { sizeGiB: 20 } }), {
      cpu: '2',
      memory: '1536Mi',
      storage: '20Gi',
    });
    assert.deepEqual(templateCapacity(flavor, {}), { cpu: '2', memory: '1536Mi' });
  });
});
