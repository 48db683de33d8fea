/**
 * A Service of type LoadBalancer through `shiftstack ccm`'s service controller, end to end: the
 * Kubernetes emulator, the OpenStack emulator on its realistic profile (amphora-like provisioning
 * times, scaled by TIME_SCALE), N Nodes with addresses and one Service with a TCP and a UDP port.
 * For each N and each mode (fully populated; serial = provider-requires-serial-api-calls, the
 * in-tree way): the Octavia and Neutron calls (the emulator's /_sim/stats) and the time from the
 * Service's creation to status.loadBalancer.ingress; then one node added, one reconcile of an
 * unchanged Service, and the deletion. The controller's requeue backoff is scaled like the cloud,
 * so the unscaled figures are the rhythm a real cloud would see.
 * For each of those three phases, where the time went (bench/lib/slack.ts): when the emulator's Octavia
 * settled each write and when the ccm noticed, the slack beside the cloud's own work, the event-loop
 * lag and the load average, so that polling slack and a loaded machine can be told apart.
 * Prints two tables; asserts nothing. The serial mode is not the in-tree provider: that one blocked its
 * worker while polling, so Services queued behind each other; its stand-in (src/demo/intree, docs/sim-kcm.md)
 * is the baseline of `bench:migration`.
 *
 *   node --expose-gc bench/ccm-service.ts     TIME_SCALE=0.03 N=1,10,80,300 MODES=populated,serial
 */
import type { V1Node, V1Service } from '@kubernetes/client-node';
import { isNotFound, kinds } from '../src/kube/index.ts';
import { counterValue, startCcmEnv, type RunningCcm } from '../src/ccm/testing/env.ts';
import { NODE_BATCH_WINDOW_MS } from '../src/ccm/controllers/service.ts';
import { eventually } from '../src/sim/openstack/testing/harness.ts';
import type { StatsSnapshot } from '../src/sim/openstack/core/stats.ts';
import { describeTimeline, mark, timeline, type Timeline } from './lib/slack.ts';

const SCALE = Number(process.env.TIME_SCALE ?? 0.03);
const NS = (process.env.N ?? '1,10,80,300').split(',').map(Number);
const MODES = (process.env.MODES ?? 'populated,serial').split(',');
/** Bound on any one wait: serial N=300 is ~600 engine steps of 5 to 10 unscaled seconds each. */
const WAIT_MS = Math.max(300_000, 20_000_000 * SCALE);
const POLL_MS = 20;

const env = await startCcmEnv({ profile: 'realistic', overrides: { timeScale: SCALE } });
const { api, sim } = env;

const { subnet, publicNetwork: pub } = await env.routedSubnet('10.20.0.0/16');

/* The emulator's accounting, over its admin API (admin calls are not counted). */

async function stats(): Promise<StatsSnapshot> {
  const res = await fetch(`${sim.url}/_sim/stats`);
  return (await res.json()) as StatsSnapshot;
}
async function resetStats(): Promise<void> {
  await fetch(`${sim.url}/_sim/stats`, { method: 'DELETE' });
}
const WRITE = /^(POST|PUT|DELETE|PATCH) /;
interface Calls {
  writes: number;
  reads: number;
  /** Write operations and their counts, e.g. `PUT /v2/lbaas/pools/{pool_id}/members` → 2. */
  writeOps: Record<string, number>;
}
function callsOf(s: StatsSnapshot, service: 'octavia' | 'neutron'): Calls {
  const out: Calls = { writes: 0, reads: 0, writeOps: {} };
  for (const [op, o] of Object.entries(s.services[service]?.operations ?? {})) {
    if (WRITE.test(op)) {
      out.writes += o.count;
      out.writeOps[op] = o.count;
    } else out.reads += o.count;
  }
  return out;
}
/** `2× PUT members, 1× POST floatingips`: the last path word names the resource. */
const describeOps = (ops: Record<string, number>): string =>
  Object.entries(ops)
    .map(([op, c]) => {
      const [method, path = ''] = op.split(' ');
      const word = path
        .split('/')
        .filter((p) => !p.startsWith('{'))
        .at(-1);
      return `${c}× ${method} ${word}`;
    })
    .join(', ') || '0';

/* Nodes: initialized (the service controller never reads the taint), one InternalIP each. */

const nodes = new Set<number>();
const nodeName = (i: number) => `node-${i}`;
const nodeAddress = (i: number) => `10.20.${Math.floor(i / 250) + 1}.${(i % 250) + 2}`;
function createNode(i: number): Promise<V1Node> {
  nodes.add(i);
  return api.create(kinds.Node, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: nodeName(i) },
    status: { addresses: [{ type: 'InternalIP', address: nodeAddress(i) }] },
  });
}
/** Exactly nodes 0..count-1, in batches of 10, and the controller's cache showing them. */
async function setNodes(count: number, ccm: RunningCcm): Promise<void> {
  const extra = [...nodes].filter((i) => i >= count);
  const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !nodes.has(i));
  for (let k = 0; k < extra.length; k += 10) {
    await Promise.all(extra.slice(k, k + 10).map((i) => api.delete(kinds.Node, { name: nodeName(i) })));
  }
  for (const i of extra) nodes.delete(i);
  for (let k = 0; k < missing.length; k += 10) await Promise.all(missing.slice(k, k + 10).map(createNode));
  // The first reconcile must see every node, or the create would be followed by a member update.
  await eventually(async () => (await ccm.ccm.manager.client.list(kinds.Node)).length === count, {
    timeoutMs: 60_000,
    intervalMs: POLL_MS,
    what: `the controller's cache holding ${count} nodes`,
  });
}

