/**
 * Controller runtime benchmark: no-op reconciles per second over 10,000 objects (the initial sync,
 * then every key queued again, with 1 and 4 workers) and heap per cached object in an informer.
 * Prints figures; asserts nothing.
 *
 *   node --expose-gc bench/kube-runtime.ts
 *   OBJECTS=2000 node --expose-gc bench/kube-runtime.ts   for a quicker run
 */
import { startTestKube } from '../src/sim/kube/testing/harness.ts';
import { SharedInformers } from '../src/kube/cache/shared.ts';
import { Manager } from '../src/kube/manager/manager.ts';
import { kinds } from '../src/kube/resource.ts';
import { kubeConfigFrom, testClient } from '../src/kube/testing/env.ts';

const OBJECTS = Number(process.env.OBJECTS ?? 10_000);
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

await k.close();
