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
