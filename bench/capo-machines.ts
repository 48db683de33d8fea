/**
 * N Cluster API machines created at once through the capo controllers, end to end: the Kubernetes
 * emulator with the CRDs of deploy/capo/crds, the OpenStack emulator on its realistic profile
 * (Nova BUILD, Cinder and Octavia times and per-call latencies, scaled by TIME_SCALE), and the
 * OpenStackCluster, OpenStackMachine and OpenStackServer controllers in-process with Cluster API
 * core stood in for (actAsClusterAPICore), as in the tests.
 *
 * First one OpenStackCluster of examples/capo/cluster.yaml (managed subnet, API load balancer, no
 * bastion) is made ready. Then, for each CONCURRENCY (the machine and server controllers'
 * workers; CAPO's default is 10), a fresh controller process (its own token cache) and N
 * Machine + OpenStackMachine + bootstrap Secret triples created together — 3 control-plane
 * machines (m1.medium, API load-balancer members), the rest workers (m1.small, a root volume);
 * measured: Keystone token requests (CAPO #1647 asked one per reconcile; one per identity is the
 * aim), Nova, Neutron, Cinder and Octavia calls (the emulator's /_sim/stats) per machine, writes
 * and reads, the reconciles, the time until every OpenStackMachine is ready with a providerID
 * (wall, and unscaled = wall / TIME_SCALE, the time a real cloud of those figures would take),
 * p50/p90 of the per-machine time to ready, then the deletion of every Machine and what it cost,
 * what was left in the cloud, and the heap. The controllers' waits are CAPO's intervals scaled
 * like the cloud. Prints a table; asserts nothing.
 *
 *   node --expose-gc bench/capo-machines.ts     TIME_SCALE=0.2 N=100 CONCURRENCY=10 (or 1,10,50)
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isNotFound, kinds, type KubernetesObject } from '../src/kube/index.ts';
import type { Registry } from '../src/lib/metrics.ts';
import { eventually } from '../src/sim/openstack/testing/harness.ts';
import type { StatsSnapshot } from '../src/sim/openstack/core/stats.ts';
import {
  capoKinds,
  type Machine,
  type OpenStackCluster,
  type OpenStackMachine,
} from '../src/capo/api/index.ts';
import { startCapoEnv, type StartCapoOptions } from '../src/capo/testing/env.ts';

/**
 * Below ~0.1 a 2-core machine becomes the bottleneck (the emulators and controllers share it) and
 * the unscaled figures grow with it: at 0.05, 100 machines took ≈ 113 unscaled seconds, at 0.2 ≈ 38.
 */
const SCALE = Number(process.env.TIME_SCALE ?? 0.2);
const N = Number(process.env.N ?? 100);
const CONCURRENCY = (process.env.CONCURRENCY ?? '10').split(',').map(Number);
const CONTROL_PLANE = Math.min(3, N);
/** Bound on any one wait: N servers one at a time, each ~15 unscaled seconds of BUILD and volume. */
const WAIT_MS = Math.max(300_000, N * 60_000 * SCALE);
const POLL_MS = 100;
const CLUSTER = 'capo-demo';
const MACHINE_PORT = new RegExp(`^${CLUSTER}-(control-plane|md-0)-\\d+-`);

const env = await startCapoEnv({ profile: 'realistic', overrides: { timeScale: SCALE } });
const { api, admin, sim, namespace } = env;
await env.os.compute.keypairs.create({ name: 'capo-demo' });

/** CAPO's intervals (see each controller's options) scaled like the cloud. */
const s = (ms: number) => Math.max(1, Math.round(ms * SCALE));
function capoOptions(workers: number): StartCapoOptions {
  return {
    controllers: ['openstackcluster', 'openstackmachine', 'openstackserver'],
    machine: {
      workers,
      infrastructureWaitMs: s(15_000),
      buildWaitMs: s(10_000),
      otherStateWaitMs: s(15_000),
      deleteWaitMs: s(10_000),
      ingressWaitMs: s(5_000),
    },
    server: {
      workers,
      backoff: { initialMs: s(1_000), maxMs: s(10_000), idleMs: s(60_000) },
      waitMs: s(15_000),
      errorInitialMs: s(1_000),
      errorMaxMs: s(15_000),
    },
    cluster: {
      workers: 10,
      bastionWaitMs: s(15_000),
      machinesWaitMs: s(5_000),
      deleteWaitMs: s(15_000),
      errorRetryMs: s(15_000),
      loadBalancerBackoff: { initialMs: s(1_000), maxMs: s(10_000) },
    },
  };
}

