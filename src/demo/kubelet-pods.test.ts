/**
 * The demo kubelet's pod half on Kuryr's test bed, with this test playing the kuryr controller's
 * part (it writes the pod's KuryrPort and its VIF as the controller would): a pod bound to a worker
 * stays Pending while its VIF is missing or not active, then runs with the VIF's address as its IP,
 * its Node's InternalIP as hostIP, and Ready — what kubectl shows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { kinds, Manager } from '../kube/index.ts';
import { kubeConfigFrom } from '../kube/testing/env.ts';
import { settled } from '../kube/testing/settle.ts';
import { createLogger } from '../lib/log.ts';
import { createRegistry } from '../lib/metrics.ts';
import { DEFAULT_IFNAME, kuryrKinds, vifPrimitive, type KuryrPort, type Vif } from '../kuryr/api/index.ts';
import { startKuryrEnv, type KuryrEnv } from '../kuryr/testing/env.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
import { POD_KUBELET_CONTROLLER, registerPodKubelet } from './kubelet-pods.ts';

const NS = 'kubelet-pods';
const WAIT = { timeoutMs: 30_000, intervalMs: 25 };

function vif(active: boolean): Vif {
  return {
    id: '3f1d2c4b-5a69-4e7d-8c0b-1a2b3c4d5e6f',
    address: 'fa:16:3e:12:34:56',
    vifName: 'tap3f1d2c4b-5a',
    vlanId: 101,
    active,
    network: {
      id: '9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d',
      mtu: 1442,
      subnets: [{ cidr: '10.128.4.0/23', gateway: '10.128.4.1', ips: ['10.128.4.17'], routes: [], dns: [] }],
    },
  };
}

describe('demo kubelet: pods on Kuryr', () => {
  let env: KuryrEnv;
  let demo: Manager;
  const stopper = new AbortController();
  let running: Promise<void>;
  before(async () => {
    env = await startKuryrEnv({ nodes: 1 });
    await env.ensureNamespace(NS);
    demo = new Manager({
      name: 'kubelet-pods-test',
      kubeConfig: kubeConfigFrom(env.kube.kubeconfigPath),
      qps: 0,
      log: createLogger({ level: 'silent' }),
      registry: createRegistry({ defaultMetrics: false }),
      gracefulShutdownTimeoutMs: 2_000,
    });
    registerPodKubelet(demo);
    running = demo.start(stopper.signal);
  });
  after(async () => {
    stopper.abort();
    await running?.catch(() => undefined);
    await env?.close();
  });

  it('Pending until its KuryrPort has an active default VIF, then Running and Ready on the VIF’s address', async () => {
    const worker = env.workers[0]!;
    const pod = await env.api.create(kinds.Pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-0', namespace: NS },
      spec: { nodeName: worker.name, containers: [{ name: 'web', image: 'nginx' }] },
    });
    const kp = await env.api.create<KuryrPort>(kuryrKinds.KuryrPort, {
      apiVersion: 'openstack.org/v1',
      kind: 'KuryrPort',
      metadata: { name: 'web-0', namespace: NS },
      spec: { podUid: pod.metadata!.uid!, podNodeName: worker.name },
    });
    const get = () => env.api.get<V1Pod>(kinds.Pod, { namespace: NS, name: 'web-0' });
    const key = { namespace: NS, name: 'web-0' };
    const both = [
      [kinds.Pod, key],
      [kuryrKinds.KuryrPort, key],
    ] as const;
    await settled(demo, POD_KUBELET_CONTROLLER, both);
    assert.equal((await get()).status?.podIP, undefined, 'no VIF: no IP');

    const withVif = (active: boolean) =>
      env.api.patch(kuryrKinds.KuryrPort, { namespace: NS, name: 'web-0' }, 'merge', {
        status: { vifs: { [DEFAULT_IFNAME]: { default: true, vif: vifPrimitive(vif(active)) } } },
      });
    await withVif(false);
    await settled(demo, POD_KUBELET_CONTROLLER, both);
    assert.notEqual((await get()).status?.phase, 'Running', 'a VIF not active yet: the sandbox waits');

    await withVif(true);
    const runningPod = await eventually(
      async () => {
        const p = await get();
        return p.status?.phase === 'Running' ? p : undefined;
      },
      { ...WAIT, what: 'pod web-0 Running' },
    );
    assert.equal(runningPod!.status?.podIP, '10.128.4.17');
    assert.deepEqual(runningPod!.status?.podIPs, [{ ip: '10.128.4.17' }]);
    assert.equal(runningPod!.status?.hostIP, worker.address);
    assert.equal(runningPod!.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
    assert.equal(runningPod!.status?.containerStatuses?.[0]?.ready, true);
    assert.ok(kp.metadata?.uid);
  });

  it('leaves alone a pod on the host network, one not bound, and one bound to a Node that does not exist', async () => {
    const worker = env.workers[0]!;
    const pods: V1Pod[] = [
      {
        metadata: { name: 'host', namespace: NS },
        spec: { nodeName: worker.name, hostNetwork: true, containers: [{ name: 'c', image: 'x' }] },
      },
      { metadata: { name: 'unbound', namespace: NS }, spec: { containers: [{ name: 'c', image: 'x' }] } },
      {
        metadata: { name: 'elsewhere', namespace: NS },
        spec: { nodeName: 'no-such-node', containers: [{ name: 'c', image: 'x' }] },
      },
    ];
    for (const p of pods) {
      await env.api.create(kinds.Pod, { apiVersion: 'v1', kind: 'Pod', ...p });
      await env.api.create<KuryrPort>(kuryrKinds.KuryrPort, {
        apiVersion: 'openstack.org/v1',
        kind: 'KuryrPort',
        metadata: { name: p.metadata!.name!, namespace: NS },
        spec: { podUid: 'x', podNodeName: p.spec!.nodeName ?? '' },
      });
      await env.api.patch(kuryrKinds.KuryrPort, { namespace: NS, name: p.metadata!.name! }, 'merge', {
        status: { vifs: { [DEFAULT_IFNAME]: { default: true, vif: vifPrimitive(vif(true)) } } },
      });
    }
    await settled(
      demo,
      POD_KUBELET_CONTROLLER,
      pods.flatMap((p) => {
        const key = { namespace: NS, name: p.metadata!.name! };
        return [
          [kinds.Pod, key],
          [kuryrKinds.KuryrPort, key],
        ] as const;
      }),
    );
    for (const p of pods) {
      const got = await env.api.get<V1Pod>(kinds.Pod, { namespace: NS, name: p.metadata!.name! });
      assert.equal(got.status?.podIP, undefined, p.metadata!.name);
    }
  });
});
