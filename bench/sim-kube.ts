/**
 * Kubernetes emulator benchmark: create throughput over HTTPS, listing 10,000 objects (whole and
 * paginated, time and bytes), watch fan-out to 20 watchers (events/s, write-to-receipt latency)
 * and memory per stored object. Prints figures; asserts nothing.
 *
 *   node --expose-gc bench/sim-kube.ts
 *   OBJECTS=2000 WATCHERS=5 UPDATES=200 node --expose-gc bench/sim-kube.ts   for a quicker run
 */
import { eventually, startTestKube } from '../src/sim/kube/testing/harness.ts';

const OBJECTS = Number(process.env.OBJECTS ?? 10_000);
const WATCHERS = Number(process.env.WATCHERS ?? 20);
const UPDATES = Number(process.env.UPDATES ?? 1_000);
const CONCURRENCY = 16;
const LIST_RUNS = 5;

const gc = (globalThis as { gc?: () => void }).gc;
function heapBytes(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().heapUsed;
}

function line(label: string, value: string): void {
  console.log(`${label.padEnd(52)} ${value}`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const k = await startTestKube();
const NS = '/api/v1/namespaces/bench/configmaps';
await k.req('POST', '/api/v1/namespaces', { metadata: { name: 'bench' } });
const data = { 'config.yaml': 'a'.repeat(200), owner: 'bench' };

// Memory: objects created in-process, so only the store's share is measured.
const heap0 = heapBytes();
for (let i = 0; i < OBJECTS; i++) {
  k.em.create({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `cm-${String(i).padStart(5, '0')}`, namespace: 'bench', labels: { app: `a${i % 10}` } },
    data,
  });
}
k.em.compact();
const heap1 = heapBytes();
line(
  `memory: ${OBJECTS} ConfigMaps (~0.5 KiB JSON each)`,
  `${((heap1 - heap0) / OBJECTS).toFixed(0)} bytes/object heap`,
);

// Creates over HTTPS, HTTP/1.1 (as src/kube/client.ts sends them).
{
  const n = Math.min(2_000, OBJECTS);
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        const i = next++;
        await k.req('POST', '/api/v1/namespaces/bench/configmaps', { metadata: { name: `http-${i}` }, data });
      }
    }),
  );
  const s = (performance.now() - start) / 1000;
  line(`POST configmaps over HTTPS (${CONCURRENCY} connections)`, `${(n / s).toFixed(0)} req/s`);
  for (let i = 0; i < n; i++) k.em.delete('v1', 'configmaps', 'bench', `http-${i}`);
}

// Lists.
async function listTimes(
  path: string,
  pages: boolean,
): Promise<{ ms: number[]; bytes: number; items: number }> {
  const ms: number[] = [];
  let bytes = 0;
  let items = 0;
  for (let run = 0; run < LIST_RUNS; run++) {
    const start = performance.now();
    bytes = 0;
    items = 0;
    let cont = '';
    for (let page = 0; page < 1_000; page++) {
      const r = await k.req('GET', `${path}${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`);
      bytes += r.text.length;
      items += r.body.items.length;
      cont = r.body.metadata.continue ?? '';
      if (!pages || !cont) break;
    }
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  return { ms, bytes, items };
}

for (const [label, path, pages] of [
  [`list ${OBJECTS} ConfigMaps, one response`, `${NS}?limit=0`, false],
  [`list ${OBJECTS} ConfigMaps, pages of 500`, `${NS}?limit=500`, true],
  [`list with labelSelector app=a3 (1 in 10)`, `${NS}?labelSelector=app%3Da3`, false],
] as const) {
  const r = await listTimes(path, pages);
  line(
    label,
    `median ${percentile(r.ms, 50).toFixed(0)} ms, ${(r.bytes / 2 ** 20).toFixed(2)} MiB, ${r.items} items`,
  );
}
{
  const r = await listTimes('/api/v1/configmaps?limit=0', false);
  const table = await (async () => {
    const start = performance.now();
    const t = await k.req('GET', `${NS}`, undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    return { ms: performance.now() - start, bytes: t.text.length };
  })();
  line(`list all namespaces (${r.items} items)`, `median ${percentile(r.ms, 50).toFixed(0)} ms`);
  line(
    `list ${OBJECTS} as a Table (kubectl get)`,
    `${table.ms.toFixed(0)} ms, ${(table.bytes / 2 ** 20).toFixed(2)} MiB`,
  );
}

// Watch fan-out: WATCHERS watches on the namespace, UPDATES writes, each carrying its send time.
{
  const rv = k.em.store.currentRv();
  const streams = await Promise.all(
    Array.from({ length: WATCHERS }, () => k.watch(`${NS}?watch=true&resourceVersion=${rv}`)),
  );
  const latencies: number[] = [];
  const start = performance.now();
  for (let i = 0; i < UPDATES; i++) {
    const name = `cm-${String(i % OBJECTS).padStart(5, '0')}`;
    k.em.patch('v1', 'configmaps', 'bench', name, 'merge', { data: { sent: String(performance.now()) } });
    if (i % 50 === 49) await new Promise((r) => setImmediate(r));
  }
  await eventually(() => streams.every((s) => s.events.length >= UPDATES), {
    timeoutMs: 120_000,
    intervalMs: 20,
  });
  const elapsed = (performance.now() - start) / 1000;
  for (const s of streams) {
    for (const e of s.events) {
      const sent = Number(e.object.data?.sent);
      if (Number.isFinite(sent) && e.receivedAt) latencies.push(e.receivedAt - sent);
    }
  }
  latencies.sort((a, b) => a - b);
  const total = WATCHERS * UPDATES;
  line(
    `watch fan-out: ${UPDATES} updates x ${WATCHERS} watchers`,
    `${(total / elapsed).toFixed(0)} events/s delivered`,
  );
  line(
    'write-to-receipt latency (includes queueing of the burst)',
    `p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${percentile(latencies, 100).toFixed(1)} ms`,
  );
  for (const s of streams) s.close();
}

line('emulator', JSON.stringify(k.em.stats()));
await k.close();
