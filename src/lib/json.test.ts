import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cloneJson } from './json.ts';

describe('cloneJson', () => {
  it('copies JSON data deeply: the copy shares nothing with the original', () => {
    const original = JSON.parse(
      '{"metadata":{"name":"a","labels":{"x":"1"}},"spec":{"ports":[{"port":80,"tags":["a",null]}],"on":true}}',
    ) as {
      metadata: { labels: Record<string, string> };
      spec: { ports: { port: number; tags: unknown[] }[] };
    };
    const copy = cloneJson(original);
    assert.deepEqual(copy, original);
    copy.metadata.labels.x = '2';
    copy.spec.ports[0]!.tags.push('b');
    assert.equal(original.metadata.labels.x, '1');
    assert.deepEqual(original.spec.ports[0]!.tags, ['a', null]);
  });

  it('keeps keys whose value is undefined, as structuredClone does', () => {
    const copy = cloneJson({ a: undefined, b: [undefined] });
    assert.ok(Object.hasOwn(copy, 'a'));
    assert.deepEqual(copy, structuredClone({ a: undefined, b: [undefined] }));
  });

  it('keeps an own "__proto__" key as a key, never as the prototype', () => {
    const original = JSON.parse('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    const copy = cloneJson(original);
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.deepEqual(Object.keys(copy), ['__proto__']);
    assert.equal((copy as { polluted?: boolean }).polluted, undefined);
  });

  it('refuses a cycle instead of overflowing the stack', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    assert.throws(() => cloneJson(a), RangeError);
  });
});
