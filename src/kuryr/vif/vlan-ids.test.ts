import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { freeVlanIds, VLAN_MAX } from './vlan-ids.ts';

describe('VLAN ids per trunk', () => {
  it('picks the lowest ids the trunk does not carry', () => {
    assert.deepEqual(freeVlanIds([1, 2, 4], 3), [3, 5, 6]);
  });

  it('gives fewer when the trunk is full, never 0 or 4095', () => {
    const all = Array.from({ length: VLAN_MAX }, (_, i) => i + 1);
    assert.deepEqual(freeVlanIds(all.slice(0, -2), 5), [4093, 4094]);
    assert.deepEqual(freeVlanIds(all, 1), []);
  });
});
