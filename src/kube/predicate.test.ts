import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  and,
  annotationChanged,
  generationChanged,
  labelChanged,
  labelSelector,
  not,
  or,
  resourceVersionChanged,
  specOrMetadataChanged,
  fieldsChanged,
} from './predicate.ts';
import type { KubernetesObject } from './resource.ts';
import { labelSelectorString, matchesLabelSelector } from './selector.ts';

const o = (meta: KubernetesObject['metadata']): KubernetesObject => ({ metadata: { name: 'x', ...meta } });

describe('predicates', () => {
  it('generation, annotations, labels and resourceVersion changes', () => {
    assert.equal(generationChanged().update?.(o({ generation: 1 }), o({ generation: 1 })), false);
    assert.equal(generationChanged().update?.(o({ generation: 1 }), o({ generation: 2 })), true);
    const a1 = o({ annotations: { 'loadbalancer.openstack.org/x': '1', other: 'a' } });
    const a2 = o({ annotations: { 'loadbalancer.openstack.org/x': '1', other: 'b' } });
    assert.equal(annotationChanged().update?.(a1, a2), true);
    assert.equal(annotationChanged('loadbalancer.openstack.org/x').update?.(a1, a2), false);
    assert.equal(labelChanged().update?.(o({ labels: { a: '1' } }), o({ labels: { a: '1' } })), false);
    assert.equal(
      resourceVersionChanged().update?.(o({ resourceVersion: '5' }), o({ resourceVersion: '5' })),
      false,
      'a resync',
    );
  });

  it('spec or metadata changes, not status-only ones; a projection of the fields that matter', () => {
    type Obj = KubernetesObject & { spec?: { a: number }; status?: { ready: boolean; n?: number } };
    const base: Obj = {
      metadata: { name: 'x', resourceVersion: '1', generation: 1, managedFields: [{ manager: 'a' }] },
      spec: { a: 1 },
      status: { ready: false },
    };
    const next = (f: (o: Obj) => void): Obj => {
      const o = structuredClone(base);
      o.metadata!.resourceVersion = '2';
      f(o);
      return o;
    };
    const p = specOrMetadataChanged<Obj>();
    assert.equal(
      p.update?.(
        base,
        next((o) => (o.status = { ready: true })),
      ),
      false,
      'status only',
    );
    assert.equal(
      p.update?.(
        base,
        next((o) => (o.metadata!.managedFields = [])),
      ),
      false,
      'managedFields',
    );
    assert.equal(p.update?.(base, base), false, 'a resync');
    assert.equal(
      p.update?.(
        base,
        next((o) => (o.spec = { a: 2 })),
      ),
      true,
      'spec',
    );
    assert.equal(
      p.update?.(
        base,
        next((o) => (o.metadata!.finalizers = ['f'])),
      ),
      true,
      'a finalizer',
    );
    assert.equal(
      p.update?.(
        base,
        next((o) => (o.metadata!.annotations = { paused: '' })),
      ),
      true,
    );
    assert.equal(
      p.update?.(
        base,
        next((o) => (o.metadata!.deletionTimestamp = new Date())),
      ),
      true,
    );
    assert.equal(
      p.update?.(
        base,
        next((o) => (o.metadata!.ownerReferences = [] as never)),
      ),
      true,
      'owners',
    );
    assert.equal(p.create?.(base) ?? true, true, 'creates and deletes pass');

    const ready = fieldsChanged<Obj>((o) => o.status?.ready);
    assert.equal(
      ready.update?.(
        base,
        next((o) => (o.status = { ready: false, n: 3 })),
      ),
      false,
    );
    assert.equal(
      ready.update?.(
        base,
        next((o) => (o.status = { ready: true })),
      ),
      true,
    );
  });

  it('label selectors on every event, and combinators', () => {
    const p = labelSelector({
      matchLabels: { app: 'web' },
      matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }],
    });
    assert.equal(p.create?.(o({ labels: { app: 'web', tier: 'a' } })), true);
    assert.equal(p.delete?.(o({ labels: { app: 'web' } })), false);
    assert.equal(p.update?.(o({}), o({ labels: { app: 'web', tier: 'b' } })), true, 'the new object decides');
    const both = and(generationChanged(), not(labelChanged()));
    assert.equal(both.update?.(o({ generation: 1 }), o({ generation: 2 })), true);
    assert.equal(
      or(generationChanged(), labelChanged()).update?.(o({ generation: 1 }), o({ generation: 1 })),
      false,
    );
    assert.equal(
      and(generationChanged(), labelChanged()).create?.(o({})),
      true,
      'missing methods let events through',
    );
    assert.equal(both.create?.(o({})), false, 'as in controller-runtime, not() of a pass-through blocks');
  });

  it('selector matching and its query-string form', () => {
    const sel = {
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'env', operator: 'NotIn', values: ['prod'] },
        { key: 'owner', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    };
    assert.equal(matchesLabelSelector(sel, { app: 'web', owner: 'me' }), true);
    assert.equal(matchesLabelSelector(sel, { app: 'web', owner: 'me', env: 'prod' }), false);
    assert.equal(matchesLabelSelector(sel, { app: 'web', owner: 'me', legacy: '' }), false);
    assert.equal(labelSelectorString(sel), 'app=web,env notin (prod),owner,!legacy');
  });
});
