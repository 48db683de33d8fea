import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OwnWrites } from './own-writes.ts';
import type { KubernetesObject } from './resource.ts';

type Obj = KubernetesObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

const obj = (rv: string, annotations: Record<string, string> = {}, status = {}): Obj => ({
  metadata: { name: 'web', namespace: 'default', resourceVersion: rv, annotations },
  spec: { port: 80 },
  status,
});

describe('OwnWrites', () => {
  it('drops exactly the update a write of ours caused, once', () => {
    const own = new OwnWrites<Obj>();
    const p = own.predicate();
    const before = obj('1');
    const intended = obj('1', { id: 'lb-1' });
    const result = own.record(before, intended, obj('2', { id: 'lb-1' }));
    assert.equal(result.metadata?.resourceVersion, '2');
    assert.equal(
      p.update?.(obj('1', {}, { seen: true }), obj('2', { id: 'lb-1' })),
      false,
      'ours (status aside)',
    );
    assert.equal(own.size, 0, 'consumed');
    assert.equal(
      p.update?.(obj('1'), obj('2', { id: 'lb-1' })),
      true,
      'a second delivery is not ours any more',
    );
  });

  it('drops the update of a write of ours whose event comes before its answer, once', async () => {
    const own = new OwnWrites<Obj>();
    const p = own.predicate();
    const before = obj('1');
    const intended = obj('1', { id: 'lb-1' });
    // The watch delivers the update while the write's answer is still on its way.
    const dropped: boolean[] = [];
    const result = await own.write(before, intended, () => {
      dropped.push(p.update?.(obj('1'), obj('2', { id: 'lb-1' })) === false);
      return Promise.resolve(obj('2', { id: 'lb-1' }));
    });
    assert.equal(result.metadata?.resourceVersion, '2');
    assert.deepEqual(dropped, [true], 'ours, though its answer had not come');
    assert.equal(own.size, 0, 'nothing left to expect');
    assert.equal(p.update?.(obj('1'), obj('2', { id: 'lb-1' })), true, 'a second delivery is not ours');

    // In the usual order (answer, then event) it is dropped as by record.
    await own.write(obj('2', { id: 'lb-1' }), obj('2', { id: 'lb-2' }), () =>
      Promise.resolve(obj('3', { id: 'lb-2' })),
    );
    assert.equal(p.update?.(obj('2', { id: 'lb-1' }), obj('3', { id: 'lb-2' })), false);

    // Someone else's write while ours is in flight is not taken for ours.
    await own.write(obj('3', { id: 'lb-2' }), obj('3', { id: 'lb-3' }), () => {
      assert.equal(p.update?.(obj('3', { id: 'lb-2' }), obj('4', { id: 'lb-2', team: 'a' })), true);
      return Promise.resolve(obj('5', { id: 'lb-3', team: 'a' }));
    });
  });

  it('lets through a write of someone else before ours, seen by the watch or folded by a relist', () => {
    const own = new OwnWrites<Obj>();
    const p = own.predicate();
    // Someone added `team` between our read (1) and our write, which the server applied on top (3).
    own.record(obj('1'), obj('1', { id: 'lb-1' }), obj('3', { id: 'lb-1', team: 'a' }));
    assert.equal(own.size, 0, 'the result is not what we meant: not recorded');
    assert.equal(p.update?.(obj('1'), obj('3', { id: 'lb-1', team: 'a' })), true, 'relist');

    // Recorded, but the watch shows the other write first: the event from it to ours passes.
    own.record(obj('4'), obj('4', { id: 'lb-2' }), obj('6', { id: 'lb-2' }));
    assert.equal(p.update?.(obj('5', { team: 'b' }), obj('6', { id: 'lb-2' })), true);
  });

  it('forgets an object on delete, and old writes beyond its bound', () => {
    const own = new OwnWrites<Obj>({ perObject: 2 });
    const p = own.predicate();
    for (let i = 1; i <= 3; i++)
      own.record(obj(`${i}`), obj(`${i}`, { n: `${i}` }), obj(`${i}0`, { n: `${i}` }));
    assert.equal(own.size, 2);
    assert.equal(p.update?.(obj('1'), obj('10', { n: '1' })), true, 'the oldest was forgotten');
    assert.equal(p.delete?.(obj('30')), true);
    assert.equal(own.size, 0);
    assert.equal(
      own.record(obj('7'), obj('7'), obj('7')).metadata?.resourceVersion,
      '7',
      'no write, nothing kept',
    );
    assert.equal(own.size, 0);
  });
});
