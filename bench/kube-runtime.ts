/**
 * Controller runtime benchmark: no-op reconciles per second over 10,000 objects (the initial sync,
 * then every key queued again, with 1 and 4 workers) and heap per cached object in an informer.
 * Then the kinds capo and ccm hold at scale (Machines, OpenStackMachines, Nodes, Services, shaped
 * as the controllers leave them, at SIZES 1,000 and 5,000): heap per cached object, and events per
 * second from the API server through an informer to a controller's queue (every object updated
 * at once, in-process; the events counted from the last write, the writes' own cost beside). Prints figures; asserts nothing.
 *
 *   node --expose-gc bench/kube-runtime.ts
 *   OBJECTS=2000 SIZES=1000 node --expose-gc bench/kube-runtime.ts   for a quicker run
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { capoKinds } from '../src/capo/api/index.ts';
import type { KubernetesObject, ResourceType } from '../src/kube/resource.ts';
import { startTestKube } from '../src/sim/kube/testing/harness.ts';
import { SharedInformers } from '../src/kube/cache/shared.ts';
import { Manager } from '../src/kube/manager/manager.ts';
import { kinds } from '../src/kube/resource.ts';
import { kubeConfigFrom, testClient } from '../src/kube/testing/env.ts';

const OBJECTS = Number(process.env.OBJECTS ?? 10_000);
const SIZES = (process.env.SIZES ?? '1000,5000').split(',').map(Number);
const NS = 'bench';

const gc = (globalThis as { gc?: () => void }).gc;
function heapBytes(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

function line(label: string, value: string): void {
  console.log(`${label.padEnd(60)} ${value}`);
}

async function until(cond: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

if (!gc) console.log('(run with --expose-gc for the memory figure)');
const k = await startTestKube();
k.em.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
const data = { 'config.yaml': 'a'.repeat(200), owner: 'bench' };
for (let i = 0; i < OBJECTS; i++) {
  k.em.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `cm-${String(i).padStart(5, '0')}`, namespace: NS, labels: { app: `a${i % 10}` } },
    data,
  });
}
const sample = k.em.get('v1', 'configmaps', NS, 'cm-00000');
line('objects', `${OBJECTS} ConfigMaps of ${JSON.stringify(sample).length} bytes of JSON each`);

// Memory: one informer's cache (frozen objects, namespace index), after its garbage is collected.
{
  const client = testClient(k.kubeconfigPath);
  const informers = new SharedInformers({ client });
  const heap0 = heapBytes();
  const informer = informers.informerFor(kinds.ConfigMap, { namespace: NS });
  const stop = new AbortController();
  const running = informers.start(stop.signal);
  const t0 = performance.now();
  await informer.waitForSync();
  const syncMs = performance.now() - t0;
  const heap1 = heapBytes();
  line('informer: list and cache (pages of 500)', `${syncMs.toFixed(0)} ms`);
  line('informer: heap per cached object', `${((heap1 - heap0) / informer.store.size).toFixed(0)} bytes`);
  stop.abort();
  await running;
  await client.close();
}

// Throughput: a manager with a no-op reconciler that reads its object from the cache.
for (const workers of [1, 4]) {
  const mgr = new Manager({
    name: `bench-${workers}`,
    kubeConfig: kubeConfigFrom(k.kubeconfigPath),
    namespace: NS,
  });
  let reconciles = 0;
  let first = 0;
  const controller = mgr
    .controller()
    .for(kinds.ConfigMap)
    .withOptions({ maxConcurrentReconciles: workers })
    .complete(async (req, signal) => {
      first ||= performance.now();
      await mgr.client.get(kinds.ConfigMap, req, { signal });
      reconciles++;
    });
  const stop = new AbortController();
  const t0 = performance.now();
  const running = mgr.start(stop.signal);
  await until(() => reconciles >= OBJECTS, 'the initial reconciles');
  const t1 = performance.now();
  line(
    `initial sync, ${workers} worker(s): start → ${OBJECTS} reconciles`,
    `${(t1 - t0).toFixed(0)} ms (${((OBJECTS / (t1 - first)) * 1000).toFixed(0)} reconciles/s from the first)`,
  );

  const objects = mgr.informers.informerFor(kinds.ConfigMap).list();
  reconciles = 0;
  const t2 = performance.now();
  for (const o of objects) controller.enqueue({ namespace: NS, name: o.metadata?.name ?? '' });
  await until(() => reconciles >= objects.length, 'the requeued reconciles');
  const t3 = performance.now();
  line(
    `every key queued again, ${workers} worker(s)`,
    `${((objects.length / (t3 - t2)) * 1000).toFixed(0)} no-op reconciles/s`,
  );
  stop.abort();
  await running;
}

/* The kinds of capo and ccm at scale. */

