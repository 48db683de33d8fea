import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubernetesObject } from './resource.ts';
import {
  AlreadyOwnedError,
  getControllerOf,
  isControlledBy,
  removeOwnerReference,
  setControllerReference,
  setOwnerReference,
} from './owner.ts';

const obj = (kind: string, name: string, uid: string, namespace?: string): KubernetesObject => ({
  apiVersion: kind === 'Gadget' ? 'test.shiftstack.io/v1' : 'v1',
  kind,
  metadata: { name, uid, ...(namespace ? { namespace } : {}) },
});

describe('owner references', () => {
  it('sets one controller, refreshes it, and refuses a second one', () => {
    const owner = obj('Gadget', 'g', 'uid-1', 'ns');
    const child = obj('ConfigMap', 'c', 'uid-c', 'ns');
    setControllerReference(owner, child);
    setControllerReference(owner, child);
    assert.deepEqual(child.metadata?.ownerReferences, [
      {
        apiVersion: 'test.shiftstack.io/v1',
        kind: 'Gadget',
        name: 'g',
        uid: 'uid-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.ok(isControlledBy(child, owner));
    assert.equal(getControllerOf(child)?.name, 'g');
    assert.throws(
      () => setControllerReference(obj('Gadget', 'other', 'uid-2', 'ns'), child),
      (e) => AlreadyOwnedError.is(e),
    );
  });

  it('adds plain owners beside the controller and removes them', () => {
    const child = obj('ConfigMap', 'c', 'uid-c', 'ns');
    setControllerReference(obj('Gadget', 'g', 'uid-1', 'ns'), child);
    const extra = obj('Node', 'n1', 'uid-n');
    setOwnerReference(extra, child);
    assert.equal(child.metadata?.ownerReferences?.length, 2);
    assert.equal(child.metadata?.ownerReferences?.[1]?.controller, undefined);
    assert.ok(removeOwnerReference(extra, child));
    assert.equal(child.metadata?.ownerReferences?.length, 1);
  });

  it('refuses what the garbage collector would ignore: cross-namespace and namespaced-owns-cluster', () => {
    assert.throws(
      () => setControllerReference(obj('Gadget', 'g', 'u', 'a'), obj('ConfigMap', 'c', 'v', 'b')),
      /cross-namespace/,
    );
    assert.throws(
      () => setControllerReference(obj('Gadget', 'g', 'u', 'a'), obj('Node', 'n', 'v')),
      /cluster-scoped/,
    );
    assert.throws(
      () => setControllerReference({ kind: 'Gadget', metadata: { name: 'g' } }, obj('Node', 'n', 'v')),
      /uid/,
    );
  });
});
