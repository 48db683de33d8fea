/**
 * One `shiftstack ccm` at scale: N_NODES Nodes (each a server in the OpenStack emulator, its Node
 * with the providerID and address kubelet and the node controller give it) and N_SERVICES Services
 * of type LoadBalancer (every other one with a second port), in-process like bench:ccm, on the
 * realistic profile scaled by TIME_SCALE (the controller's waits scaled alike, so unscaled figures
 * are what a real cloud would see). Prints:
 * - the time until every Service has an address (wall and unscaled), the Octavia and Neutron calls
 *   per Service, the Octavia GETs per pending load balancer per minute against the poll budget;
 * - the writes (OpenStack and Kubernetes) over a quiet period once all are done: must be 0; any
 *   Kubernetes write of the window is printed by verb, resource and name, and any reconcile by Service;
 * - a churn burst of 50 Nodes (25 added, 25 removed): member writes per pool (the floor is 1);
 * - heap per Service and per Node held by the ccm (its share: the heap it frees when stopped);
 * - the ccm's Kubernetes API requests and the peak event-loop lag (emulators included: one process).
 * Asserts nothing. Everything shares 2 cores here: wall times are noisy.
 *
 * The npm script gives V8 a 64 MB semi-space (young generation; Node's default is 16 MB): with ten
 * reconciles in flight, each holding a pool's thousands of parsed members, a small young generation
 * promotes them, and every full collection then marks the emulator's 7.5 million members (about
 * 1.4 GB) again. The default old-generation limit (4 GB here) is enough: the heap is ~2.1 GB when
 * all thousand Services have an address.
 *
 *   node --expose-gc --max-semi-space-size=64 bench/scale-ccm.ts   N_SERVICES=1000 N_NODES=5000 TIME_SCALE=0.05 WORKERS=10 KUBE_QPS=100
 *   N_SERVICES=100 N_NODES=500 node --expose-gc bench/scale-ccm.ts      a quick run
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import type { V1Node, V1Service } from '@kubernetes/client-node';
import { Informer, kinds } from '../src/kube/index.ts';
import { startCcmEnv } from '../src/ccm/testing/env.ts';
import { eventually } from '../src/sim/openstack/testing/harness.ts';
import { createLogger } from '../src/lib/log.ts';
import type { Registry } from '../src/lib/metrics.ts';
import { callsOf, describeOps, heapMb, printTable, reconciles, resetStats, stats } from './lib/machines.ts';

const SCALE = Number(process.env.TIME_SCALE ?? 0.05);
const N_SERVICES = Number(process.env.N_SERVICES ?? 1_000);
const N_NODES = Number(process.env.N_NODES ?? 5_000);
const WORKERS = Number(process.env.WORKERS ?? 10);
/** --kube-api-qps (upstream's 20 would hold a thousand Services' ~4 writes each for 200 s). */
const KUBE_QPS = Number(process.env.KUBE_QPS ?? 100);
/** The quiet period after all are done, unscaled. */
const QUIET_MS = Number(process.env.QUIET_S ?? 60) * 1_000 * SCALE;
const CHURN = Math.min(Number(process.env.CHURN ?? 50), N_NODES);
const WAIT_MS = Math.max(600_000, N_SERVICES * 2_000);
const POLL_MS = 200;
const IN_FLIGHT = 32;

const lag = monitorEventLoopDelay({ resolution: 10 });
const started = performance.now();
const say = (what: string) =>
  console.error(`${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s  ${what}`);

/** Runs `fn` over `items`, at most IN_FLIGHT at a time. */
async function pool<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, items.length) }, worker));
  return out;
}

const env = await startCcmEnv({ profile: 'realistic', overrides: { timeScale: SCALE } });
const { api, sim, os } = env;
const { network, subnet, publicNetwork: pub } = await env.routedSubnet('10.20.0.0/16');
// devstack's public-subnet is a /24: 252 floating IPs, fewer than the Services. A cloud operator
// with a thousand load balancers gives the external network more addresses; so does the bench.
{
  const more = await sim.request('neutron', 'POST', '/v2.0/subnets', {
    user: 'admin',
    body: { subnet: { network_id: pub.id, name: 'public-more', cidr: '172.30.0.0/16', ip_version: 4 } },
  });
  if (more.status !== 201) throw new Error(`public subnet: ${more.status} ${JSON.stringify(more.body)}`);
}

