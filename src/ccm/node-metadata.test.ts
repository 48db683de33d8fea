import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Server } from '../openstack/compute/v2/servers.ts';
import {
  additionalLabels,
  instanceTypeOfFlavor,
  instanceTypeSteps,
  isValidLabelValue,
  sanitizeLabel,
  zoneOf,
} from './node-metadata.ts';

const embedded = (original_name: string): Pick<Server, 'flavor'> => ({
  flavor: { vcpus: 1, ram: 512, disk: 1, ephemeral: 0, swap: 0, original_name },
});

describe('node metadata', () => {
  it('takes the embedded flavor name when it is a valid label value', () => {
    assert.deepEqual(instanceTypeSteps(embedded('m1.small')), [{ kind: 'label', value: 'm1.small' }]);
    assert.deepEqual(instanceTypeSteps(embedded('GPU large (2x)')), [
      { kind: 'lookup', flavorId: 'GPU large (2x)' },
    ]);
    assert.deepEqual(instanceTypeSteps({ flavor: { id: '42', links: [] } }), [
      { kind: 'lookup', flavorId: '42' },
    ]);
    assert.equal(instanceTypeOfFlavor({ id: '42', name: 'm1.small' }), 'm1.small');
    assert.equal(instanceTypeOfFlavor({ id: '42', name: 'with space' }), '42');
  });

  it('sanitizes zones and host ids as util.SanitizeLabel', () => {
    assert.equal(zoneOf({ 'OS-EXT-AZ:availability_zone': 'nova' }), 'nova');
    assert.equal(zoneOf({ 'OS-EXT-AZ:availability_zone': ' rack 1/row 2 ' }), 'rack-1-row-2');
    assert.equal(zoneOf({}), '');
    assert.equal(sanitizeLabel('a'.repeat(70)), 'a'.repeat(63));
    assert.deepEqual(additionalLabels({ hostId: 'abc123' }), { 'topology.openstack.org/host-id': 'abc123' });
    assert.deepEqual(additionalLabels({ hostId: '' }), {});
    assert.ok(
      isValidLabelValue('') &&
        isValidLabelValue('a-b_c.d') &&
        !isValidLabelValue('-a') &&
        !isValidLabelValue('a'.repeat(64)),
    );
  });
});
