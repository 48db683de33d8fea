import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Cluster, Machine } from '../capo/api/index.ts';
import { CLUSTER_PHASES, MACHINE_PHASES, phaseLine } from './observe.ts';
import {
  callsText,
  kindText,
  liveView,
  plainStatus,
  Progress,
  waitingText,
  type ProgressState,
} from './progress.ts';

const state = (over: Partial<ProgressState> = {}): ProgressState => ({
  kinds: [
    {
      kind: 'Machines',
      count: 5,
      phases: [
        ['provisioned', 2],
        ['running', 3],
      ],
    },
    {
      kind: 'Nodes',
      count: 3,
      phases: [
        ['initialized', 2],
        ['uninitialized', 1],
      ],
    },
    { kind: 'LoadBalancer Services', count: 0, phases: [] },
  ],
  waiting: [
    { what: 'server w-1', state: 'BUILD', since: 9_000 },
    { what: 'LB kube_service_x', state: 'PENDING_CREATE', since: 0 },
  ],
  openstack: { nova: 12, neutron: 30, keystone: 2, placement: 0 },
  kube: 140,
  ...over,
});

// eslint-disable-next-line no-control-regex
const plain = (s: string) => s.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');

describe('progress view', () => {
  it('says what waits on OpenStack, longest first, and for how long', () => {
    assert.equal(
      waitingText(state().waiting, 12_400, 4),
      'LB kube_service_x PENDING_CREATE 12 s, server w-1 BUILD 3 s',
    );
    assert.equal(waitingText(state().waiting, 12_400, 1), 'LB kube_service_x PENDING_CREATE 12 s, 1 more');
  });

  it('counts API calls per service, busiest first, and leaves out services never called', () => {
    assert.equal(callsText(state()), 'OpenStack 44 (neutron 30, nova 12, keystone 2) · Kubernetes 140');
  });

  it('plain status is one line with the kinds that have objects', () => {
    assert.equal(
      plainStatus(state(), 12_000),
      'Machines 5 (2 provisioned, 3 running) · Nodes 3 (2 initialized, 1 uninitialized) | ' +
        'waiting on OpenStack: LB kube_service_x PENDING_CREATE 12 s, server w-1 BUILD 3 s | ' +
        'API calls: OpenStack 44 · Kubernetes 140',
    );
  });

  it('the live view names the step and its time, the kinds, the waits and the calls', () => {
    const lines = liveView(state({ waiting: [] }), 0, { name: 'create the machines', elapsed: 4_200 }).map(
      plain,
    );
    assert.deepEqual(lines, [
      '… create the machines 4.2 s',
      '  Machines 5 (2 provisioned, 3 running)  ·  Nodes 3 (2 initialized, 1 uninitialized)',
      '  waiting on OpenStack: nothing',
      '  API calls: OpenStack 44 (neutron 30, nova 12, keystone 2) · Kubernetes 140',
    ]);
  });

  it('plain mode prints log lines as they come and status lines only when something changed', () => {
    let out = '';
    let now = 0;
    const p = new Progress({ write: (t) => (out += t), tty: false, plainEveryMs: 5_000, now: () => now });
    let s = state({ waiting: [] });
    const statusLines = () => out.split('\n').filter((l) => l.includes('API calls')).length;
    p.start(() => s);
    p.begin('step one');
    now = 5_000;
    p.tick();
    assert.equal(statusLines(), 1, out);
    now = 6_000;
    p.tick();
    assert.equal(statusLines(), 1, 'unchanged: no new line');
    s = state({ waiting: [], kube: 141 });
    now = 8_000;
    p.tick();
    assert.equal(statusLines(), 1, 'changed, but the last line is younger than plainEveryMs');
    now = 15_000;
    p.tick();
    assert.equal(statusLines(), 2, out);
    assert.match(out, /\[15\.0 s\] Machines 5/);
    p.done('it worked');
    p.stop();
    assert.match(out, /^▸ step one\n/);
    assert.match(out, /\n {2}✓ it worked \(15\.0 s\)\n$/);
    assert.ok(!out.includes('\u001b'), 'no escape codes off a terminal');
  });

  it('on a terminal, a log line goes above the live view, which is erased and drawn again', () => {
    let out = '';
    const p = new Progress({ write: (t) => (out += t), tty: true, columns: 60, now: () => 0 });
    p.start(() => state());
    p.begin('step one');
    const first = out;
    assert.match(plain(first), /^▸ step one\n… step one 0\.0 s\n/);
    p.log('a line');
    const second = out.slice(first.length);
    // Up four lines, clear them, back up, then the log line and the view again.
    assert.ok(second.startsWith('\u001b[4A'), JSON.stringify(second));
    assert.match(plain(second), /a line\n… step one/);
    for (const line of plain(out).split('\n')) assert.ok(line.length <= 60, line);
    p.stop();
  });

  it('counts Machines and Clusters by CAPI phase, in lifecycle order, a deleted one as deleting', () => {
    const machine = (phase: string | undefined, deleting = false) =>
      ({
        metadata: { name: 'm', ...(deleting ? { deletionTimestamp: new Date() } : {}) },
        spec: {},
        status: phase ? { phase } : {},
      }) as Machine;
    const machines = [
      machine('Running'),
      machine(undefined),
      machine('Provisioned'),
      machine('Running'),
      machine('Running', true),
      machine('Provisioning'),
    ];
    assert.equal(
      kindText(phaseLine('Machines', machines, MACHINE_PHASES)),
      'Machines 6 (1 pending, 1 provisioning, 1 provisioned, 2 running, 1 deleting)',
    );
    const cluster = { metadata: { name: 'c' }, status: { phase: 'Provisioned' } } as Cluster;
    assert.equal(kindText(phaseLine('Clusters', [cluster], CLUSTER_PHASES)), 'Clusters 1 (1 provisioned)');
  });
});
