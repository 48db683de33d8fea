import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { customResourceDefinition, defineKind, kubeObject } from './kind.ts';
import { openObject, string } from './schema.ts';

const schema = (field: string) =>
  kubeObject({ description: 'A widget.', spec: openObject({ [field]: string() }), specRequired: false });
const version = (v: string, field: string, extra: { deprecated?: boolean } = {}) =>
  defineKind({
    group: 'example.io',
    version: v,
    kind: 'Widget',
    plural: 'widgets',
    scope: 'Namespaced',
    statusSubresource: true,
    schema: schema(field),
    ...extra,
  });

describe('customResourceDefinition', () => {
  it('serves several versions of one kind, each with its schema, one of them stored', () => {
    const crd = customResourceDefinition(
      [version('v1beta1', 'size', { deprecated: true }), version('v1beta2', 'width')],
      {
        storageVersion: 'v1beta2',
        conversion: {
          strategy: 'Webhook',
          webhook: {
            conversionReviewVersions: ['v1'],
            clientConfig: { url: 'https://127.0.0.1:9443/convert' },
          },
        },
      },
    );
    assert.deepEqual(
      crd.spec.versions.map((v) => [v.name, v.storage, v.deprecated ?? false]),
      [
        ['v1beta1', false, true],
        ['v1beta2', true, false],
      ],
    );
    const specOf = (i: number) =>
      crd.spec.versions[i]?.schema.openAPIV3Schema.properties?.['spec']?.properties;
    assert.ok(specOf(0)?.['size'] && !specOf(0)?.['width']);
    assert.ok(specOf(1)?.['width'] && !specOf(1)?.['size']);
    assert.equal(crd.spec.conversion?.strategy, 'Webhook');
  });

  it('refuses a storage version it does not serve, and versions of another kind', () => {
    assert.throws(
      () => customResourceDefinition(version('v1', 'a'), { storageVersion: 'v2' }),
      /storage version v2/,
    );
    const other = defineKind({ ...version('v2', 'a').definition, kind: 'Gadget' });
    assert.throws(() => customResourceDefinition([version('v1', 'a'), other]), /not a version of Widget/);
  });
});