/* Nodes: servers on the cluster network, then their Node objects (initialized, as kubelet and the node controller leave them). */

interface Machine {
  name: string;
  id: string;
  address: string;
}
let batchNo = 0;
/** `count` servers on the cluster network, ACTIVE, with their addresses (multi-create, 100 a request). */
async function servers(count: number): Promise<Machine[]> {
  const prefix = `node-b${++batchNo}`;
  const batches = Array.from({ length: Math.ceil(count / 100) }, (_, b) => Math.min(100, count - b * 100));
  await pool([...batches.entries()], ([b, n]) =>
    os.compute.servers.create({
      name: `${prefix}-${b}`,
      flavorRef: env.boot.flavorId,
      imageRef: env.boot.imageId,
      networks: [{ uuid: network.id }],
      min_count: n,
      max_count: n,
    }),
  );
  let mine: Machine[] = [];
  await eventually(
    async () => {
      const all = await os.compute.servers.list({ name: `^${prefix}-` }).all();
      if (all.length < count || all.some((s) => s.status !== 'ACTIVE')) return false;
      mine = all.map((s) => ({
        name: s.name,
        id: s.id,
        address: Object.values(s.addresses ?? {}).flat()[0]?.addr ?? '',
      }));
      return mine.every((m) => m.address !== '');
    },
    { timeoutMs: WAIT_MS, intervalMs: 500, what: `${count} servers ACTIVE` },
  );
  return mine;
}
const nodeOf = (m: Machine): V1Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: m.name, labels: { 'kubernetes.io/hostname': m.name } },
  spec: { providerID: `openstack:///${m.id}` },
  status: {
    addresses: [
      { type: 'InternalIP', address: m.address },
      { type: 'Hostname', address: m.name },
    ],
    conditions: [{ type: 'Ready', status: 'True' }],
  },
});

say(`creating ${N_NODES} servers`);
const machines = await servers(N_NODES);
say(`creating ${N_NODES} Nodes`);
await pool(machines, (m) => api.create(kinds.Node, nodeOf(m)));

/*
 * What happens in the quiet window, by name: every Kubernetes write the API server serves (a
 * reactor that handles nothing sees each request), and every reconcile the ccm starts (its
 * 'reconciling' debug line). Recorded only while `watching`.
 */
let watching = false;
const quietWrites: string[] = [];
const quietReconciles: string[] = [];
const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
env.kube.emulator.reactors.prepend('*', '*', (a) => {
  if (watching && WRITE_VERBS.has(a.verb)) {
    const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    quietWrites.push(`${a.verb} ${resource} ${a.namespace ? `${a.namespace}/` : ''}${a.name}`);
  }
  return { handled: false };
});
const reconcileLines = new Writable({
  write(chunk: Buffer, _enc, done) {
    if (watching) {
      for (const line of chunk.toString().split('\n')) {
        if (!line.includes('"reconciling"')) continue;
        const l = JSON.parse(line) as { namespace?: string; name?: string };
        quietReconciles.push(`${l.namespace ?? ''}/${l.name ?? ''}`);
      }
    }
    done();
  },
});
/** `3× patch services/status default/svc-1, …`: what `list` holds, by count. */
const byName = (list: readonly string[]) =>
  [...list.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map<string, number>())]
    .sort(([, a], [, b]) => b - a)
    .map(([x, n]) => `${n}× ${x}`)
    .join(', ') || 'none';

/* The ccm, its caches synced. */