/* The example's objects: the cluster, and one control-plane and one worker machine as templates. */

type Obj = KubernetesObject & { spec?: Record<string, unknown> };
const example = parseAllDocuments(
  await readFile(join(import.meta.dirname, '..', 'examples', 'capo', 'cluster.yaml'), 'utf8'),
)
  .map((d) => d.toJSON() as Obj)
  .map((o) => ({ ...o, metadata: { ...o.metadata, namespace } }));
const first = (kind: string, pred: (o: Obj) => boolean = () => true): Obj =>
  structuredClone(example.find((o) => o.kind === kind && pred(o))!);
const isControlPlane = (o: Obj) => o.metadata?.labels?.['cluster.x-k8s.io/control-plane'] !== undefined;

/* The emulator's accounting, over its admin API (admin calls are not counted). */

async function stats(): Promise<StatsSnapshot> {
  return (await (await fetch(`${sim.url}/_sim/stats`)).json()) as StatsSnapshot;
}
async function resetStats(): Promise<void> {
  await fetch(`${sim.url}/_sim/stats`, { method: 'DELETE' });
}
const WRITE = /^(POST|PUT|DELETE|PATCH) /;
interface Calls {
  writes: number;
  reads: number;
  writeOps: Record<string, number>;
}
function callsOf(snap: StatsSnapshot, service: string): Calls {
  const out: Calls = { writes: 0, reads: 0, writeOps: {} };
  for (const [op, o] of Object.entries(snap.services[service]?.operations ?? {})) {
    if (WRITE.test(op)) {
      out.writes += o.count;
      out.writeOps[op] = o.count;
    } else out.reads += o.count;
  }
  return out;
}
const tokens = (snap: StatsSnapshot) =>
  snap.services['keystone']?.operations['POST /v3/auth/tokens']?.count ?? 0;
/** `100× POST servers, 100× DELETE ports`: the last literal path word names the resource. */
const describeOps = (ops: Record<string, number>): string =>
  Object.entries(ops)
    .sort(([, a], [, b]) => b - a)
    .map(([op, c]) => {
      const [method, path = ''] = op.split(' ');
      const word = path
        .split('/')
        .filter((p) => p && !p.startsWith('{'))
        .at(-1);
      return `${c}× ${method} ${word}`;
    })
    .join(', ') || '0';

async function reconciles(registry: Registry): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find(
    (m) => m.name === 'controller_runtime_reconcile_total',
  );
  const out: Record<string, number> = {};
  for (const v of metric?.values ?? []) {
    const c = String(v.labels['controller']);
    out[c] = (out[c] ?? 0) + v.value;
  }
  return out;
}
const minus = (a: Record<string, number>, b: Record<string, number>) =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]));

function heapMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}
const wait = (what: string) => ({ timeoutMs: WAIT_MS, intervalMs: POLL_MS, what });

async function census(): Promise<Record<string, number>> {
  const servers = await admin.compute.servers.list({ all_tenants: true }).all();
  // The machines' ports by name (`<machine>-<index>`): bound or not, whatever Nova did with them.
  const ports = (await admin.network.ports.list().all()).filter((p) => MACHINE_PORT.test(p.name ?? ''));
  const volumes = await admin.blockStorage.volumes.list({ all_tenants: true }).all();
  const trunks = await admin.network.trunks.list().all();
  return { servers: servers.length, ports: ports.length, volumes: volumes.length, trunks: trunks.length };
}

/* The cluster: ready before any machine exists. */

const started = performance.now();
await resetStats();
let capo = await env.startCapo(capoOptions(10));
const osc = first('OpenStackCluster') as OpenStackCluster;
delete osc.spec.bastion;
let t0 = performance.now();
await api.create(capoKinds.Cluster, first('Cluster'));
await api.create(capoKinds.OpenStackCluster, osc);
await eventually(async () => {
  const c = await api.get(capoKinds.OpenStackCluster, { namespace, name: CLUSTER });
  return c.status?.ready === true && c.status.apiServerLoadBalancer?.id !== undefined;
}, wait('the OpenStackCluster ready'));
const clusterMs = performance.now() - t0;
const clusterStats = await stats();
const clusterReconciles = await reconciles(capo.registry);
await capo.stop();

/* The machines, once per concurrency. */

