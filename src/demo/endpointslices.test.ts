/**
 * The EndpointSlice stand-in on the Kubernetes emulator: slices follow the pods a Service selects
 * (ready or not, named ports resolved per pod), carry upstream's labels and owner, leave other
 * writers' slices alone, and go when the selector goes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import { kinds, Manager } from '../kube/index.ts';
import { kubeConfigFrom, testClient } from '../kube/testing/env.ts';
import type { KubeClient } from '../kube/index.ts';
import { createLogger } from '../lib/log.ts';
import { createRegistry } from '../lib/metrics.ts';
import { startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
import {
  desiredSlices,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  MAX_ENDPOINTS_PER_SLICE,
  registerEndpointSliceController,
  SERVICE_NAME_LABEL,
} from './endpointslices.ts';

const NS = 'shop';
const WAIT = { timeoutMs: 20_000, intervalMs: 20 };

function service(name: string, spec: V1Service['spec']): V1Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: NS }, spec };
}

function pod(
  name: string,
  labels: Record<string, string>,
  ports: { name: string; containerPort: number }[] = [],
): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels },
    spec: { nodeName: 'worker-0', containers: [{ name: 'app', image: 'app', ports }] },
  };
}

const ready = (ip: string, isReady = true): V1Pod['status'] => ({
  phase: 'Running',
  podIP: ip,
  podIPs: [{ ip }],
  conditions: [{ type: 'Ready', status: isReady ? 'True' : 'False' }],
});

describe('desiredSlices (pure)', () => {
  const svc = service('web', {
    selector: { app: 'web' },
    clusterIP: '10.96.0.10',
    ports: [
      { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' },
      { name: 'metrics', port: 9090, targetPort: 9100 },
    ],
  });
  const withStatus = (p: V1Pod, status: V1Pod['status']): V1Pod => ({ ...p, status });

  it('groups pods by the ports they resolve to, and keeps not-ready pods with ready=false', () => {
    const slices = desiredSlices(svc, [
      withStatus(pod('a', { app: 'web' }, [{ name: 'http', containerPort: 8080 }]), ready('10.0.0.5')),
      withStatus(pod('b', { app: 'web' }, [{ name: 'http', containerPort: 8081 }]), ready('10.0.0.6', false)),
      withStatus(pod('c', { app: 'web' }, [{ name: 'http', containerPort: 8080 }]), ready('10.0.0.7')),
      withStatus(pod('done', { app: 'web' }), { phase: 'Succeeded', podIP: '10.0.0.9' }),
      pod('no-ip', { app: 'web' }),
    ]);
    assert.equal(slices.length, 2);
    const by8080 = slices.find((s) => s.ports.some((p) => p.port === 8080))!;
    const by8081 = slices.find((s) => s.ports.some((p) => p.port === 8081))!;
    assert.deepEqual(
      by8080.endpoints.map((e) => [e.addresses[0], e.conditions?.ready]),
      [
        ['10.0.0.5', true],
        ['10.0.0.7', true],
      ],
    );
    assert.deepEqual(
      by8081.endpoints.map((e) => [e.addresses[0], e.conditions?.ready]),
      [['10.0.0.6', false]],
    );
    assert.deepEqual(by8080.ports, [
      { name: 'http', port: 8080, protocol: 'TCP' },
      { name: 'metrics', port: 9100, protocol: 'TCP' },
    ]);
    assert.equal(by8080.addressType, 'IPv4');
    // The same input, the same names: a restart finds its slices again.
    assert.deepEqual(
      desiredSlices(svc, [
        withStatus(pod('a', { app: 'web' }, [{ name: 'http', containerPort: 8080 }]), ready('10.0.0.5')),
      ]).map((s) => s.name),
      [by8080.name],
    );
  });

  it('no pod selected: one empty placeholder slice, as upstream', () => {
    const [placeholder, ...more] = desiredSlices(svc, []);
    assert.deepEqual(more, []);
    assert.deepEqual(
      [placeholder!.addressType, placeholder!.ports, placeholder!.endpoints],
      ['IPv4', [], []],
    );
  });

  it('a pod without the named port keeps the other ports; slices hold at most 100 endpoints', () => {
    const many = Array.from({ length: MAX_ENDPOINTS_PER_SLICE + 1 }, (_, i) =>
      withStatus(pod(`p${String(i).padStart(3, '0')}`, { app: 'web' }), ready(`10.1.${i >> 8}.${i & 255}`)),
    );
    const slices = desiredSlices(svc, many);
    assert.equal(slices.length, 2);
    assert.deepEqual(slices[0]!.ports, [{ name: 'metrics', port: 9100, protocol: 'TCP' }]);
    assert.deepEqual(
      slices.map((s) => s.endpoints.length).sort((a, b) => a - b),
      [1, MAX_ENDPOINTS_PER_SLICE],
    );
  });
});

describe('EndpointSlice stand-in on the emulator', () => {
  let kube: TestKube;
  let api: KubeClient;
  let stop: AbortController;
  let done: Promise<void>;

  before(async () => {
    kube = await startTestKube();
    api = testClient(kube.kubeconfigPath);
    const manager = new Manager({
      name: 'kcm-endpointslice',
      kubeConfig: kubeConfigFrom(kube.kubeconfigPath),
      qps: 0,
      log: createLogger({ level: 'silent' }),
      registry: createRegistry({ defaultMetrics: false }),
      gracefulShutdownTimeoutMs: 5_000,
    });
    registerEndpointSliceController(manager);
    await api.create(kinds.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    stop = new AbortController();
    done = manager.start(stop.signal);
  });
  after(async () => {
    stop?.abort(new Error('test done'));
    await done?.catch(() => {});
    await api?.close();
    await kube?.close();
  });

  const slicesOf = async (name: string): Promise<V1EndpointSlice[]> =>
    (
      await api.list(kinds.EndpointSlice, {
        namespace: NS,
        labelSelector: `${SERVICE_NAME_LABEL}=${name}`,
      })
    ).items;
  const addresses = (slices: V1EndpointSlice[], onlyReady = false) =>
    slices
      .flatMap((s) => s.endpoints ?? [])
      .filter((e) => !onlyReady || e.conditions?.ready)
      .map((e) => e.addresses[0])
      .sort();

  async function runPod(p: V1Pod, status: V1Pod['status']): Promise<void> {
    await api.create(kinds.Pod, p);
    await api.patch(
      kinds.Pod,
      { namespace: NS, name: p.metadata!.name! },
      'merge',
      { status },
      { subresource: 'status' },
    );
  }

  it('slices follow the selected pods: added, not ready, relabelled, deleted', async () => {
    await api.create(
      kinds.Service,
      service('web', {
        selector: { app: 'web' },
        ports: [{ name: 'http', port: 80, targetPort: 'http' }],
      }),
    );
    await runPod(pod('web-1', { app: 'web' }, [{ name: 'http', containerPort: 8080 }]), ready('10.2.0.11'));
    await runPod(
      pod('web-2', { app: 'web' }, [{ name: 'http', containerPort: 8080 }]),
      ready('10.2.0.12', false),
    );
    await runPod(pod('other', { app: 'db' }, [{ name: 'http', containerPort: 8080 }]), ready('10.2.0.13'));

    // The placeholder made while no pod was selected goes after the slice that replaces it is
    // written (never a moment without endpoints): wait for it to be gone too.
    const slices = (await eventually(async () => {
      const s = await slicesOf('web');
      return s.length === 1 && addresses(s).length === 2 ? s : undefined;
    }, WAIT))!;
    assert.deepEqual(addresses(slices, true), ['10.2.0.11']);
    const [slice] = slices;
    assert.equal(slice!.metadata?.labels?.[MANAGED_BY_LABEL], MANAGED_BY);
    assert.equal(slice!.addressType, 'IPv4');
    assert.deepEqual(slice!.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
    const svc = await api.get(kinds.Service, { namespace: NS, name: 'web' });
    assert.deepEqual(
      slice!.metadata?.ownerReferences?.map((r) => [r.kind, r.uid, r.controller]),
      [['Service', svc.metadata?.uid, true]],
    );
    const ref = slice!.endpoints?.find((e) => e.addresses[0] === '10.2.0.11')?.targetRef;
    assert.equal(ref?.name, 'web-1');

    // Ready now; the other pod joins by label; the first one leaves by label.
    await api.patch(
      kinds.Pod,
      { namespace: NS, name: 'web-2' },
      'merge',
      { status: ready('10.2.0.12') },
      { subresource: 'status' },
    );
    await api.patch(kinds.Pod, { namespace: NS, name: 'other' }, 'merge', {
      metadata: { labels: { app: 'web' } },
    });
    await api.patch(kinds.Pod, { namespace: NS, name: 'web-1' }, 'merge', {
      metadata: { labels: { app: 'gone' } },
    });
    await eventually(async () => {
      const a = addresses(await slicesOf('web'), true);
      return a.join() === '10.2.0.12,10.2.0.13';
    }, WAIT);

    await api.delete(kinds.Pod, { namespace: NS, name: 'web-2' });
    await eventually(async () => addresses(await slicesOf('web')).join() === '10.2.0.13', WAIT);
  });

  it('slices made by someone else stay; ours go with the selector', async () => {
    await api.create(
      kinds.Service,
      service('api', {
        selector: { app: 'api' },
        ports: [{ port: 443, targetPort: 8443 }],
      }),
    );
    await runPod(pod('api-1', { app: 'api' }), ready('10.2.1.11'));
    const foreign: V1EndpointSlice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'api-manual', namespace: NS, labels: { [SERVICE_NAME_LABEL]: 'api' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['192.0.2.10'] }],
      ports: [{ port: 443 }],
    };
    await api.create(kinds.EndpointSlice, foreign);
    await eventually(async () => addresses(await slicesOf('api')).join() === '10.2.1.11,192.0.2.10', WAIT);

    await api.patch(kinds.Service, { namespace: NS, name: 'api' }, 'merge', { spec: { selector: null } });
    const left = (await eventually(async () => {
      const s = await slicesOf('api');
      return s.length === 1 ? s : undefined;
    }, WAIT))!;
    assert.equal(left[0]!.metadata?.name, 'api-manual');
  });
});