const heapBefore = heapMb();
const ccm = await env.startCcm(
  {
    controllers: ['service'],
    concurrentServiceSyncs: WORKERS,
    kubeApiQps: KUBE_QPS,
    kubeApiBurst: Math.round(KUBE_QPS * 1.5),
    cloudConfig: await env.cloudConf(
      `[LoadBalancer]\nsubnet-id = ${subnet.id}\nfloating-network-id = ${pub.id}\n`,
    ),
  },
  {},
  // The controller's own waits at the cloud's pace: the bench's unscaled figures are a real cloud's.
  {
    serviceBackoff: {
      initialMs: 1_000 * SCALE,
      maxMs: 10_000 * SCALE,
    },
    serviceRetry: { minMs: 5_000 * SCALE, maxMs: 300_000 * SCALE },
    log: createLogger({ level: 'debug', destination: reconcileLines }),
  },
);
await eventually(async () => (await ccm.ccm.manager.client.list(kinds.Node)).length === N_NODES, {
  timeoutMs: WAIT_MS,
  intervalMs: POLL_MS,
  what: `the ccm's cache holding ${N_NODES} nodes`,
});
const heapNodes = heapMb();

/** The ccm's Kubernetes API requests by method (its client's rest_client_requests_total). */
async function kubeRequests(registry: Registry): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'rest_client_requests_total');
  const out: Record<string, number> = {};
  for (const v of metric?.values ?? []) {
    const m = String(v.labels['method']);
    out[m] = (out[m] ?? 0) + v.value;
  }
  return out;
}
const kubeWrites = (r: Record<string, number>) =>
  ['POST', 'PUT', 'PATCH', 'DELETE'].reduce((sum, m) => sum + (r[m] ?? 0), 0);
const sub = (a: Record<string, number>, b: Record<string, number>) =>
  Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v - (b[k] ?? 0)]));
const describeKube = (r: Record<string, number>) =>
  Object.entries(r)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ') || '0';

/** The heap in use now, garbage included (heapMb collects first, which takes seconds at full size). */
const heapUsedMb = () => process.memoryUsage().heapUsed / 2 ** 20;

/* The Services. */

const ports = (i: number) => (i % 2 === 0 ? 2 : 1);
const POOLS = Array.from({ length: N_SERVICES }, (_, i) => ports(i)).reduce((a, b) => a + b, 0);
function service(i: number): Promise<V1Service> {
  const name = `svc-${i}`;
  return api.create(kinds.Service, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: {
      type: 'LoadBalancer',
      selector: { app: name },
      ports: [
        { name: 'http', protocol: 'TCP', port: 80 },
        ...(ports(i) === 2 ? [{ name: 'https', protocol: 'TCP' as const, port: 443 }] : []),
      ],
    },
  });
}
// The bench watches the Services as an informer does (one list, then a watch): a list of every
// Service each second is megabytes through the API server at a thousand, a share of the one
// process's CPU taken from the ccm it measures.
const informing = new AbortController();
const services = new Informer({ client: api, type: kinds.Service, namespace: 'default' });
void services.start(informing.signal);
await services.waitForSync();
const withAddress = () =>
  services.list().filter((s) => (s.status?.loadBalancer?.ingress ?? []).length > 0).length;

await resetStats(sim.url);
let kube0 = await kubeRequests(ccm.registry);
let rec0 = await reconciles(ccm.registry);
say(`creating ${N_SERVICES} Services (${POOLS} pools)`);
lag.enable();
const t0 = performance.now();
await pool(
  Array.from({ length: N_SERVICES }, (_, i) => i),
  service,
);
const firstReady: number[] = [];
// A long run shows how far it got (a run killed at its time limit says where it stood).
let progressAt = performance.now();
await eventually(
  () => {
    const n = withAddress();
    if (firstReady.length === 0 && n > 0) firstReady.push(performance.now() - t0);
    if (performance.now() - progressAt >= 60_000) {
      progressAt = performance.now();
      say(`${n} of ${N_SERVICES} Services have an address (heap ${heapUsedMb().toFixed(0)} MB)`);
    }
    return n === N_SERVICES;
  },
  { timeoutMs: WAIT_MS, intervalMs: 1_000, what: `${N_SERVICES} Services with an address` },
);
const allReadyMs = performance.now() - t0;
lag.disable();
const createLagMs = lag.max / 1e6;
let s = await stats(sim.url);
const create = {
  octavia: callsOf(s, 'octavia'),
  neutron: callsOf(s, 'neutron'),
  lbGets: s.services['octavia']?.operations['GET /v2/lbaas/loadbalancers/{loadbalancer_id}']?.count ?? 0,
  kube: sub(await kubeRequests(ccm.registry), kube0),
  reconciles: (await reconciles(ccm.registry))['service']! - (rec0['service'] ?? 0),
};
const memory = (() => {
  const m = process.memoryUsage();
  const mb = (x: number) => (x / 2 ** 20).toFixed(0);
  return `heap ${mb(m.heapUsed)} MB used of ${mb(m.heapTotal)}, rss ${mb(m.rss)} MB, external ${mb(m.external)} MB`;
})();
say(`all ${N_SERVICES} Services have an address (${memory})`);

