/**
 * Upstream's delete priorities (delete_policy.go) and the MachineSet status arithmetic
 * (status.go, util.go), pure.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Node } from '@kubernetes/client-node';
import type { Machine, MachineSet } from '../api/index.ts';
import {
  BETTER_DELETE,
  COULD_DELETE,
  deletePriorityFunc,
  machinesToDelete,
  MUST_DELETE,
  OLD_DELETE_MACHINE_ANNOTATION,
  PREFER_DELETE,
} from './delete-policy.ts';
import { machineSetStatus } from './machineset-status.ts';

const NOW = Date.parse('2025-06-01T00:00:00Z');
const DAY = 86_400_000;

function m(
  name: string,
  ageDays: number,
  extra: { annotations?: Record<string, string>; node?: boolean; error?: boolean } = {},
): Machine {
  return {
    metadata: {
      name,
      creationTimestamp: new Date(NOW - ageDays * DAY).toISOString() as unknown as Date,
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    status: {
      ...(extra.node ? { nodeRef: { kind: 'Node', name } } : {}),
      ...(extra.error ? { errorReason: 'InvalidConfiguration' } : {}),
    },
  };
}

const pick = (ms: Machine[], n: number, policy?: string) =>
  machinesToDelete(ms, n, deletePriorityFunc(policy) ?? assert.fail('known policy'), NOW).map(
    (x) => x.metadata?.name,
  );

describe('delete policies', () => {
  const trio = [m('a', 1, { node: true }), m('b', 30, { node: true }), m('c', 5)];

  it('Oldest, Newest and Random (the default) choose as upstream', () => {
    assert.deepEqual(pick(trio, 1, 'Oldest'), ['b']);
    assert.deepEqual(pick(trio, 1, 'Newest'), ['a']);
    assert.deepEqual(pick(trio, 1), ['c'], 'Random: the Machine without a Node first');
    assert.deepEqual(pick(trio, 2, 'Random'), ['c', 'a'], 'then name order');
    assert.deepEqual(pick(trio, 5, 'Oldest'), ['a', 'b', 'c'], 'all of them when the count covers them');
  });

  it('the delete-machine annotation and a failed Machine come first; only Oldest reads the old annotation', () => {
    const marked = m('a', 1, { node: true, annotations: { 'machine.openshift.io/delete-machine': 'true' } });
    const random = deletePriorityFunc('Random');
    assert.equal(random?.(marked, NOW), BETTER_DELETE);
    assert.equal(random?.(m('x', 1, { node: true, error: true }), NOW), BETTER_DELETE);
    assert.equal(random?.(m('y', 1), NOW), PREFER_DELETE);
    assert.equal(random?.(m('z', 1, { node: true }), NOW), COULD_DELETE);
    assert.equal(deletePriorityFunc('Newest')?.(marked, NOW), MUST_DELETE);
    const old = m('o', 1, { node: true, annotations: { [OLD_DELETE_MACHINE_ANNOTATION]: 'yes' } });
    assert.equal(deletePriorityFunc('Oldest')?.(old, NOW), MUST_DELETE);
    assert.notEqual(deletePriorityFunc('Newest')?.(old, NOW), MUST_DELETE);
    assert.deepEqual(pick([...trio.slice(1), marked], 1, 'Oldest'), ['a']);
  });

  it('an unknown policy is refused', () => {
    assert.equal(deletePriorityFunc('Biggest'), undefined);
  });
});

describe('MachineSet status', () => {
  const node = (ready: string, sinceMs: number): V1Node => ({
    status: {
      conditions: [
        {
          type: 'Ready',
          status: ready,
          lastTransitionTime: new Date(sinceMs).toISOString() as unknown as Date,
        },
      ],
    },
  });

  it('counts fully labeled, ready and available Machines, available after minReadySeconds', () => {
    const set: MachineSet = {
      metadata: { name: 's', generation: 4 },
      spec: {
        selector: { matchLabels: { s: 's' } },
        minReadySeconds: 60,
        template: { metadata: { labels: { s: 's', role: 'w' } } },
      },
    };
    const labeled = (name: string, labels: Record<string, string>) => ({
      ...m(name, 1, { node: true }),
      metadata: { name, labels },
    });
    const nodes: Record<string, V1Node> = {
      a: node('True', NOW - 120_000),
      b: node('True', NOW - 10_000),
      c: node('False', NOW),
    };
    const { status, nextAvailableAtMs } = machineSetStatus(
      set,
      [labeled('a', { s: 's', role: 'w' }), labeled('b', { s: 's' }), labeled('c', { s: 's', role: 'w' })],
      (x) => nodes[x.metadata?.name ?? ''],
      NOW,
    );
    assert.deepEqual(
      [
        status.replicas,
        status.fullyLabeledReplicas,
        status.readyReplicas,
        status.availableReplicas,
        status.observedGeneration,
      ],
      [3, 2, 2, 1, 4],
    );
    assert.equal(status.labelSelector, 's=s');
    assert.equal(nextAvailableAtMs, NOW - 10_000 + 60_000, 'b becomes available 60 s after it became Ready');
  });
});
