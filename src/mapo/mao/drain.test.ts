/**
 * The machine-drain controller through the Kubernetes emulator: a Machine being deleted (phase
 * Deleting, a finalizer keeping it, as the machine controller would) has its Node cordoned and its
 * pods evicted — DaemonSet and mirror pods left — then `Drained=True`; a preDrain hook holds the
 * drain (`Drainable=False` naming it) until removed; the exclude annotation skips it; a
 * PodDisruptionBudget holds it (`Drained=False` naming the pod) until it allows the eviction.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { kinds, resourceType, type KubernetesObject } from '../../kube/index.ts';
import { eventually } from '../../sim/kube/testing/harness.ts';
import { Annotations, MACHINE_API_NAMESPACE, mapoKinds, type Machine } from '../api/index.ts';
import { getMachineCondition } from '../conditions.ts';
import { DRAINABLE, DRAINED } from './drain.ts';
import { machineBody, startMaoEnv, type MaoEnv } from './testing/env.ts';

const NS = MACHINE_API_NAMESPACE;
const APPS = 'workloads';
const WAIT = { timeoutMs: 20_000, intervalMs: 20 };
const HOLD = 'test.shiftstack.io/machine-controller';

describe('machine-drain (acting as the machine-api-operator)', () => {
  let env: MaoEnv;
  let dsUid = '';

  before(async () => {
    env = await startMaoEnv();
    await env.api.create(kinds.Namespace, { metadata: { name: APPS } });
    const ds = await env.api.create(kinds.DaemonSet, {
      metadata: { name: 'agent', namespace: APPS },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: {
          metadata: { labels: { app: 'agent' } },
          spec: { containers: [{ name: 'a', image: 'agent' }] },
        },
      },
    });
    dsUid = ds.metadata?.uid ?? '';
    await env.start();
  });
  after(async () => {
    await env?.close();
  });

  /** A Node with a plain pod, a DaemonSet pod and a mirror pod. */
  async function nodeWithPods(node: string, labels: Record<string, string> = {}): Promise<void> {
    await env.api.create(kinds.Node, {
      metadata: { name: node },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    const pod = (name: string, extra: Record<string, unknown> = {}) =>
      env.api.create(kinds.Pod, {
        metadata: { name: `${node}-${name}`, namespace: APPS, labels, ...extra },
        spec: { nodeName: node, containers: [{ name: 'c', image: 'app' }] },
      });
    await pod('web');
    await pod('agent', {
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: dsUid, controller: true },
      ],
    });
    await pod('static', { annotations: { 'kubernetes.io/config.mirror': 'abc123' } });
  }

  /** A Machine of `node`, then deleted: held by a finalizer in phase Deleting, as the machine controller does. */
  async function deletingMachine(
    name: string,
    node: string,
    spec: Machine['spec'] = {},
    annotations = {},
  ): Promise<void> {
    const m = machineBody(name, 'none', { finalizers: [HOLD], annotations });
    m.spec = { ...m.spec, ...spec };
    await env.api.create(mapoKinds.Machine, m);
    await env.api.patch(
      mapoKinds.Machine,
      { namespace: NS, name },
      'merge',
      { status: { phase: 'Deleting', nodeRef: { kind: 'Node', name: node } } },
      { subresource: 'status' },
    );
    await env.api.delete(mapoKinds.Machine, { namespace: NS, name });
  }

  const machine = (name: string) => env.api.get(mapoKinds.Machine, { namespace: NS, name });
  const podNames = async (node: string) =>
    (await env.api.listAll(kinds.Pod, { namespace: APPS, fieldSelector: `spec.nodeName=${node}` })).items
      .map((p) => p.metadata?.name ?? '')
      .sort();

  async function drained(name: string): Promise<Machine> {
    return eventually(async () => {
      const m = await machine(name);
      return getMachineCondition(m.status?.conditions, DRAINED)?.status === 'True' ? m : undefined;
    }, WAIT);
  }

  it('cordons the Node, evicts its pods but DaemonSet and mirror pods, then sets Drained=True', async () => {
    await nodeWithPods('n1');
    await deletingMachine('drain-me', 'n1');
    const m = await drained('drain-me');
    assert.equal(getMachineCondition(m.status?.conditions, DRAINED)?.message, 'Drain finished successfully');
    assert.equal(getMachineCondition(m.status?.conditions, DRAINABLE)?.status, 'True');
    assert.deepEqual(await podNames('n1'), ['n1-agent', 'n1-static']);
    assert.equal((await env.api.get(kinds.Node, { name: 'n1' })).spec?.unschedulable, true);
    const events = await eventually(async () => {
      const list = (await env.api.listAll(kinds.Event, { namespace: NS })).items.filter(
        (e) => e.involvedObject.name === 'drain-me',
      );
      return list.some((e) => e.reason === 'DrainSucceeded') ? list : undefined;
    }, WAIT);
    assert.ok(events.some((e) => e.reason === 'DrainProceeds'));
  });

  it('a preDrain hook holds the drain (Drainable=False naming it) until it is removed', async () => {
    await nodeWithPods('n2');
    await deletingMachine('hooked', 'n2', {
      lifecycleHooks: { preDrain: [{ name: 'EtcdQuorum', owner: 'clusteroperator/etcd' }] },
    });
    const held = await eventually(async () => {
      const m = await machine('hooked');
      return getMachineCondition(m.status?.conditions, DRAINABLE)?.status === 'False' ? m : undefined;
    }, WAIT);
    const drainable = getMachineCondition(held.status?.conditions, DRAINABLE);
    assert.equal(drainable?.reason, 'HookPresent');
    assert.match(drainable?.message ?? '', /EtcdQuorum \(owner clusteroperator\/etcd\)/);
    assert.equal(getMachineCondition(held.status?.conditions, DRAINED), undefined, 'nothing else happens');
    assert.deepEqual(await podNames('n2'), ['n2-agent', 'n2-static', 'n2-web']);
    assert.notEqual((await env.api.get(kinds.Node, { name: 'n2' })).spec?.unschedulable, true);

    await env.api.patch(mapoKinds.Machine, { namespace: NS, name: 'hooked' }, 'merge', {
      spec: { lifecycleHooks: { preDrain: null } },
    });
    const m = await drained('hooked');
    assert.equal(getMachineCondition(m.status?.conditions, DRAINABLE)?.status, 'True');
    assert.deepEqual(await podNames('n2'), ['n2-agent', 'n2-static']);
  });

  it('the exclude-node-draining annotation skips the drain: Drained=True, pods and Node untouched', async () => {
    await nodeWithPods('n3');
    await deletingMachine('excluded', 'n3', {}, { [Annotations.ExcludeNodeDraining]: '' });
    const m = await drained('excluded');
    assert.match(getMachineCondition(m.status?.conditions, DRAINED)?.message ?? '', /skipped/);
    assert.deepEqual(await podNames('n3'), ['n3-agent', 'n3-static', 'n3-web']);
    assert.notEqual((await env.api.get(kinds.Node, { name: 'n3' })).spec?.unschedulable, true);
  });

  it('a PodDisruptionBudget holds the eviction (Drained=False naming the pod) until it allows one', async () => {
    await nodeWithPods('n4', { app: 'guarded' });
    const pdb = await env.api.create(pdbKind, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'guard', namespace: APPS },
      spec: { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } },
    });
    const status = (allowed: number) => ({
      status: {
        observedGeneration: pdb.metadata?.generation ?? 1,
        disruptionsAllowed: allowed,
        currentHealthy: 1,
        desiredHealthy: 1,
        expectedPods: 1,
      },
    });
    await env.api.patch(pdbKind, { namespace: APPS, name: 'guard' }, 'merge', status(0), {
      subresource: 'status',
    });
    // Pods start Pending, which budgets do not protect: these run.
    for (const name of ['n4-web']) {
      await env.api.patch(
        kinds.Pod,
        { namespace: APPS, name },
        'merge',
        { status: { phase: 'Running' } },
        { subresource: 'status' },
      );
    }
    await deletingMachine('guarded', 'n4');
    const blocked = await eventually(async () => {
      const m = await machine('guarded');
      return getMachineCondition(m.status?.conditions, DRAINED)?.status === 'False' ? m : undefined;
    }, WAIT);
    assert.equal(getMachineCondition(blocked.status?.conditions, DRAINED)?.reason, 'MachineDrainError');
    assert.match(
      getMachineCondition(blocked.status?.conditions, DRAINED)?.message ?? '',
      /cannot evict pod workloads\/n4-web/,
    );
    assert.deepEqual(await podNames('n4'), ['n4-agent', 'n4-static', 'n4-web']);

    await env.api.patch(pdbKind, { namespace: APPS, name: 'guard' }, 'merge', status(1), {
      subresource: 'status',
    });
    await drained('guarded');
    assert.deepEqual(await podNames('n4'), ['n4-agent', 'n4-static']);
  });
});

const pdbKind = resourceType<KubernetesObject & { spec?: unknown; status?: unknown }>({
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  plural: 'poddisruptionbudgets',
  namespaced: true,
});
