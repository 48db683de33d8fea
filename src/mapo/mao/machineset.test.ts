/**
 * The MachineSet controller through the Kubernetes emulator: Machines made from the template
 * (generateName, labels, annotations, controller ownerReference, the provider spec unchanged),
 * orphans adopted, scale-down by each delete policy and the delete-machine annotation, status with
 * Ready Nodes, `kubectl scale`, and no duplicate while the cache lags behind the controller's
 * own creates.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { kinds, type KubeClient } from '../../kube/index.ts';
import { kubeConfigFrom } from '../../kube/testing/env.ts';
import { settled } from '../../kube/testing/settle.ts';
import { eventually } from '../../sim/kube/testing/harness.ts';
import {
  Annotations,
  MACHINE_API_NAMESPACE,
  mapoKinds,
  type Machine,
  type MachineSet,
} from '../api/index.ts';
import {
  LaggingClient,
  machineBody,
  machineSetBody,
  startMaoEnv,
  type MaoEnv,
  type RunningMao,
} from './testing/env.ts';
import { MACHINESET_CONTROLLER } from './machineset.ts';

const NS = MACHINE_API_NAMESPACE;
const WAIT = { timeoutMs: 20_000, intervalMs: 20 };
const DAY_MS = 86_400_000;

/** The emulator's clock, movable so Machines get distinct creation times. */
let offsetMs = 0;

async function machinesOf(api: KubeClient, set: string): Promise<Machine[]> {
  const all = (await api.listAll(mapoKinds.Machine, { namespace: NS })).items;
  return all.filter((m) => m.metadata?.labels?.['machine.openshift.io/cluster-api-machineset'] === set);
}

const live = (ms: Machine[]) => ms.filter((m) => !m.metadata?.deletionTimestamp);
const names = (ms: Machine[]) => ms.map((m) => m.metadata?.name ?? '').sort();

