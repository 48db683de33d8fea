import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ConversionError,
  type ConvertibleObject,
  type KindConversion,
} from '../../../kube/conversion/types.ts';
import { canonical } from '../../../kube/crd/schema.ts';
import type { Kind } from '../../../kube/crd/kind.ts';
import { prune, validate, type JSONSchema } from '../../../sim/kube/schema.ts';
import { fieldErrorText } from '../../../sim/kube/errors.ts';
import { ALL_KINDS } from '../kinds.ts';
import { V1BETA2_KINDS } from '../v1beta2/kinds.ts';
import { CAPO_CONVERSIONS, CONVERSION_DATA_ANNOTATION } from './index.ts';
import { ONLY_V1BETA1, ONLY_V1BETA2, PAIRS, TEMPLATE_SHAPES } from './testing/fixtures.ts';

type Obj = ConvertibleObject & Record<string, any>;

function conversionOf(obj: Obj): KindConversion {
  const c = CAPO_CONVERSIONS.find((k) => k.kind === obj.kind);
  assert.ok(c, `no conversion for ${obj.kind}`);
  return c;
}

function convert(obj: Obj, to: string): Obj {
  const frozen = structuredClone(obj);
  const out = conversionOf(obj).convert(obj, to) as Obj;
  assert.deepEqual(obj, frozen, 'convert must not change its input');
  return out;
}

const version = (o: Obj) => o.apiVersion.split('/')[1];

/**
 * The object as the API server would store it in its version: nothing pruned (every field is in
 * that version's schema) and nothing invalid.
 */
function assertFitsSchema(obj: Obj): void {
  const kinds: readonly Kind<object>[] = [...ALL_KINDS, ...V1BETA2_KINDS];
  const kind = kinds.find(
    (k) =>
      `${k.definition.group}/${k.definition.version}` === obj.apiVersion && k.definition.kind === obj.kind,
  );
  assert.ok(kind, `no kind for ${obj.apiVersion} ${obj.kind}`);
  const schema = canonical(kind.schema.node) as JSONSchema;
  const copy = structuredClone(obj);
  assert.deepEqual(prune(schema, copy), [], `${obj.apiVersion} ${obj.kind}: fields its schema does not have`);
  assert.deepEqual(validate(schema, copy).map(fieldErrorText), [], `${obj.apiVersion} ${obj.kind}`);
}

