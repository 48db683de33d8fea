import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldErrorText } from './errors.ts';
import { applyDefaults, prune, validate, type JSONSchema } from './schema.ts';

const schema: JSONSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', minLength: 2, maxLength: 5, pattern: '^[a-z]+$' },
        replicas: { type: 'integer', minimum: 0, maximum: 10, default: 1 },
        mode: { type: 'string', enum: ['a', 'b'] },
        port: { 'x-kubernetes-int-or-string': true },
        items: { type: 'array', maxItems: 2, items: { type: 'string' } },
        nested: { type: 'object', default: {}, properties: { flag: { type: 'boolean', default: true } } },
        open: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        when: { type: 'string', format: 'date-time' },
        nullable: { type: 'string', nullable: true },
      },
    },
  },
};

const texts = (v: unknown) => validate(schema, v).map(fieldErrorText);

describe('structural schemas', () => {
  it('prunes undeclared fields, but not under x-kubernetes-preserve-unknown-fields or at the root identity', () => {
    const obj: any = {
      apiVersion: 'x/v1',
      kind: 'X',
      metadata: { name: 'n' },
      spec: { name: 'ab', extra: 1, open: { anything: 2 } },
      top: 3,
    };
    assert.deepEqual(prune(schema, obj).sort(), ['spec.extra', 'top']);
    assert.deepEqual(obj, {
      apiVersion: 'x/v1',
      kind: 'X',
      metadata: { name: 'n' },
      spec: { name: 'ab', open: { anything: 2 } },
    });
  });

  it('applies defaults top-down and drops nulls that are not nullable', () => {
    const obj: any = { spec: { name: 'ab', replicas: null, nullable: null } };
    applyDefaults(schema, obj);
    assert.deepEqual(obj.spec, { name: 'ab', replicas: 1, nested: { flag: true }, nullable: null });
  });

  it('validates with the API server’s wording', () => {
    assert.deepEqual(texts({ spec: { name: 'ab' } }), []);
    assert.deepEqual(texts({ spec: {} }), ['spec.name: Required value']);
    assert.deepEqual(texts({ spec: { name: 'ab', replicas: 'x' } }), [
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    ]);
    assert.deepEqual(texts({ spec: { name: 'ab', replicas: 11 } }), [
      'spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10',
    ]);
    assert.deepEqual(texts({ spec: { name: 'ab', mode: 'c' } }), [
      'spec.mode: Unsupported value: "c": supported values: "a", "b"',
    ]);
    assert.deepEqual(texts({ spec: { name: 'abcdefg' } }), [
      'spec.name: Too long: may not be more than 5 bytes',
    ]);
    assert.deepEqual(texts({ spec: { name: 'a' } }), [
      'spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long',
    ]);
    assert.deepEqual(texts({ spec: { name: 'AB' } }), [
      'spec.name: Invalid value: "AB": spec.name in body should match \'^[a-z]+$\'',
    ]);
    assert.deepEqual(texts({ spec: { name: 'ab', items: ['a', 'b', 'c'] } }), [
      'spec.items: Too many: 3: must have at most 2 items',
    ]);
    assert.deepEqual(texts({ spec: { name: 'ab', port: 80 } }), []);
    assert.deepEqual(texts({ spec: { name: 'ab', port: 'http' } }), []);
    assert.deepEqual(texts({ spec: { name: 'ab', port: 1.5 } }), [
      'spec.port: Invalid value: "number": spec.port in body must be of type integer,string: "number"',
    ]);
    assert.deepEqual(texts({ spec: { name: 'ab', when: 'yesterday' } }), [
      'spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"',
    ]);
  });
});