const CRD_DIR = join(import.meta.dirname, '..', 'deploy', 'capo', 'crds');
for (const f of (await readdir(CRD_DIR)).filter((x) => x.endsWith('.yaml'))) {
  k.em.create(parseYaml(await readFile(join(CRD_DIR, f), 'utf8')) as Record<string, unknown>);
}

const conditions = (types: string[]) =>
  types.map((type) => ({
    type,
    status: 'True',
    reason: 'Ready',
    message: '',
    lastTransitionTime: '2026-11-27T12:00:00Z',
  }));
type Shape = {
  type: ResourceType<KubernetesObject>;
  resource: string;
  make(i: number): Record<string, unknown>;
};
const ip = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const SHAPES: Shape[] = [
  {
    type: capoKinds.Machine,
    resource: 'machines',
    make: (i) => ({
      apiVersion: 'cluster.x-k8s.io/v1beta1',
      kind: 'Machine',
      metadata: { name: `m-${i}`, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'c' } },
      spec: {
        clusterName: 'c',
        version: 'v1.32.4',
        bootstrap: { dataSecretName: `m-${i}` },
        infrastructureRef: {
          apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
          kind: 'OpenStackMachine',
          name: `m-${i}`,
        },
        providerID: `openstack:///00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
      },
    }),
  },
  {
    type: capoKinds.OpenStackMachine,
    resource: 'openstackmachines',
    make: (i) => ({
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
      kind: 'OpenStackMachine',
      metadata: { name: `m-${i}`, namespace: NS, labels: { 'cluster.x-k8s.io/cluster-name': 'c' } },
      spec: {
        flavor: 'm1.small',
        image: { filter: { name: 'ubuntu-2404-kube-v1.32.4' } },
        sshKeyName: 'capo-demo',
        ports: [{ network: { filter: { name: 'k8s-clusterapi-cluster-capo-demo' } } }],
        rootVolume: { sizeGiB: 20 },
        providerID: `openstack:///00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
      },
    }),
  },
  {
    type: kinds.Node,
    resource: 'nodes',
    make: (i) => ({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: `node-${i}`,
        labels: {
          'kubernetes.io/hostname': `node-${i}`,
          'node.kubernetes.io/instance-type': 'm1.small',
          'topology.kubernetes.io/zone': 'nova',
          'topology.kubernetes.io/region': 'RegionOne',
        },
      },
      spec: { providerID: `openstack:///00000000-0000-0000-0000-${String(i).padStart(12, '0')}` },
    }),
  },
  {
    type: kinds.Service,
    resource: 'services',
    make: (i) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `svc-${i}`, namespace: NS },
      spec: {
        type: 'LoadBalancer',
        // The node port range holds 2,768: at 5,000 Services, load balancers without node ports.
        allocateLoadBalancerNodePorts: false,
        selector: { app: `a${i}` },
        ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
      },
    }),
  },
];
/** The status each kind carries once its controllers are done with it. */
function statusOf(resource: string, i: number): Record<string, unknown> {
  switch (resource) {
    case 'machines':
      return {
        phase: 'Running',
        bootstrapReady: true,
        infrastructureReady: true,
        nodeRef: { kind: 'Node', name: `node-${i}` },
        addresses: [{ type: 'InternalIP', address: ip(i) }],
        conditions: conditions(['Ready', 'BootstrapReady', 'InfrastructureReady', 'NodeHealthy']),
      };
    case 'openstackmachines':
      return {
        ready: true,
        instanceID: `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`,
        instanceState: 'ACTIVE',
        addresses: [{ type: 'InternalIP', address: ip(i) }],
        conditions: conditions(['Ready', 'InstanceReady']),
      };
    case 'nodes':
      return {
        addresses: [
          { type: 'InternalIP', address: ip(i) },
          { type: 'Hostname', address: `node-${i}` },
        ],
        capacity: { cpu: '2', memory: '4026532Ki', pods: '110' },
        allocatable: { cpu: '2', memory: '3924132Ki', pods: '110' },
        conditions: conditions(['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready']),
        nodeInfo: {
          kubeletVersion: 'v1.32.4',
          osImage: 'Ubuntu 24.04',
          containerRuntimeVersion: 'containerd://2.0',
        },
      };
    default:
      return { loadBalancer: { ingress: [{ ip: ip(i) }] } };
  }
}