describe('CAPO v1beta1 ↔ v1beta2 conversions', () => {
  for (const p of PAIRS) {
    it(`${p.name}: each version converts into the other`, () => {
      assertFitsSchema(p.v1beta1);
      assertFitsSchema(p.v1beta2);
      assert.deepEqual(convert(p.v1beta1, 'v1beta2'), p.v1beta2);
      assert.deepEqual(convert(p.v1beta2, 'v1beta1'), p.v1beta1);
    });
  }

  for (const f of ONLY_V1BETA1) {
    it(`v1beta1 → v1beta2 → v1beta1 is the identity: ${f.name}`, () => {
      assertFitsSchema(f.obj);
      const up = convert(f.obj, 'v1beta2');
      assert.equal(version(up), 'v1beta2');
      assert.ok(up.metadata.annotations[CONVERSION_DATA_ANNOTATION], 'what v1beta2 cannot hold is carried');
      assertFitsSchema(up);
      const back = convert(up, 'v1beta1');
      assert.deepEqual(back, f.obj);
    });
  }

  for (const f of ONLY_V1BETA2) {
    it(`v1beta2 → v1beta1 → v1beta2 is the identity: ${f.name}`, () => {
      const down = convert(f.obj, 'v1beta1');
      assert.equal(version(down), 'v1beta1');
      assert.ok(down.metadata.annotations[CONVERSION_DATA_ANNOTATION], 'what v1beta1 cannot hold is carried');
      assert.deepEqual(convert(down, 'v1beta2'), f.obj);
    });
  }

  for (const p of PAIRS) {
    it(`both round trips are the identity and carry nothing: ${p.name}`, () => {
      const up = convert(p.v1beta1, 'v1beta2');
      assert.equal(up.metadata.annotations?.[CONVERSION_DATA_ANNOTATION], undefined);
      assert.deepEqual(convert(up, 'v1beta1'), p.v1beta1);
      assert.deepEqual(convert(convert(p.v1beta2, 'v1beta1'), 'v1beta2'), p.v1beta2);
    });
  }

  it("every object in the shapes of CAPO's v1beta2 templates fits both schemas and round-trips", () => {
    for (const t of TEMPLATE_SHAPES) {
      assertFitsSchema(t);
      const down = convert(t, 'v1beta1');
      assertFitsSchema(down);
      assert.equal(down.metadata.annotations, undefined, `${t.kind} ${t.metadata.name}: nothing to carry`);
      assert.deepEqual(convert(down, 'v1beta2'), t);
    }
  });

  it('restores a carried value only while the object still agrees with it', () => {
    const [, failed] = ONLY_V1BETA1;
    assert.ok(failed);
    const up = convert(failed.obj, 'v1beta2');
    // A v1beta2 writer marks the machine ready: the stale severity and ready stay behind.
    up.status.conditions[0] = {
      type: 'Ready',
      status: 'True',
      reason: 'Ready',
      message: '',
      lastTransitionTime: '2026-11-27T11:00:00Z',
    };
    const back = convert(up, 'v1beta1');
    assert.equal(back.status.ready, true);
    assert.equal(back.status.conditions[0].severity, undefined);
    assert.equal(back.status.conditions[1].severity, 'Warning', 'the unchanged condition keeps its severity');
    assert.equal(back.status.failureReason, 'UpdateError');

    // A v1beta2 writer changes the flavor: the carried name of the old flavor is not brought back.
    const [both] = ONLY_V1BETA1;
    assert.ok(both);
    const bothUp = convert(both.obj, 'v1beta2');
    bothUp.spec.flavor = { id: '4' };
    const bothBack = convert(bothUp, 'v1beta1');
    assert.equal(bothBack.spec.flavorID, '4');
    assert.equal(bothBack.spec.flavor, undefined);
  });

  it('v1beta2 ready is read from the Ready condition when nothing was carried', () => {
    const down = convert(
      {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta2',
        kind: 'OpenStackCluster',
        metadata: { name: 'c' },
        spec: { identityRef: { name: 's', cloudName: 'openstack' } },
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'Ready',
              message: '',
              lastTransitionTime: '2026-11-27T10:00:00Z',
            },
          ],
        },
      },
      'v1beta1',
    );
    assert.equal(down.status.ready, true);
    assert.equal(down.metadata.annotations, undefined);
  });

  it('changes no metadata but its own annotation, and leaves a foreign one alone', () => {
    const obj: Obj = {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackMachine',
      metadata: {
        name: 'm',
        namespace: 'ns',
        uid: 'u-1',
        resourceVersion: '7',
        generation: 2,
        labels: { a: 'b' },
        annotations: { [CONVERSION_DATA_ANNOTATION]: 'not ours', other: 'x' },
        finalizers: ['f'],
        ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine', name: 'm', uid: 'u-0' }],
      },
      spec: { flavor: 'm1.small', image: { id: 'b0a8e5f6-1111-2222-3333-444455556666' } },
    };
    const up = convert(obj, 'v1beta2');
    assert.deepEqual(up.metadata, obj.metadata);
  });

  it('refuses a version or kind it does not serve, naming the object', () => {
    const c = CAPO_CONVERSIONS.find((k) => k.kind === 'OpenStackMachine');
    assert.ok(c);
    const obj = {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha7',
      kind: 'OpenStackMachine',
      metadata: { name: 'm', namespace: 'ns' },
    };
    assert.throws(
      () => c.convert(obj, 'v1beta2'),
      (e: unknown) => e instanceof ConversionError && /v1alpha7/.test(e.message) && e.object.name === 'm',
    );
    assert.throws(
      () => c.convert({ ...obj, apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1' }, 'v2'),
      ConversionError,
    );
    assert.throws(
      () =>
        c.convert(
          { ...obj, kind: 'OpenStackCluster', apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1' },
          'v1beta2',
        ),
      ConversionError,
    );
  });

  it('declares the four kinds in both versions', () => {
    assert.deepEqual(
      CAPO_CONVERSIONS.map((c) => [c.group, c.kind, [...c.versions]]),
      ['OpenStackCluster', 'OpenStackClusterTemplate', 'OpenStackMachine', 'OpenStackMachineTemplate'].map(
        (k) => ['infrastructure.cluster.x-k8s.io', k, ['v1beta1', 'v1beta2']],
      ),
    );
  });
});
