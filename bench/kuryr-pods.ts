/**
 * Pods on Kuryr, end to end: the pod and kuryrport controllers with their port pools against the
 * Kubernetes emulator and the OpenStack emulator on its realistic profile (Neutron's bulk create
 * and binding times, scaled by TIME_SCALE), three worker Nodes with trunks.
 *
 *   - one pod, pool hit: the Node's pool holds a port (prepopulated) — time from the pod's creation
 *     to its KuryrPort active, and the Neutron calls made meanwhile;
 *   - one pod, pool miss: the pool is empty — a populate (bulk create, tags, add_subports) and the
 *     wait for ACTIVE are on the pod's path;
 *   - a burst of BURST pods (500) over the three Nodes: Neutron requests (writes, reads, per pod),
 *     bulk creates and the most in flight at once, time until every KuryrPort is active.
 * Prints a table; asserts nothing. `unscaled` = wall / TIME_SCALE: what a real cloud with these
 * latencies would see.
 *
 *   node --expose-gc bench/kuryr-pods.ts     TIME_SCALE=0.05 BURST=500
 */

import { kinds } from '../src/kube/index.ts';
import type { StatsSnapshot } from '../src/sim/openstack/core/stats.ts';
import { eventually } from '../src/sim/openstack/testing/harness.ts';
import { kuryrKinds } from '../src/kuryr/api/index.ts';
import { defaultVif } from '../src/kuryr/api/vif.ts';
import { startKuryrEnv } from '../src/kuryr/testing/env.ts';
import { vifStack } from '../src/kuryr/vif/stack.ts';

const SCALE = Number(process.env.TIME_SCALE ?? 0.05);
const BURST = Number(process.env.BURST ?? 500);
const NODES = 3;
const WAIT_MS = Math.max(600_000, 6_000_000 * SCALE);

const env = await startKuryrEnv({
  nodes: NODES,
  cloud: { profile: 'realistic', overrides: { timeScale: SCALE } },
});
const { api, sim } = env;
const kuryr = await env.startKuryr({
  controllers: ['pod', 'kuryrport'],
  // OpenShift's pool defaults (min 1, max 0, batch 3); the recycling pass at its 20 s, scaled.
  options: { vifPool: { portsPoolUpdateFrequency: Math.max(1, Math.round(20 * SCALE)) } },
});
const stack = vifStack(kuryr.manager, kuryr.ctx);

async function stats(): Promise<StatsSnapshot> {
  return (await (await fetch(`${sim.url}/_sim/stats`)).json()) as StatsSnapshot;
}
async function resetStats(): Promise<void> {
  await fetch(`${sim.url}/_sim/stats`, { method: 'DELETE' });
}
const WRITE = /^(POST|PUT|DELETE|PATCH) /;
function neutron(s: StatsSnapshot): { writes: number; reads: number; bulk: number } {
  const out = { writes: 0, reads: 0, bulk: 0 };
  for (const [op, o] of Object.entries(s.services.neutron?.operations ?? {})) {
    if (WRITE.test(op)) out.writes += o.count;
    else out.reads += o.count;
    if (op === 'POST /v2.0/ports') out.bulk += o.count;
  }
  return out;
}

let seq = 0;
/** Creates the pods as a Deployment's ReplicaSet would: 20 creates in flight at a time. */
async function createPods(ns: string, count: number, node?: string): Promise<string[]> {
  await env.ensureNamespace(ns);
  const names = Array.from({ length: count }, () => `pod-${++seq}`);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      await api.create(kinds.Pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: names[i]!, namespace: ns },
        spec: { nodeName: node ?? env.workers[i % NODES]!.name, containers: [{ name: 'c', image: 'x' }] },
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(20, count) }, worker));
  return names;
}
async function activeCount(ns: string): Promise<number> {
  const kps = (await api.listAll(kuryrKinds.KuryrPort, { namespace: ns })).items;
  return kps.filter((kp) => defaultVif(kp.status?.vifs)?.vif.active === true).length;
}
async function timeToActive(ns: string, count: number): Promise<number> {
  const started = performance.now();
  await eventually(async () => (await activeCount(ns)) === count, {
    timeoutMs: WAIT_MS,
    // Listing 500 KuryrPorts is work for the same emulator the controllers use: not too often.
    intervalMs: count > 10 ? 250 : 10,
    what: `${count} pods of ${ns} active`,
  });
  return performance.now() - started;
}

const rows: string[][] = [];
const ms = (x: number) => `${Math.round(x)} ms`;
const unscaled = (x: number) => `${(x / SCALE / 1000).toFixed(2)} s`;

// One pod, pool hit: the first Node's pool holds a port.
await eventually(() => stack.ready(), { timeoutMs: WAIT_MS, what: 'pools recovered' });
{
  const warm = await createPods('warm', 1, env.workers[0]!.name);
  await timeToActive('warm', warm.length);
  await eventually(() => stack.pools.stats().available > 0 && stack.pools.stats().populating === 0, {
    timeoutMs: WAIT_MS,
    what: 'the pool refilled',
  });
  await resetStats();
  const t0 = performance.now();
  await createPods('hit', 1, env.workers[0]!.name);
  await timeToActive('hit', 1);
  const wall = performance.now() - t0;
  const n = neutron(await stats());
  rows.push(['1 pod, pool hit', ms(wall), unscaled(wall), `${n.writes} writes, ${n.reads} reads`, '']);
}
// One pod, pool miss: a Node whose pool was never filled.
{
  await resetStats();
  const t0 = performance.now();
  await createPods('miss', 1, env.workers[2]!.name);
  await timeToActive('miss', 1);
  const wall = performance.now() - t0;
  const n = neutron(await stats());
  rows.push([
    '1 pod, pool miss',
    ms(wall),
    unscaled(wall),
    `${n.writes} writes, ${n.reads} reads`,
    `${n.bulk} bulk`,
  ]);
}
// The burst.
{
  await resetStats();
  stack.driver.bulkCreateStats.peak = stack.driver.bulkCreateStats.inFlight;
  const total0 = stack.driver.bulkCreateStats.total;
  const t0 = performance.now();
  await createPods('burst', BURST);
  await timeToActive('burst', BURST);
  const wall = performance.now() - t0;
  const n = neutron(await stats());
  const b = stack.driver.bulkCreateStats;
  rows.push([
    `${BURST} pods on ${NODES} nodes`,
    ms(wall),
    unscaled(wall),
    `${n.writes} writes, ${n.reads} reads (${((n.writes + n.reads) / BURST).toFixed(2)} per pod)`,
    `${b.total - total0} bulk, ≤ ${b.peak} in flight (bound ${kuryr.ctx.options.vifPool.maxBulkCreatesInFlight})`,
  ]);
}

const header = ['scenario', 'wall', `unscaled (÷${SCALE})`, 'Neutron requests', 'bulk creates'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ');
console.log(`kuryr pods on the realistic profile, TIME_SCALE=${SCALE}`);
console.log(line(header));
for (const r of rows) console.log(line(r));
await env.close();
