import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Collection } from './collection.ts';

const rec = (id: string, created_at: string) => ({ id, created_at });

describe('Collection', () => {
  it('keeps (created_at, creation) order through deletes, re-adds and out-of-order adds', () => {
    const c = new Collection<{ id: string; created_at: string }>();
    const a = rec('a', '2025-01-01T00:00:01');
    const b = rec('b', '2025-01-01T00:00:01');
    const z = rec('z', '2025-01-01T00:00:02');
    const early = rec('early', '2025-01-01T00:00:00');
    c.add(a);
    c.add(b);
    c.add(z);
    assert.deepEqual(
      c.ordered().map((r) => r.id),
      ['a', 'b', 'z'],
    );
    c.delete('b');
    assert.equal(c.size, 2);
    assert.deepEqual(
      c.ordered().map((r) => r.id),
      ['a', 'z'],
    );
    c.add(early);
    c.delete('a');
    c.add(a);
    assert.deepEqual(
      c.ordered().map((r) => r.id),
      ['early', 'a', 'z'],
      'a keeps its place, once',
    );
    c.add(rec('z', '2025-01-01T00:00:03'));
    assert.deepEqual(
      c.ordered().map((r) => r.id),
      ['early', 'a', 'z'],
      'a replaced record is listed once',
    );
    c.clear();
    assert.deepEqual(c.ordered(), []);
  });
});