/* Steady state: nothing to do, nothing written. */

// The Events of the last Services to become ready are still being written: they belong to the creation.
await ccm.ccm.manager.events.flush();
await resetStats(sim.url);
kube0 = await kubeRequests(ccm.registry);
rec0 = await reconciles(ccm.registry);
watching = true;
await new Promise((r) => setTimeout(r, QUIET_MS));
watching = false;
s = await stats(sim.url);
const quiet = {
  osWrites: callsOf(s, 'octavia').writes + callsOf(s, 'neutron').writes,
  osReads: callsOf(s, 'octavia').reads + callsOf(s, 'neutron').reads,
  kube: sub(await kubeRequests(ccm.registry), kube0),
  reconciles: (await reconciles(ccm.registry))['service']! - (rec0['service'] ?? 0),
};
say(`quiet period over: ${quiet.osWrites} OpenStack writes, ${kubeWrites(quiet.kube)} Kubernetes writes`);
say(`quiet period: Kubernetes writes: ${byName(quietWrites)}`);
say(`quiet period: reconciles: ${byName(quietReconciles)}`);

/* Churn: CHURN/2 Nodes join while CHURN/2 others leave. */

const joining = await servers(CHURN / 2);
const leaving = machines.slice(0, CHURN / 2);
await resetStats(sim.url);
kube0 = await kubeRequests(ccm.registry);
rec0 = await reconciles(ccm.registry);
say(`churn: ${joining.length} Nodes join, ${leaving.length} leave`);
lag.reset();
lag.enable();
const t1 = performance.now();
await Promise.all([
  pool(joining, (m) => api.create(kinds.Node, nodeOf(m))),
  pool(leaving, (m) => api.delete(kinds.Node, { name: m.name })),
]);
const memberPuts = async () =>
  (await stats(sim.url)).services['octavia']?.operations['PUT /v2/lbaas/pools/{pool_id}/members']?.count ?? 0;
await eventually(async () => (await memberPuts()) >= POOLS, {
  timeoutMs: WAIT_MS,
  intervalMs: POLL_MS,
  what: `a member update of each of the ${POOLS} pools`,
});
const churnMs = performance.now() - t1;
// Whatever comes after the first round is a second write: wait out a quiet period to count it.
await new Promise((r) => setTimeout(r, QUIET_MS));
lag.disable();
s = await stats(sim.url);
const churn = {
  puts: s.services['octavia']?.operations['PUT /v2/lbaas/pools/{pool_id}/members']?.count ?? 0,
  octavia: callsOf(s, 'octavia'),
  kube: sub(await kubeRequests(ccm.registry), kube0),
  reconciles: (await reconciles(ccm.registry))['service']! - (rec0['service'] ?? 0),
  lagMs: lag.max / 1e6,
};
// The members are right: one pool of the first Service has every Node's address, none of the leavers'.
{
  const [lb] = await os.loadBalancer.loadBalancers.list().all();
  const [p] = lb ? await os.loadBalancer.pools.list({ loadbalancer_id: lb.id }).all() : [];
  const members = p ? await os.loadBalancer.members.list(p.id).all() : [];
  const addresses = new Set(members.map((m) => m.address));
  const expected = N_NODES - leaving.length + joining.length;
  const right =
    members.length === expected &&
    joining.every((m) => addresses.has(m.address)) &&
    !leaving.some((m) => addresses.has(m.address));
  say(`churn done: pool ${p?.id ?? '?'} has ${members.length} members (${right ? 'right' : 'WRONG'})`);
}

