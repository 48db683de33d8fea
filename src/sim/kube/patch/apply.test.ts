import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  apply,
  decodeFieldsV1,
  encodeFieldsV1,
  fieldSetOf,
  renderPath,
  trackUpdate,
  type Manager,
} from './apply.ts';
import { keyed, METADATA_HINTS, tableHints } from './hints.ts';

const hints = tableHints(METADATA_HINTS, {
  'spec.ports': keyed('port', ['port', 'protocol'], false, { protocol: 'TCP' }),
});
const ALL = { part: 'all' } as const;
const info = (manager: string) => ({
  manager,
  apiVersion: 'v1',
  time: '2025-01-01T00:00:00Z',
  hints,
  scope: ALL,
});

describe('field sets (FieldsV1)', () => {
  const svc = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'x', uid: 'u', labels: { a: 'b' }, finalizers: ['f'] },
    spec: { ports: [{ port: 80, protocol: 'TCP', name: 'http' }], selector: {}, clusterIPs: ['1.2.3.4'] },
  };

  it('owns leaves, keyed list items (with "."), set items and atomic lists, never identity fields', () => {
    const set = fieldSetOf(svc, hints, ALL);
    assert.deepEqual(encodeFieldsV1(set), {
      'f:metadata': { 'f:finalizers': { 'v:"f"': {} }, 'f:labels': { 'f:a': {} } },
      'f:spec': {
        'f:clusterIPs': {},
        'f:ports': {
          'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {}, 'f:protocol': {} },
        },
        'f:selector': {},
      },
    });
    assert.deepEqual(decodeFieldsV1(encodeFieldsV1(set)), set);
  });

  it('renders paths the way conflicts name them', () => {
    assert.equal(
      renderPath('f:spec\nf:ports\nk:{"port":80,"protocol":"TCP"}\nf:name'),
      '.spec.ports[port=80,protocol="TCP"].name',
    );
  });
});

describe('ownership tracking and server-side apply', () => {
  it('gives an updater what it changed and takes it from the others', () => {
    const base: Manager[] = [];
    const created = { metadata: { name: 'x' }, data: { a: '1', b: '2' } };
    const m1 = trackUpdate(base, undefined, created, info('creator'));
    assert.deepEqual(encodeFieldsV1(m1[0]!.fields), { 'f:data': { 'f:a': {}, 'f:b': {} } });
    const m2 = trackUpdate(
      m1,
      created,
      { metadata: { name: 'x' }, data: { a: '9', b: '2' } },
      info('editor'),
    );
    assert.deepEqual(
      m2.map((m) => [m.entry.manager, encodeFieldsV1(m.fields)]),
      [
        ['creator', { 'f:data': { 'f:b': {} } }],
        ['editor', { 'f:data': { 'f:a': {} } }],
      ],
    );
  });

  it('applies, detects conflicts with different values, shares equal ones, and forces', () => {
    const live = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'x' },
      spec: { ports: [{ port: 80, protocol: 'TCP', targetPort: 8080 }] },
    };
    const owners = trackUpdate([], undefined, live, info('ctl'));
    const same = apply(
      live,
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'x' },
        spec: { ports: [{ port: 80, targetPort: 8080 }] },
      },
      owners,
      info('me'),
      false,
    );
    assert.equal(same.conflicts.length, 0, 'key defaults fill protocol, values agree');
    const diff = apply(
      live,
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'x' },
        spec: { ports: [{ port: 80, targetPort: 9090 }] },
      },
      owners,
      info('me'),
      false,
    );
    assert.deepEqual(
      diff.conflicts.map((c) => [c.manager, c.field]),
      [['ctl', '.spec.ports[port=80,protocol="TCP"].targetPort']],
    );
    const forced = apply(
      live,
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'x' },
        spec: { ports: [{ port: 80, targetPort: 9090 }] },
      },
      owners,
      info('me'),
      true,
    );
    assert.equal((forced.object.spec as any).ports[0].targetPort, 9090);
    const ctl = forced.managers.find((m) => m.entry.manager === 'ctl');
    assert.ok(ctl && ![...ctl.fields].some((p) => p.endsWith('f:targetPort')), 'ownership moved');
  });
});