async function kubectl(kubeconfig: string, ...args: string[]): Promise<string> {
  const child = spawn('/usr/bin/kubectl', args, { env: { ...process.env, KUBECONFIG: kubeconfig } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  assert.equal(code, 0, `kubectl ${args.join(' ')}: ${err}`);
  return out;
}

describe('MachineSet controller (acting as the machine-api-operator)', () => {
  let env: MaoEnv;
  let mao: RunningMao;
  const api = () => env.api;

  before(async () => {
    env = await startMaoEnv({ now: () => new Date(Date.now() + offsetMs) });
    mao = await env.start();
  });
  after(async () => {
    await env?.close();
  });

  it('creates the missing Machines from the template, owned by the set, with the provider spec unchanged', async () => {
    const providerSpec = {
      apiVersion: 'machine.openshift.io/v1alpha1',
      kind: 'OpenstackProviderSpec',
      metadata: { creationTimestamp: null },
      flavor: 'm1.xlarge',
      image: 'rhcos',
      networks: [{ filter: {}, subnets: [{ filter: { name: 'ostest-nodes' } }] }],
      userDataSecret: { name: 'worker-user-data' },
    };
    const set = await api().create(mapoKinds.MachineSet, machineSetBody('workers', 3, { providerSpec }));
    const machines = await eventually(async () => {
      const ms = await machinesOf(api(), 'workers');
      return ms.length === 3 ? ms : undefined;
    }, WAIT);
    for (const m of machines) {
      assert.match(m.metadata?.name ?? '', /^workers-[a-z0-9]{5}$/);
      assert.equal(m.metadata?.labels?.['machine.openshift.io/cluster-api-machine-role'], 'worker');
      assert.equal(m.metadata?.annotations?.['example.com/from-template'], 'yes');
      assert.deepEqual(m.metadata?.ownerReferences, [
        {
          apiVersion: 'machine.openshift.io/v1beta1',
          kind: 'MachineSet',
          name: 'workers',
          uid: set.metadata?.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      assert.equal(JSON.stringify(m.spec?.providerSpec?.value), JSON.stringify(providerSpec));
      assert.deepEqual(m.spec?.metadata?.labels, { 'node-role.kubernetes.io/worker': '' });
    }
    const status = await eventually(async () => {
      const s = await api().get(mapoKinds.MachineSet, { namespace: NS, name: 'workers' });
      return s.status?.replicas === 3 && s.status.observedGeneration === s.metadata?.generation
        ? s.status
        : undefined;
    }, WAIT);
    assert.equal(status.fullyLabeledReplicas, 3);
    assert.equal(status.readyReplicas, 0);
    assert.equal(
      status.labelSelector,
      'machine.openshift.io/cluster-api-cluster=ostest,machine.openshift.io/cluster-api-machineset=workers',
    );

    // Two Nodes become Ready: readyReplicas and availableReplicas follow (minReadySeconds 0).
    for (const m of machines.slice(0, 2)) {
      const node = await api().create(kinds.Node, {
        metadata: { name: `node-${m.metadata?.name}` },
        status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date() }] },
      });
      await api().patch(
        mapoKinds.Machine,
        { namespace: NS, name: m.metadata?.name ?? '' },
        'merge',
        { status: { nodeRef: { kind: 'Node', name: node.metadata?.name, uid: node.metadata?.uid } } },
        { subresource: 'status' },
      );
    }
    await eventually(async () => {
      const s = await api().get(mapoKinds.MachineSet, { namespace: NS, name: 'workers' });
      return s.status?.readyReplicas === 2 && s.status.availableReplicas === 2;
    }, WAIT);
  });

  it('kubectl scale machineset changes the Machines through /scale', async () => {
    await kubectl(env.k.kubeconfigPath, 'scale', 'machineset', 'workers', '-n', NS, '--replicas=5');
    await eventually(async () => live(await machinesOf(api(), 'workers')).length === 5, WAIT);
    await kubectl(env.k.kubeconfigPath, 'scale', 'machineset', 'workers', '-n', NS, '--replicas=1');
    const left = await eventually(async () => {
      const ms = live(await machinesOf(api(), 'workers'));
      return ms.length === 1 ? ms : undefined;
    }, WAIT);
    // Random keeps a Machine with a Node over those without (PREFER_DELETE above COULD_DELETE).
    assert.ok(left[0]?.status?.nodeRef, 'the Machine left is one with a Node');
    await eventually(async () => {
      const s = await api().get(mapoKinds.MachineSet, { namespace: NS, name: 'workers' });
      return s.status?.replicas === 1;
    }, WAIT);
  });

  /** Three orphans of set `name`, created a day apart (old, mid, new), adopted by the set. */
  async function adoptedTrio(name: string, deletePolicy?: string): Promise<MachineSet> {
    for (const [i, age] of ['old', 'mid', 'new'].entries()) {
      offsetMs = (i - 2) * DAY_MS;
      await api().create(mapoKinds.Machine, machineBody(`${name}-${age}`, name));
    }
    offsetMs = 0;
    // Orphans to adopt, not a set that finds none: its Machines' watch is not its own, and a set
    // seen first would make three Machines and delete three again by its policy.
    await settled(
      mao.mgr,
      MACHINESET_CONTROLLER,
      ['old', 'mid', 'new'].map(
        (age) => [mapoKinds.Machine, { namespace: NS, name: `${name}-${age}` }] as const,
      ),
    );
    const set = await api().create(
      mapoKinds.MachineSet,
      machineSetBody(name, 3, deletePolicy ? { deletePolicy } : {}),
    );
    await eventually(async () => {
      const ms = await machinesOf(api(), name);
      return ms.length === 3 && ms.every((m) => m.metadata?.ownerReferences?.[0]?.uid === set.metadata?.uid);
    }, WAIT);
    return set;
  }

  async function scaleTo(name: string, replicas: number): Promise<string[]> {
    await api().patch(mapoKinds.MachineSet, { namespace: NS, name }, 'merge', { spec: { replicas } });
    return names(
      await eventually(async () => {
        const ms = live(await machinesOf(api(), name));
        return ms.length === replicas ? ms : undefined;
      }, WAIT),
    );
  }

  it('adopts matching orphans instead of creating, and the Oldest policy deletes the oldest', async () => {
    await adoptedTrio('oldest', 'Oldest');
    assert.deepEqual(names(await machinesOf(api(), 'oldest')), ['oldest-mid', 'oldest-new', 'oldest-old']);
    assert.deepEqual(await scaleTo('oldest', 2), ['oldest-mid', 'oldest-new']);
  });

  it('the Newest policy deletes the newest', async () => {
    await adoptedTrio('newest', 'Newest');
    assert.deepEqual(await scaleTo('newest', 2), ['newest-mid', 'newest-old']);
  });

  it('Random (the default) deletes a Machine without a Node before those with one', async () => {
    await adoptedTrio('random');
    for (const age of ['old', 'new']) {
      await api().patch(
        mapoKinds.Machine,
        { namespace: NS, name: `random-${age}` },
        'merge',
        { status: { nodeRef: { kind: 'Node', name: `random-${age}` } } },
        { subresource: 'status' },
      );
    }
    assert.deepEqual(await scaleTo('random', 2), ['random-new', 'random-old']);
  });

  it('the delete-machine annotation goes first whatever the policy', async () => {
    await adoptedTrio('marked', 'Newest');
    await api().patch(mapoKinds.Machine, { namespace: NS, name: 'marked-old' }, 'merge', {
      metadata: { annotations: { [Annotations.DeleteMachine]: 'true' } },
    });
    assert.deepEqual(await scaleTo('marked', 2), ['marked-mid', 'marked-new']);
  });

  it('never creates a Machine twice while its cache has not caught up with its own creates', async () => {
    // The shared controllers would fix a duplicate; this one runs alone on a lagging cache.
    await mao.stop();
    const lagging = new LaggingClient(kubeConfigFrom(env.k.kubeconfigPath));
    const alone = await env.start({ client: lagging });
    try {
      await api().create(mapoKinds.MachineSet, machineSetBody('lagging', 0));
      await eventually(async () => {
        const s = await api().get(mapoKinds.MachineSet, { namespace: NS, name: 'lagging' });
        return s.status?.observedGeneration === s.metadata?.generation;
      }, WAIT);
      lagging.hold();
      await api().patch(mapoKinds.MachineSet, { namespace: NS, name: 'lagging' }, 'merge', {
        spec: { replicas: 3 },
      });
      await eventually(async () => (await machinesOf(api(), 'lagging')).length >= 3, WAIT);
      // A second reconcile, woken by a spec change, with the three creates still unseen.
      const changed = await api().patch<MachineSet>(
        mapoKinds.MachineSet,
        { namespace: NS, name: 'lagging' },
        'merge',
        {
          spec: { minReadySeconds: 1 },
        },
      );
      await eventually(async () => {
        const s = await api().get(mapoKinds.MachineSet, { namespace: NS, name: 'lagging' });
        return s.status?.observedGeneration === changed.metadata?.generation;
      }, WAIT);
      assert.equal((await machinesOf(api(), 'lagging')).length, 3, 'three Machines, not six');
      lagging.release();
      await eventually(async () => {
        const s = await api().get(mapoKinds.MachineSet, { namespace: NS, name: 'lagging' });
        return s.status?.replicas === 3;
      }, WAIT);
      assert.equal((await machinesOf(api(), 'lagging')).length, 3);
    } finally {
      lagging.release();
      await alone.stop();
      await lagging.close();
    }
  });
});