/* The ccm's share of the heap: what stopping it frees. */

informing.abort();
const heapRunning = heapMb();
await ccm.stop();
const heapStopped = heapMb();
const ccmTotal = heapRunning - heapStopped;
const ccmNodes = heapNodes - heapBefore;

/* The figures. */

const per = (x: number, n = N_SERVICES) => (x / n).toFixed(2);
const secs = (ms: number) => (ms / 1000).toFixed(1);
const unscaled = (ms: number) => (ms / 1000 / SCALE).toFixed(0);
const budgetPerMin = create.lbGets / N_SERVICES / (allReadyMs / SCALE / 60_000);
console.log(
  `\nccm at scale: ${N_SERVICES} LoadBalancer Services (${POOLS} pools) over ${N_NODES} Nodes, ` +
    `${WORKERS} workers, --kube-api-qps ${KUBE_QPS}; realistic profile × ${SCALE}, controller waits × ${SCALE}; unscaled = wall / ${SCALE}\n`,
);
printTable(
  ['figure', 'value'],
  [
    [
      'first Service with an address: wall s / unscaled s',
      `${secs(firstReady[0] ?? NaN)} / ${unscaled(firstReady[0] ?? NaN)}`,
    ],
    ['all Services with an address: wall s / unscaled s', `${secs(allReadyMs)} / ${unscaled(allReadyMs)}`],
    ['reconciles per Service (create)', per(create.reconciles)],
    ['Octavia writes / reads per Service', `${per(create.octavia.writes)} / ${per(create.octavia.reads)}`],
    ['Neutron writes / reads per Service', `${per(create.neutron.writes)} / ${per(create.neutron.reads)}`],
    ['Octavia writes (create)', describeOps(create.octavia.writeOps)],
    ['load-balancer GETs per Service per unscaled minute', budgetPerMin.toFixed(2)],
    [
      'Kubernetes requests per Service (create)',
      `${per(kubeWrites(create.kube))} writes; ${describeKube(create.kube)}`,
    ],
    ['peak event-loop lag while creating (ms)', createLagMs.toFixed(0)],
    [
      `quiet ${unscaled(QUIET_MS)} unscaled s: OpenStack writes / reads, Kubernetes writes, reconciles`,
      `${quiet.osWrites} / ${quiet.osReads}, ${kubeWrites(quiet.kube)} (${describeKube(quiet.kube)}), ${quiet.reconciles}`,
    ],
    [
      `churn ${joining.length} + ${leaving.length} Nodes: member PUTs per pool (floor 1)`,
      `${(churn.puts / POOLS).toFixed(2)} (${churn.puts} for ${POOLS} pools)`,
    ],
    ['churn: first round of member updates, wall s / unscaled s', `${secs(churnMs)} / ${unscaled(churnMs)}`],
    [
      'churn: reconciles per Service, Octavia writes',
      `${per(churn.reconciles)}, ${describeOps(churn.octavia.writeOps)}`,
    ],
    ['churn: Octavia reads per Service', per(churn.octavia.reads)],
    ['churn: Kubernetes requests', describeKube(churn.kube)],
    ['peak event-loop lag in the churn (ms)', churn.lagMs.toFixed(0)],
    ['ccm heap per Node (KB)', ((ccmNodes * 1024) / N_NODES).toFixed(1)],
    ['ccm heap per Service (KB)', (((ccmTotal - ccmNodes) * 1024) / N_SERVICES).toFixed(1)],
    ['ccm heap total (MB)', ccmTotal.toFixed(0)],
  ],
);
console.log(`whole run: ${secs(performance.now() - started)} s wall`);
await env.close();