function service(name: string): Promise<V1Service> {
  return api.create(kinds.Service, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: {
      type: 'LoadBalancer',
      selector: { app: name },
      ports: [
        { name: 'http', protocol: 'TCP', port: 80 },
        { name: 'dns', protocol: 'UDP', port: 53 },
      ],
    },
  });
}
const key = (name: string) => ({ namespace: 'default', name });

/**
 * Resolves once `done()` holds: checked after a list and at each change of `type` in the namespace
 * (a watch from the list's resourceVersion, so no change is missed). A watch rather than a poll: the
 * moment measured is the change's, and the bench's own calls stay off the ccm's path.
 */
async function until(
  type: typeof kinds.Service | typeof kinds.Event,
  done: () => Promise<boolean>,
  what: string,
): Promise<void> {
  const stop = new AbortController();
  const timer = setTimeout(
    () => stop.abort(new Error(`timed out after ${WAIT_MS} ms waiting for ${what}`)),
    WAIT_MS,
  );
  try {
    const list = await api.list(type, { namespace: 'default', signal: stop.signal });
    if (await done()) return;
    const changes = api.watch(type, {
      namespace: 'default',
      resourceVersion: list.resourceVersion,
      signal: stop.signal,
    });
    for await (const change of changes) {
      if (change.type !== 'BOOKMARK' && (await done())) return;
    }
    throw new Error(`the watch ended before ${what}`);
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
}
const wait = (what: string) => ({ timeoutMs: WAIT_MS, intervalMs: POLL_MS, what });

/** Occurrences: core/v1 Events (the recorder's default) count in deprecatedCount here, events.k8s.io ones in series. */
async function eventCount(name: string, reason: string): Promise<number> {
  const list = await api.list(kinds.EventsV1Event, { namespace: 'default' });
  return list.items
    .filter((e) => e.regarding?.name === name && e.reason === reason)
    .reduce((sum, e) => sum + (e.series?.count ?? e.deprecatedCount ?? 1), 0);
}
const ensures = (ccm: RunningCcm) =>
  counterValue(ccm.registry, 'cloudprovider_openstack_reconcile_total', { operation: 'loadbalancer_ensure' });

function heapMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

interface Row {
  mode: string;
  n: number;
  reconciles: number;
  octavia: Calls;
  neutron: Calls;
  readyMs: number;
  addNode: string;
  addNodeMs: number;
  steadyWrites: number;
  steadyReads: number;
  removeMs: number;
  removeWrites: number;
  removeReads: number;
  heapMb: number;
  phases: { phase: string; t: Timeline }[];
}

const rows: Row[] = [];
const started = performance.now();
for (const mode of MODES) {
  const serial = mode === 'serial';
  const ccm = await env.startCcm(
    {
      controllers: ['service'],
      cloudConfig: await env.cloudConf(
        `[LoadBalancer]\nsubnet-id = ${subnet.id}\nfloating-network-id = ${pub.id}\n` +
          (serial ? 'provider-requires-serial-api-calls = true\n' : ''),
      ),
    },
    {},
    {
      serviceBackoff: {
        initialMs: 1_000 * SCALE,
        maxMs: 10_000 * SCALE,
      },
      // The quiet window for Node events, as it would be unscaled (100 ms).
      serviceNodeBatchWindowMs: NODE_BATCH_WINDOW_MS * SCALE,
    },
  );
  for (const n of NS) {
    const name = `bench-${mode}-${n}`;
    await setNodes(n, ccm);

    await resetStats();
    let before = await ensures(ccm);
    const phases: Row['phases'] = [];
    let m = await mark(sim.url);
    let t0 = performance.now();
    await service(name);
    await until(
      kinds.Service,
      async () => {
        const s = await api.get(kinds.Service, key(name));
        return (s.status?.loadBalancer?.ingress ?? []).length > 0;
      },
      `${name} has an ingress address`,
    );
    const readyMs = performance.now() - t0;
    phases.push({ phase: 'to ingress', t: await timeline(sim.url, m) });
    let s = await stats();
    const row: Partial<Row> = {
      mode,
      n,
      reconciles: (await ensures(ccm)) - before,
      octavia: callsOf(s, 'octavia'),
      neutron: callsOf(s, 'neutron'),
      readyMs,
      phases,
    };

    // One node joins: the Ready that follows is reported with an UpdatedLoadBalancer Event.
    await resetStats();
    const updated = await eventCount(name, 'UpdatedLoadBalancer');
    m = await mark(sim.url);
    t0 = performance.now();
    await createNode(n);
    await until(
      kinds.Event,
      async () => (await eventCount(name, 'UpdatedLoadBalancer')) > updated,
      `${name} updated with node ${n}`,
    );
    row.addNodeMs = performance.now() - t0;
    phases.push({ phase: '+1 node', t: await timeline(sim.url, m) });
    row.addNode = describeOps(callsOf(await stats(), 'octavia').writeOps);

    // A reconcile of an unchanged Service (a label the controller ignores wakes it).
    await resetStats();
    before = await ensures(ccm);
    await api.patch(kinds.Service, key(name), 'merge', { metadata: { labels: { resync: 'once' } } });
    await eventually(async () => (await ensures(ccm)) > before, wait(`${name} reconciled again`));
    s = await stats();
    row.steadyWrites = callsOf(s, 'octavia').writes + callsOf(s, 'neutron').writes;
    row.steadyReads = callsOf(s, 'octavia').reads + callsOf(s, 'neutron').reads;

    await resetStats();
    m = await mark(sim.url);
    t0 = performance.now();
    await api.delete(kinds.Service, key(name));
    await until(
      kinds.Service,
      async () => {
        try {
          await api.get(kinds.Service, key(name));
          return false;
        } catch (err) {
          if (isNotFound(err)) return true;
          throw err;
        }
      },
      `${name} deleted`,
    );
    row.removeMs = performance.now() - t0;
    phases.push({ phase: 'delete', t: await timeline(sim.url, m) });
    s = await stats();
    row.removeWrites = callsOf(s, 'octavia').writes + callsOf(s, 'neutron').writes;
    row.removeReads = callsOf(s, 'octavia').reads + callsOf(s, 'neutron').reads;
    row.heapMb = heapMb();
    rows.push(row as Row);
    console.error(`done: ${mode} N=${n} (${((performance.now() - started) / 1000).toFixed(0)} s so far)`);
  }
  await ccm.stop();
}

const secs = (ms: number) => (ms / 1000).toFixed(2);
const unscaled = (ms: number) => (ms / 1000 / SCALE).toFixed(1);
console.log(
  `\nService of type LoadBalancer through the CCM's service controller: TCP + UDP ports, external with a ` +
    `floating IP; realistic profile × ${SCALE}, controller backoff × ${SCALE}; unscaled = wall / ${SCALE}\n`,
);
const header = [
  'mode',
  'N',
  'reconciles',
  'Octavia writes',
  'Octavia reads',
  'Neutron writes',
  'Neutron reads',
  'to ingress (s)',
  '≈ unscaled (s)',
  '+1 node: Octavia writes',
  '+1 node ≈ unscaled (s)',
  'resync writes / reads',
  'delete (s)',
  '≈ unscaled (s)',
  'delete writes / reads',
  'heap (MB)',
];
const table = rows.map((r) => [
  r.mode,
  String(r.n),
  String(r.reconciles),
  String(r.octavia.writes),
  String(r.octavia.reads),
  String(r.neutron.writes),
  String(r.neutron.reads),
  secs(r.readyMs),
  unscaled(r.readyMs),
  r.addNode,
  unscaled(r.addNodeMs),
  `${r.steadyWrites} / ${r.steadyReads}`,
  secs(r.removeMs),
  unscaled(r.removeMs),
  `${r.removeWrites} / ${r.removeReads}`,
  r.heapMb.toFixed(0),
]);
function printTable(head: string[], body: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(head));
  console.log(`|${widths.map((wd) => '-'.repeat(wd + 2)).join('|')}|`);
  for (const row of body) console.log(line(row));
}
printTable(header, table);
console.log(
  `\nCreate writes per mode and N (Octavia): ` +
    rows.map((r) => `${r.mode} ${r.n}: ${describeOps(r.octavia.writeOps)}`).join('; '),
);