interface Row {
  workers: number;
  tokens: number;
  nova: Calls;
  neutron: Calls;
  cinder: Calls;
  octavia: Calls;
  reconciles: Record<string, number>;
  readyMs: number;
  p50Ms: number;
  p90Ms: number;
  deleteMs: number;
  del: { tokens: number; nova: Calls; neutron: Calls; cinder: Calls; octavia: Calls };
  left: Record<string, number>;
  heapMb: number;
}
const rows: Row[] = [];

const machineName = (i: number) =>
  i < CONTROL_PLANE ? `${CLUSTER}-control-plane-${i}` : `${CLUSTER}-md-0-${i - CONTROL_PLANE}`;
function machineObjects(i: number): Obj[] {
  const name = machineName(i);
  const cp = i < CONTROL_PLANE;
  const pick = (o: Obj) => isControlPlane(o) === cp;
  const secret = first('Secret', (o) => o.metadata?.labels?.['cluster.x-k8s.io/cluster-name'] === CLUSTER);
  secret.metadata = { ...secret.metadata, name };
  (secret as { stringData?: Record<string, string> }).stringData = {
    format: 'cloud-config',
    value: `#cloud-config\nruncmd:\n  - echo ${name}\n`,
  };
  const machine = first('Machine', pick);
  machine.metadata = { ...machine.metadata, name };
  machine.spec = {
    ...machine.spec,
    bootstrap: { dataSecretName: name },
    infrastructureRef: { ...(machine.spec!['infrastructureRef'] as object), name },
  };
  const osm = first('OpenStackMachine', pick);
  osm.metadata = { ...osm.metadata, name };
  return [secret, machine, osm];
}
async function create(o: Obj): Promise<void> {
  if (o.kind === 'Secret') await api.create(kinds.Secret, o);
  else if (o.kind === 'Machine') await api.create(capoKinds.Machine, o as Machine);
  else await api.create(capoKinds.OpenStackMachine, o as OpenStackMachine);
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

for (const workers of CONCURRENCY) {
  // A fresh process (fresh token cache): its Keystone tokens, all of them, count here.
  await resetStats();
  capo = await env.startCapo(capoOptions(workers));
  const before = await reconciles(capo.registry);
  t0 = performance.now();
  await Promise.all(
    Array.from({ length: N }, (_, i) => i).map(async (i) => {
      for (const o of machineObjects(i)) await create(o);
    }),
  );
  const readyAt = new Map<string, number>();
  await eventually(
    async () => {
      const now = performance.now() - t0;
      for (const m of (await api.listAll(capoKinds.OpenStackMachine, { namespace })).items) {
        const name = m.metadata!.name!;
        if (m.status?.ready === true && m.spec.providerID && !readyAt.has(name)) readyAt.set(name, now);
      }
      return readyAt.size >= N;
    },
    wait(`${N} OpenStackMachines ready (${workers} workers)`),
  );
  const readyMs = performance.now() - t0;
  const snap = await stats();
  const times = [...readyAt.values()].sort((a, b) => a - b);
  const row: Partial<Row> = {
    workers,
    tokens: tokens(snap),
    nova: callsOf(snap, 'nova'),
    neutron: callsOf(snap, 'neutron'),
    cinder: callsOf(snap, 'cinder'),
    octavia: callsOf(snap, 'octavia'),
    reconciles: minus(await reconciles(capo.registry), before),
    readyMs,
    p50Ms: percentile(times, 50),
    p90Ms: percentile(times, 90),
  };

  // Every Machine deleted at once: the garbage collector takes the OpenStackMachines, whose
  // finalizers wait for their OpenStackServers, whose finalizers wait for OpenStack.
  await resetStats();
  t0 = performance.now();
  await Promise.all(
    Array.from({ length: N }, (_, i) => api.delete(capoKinds.Machine, { namespace, name: machineName(i) })),
  );
  await eventually(
    async () =>
      (await api.listAll(capoKinds.OpenStackMachine, { namespace })).items.length === 0 &&
      (await api.listAll(capoKinds.OpenStackServer, { namespace })).items.length === 0,
    wait(`${N} machines deleted`),
  );
  row.deleteMs = performance.now() - t0;
  const del = await stats();
  row.del = {
    tokens: tokens(del),
    nova: callsOf(del, 'nova'),
    neutron: callsOf(del, 'neutron'),
    cinder: callsOf(del, 'cinder'),
    octavia: callsOf(del, 'octavia'),
  };
  // Nova's delete takes the root volumes along, after the server is gone: let them go too.
  row.left = await eventually(
    async () => {
      const c = await census();
      return Object.values(c).every((v) => v === 0) ? c : undefined;
    },
    { timeoutMs: Math.max(5_000, 60_000 * SCALE), intervalMs: POLL_MS, what: 'an empty cloud' },
  ).catch(() => census());
  for (const i of Array.from({ length: N }, (_, k) => k)) {
    await api.delete(kinds.Secret, { namespace, name: machineName(i) }).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }
  await capo.stop();
  row.heapMb = heapMb();
  rows.push(row as Row);
  console.error(
    `done: ${N} machines, ${workers} workers (${((performance.now() - started) / 1000).toFixed(0)} s so far)`,
  );
}

/* The table. */

const secs = (ms: number) => (ms / 1000).toFixed(1);
const unscaled = (ms: number) => (ms / 1000 / SCALE).toFixed(0);
const per = (n: number) => (n / N).toFixed(1);
const rw = (c: Calls) => `${per(c.writes)} / ${per(c.reads)}`;

console.log(
  `\n${N} Cluster API machines (${CONTROL_PLANE} control plane, ${N - CONTROL_PLANE} workers with a ` +
    `root volume) created at once through the capo controllers; realistic profile × ${SCALE}, ` +
    `controller waits × ${SCALE}; unscaled = wall / ${SCALE}`,
);
console.log(
  `The cluster first (managed subnet, router, security groups, API load balancer): ${secs(clusterMs)} s ` +
    `(≈ ${unscaled(clusterMs)} s unscaled), ${tokens(clusterStats)} Keystone token(s), ` +
    `Neutron ${callsOf(clusterStats, 'neutron').writes} writes / ${callsOf(clusterStats, 'neutron').reads} reads, ` +
    `Octavia ${callsOf(clusterStats, 'octavia').writes} / ${callsOf(clusterStats, 'octavia').reads}, ` +
    `reconciles ${JSON.stringify(clusterReconciles)}\n`,
);
const header = [
  'workers',
  'Keystone tokens',
  'Nova w / r per machine',
  'Neutron w / r per machine',
  'Cinder w / r per machine',
  'Octavia w / r (total)',
  'reconciles per machine (osm / oss)',
  'all ready (s)',
  '≈ unscaled (s)',
  'p50 / p90 ≈ unscaled (s)',
  'delete (s)',
  '≈ unscaled (s)',
  'delete: tokens, Nova / Neutron / Cinder w / r per machine',
  'left',
  'heap (MB)',
];
const table = rows.map((r) => [
  String(r.workers),
  String(r.tokens),
  rw(r.nova),
  rw(r.neutron),
  rw(r.cinder),
  `${r.octavia.writes} / ${r.octavia.reads}`,
  `${per(r.reconciles['openstackmachine'] ?? 0)} / ${per(r.reconciles['openstackserver'] ?? 0)}`,
  secs(r.readyMs),
  unscaled(r.readyMs),
  `${unscaled(r.p50Ms)} / ${unscaled(r.p90Ms)}`,
  secs(r.deleteMs),
  unscaled(r.deleteMs),
  `${r.del.tokens}, ${rw(r.del.nova)} · ${rw(r.del.neutron)} · ${rw(r.del.cinder)}`,
  Object.entries(r.left)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ') || 'nothing',
  r.heapMb.toFixed(0),
]);
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
console.log(line(header));
console.log(`|${widths.map((wd) => '-'.repeat(wd + 2)).join('|')}|`);
for (const row of table) console.log(line(row));
for (const r of rows) {
  console.log(`\n${r.workers} workers, create writes: Nova ${describeOps(r.nova.writeOps)}`);
  console.log(`  Neutron ${describeOps(r.neutron.writeOps)}; Cinder ${describeOps(r.cinder.writeOps)}`);
  console.log(`  Octavia ${describeOps(r.octavia.writeOps)}`);
  console.log(
    `  delete writes: Nova ${describeOps(r.del.nova.writeOps)}; Neutron ${describeOps(r.del.neutron.writeOps)}; ` +
      `Cinder ${describeOps(r.del.cinder.writeOps)}; Octavia ${describeOps(r.del.octavia.writeOps)}`,
  );
}
console.log(`\nwhole run: ${secs(performance.now() - started)} s wall`);

await env.close();
