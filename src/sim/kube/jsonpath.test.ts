import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  columnPath,
  goText,
  JSONPathError,
  parseJSONPath,
  printResults,
  simpleFieldPath,
} from './jsonpath.ts';

const MACHINE = {
  kind: 'OpenStackMachine',
  metadata: {
    name: 'm-0',
    labels: { 'cluster.x-k8s.io/cluster-name': 'demo', app: 'web' },
    ownerReferences: [
      { apiVersion: 'v1', kind: 'Secret', name: 'not-me' },
      { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine', name: 'demo-md-0-abc' },
      { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Machine', name: 'second' },
    ],
  },
  spec: { replicas: 3, ratio: 0.5, ports: [80, 443, 8080], ready: true, nothing: null },
  status: {
    conditions: [
      { type: 'Ready', status: 'True', priority: 1 },
      { type: 'Synced', status: 'False', priority: 5 },
      { type: 'Other', priority: 9 },
    ],
  },
};

const find = (t: string, data: unknown = MACHINE) =>
  parseJSONPath(t).findResults(data, { allowMissingKeys: true });

describe('Kubernetes JSONPath', () => {
  it('walks fields, escaped dots and quoted keys', () => {
    assert.deepEqual(find('{.spec.replicas}'), [[3]]);
    assert.deepEqual(find('{.metadata.labels.cluster\\.x-k8s\\.io/cluster-name}'), [['demo']]);
    assert.deepEqual(find("{.metadata.labels['app']}"), [['web']]);
    // As client-go: a quoted key is a field path, so its dots still need escapes.
    assert.deepEqual(find("{.metadata.labels['cluster\\.x-k8s\\.io/cluster-name']}"), [['demo']]);
    assert.deepEqual(find('{$.spec.replicas}'), [[3]]);
    assert.deepEqual(find('{.spec.missing}'), [[]]);
    assert.deepEqual(find('{.spec.nothing}'), [[null]]);
  });

  it('indexes, slices, wildcards and unions', () => {
    assert.deepEqual(find('{.spec.ports[0]}'), [[80]]);
    assert.deepEqual(find('{.spec.ports[-1]}'), [[8080]]);
    assert.deepEqual(find('{.spec.ports[*]}'), [[80, 443, 8080]]);
    assert.deepEqual(find('{.spec.ports[1:]}'), [[443, 8080]]);
    assert.deepEqual(find('{.spec.ports[:2]}'), [[80, 443]]);
    assert.deepEqual(find('{.spec.ports[0,2]}'), [[80, 8080]]);
    assert.deepEqual(find('{.status.conditions[*].type}'), [['Ready', 'Synced', 'Other']]);
    assert.deepEqual(find('{.metadata.labels.*}'), [['demo', 'web']]);
    assert.deepEqual(find("{.metadata['name','kind']}"), [['m-0']]);
  });

  it('filters by comparison and existence', () => {
    assert.deepEqual(find('{.metadata.ownerReferences[?(@.kind=="Machine")].name}'), [
      ['demo-md-0-abc', 'second'],
    ]);
    assert.deepEqual(find("{.status.conditions[?(@.type == 'Ready')].status}"), [['True']]);
    assert.deepEqual(find('{.status.conditions[?(@.type!="Ready")].type}'), [['Synced', 'Other']]);
    assert.deepEqual(find('{.status.conditions[?(@.priority>1)].type}'), [['Synced', 'Other']]);
    assert.deepEqual(find('{.status.conditions[?(@.priority<5)].type}'), [['Ready']]);
    assert.deepEqual(find('{.status.conditions[?(@.priority<=5)].type}'), [['Ready', 'Synced']]);
    assert.deepEqual(find('{.status.conditions[?(@.priority>=5)].type}'), [['Synced', 'Other']]);
    assert.deepEqual(find('{.status.conditions[?(@.status)].type}'), [['Ready', 'Synced']]);
  });

  it('descends recursively', () => {
    assert.deepEqual(find('{..name}'), [['m-0', 'not-me', 'demo-md-0-abc', 'second']]);
    assert.deepEqual(find('{.status..type}'), [['Ready', 'Synced', 'Other']]);
  });

  it('keeps text between actions as its own result', () => {
    assert.deepEqual(find('name={.metadata.name} n={.spec.replicas}'), [['name='], ['m-0'], [' n='], [3]]);
  });

  it('fails where client-go fails, so the server shows an empty cell', () => {
    assert.throws(() => find('{.spec.ports[5]}'), /array index out of bounds: index 5, length 3/);
    assert.throws(() => find('{.spec.replicas[0]}'), /is not array or slice/);
    assert.throws(() => find('{.status.conditions[?(@.priority=="1")].type}'), /incompatible types/);
    assert.throws(() => find('{.status.conditions[?(@.status=="True")].type}'), /one element at a time/);
    assert.throws(() => parseJSONPath('{.spec'), JSONPathError);
    assert.throws(() => parseJSONPath('{.spec[x]}'), /invalid array index x/);
    assert.throws(() => parseJSONPath('{....a}'), /multiple recursive descent/);
  });

  it('reports missing keys unless allowed', () => {
    assert.throws(() => parseJSONPath('{.spec.nope}').findResults(MACHINE), /nope is not found/);
  });

  it('gives the first value of a column path, undefined on a miss or an error', () => {
    assert.equal(
      columnPath('.metadata.ownerReferences[?(@.kind=="Machine")].name')(MACHINE),
      'demo-md-0-abc',
    );
    assert.equal(columnPath('.metadata.labels.cluster\\.x-k8s\\.io/cluster-name')(MACHINE), 'demo');
    assert.equal(columnPath('.spec.ports[9]')(MACHINE), undefined);
    assert.equal(columnPath('.spec.absent')(MACHINE), undefined);
    assert.equal(columnPath('.spec[')(MACHINE), undefined);
  });

  it("prints values as Go's %v does", () => {
    assert.equal(goText('x'), 'x');
    assert.equal(goText(3), '3');
    assert.equal(goText(0.5), '0.5');
    assert.equal(goText(1234567.5), '1.2345675e+06');
    assert.equal(goText(true), 'true');
    assert.equal(goText(null), '<nil>');
    assert.equal(goText([1, 'a']), '[1 a]');
    assert.equal(goText({ b: 1, a: { c: 'd' } }), 'map[a:map[c:d] b:1]');
    assert.equal(printResults(['a', 1, false]), 'a 1 false');
  });

  it('recognises simple field paths (scale subresource paths)', () => {
    assert.deepEqual(simpleFieldPath('.spec.replicas'), ['spec', 'replicas']);
    assert.deepEqual(simpleFieldPath('.status.a\\.b'), ['status', 'a.b']);
    assert.equal(simpleFieldPath('.spec.items[0]'), undefined);
    assert.equal(simpleFieldPath(''), undefined);
  });
});