console.log(
  `\nWhere the time went, unscaled s (wall / ${SCALE}): the cloud's own work (each Octavia write until ` +
    `the emulator settled it) and the slack beside it; event-loop lag in wall ms; load average (1 min) ` +
    `at the phase's start → end`,
);
const slackHeader = [
  'mode',
  'N',
  'phase',
  'total',
  'cloud',
  'slack',
  'total ÷ cloud',
  'lag p99 / max (ms)',
  'load',
];
const slackTable = rows.flatMap((r) =>
  r.phases.map(({ phase, t }) => [
    r.mode,
    String(r.n),
    phase,
    unscaled(t.totalMs),
    unscaled(t.cloudMs),
    unscaled(t.slackMs),
    t.cloudMs > 0 ? `${(t.totalMs / t.cloudMs).toFixed(2)}×` : '-',
    `${t.lagP99Ms.toFixed(0)} / ${t.lagMaxMs.toFixed(0)}`,
    `${t.load[0].toFixed(1)} → ${t.load[1].toFixed(1)}`,
  ]),
);
printTable(slackHeader, slackTable);
for (const r of rows) {
  for (const { phase, t } of r.phases)
    console.log(`${r.mode} N=${r.n} ${phase}: ${describeTimeline(t, (ms) => ms / SCALE)}`);
}
console.log(`whole run: ${secs(performance.now() - started)} s wall`);

await env.close();
