import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONDITIONS, keyed, METADATA_HINTS, tableHints } from './hints.ts';
import { applyJsonPatch, decodeJsonPatch, JsonPatchError } from './json.ts';
import { createMergePatch, mergePatch } from './merge.ts';
import { strategicMergePatch, StrategicPatchError } from './strategic.ts';

describe('JSON merge patch (RFC 7386)', () => {
  it('merges objects, deletes with null and replaces everything else', () => {
    const doc = { a: { b: 1, c: [1, 2] }, d: 'x' };
    assert.deepEqual(mergePatch(doc, { a: { b: null, c: [3] }, e: true }), {
      a: { c: [3] },
      d: 'x',
      e: true,
    });
    assert.deepEqual(mergePatch(doc, 'whole'), 'whole');
    assert.deepEqual(doc, { a: { b: 1, c: [1, 2] }, d: 'x' }, 'the input is untouched');
  });

  it('creates the patch between two documents', () => {
    const from = { a: 1, b: { c: 2, d: 3 } };
    const to = { b: { c: 2, d: 4 }, e: 5 };
    const p = createMergePatch(from, to);
    assert.deepEqual(p, { a: null, b: { d: 4 }, e: 5 });
    assert.deepEqual(mergePatch(from, p), to);
  });
});

describe('JSON patch (RFC 6902)', () => {
  const doc = { metadata: { labels: { a: '1' } }, list: [1, 2, 3] };
  it('applies add, remove, replace, move, copy and test', () => {
    const out = applyJsonPatch(
      doc,
      decodeJsonPatch([
        { op: 'test', path: '/metadata/labels/a', value: '1' },
        { op: 'add', path: '/metadata/labels/b~1c', value: '2' },
        { op: 'add', path: '/list/-', value: 4 },
        { op: 'add', path: '/list/0', value: 0 },
        { op: 'remove', path: '/list/1' },
        { op: 'replace', path: '/metadata/labels/a', value: 'x' },
        { op: 'copy', from: '/metadata/labels/a', path: '/copied' },
        { op: 'move', from: '/copied', path: '/moved' },
      ]),
    );
    assert.deepEqual(out, { metadata: { labels: { a: 'x', 'b/c': '2' } }, list: [0, 2, 3, 4], moved: 'x' });
  });

  it('fails on a failed test, a missing path and a bad document', () => {
    assert.throws(() => applyJsonPatch(doc, [{ op: 'test', path: '/list/0', value: 9 }]), JsonPatchError);
    assert.throws(() => applyJsonPatch(doc, [{ op: 'remove', path: '/nope' }]), JsonPatchError);
    assert.throws(() => applyJsonPatch(doc, [{ op: 'replace', path: '/a/b', value: 1 }]), JsonPatchError);
    assert.throws(() => decodeJsonPatch({ op: 'add' }), JsonPatchError);
  });
});

describe('strategic merge patch', () => {
  const hints = tableHints(METADATA_HINTS, {
    'spec.containers': keyed('name'),
    'spec.containers.env': keyed('name'),
    'status.conditions': CONDITIONS,
    'spec.strategy': { patchStrategy: ['retainKeys'] },
  });
  const pod = {
    metadata: { finalizers: ['a'] },
    spec: {
      containers: [
        { name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }] },
        { name: 'side', image: 'side:1' },
      ],
      tolerations: [{ key: 'x' }],
    },
  };

  it('merges keyed lists by their merge key and replaces unkeyed ones', () => {
    const out = strategicMergePatch(
      pod,
      {
        spec: {
          containers: [
            { name: 'app', image: 'app:2' },
            { name: 'new', image: 'n' },
          ],
          tolerations: [{ key: 'y' }],
        },
      },
      hints,
    ) as any;
    assert.deepEqual(
      out.spec.containers.map((c: any) => `${c.name}=${c.image}`),
      ['app=app:2', 'side=side:1', 'new=n'],
    );
    assert.deepEqual(out.spec.containers[0].env, [{ name: 'A', value: '1' }]);
    assert.deepEqual(out.spec.tolerations, [{ key: 'y' }]);
  });

  it('honours $patch delete/replace, $deleteFromPrimitiveList, $setElementOrder and $retainKeys', () => {
    const del = strategicMergePatch(
      pod,
      { spec: { containers: [{ name: 'side', $patch: 'delete' }] } },
      hints,
    ) as any;
    assert.deepEqual(
      del.spec.containers.map((c: any) => c.name),
      ['app'],
    );
    const rep = strategicMergePatch(pod, { spec: { $patch: 'replace', containers: [] } }, hints) as any;
    assert.deepEqual(rep.spec, { containers: [] });
    const prim = strategicMergePatch(
      pod,
      { metadata: { finalizers: ['b'], '$deleteFromPrimitiveList/finalizers': ['a'] } },
      hints,
    ) as any;
    assert.deepEqual(prim.metadata.finalizers, ['b']);
    const order = strategicMergePatch(
      pod,
      { spec: { '$setElementOrder/containers': [{ name: 'side' }, { name: 'app' }] } },
      hints,
    ) as any;
    assert.deepEqual(
      order.spec.containers.map((c: any) => c.name),
      ['side', 'app'],
    );
    const retain = strategicMergePatch(
      { spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } } },
      { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
      hints,
    ) as any;
    assert.deepEqual(retain.spec.strategy, { type: 'Recreate' });
    const cond = strategicMergePatch(
      {
        status: {
          conditions: [
            { type: 'Ready', status: 'False' },
            { type: 'Other', status: 'True' },
          ],
        },
      },
      { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      hints,
    ) as any;
    assert.deepEqual(cond.status.conditions, [
      { type: 'Ready', status: 'True' },
      { type: 'Other', status: 'True' },
    ]);
  });

  it('rejects items without their merge key and unknown directives', () => {
    assert.throws(
      () => strategicMergePatch(pod, { spec: { containers: [{ image: 'x' }] } }, hints),
      StrategicPatchError,
    );
    assert.throws(
      () => strategicMergePatch(pod, { spec: { $patch: 'explode' } }, hints),
      StrategicPatchError,
    );
  });
});
