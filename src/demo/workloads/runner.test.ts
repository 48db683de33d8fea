/**
 * The runner as the Deployment controller and kubelet: rolling updates, refusals, deletion and
 * crash loops, each with the real `shiftstack` processes and the API server's view of them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoreV1Event, V1Deployment } from '@kubernetes/client-node';
import { kinds } from '../../kube/index.ts';
import { eventually } from '../../sim/kube/testing/harness.ts';
import {
  alive,
  ccmContainer,
  ccmDeployment,
  NS,
  startRunnerEnv,
  TIME_SCALE,
  type RunnerEnv,
} from './testing/env.ts';

const wait = { timeoutMs: 120_000, intervalMs: 100 };

describe('WorkloadRunner: Deployments as the Deployment controller and the kubelet run them', () => {
  let t: RunnerEnv;
  before(async () => {
    t = await startRunnerEnv();
  });
  after(async () => {
    await t?.close();
  });

  const get = (name: string) => t.env.api.get<V1Deployment>(kinds.Deployment, { namespace: NS, name });
  const condition = (d: V1Deployment, type: string) => d.status?.conditions?.find((c) => c.type === type);
  const events = async (name: string) =>
    (await t.env.api.list<CoreV1Event>(kinds.Event, { namespace: NS })).items.filter(
      (e) => e.involvedObject.kind === 'Deployment' && e.involvedObject.name === name,
    );

  it('rolls a 2-replica Deployment one new ready pod before one old stops: never without a ready pod', async () => {
    const name = 'ccm-rolling';
    await t.env.api.create(kinds.Deployment, ccmDeployment(name, 2));
    await eventually(async () => (await get(name)).status?.availableReplicas === 2, {
      ...wait,
      what: '2 available replicas',
    });
    const before = t.runner.pods(NS, name);
    const oldPids = before.flatMap((p) => p.pids);
    assert.equal(oldPids.length, 2);

    let minReady = Number.POSITIVE_INFINITY;
    let minReadyStatus = Number.POSITIVE_INFINITY;
    let observing = true;
    const observer = (async () => {
      while (observing) {
        minReady = Math.min(minReady, t.runner.pods(NS, name).filter((p) => p.ready).length);
        minReadyStatus = Math.min(minReadyStatus, (await get(name)).status?.readyReplicas ?? 0);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();

    const d = await get(name);
    const container = ccmContainer();
    container.env = [...(container.env ?? []), { name: 'ROLLOUT', value: '2' }];
    await t.env.api.update(kinds.Deployment, {
      ...d,
      spec: {
        ...d.spec!,
        template: { ...d.spec!.template, spec: { ...d.spec!.template.spec!, containers: [container] } },
      },
    });

    const done = await eventually(
      async () => {
        const x = await get(name);
        const pods = t.runner.pods(NS, name);
        const s = x.status;
        return s?.observedGeneration === x.metadata?.generation &&
          s?.updatedReplicas === 2 &&
          s.replicas === 2 &&
          s.availableReplicas === 2 &&
          condition(x, 'Progressing')?.reason === 'NewReplicaSetAvailable' &&
          pods.length === 2 &&
          pods.every((p) => !before.some((b) => b.replicaSet === p.replicaSet))
          ? x
          : undefined;
      },
      { ...wait, what: 'the rollout complete' },
    );
    observing = false;
    await observer;
    assert.ok(minReady >= 1, `a moment without a ready pod (min ${minReady})`);
    assert.ok(minReadyStatus >= 1, `a status with no ready replica (min ${minReadyStatus})`);
    assert.equal(condition(done, 'Available')?.status, 'True');
    for (const pid of oldPids) assert.equal(alive(pid), false, `old pod process ${pid} stopped`);
    const scaling = (await events(name))
      .filter((e) => e.reason === 'ScalingReplicaSet')
      .map((e) => e.message);
    assert.ok(
      scaling.some((m) => /^Scaled down replica set ccm-rolling-\w+ from 2 to 1$/.test(m ?? '')),
      scaling.join('; '),
    );
  });

  it('refuses another image with a Warning Event naming it; the Deployment stays unavailable', async () => {
    const name = 'aws-cloud-controller-manager';
    const image = 'quay.io/openshift/origin-aws-cloud-controller-manager:4.18';
    await t.env.api.create(kinds.Deployment, ccmDeployment(name, 1, { ...ccmContainer(), image }));
    const warning = await eventually(
      async () => (await events(name)).find((e) => e.type === 'Warning' && e.reason === 'UnsupportedImage'),
      { ...wait, what: 'the UnsupportedImage Event' },
    );
    assert.match(warning.message ?? '', new RegExp(`"${image.replace(/[.]/g, '\\.')}"`));
    assert.match(warning.message ?? '', /runs only shiftstack's image/);
    const d = await eventually(
      async () => {
        const x = await get(name);
        return x.status?.observedGeneration === x.metadata?.generation && condition(x, 'Available')
          ? x
          : undefined;
      },
      { ...wait, what: 'a status' },
    );
    assert.equal(condition(d, 'Available')?.status, 'False');
    assert.equal(condition(d, 'Available')?.reason, 'MinimumReplicasUnavailable');
    assert.equal(d.status?.unavailableReplicas, 1);
    assert.equal(d.status?.readyReplicas ?? 0, 0);
    const pods = t.runner.pods(NS, name);
    assert.equal(pods.length, 1);
    assert.equal(pods[0]?.waiting, 'UnsupportedImage');
    assert.deepEqual(pods[0]?.allPids, [], 'nothing ran');
  });

  it('stops the pods of a deleted Deployment: no process left', async () => {
    const name = 'ccm-deleted';
    await t.env.api.create(kinds.Deployment, ccmDeployment(name, 2));
    const pids = await eventually(
      () => {
        const p = t.runner.pods(NS, name).flatMap((x) => x.pids);
        return p.length === 2 ? p : undefined;
      },
      { ...wait, what: 'two processes' },
    );
    await t.env.api.delete(kinds.Deployment, { namespace: NS, name });
    await eventually(() => t.runner.pods(NS, name).length === 0 && pids.every((p) => !alive(p)), {
      ...wait,
      what: 'the processes gone',
    });
  });

  it('restarts a crashing container with CrashLoopBackOff; the Deployment stays unavailable', async () => {
    const name = 'ccm-crashing';
    await t.env.api.create(kinds.Deployment, ccmDeployment(name, 1, ccmContainer(['--no-such-flag'])));
    const pod = await eventually(
      () => {
        const [p] = t.runner.pods(NS, name);
        return p && p.backoffs.length >= 3 ? p : undefined;
      },
      { ...wait, what: 'three exits' },
    );
    // The kubelet's back-off: the first restart at once, then 10 s (scaled), doubling.
    assert.deepEqual(pod.backoffs.slice(0, 3), [0, 10_000 * TIME_SCALE, 20_000 * TIME_SCALE]);
    assert.ok(pod.allPids.length >= 3);
    await eventually(
      async () => (await events(name)).some((e) => e.reason === 'BackOff' && e.type === 'Warning'),
      {
        ...wait,
        what: 'the BackOff Event',
      },
    );
    const d = await get(name);
    assert.equal(condition(d, 'Available')?.status, 'False');
    assert.equal(d.status?.unavailableReplicas, 1);
    assert.equal(d.status?.availableReplicas ?? 0, 0);
  });
});
