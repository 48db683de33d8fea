import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatusError } from './errors.ts';
import {
  fromLabelSelectorObject,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
} from './selectors.ts';

const labels = { app: 'web', tier: 'front', version: '3' };

function matches(sel: string, l: Record<string, string> = labels): boolean {
  return matchesLabels(parseLabelSelector(sel), l);
}

describe('label selectors', () => {
  it('supports =, ==, !=, in, notin, exists, !exists, gt and lt', () => {
    assert.equal(matches(''), true);
    assert.equal(matches('app=web'), true);
    assert.equal(matches('app==web'), true);
    assert.equal(matches('app!=web'), false);
    assert.equal(matches('app!=db'), true);
    assert.equal(matches('missing!=x'), true, '!= matches objects without the label');
    assert.equal(matches('tier in (front, back)'), true);
    assert.equal(matches('tier notin (front)'), false);
    assert.equal(matches('missing notin (x)'), true);
    assert.equal(matches('tier'), true);
    assert.equal(matches('!tier'), false);
    assert.equal(matches('!missing'), true);
    assert.equal(matches('version>2'), true);
    assert.equal(matches('version<3'), false);
    assert.equal(matches(' app = web , tier in (front) '), true, 'whitespace is allowed');
    assert.equal(matches('app=web,tier=back'), false, 'requirements are ANDed');
    assert.equal(matches('app='), false);
    assert.equal(matches('app=', { app: '' }), true, 'empty values are values');
    assert.equal(matches('example.com/role=x', { 'example.com/role': 'x' }), true);
  });

  it('rejects bad syntax with 400 BadRequest', () => {
    for (const bad of ['app in web', 'tier in ()', 'a b', '=x', 'app=web,', 'Bad Key=x', 'a=b c']) {
      assert.throws(
        () => parseLabelSelector(bad),
        (e: unknown) => e instanceof StatusError && e.code === 400,
        bad,
      );
    }
  });

  it('turns metav1.LabelSelector objects into requirements', () => {
    const sel = fromLabelSelectorObject({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['front'] },
        { key: 'gone', operator: 'DoesNotExist' },
      ],
    });
    assert.ok(sel);
    assert.equal(matchesLabels(sel, labels), true);
    assert.equal(matchesLabels(sel, { ...labels, gone: 'x' }), false);
  });
});

describe('field selectors', () => {
  it('parses =, == and != with escapes', () => {
    assert.deepEqual(parseFieldSelector('metadata.name=a,spec.nodeName!=n1,status.phase==Running'), [
      { field: 'metadata.name', op: '=', value: 'a' },
      { field: 'spec.nodeName', op: '!=', value: 'n1' },
      { field: 'status.phase', op: '=', value: 'Running' },
    ]);
    assert.deepEqual(parseFieldSelector('metadata.name=a\\,b\\=c'), [
      { field: 'metadata.name', op: '=', value: 'a,b=c' },
    ]);
    assert.throws(
      () => parseFieldSelector('justafield'),
      (e: unknown) => e instanceof StatusError && e.code === 400,
    );
  });

  it('matches against an object’s field set, treating absent fields as empty', () => {
    const fields = { 'metadata.name': 'a', 'spec.nodeName': '' };
    assert.equal(matchesFields(parseFieldSelector('metadata.name=a'), fields), true);
    assert.equal(matchesFields(parseFieldSelector('spec.nodeName='), fields), true);
    assert.equal(matchesFields(parseFieldSelector('spec.nodeName!='), fields), false);
  });
});
