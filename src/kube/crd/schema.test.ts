import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  array,
  boolean,
  canonical,
  enumOf,
  type Infer,
  integer,
  intOrString,
  map,
  object,
  openObject,
  string,
} from './schema.ts';

/** Compile-time equality: `check<Equal<A, B>>(true)` fails to type-check unless A and B are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function check<T extends true>(_: T): void {}

describe('schema builder', () => {
  const port = object(
    {
      name: string({ maxLength: 15 }),
      port: integer({ minimum: 1, maximum: 65535 }),
      protocol: enumOf(['TCP', 'UDP'] as const).default('TCP'),
    },
    { required: ['name', 'port'] },
  );
  const spec = object(
    {
      zeta: boolean(),
      ports: array(port, { listType: { map: ['name'] }, maxItems: 4 }),
      tags: array(string(), { listType: 'set' }),
      labels: map(string()),
      size: intOrString(),
    },
    { description: 'A spec.' },
  );

  it('infers required fields as required and the others as optional', () => {
    check<Equal<Infer<typeof port>, { name: string; port: number; protocol?: 'TCP' | 'UDP' }>>(true);
    check<
      Equal<
        Infer<typeof spec>,
        {
          zeta?: boolean;
          ports?: { name: string; port: number; protocol?: 'TCP' | 'UDP' }[];
          tags?: string[];
          labels?: Record<string, string>;
          size?: number | string;
        }
      >
    >(true);
    const _open = openObject({ a: string() });
    check<Equal<Infer<typeof _open>, { a?: string } & { [key: string]: unknown }>>(true);
  });

  it('writes structural schema nodes with the Kubernetes extensions', () => {
    assert.deepEqual(port.node, {
      type: 'object',
      required: ['name', 'port'],
      properties: {
        name: { type: 'string', maxLength: 15 },
        port: { type: 'integer', minimum: 1, maximum: 65535 },
        protocol: { type: 'string', enum: ['TCP', 'UDP'], default: 'TCP' },
      },
    });
    const props = spec.node.properties!;
    assert.deepEqual(props.ports!['x-kubernetes-list-type'], 'map');
    assert.deepEqual(props.ports!['x-kubernetes-list-map-keys'], ['name']);
    assert.equal(props.ports!.maxItems, 4);
    assert.equal(props.tags!['x-kubernetes-list-type'], 'set');
    assert.deepEqual(props.labels!.additionalProperties, { type: 'string' });
    assert.deepEqual(props.size, {
      anyOf: [{ type: 'integer' }, { type: 'string' }],
      'x-kubernetes-int-or-string': true,
    });
    assert.equal(openObject({}).node['x-kubernetes-preserve-unknown-fields'], true);
  });

  it('modifiers return new nodes and leave shared pieces alone', () => {
    const base = string();
    const described = base.describe('x').default('y');
    assert.deepEqual(base.node, { type: 'string' });
    assert.deepEqual(described.node, { type: 'string', description: 'x', default: 'y' });
    const ruled = port.rules({ rule: 'a', message: 'm1' }).rules({ rule: 'b', message: 'm2' });
    assert.deepEqual(
      ruled.node['x-kubernetes-validations']!.map((r) => r.rule),
      ['a', 'b'],
    );
    assert.equal(port.node['x-kubernetes-validations'], undefined);
    assert.throws(() => {
      (port.node as { type?: string }).type = 'string';
    }, TypeError);
  });

  it('canonical form sorts properties and keys, as controller-gen writes them', () => {
    const c = canonical(spec.node);
    assert.deepEqual(Object.keys(c), ['description', 'properties', 'type']);
    assert.deepEqual(Object.keys(c.properties!), ['labels', 'ports', 'size', 'tags', 'zeta']);
    assert.deepEqual(Object.keys(c.properties!.ports!.items!.properties!), ['name', 'port', 'protocol']);
    assert.deepEqual(c.properties!.ports!.items!.required, ['name', 'port']);
  });
});
