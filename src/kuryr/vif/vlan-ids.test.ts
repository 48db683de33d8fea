import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { freeVlanIds, VLAN_MAX, VlanReservations } from './vlan-ids.ts';

describe('VLAN ids per trunk', () => {
  it('picks the lowest ids the trunk does not carry', () => {
    assert.deepEqual(freeVlanIds([1, 2, 4], [], 3), [3, 5, 6]);
  });

  it('gives fewer when the trunk is full, never 0 or 4095', () => {
    const all = Array.from({ length: VLAN_MAX }, (_, i) => i + 1);
    assert.deepEqual(freeVlanIds(all.slice(0, -2), [], 5), [4093, 4094]);
    assert.deepEqual(freeVlanIds(all, [], 1), []);
  });

  it('never hands one id to two batches of one trunk in flight, and frees them once given back', () => {
    const r = new VlanReservations();
    const a = r.reserve('t1', [1], 3);
    const b = r.reserve('t1', [1], 3);
    assert.deepEqual(a, [2, 3, 4]);
    assert.deepEqual(b, [5, 6, 7]);
    assert.deepEqual(r.reserve('t2', [], 1), [1], 'another trunk has its own ids');
    r.release('t1', a);
    assert.deepEqual(r.reserve('t1', [1, 2], 2), [3, 4]);
    r.release('t1', [3, 4, 5, 6, 7]);
    assert.equal(r.held('t1'), 0);
  });
});