/** One informer of `type` listed and cached: the sync time and the heap with it still held. */
async function cacheOnce(
  type: ResourceType<KubernetesObject>,
  namespaced: boolean,
  stripManagedFields = false,
): Promise<{ syncMs: number; heapWith: number; size: number }> {
  const client = testClient(k.kubeconfigPath);
  const informers = new SharedInformers({ client, defaults: { stripManagedFields } });
  const informer = informers.informerFor(type, namespaced ? { namespace: NS } : {});
  const stop = new AbortController();
  const running = informers.start(stop.signal);
  const t0 = performance.now();
  await informer.waitForSync();
  const syncMs = performance.now() - t0;
  const heapWith = heapBytes();
  const size = informer.store.size;
  stop.abort();
  await running;
  await client.close();
  return { syncMs, heapWith, size };
}

for (const shape of SHAPES) {
  for (const size of SIZES) {
    // The kind's objects, made directly in the emulator (no HTTP: only the informer's side is measured).
    for (let i = 0; i < size; i++) {
      const made = k.em.create(shape.make(i));
      k.em.update({ ...made, status: statusOf(shape.resource, i) }, 'status');
    }
    const namespaced = shape.resource !== 'nodes';
    // As every controller caches, then as capo does (managedFields stripped, CAPO_INFORMERS).
    for (const strip of [false, true]) {
      const cache = await cacheOnce(shape.type, namespaced, strip);
      // The cache's size is what goes when the informer does (the emulator's own memory moves
      // with its writes and lists, so a delta around the sync would count it too).
      await new Promise((r) => setTimeout(r, 200));
      const heapWithout = heapBytes();
      const { syncMs, heapWith, size: cachedSize } = cache;
      line(
        `${shape.type.kind} × ${size}: list and cache / heap per object${strip ? ' (managedFields stripped)' : ''}`,
        `${syncMs.toFixed(0)} ms / ${((heapWith - heapWithout) / cachedSize).toFixed(0)} bytes`,
      );
    }
    // Events through the informer to a controller's queue: a status update of every object.
    const mgr = new Manager({
      name: `bench-${shape.resource}-${size}`,
      kubeConfig: kubeConfigFrom(k.kubeconfigPath),
      ...(namespaced ? { namespace: NS } : {}),
      qps: 0,
    });
    let queued = 0;
    const controller = mgr
      .controller()
      .for(shape.type)
      .complete(() => Promise.resolve({}));
    const events = mgr.informers.informerFor(shape.type);
    const mstop = new AbortController();
    const mrunning = mgr.start(mstop.signal);
    await events.waitForSync();
    await until(() => controller.queue.len() === 0, 'the initial reconciles');
    events.addHandler({ onUpdate: () => queued++ });
    const t1 = performance.now();
    for (let i = 0; i < size; i++) {
      const meta = shape.make(i).metadata as { name: string };
      const current = k.em.get(
        (shape.make(i) as { apiVersion: string }).apiVersion,
        shape.resource,
        namespaced ? NS : '',
        meta.name,
      );
      const metadata = { ...(current['metadata'] as Record<string, unknown>), annotations: { bench: '2' } };
      k.em.update({ ...current, metadata });
    }
    const written = performance.now();
    await until(() => queued >= size, `${size} ${shape.resource} events`);
    const t2 = performance.now();
    line(
      `${shape.type.kind} × ${size}: updates → watch → informer → queue`,
      `${((size / (t2 - written)) * 1000).toFixed(0)} events/s once written (the emulator's writes: ${(((written - t1) * 1000) / size).toFixed(0)} µs each)`,
    );
    mstop.abort();
    await mrunning;
    for (let i = 0; i < size; i++) {
      const meta = shape.make(i).metadata as { name: string };
      k.em.delete(
        (shape.make(i) as { apiVersion: string }).apiVersion,
        shape.resource,
        namespaced ? NS : '',
        meta.name,
      );
    }
  }
}

await k.close();
