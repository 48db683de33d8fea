/**
 * N Machine API Machines from one MachineSet through the mapo controllers, end to end, beside the
 * capo scenario's N Cluster API machines at the same N and TIME_SCALE (bench/capo-machines.ts, run
 * in the same process after this one). The Kubernetes emulator with deploy/mapo/crds, the OpenStack
 * emulator on its realistic profile (Nova BUILD, per-call latencies, scaled by TIME_SCALE) and what
 * the installer leaves (src/mapo/testing/env.ts); in-process, one Manager as `shiftstack mapo
 * --act-as-machine-api-operator` runs them: the machine controller, capo's OpenStackServer
 * controller, the machine-api-operator's MachineSet, nodelink and drain controllers, and the demo's
 * kubelet stand-in registering a Node for each ACTIVE server (its own queue, not counted).
 *
 * examples/mapo's worker MachineSet (trunk, server group by name, the VIPs as allowed address
 * pairs, no root volume: the installer's default) created with 0 replicas, then a fresh process
 * (its own token cache) and the MachineSet scaled 0 → N through /scale, as `kubectl scale` does.
 * Measured: Keystone token requests (one per identity is the aim), Nova, Neutron and Cinder calls
 * (the emulator's /_sim/stats) per Machine, writes and reads, the reconciles per controller, the
 * time until every Machine is Running (server ACTIVE, Node registered, nodeRef set; wall, and
 * unscaled = wall / TIME_SCALE), p50/p90 of the per-Machine time to Running, then the scale to 0
 * (drain, OpenStackServer delete, Node delete, finalizer) and what it cost, what was left in the
 * cloud (the server group stays: MAPO never deletes one), and the heap. The controllers' waits
 * are MAPO's and CAPO's intervals scaled like the cloud; the machine and server controllers run
 * WORKERS reconciles at once (MAPO's own machine controller ran 1; capo's scenario runs 10).
 * Prints mapo's table, capo's, and the two side by side; asserts nothing. At N = 100,
 * TIME_SCALE = 0.2 on a shared 2-core machine: 1 Keystone token; per Machine Nova 1 write / 6.9
 * reads, Neutron 4 / 5 (port, trunk, their tags), no Cinder; all Running ≈ 98 s unscaled (p50 78,
 * p90 96; capo's 100 ready ≈ 75), scale to 0 ≈ 36 s, nothing left but the server group
 * (docs/mapo.md#figures).
 *
 *   npm run bench:mapo     TIME_SCALE=0.2 N=100 WORKERS=10
 */
import { eventually } from '../src/sim/openstack/testing/harness.ts';
import { capoKinds } from '../src/capo/api/index.ts';
import { kinds } from '../src/kube/index.ts';
import { mapoKinds, type MachineSet } from '../src/mapo/api/index.ts';
import { MAPI_NAMESPACE, startMapoEnv } from '../src/mapo/testing/env.ts';
import {
  printCapoMachines,
  runCapoMachines,
  scaledBy,
  scaledServerOptions,
  waitBound,
} from './lib/capo-scenario.ts';
import {
  census,
  describeLeft,
  describeOps,
  formats,
  heapMb,
  minus,
  percentile,
  printComparison,
  printTable,
  reconciles,
  resetStats,
  serverCallsOf,
  stats,
  type MachinesFigures,
} from './lib/machines.ts';

/** As the capo scenario: below ~0.1 the 2-core machine, not the cloud, sets the pace. */
const SCALE = Number(process.env.TIME_SCALE ?? 0.2);
const N = Number(process.env.N ?? 100);
const WORKERS = Number(process.env.WORKERS ?? 10);
const WAIT_MS = waitBound(N, SCALE);
const POLL_MS = 100;
const wait = (what: string) => ({ timeoutMs: WAIT_MS, intervalMs: POLL_MS, what });
const s = scaledBy(SCALE);
/** The controllers of mapo (the kubelet stand-in's queues are the test's, not counted). */
const MAPO_CONTROLLERS = ['machine', 'openstackserver', 'machineset', 'nodelink', 'machine-drain'];

const started = performance.now();
const env = await startMapoEnv({ profile: 'realistic', overrides: { timeScale: SCALE } });
const { api, admin, sim } = env;
const set: MachineSet = structuredClone(env.machineSet);
const name = set.metadata!.name!;
const key = { namespace: MAPI_NAMESPACE, name };
const machinePort = new RegExp(`^${name}-[a-z0-9]{5}-`);
set.spec = { ...set.spec!, replicas: 0 };
await api.create(mapoKinds.MachineSet, set);

/* Scale up: a fresh process (fresh token cache), its Keystone tokens, all of them, count here. */

await resetStats(sim.url);
const mapo = await env.startMapo({
  // MAPO's 30 s look-again, scaled.
  machine: { workers: WORKERS, retryMs: s(30_000) },
  server: scaledServerOptions(SCALE, WORKERS),
  // The machine-api-operator's drain intervals (5 s back-off base, 5 s pod poll, 20 s requeue), scaled.
  mao: {
    drain: {
      backoff: { baseMs: s(5_000), maxMs: s(1_000_000) },
      podDeletionPollMs: s(5_000),
      requeueMs: s(20_000),
    },
  },
  kubelets: true,
});
const only = (r: Record<string, number>) => Object.fromEntries(MAPO_CONTROLLERS.map((c) => [c, r[c] ?? 0]));
const before = await reconciles(mapo.registry);
let t0 = performance.now();
await api.patch(mapoKinds.MachineSet, key, 'merge', { spec: { replicas: N } }, { subresource: 'scale' });
const runningAt = new Map<string, number>();
await eventually(
  async () => {
    const now = performance.now() - t0;
    for (const m of (await api.listAll(mapoKinds.Machine, { namespace: MAPI_NAMESPACE })).items) {
      const machine = m.metadata!.name!;
      if (m.status?.phase === 'Running' && !runningAt.has(machine)) runningAt.set(machine, now);
    }
    return runningAt.size >= N;
  },
  wait(`${N} Machines Running`),
);
const readyMs = performance.now() - t0;
const up = await stats(sim.url);
const upReconciles = only(minus(await reconciles(mapo.registry), before));
const times = [...runningAt.values()].sort((a, b) => a - b);
const groupName = (set.spec.template?.spec?.providerSpec?.value as { serverGroupName?: string })
  .serverGroupName;
const groups = (await env.os.compute.serverGroups.list()).filter((g) => g.name === groupName);

/* Scale to 0: drain (nothing to evict), OpenStackServer deleted and gone, Node deleted, finalizer off. */

await resetStats(sim.url);
const middle = await reconciles(mapo.registry);
t0 = performance.now();
await api.patch(mapoKinds.MachineSet, key, 'merge', { spec: { replicas: 0 } }, { subresource: 'scale' });
await eventually(
  async () =>
    (await api.listAll(mapoKinds.Machine, { namespace: MAPI_NAMESPACE })).items.length === 0 &&
    (await api.listAll(capoKinds.OpenStackServer, { namespace: MAPI_NAMESPACE })).items.length === 0,
  wait(`${N} Machines deleted`),
);
const deleteMs = performance.now() - t0;
const down = await stats(sim.url);
const downReconciles = only(minus(await reconciles(mapo.registry), middle));
const left = await eventually(
  async () => {
    const c = await census(admin, machinePort);
    return Object.values(c).every((v) => v === 0) ? c : undefined;
  },
  { timeoutMs: Math.max(5_000, 60_000 * SCALE), intervalMs: POLL_MS, what: 'an empty cloud' },
).catch(() => census(admin, machinePort));
const nodesLeft = (await api.listAll(kinds.Node)).items.length;
const groupsLeft = (await env.os.compute.serverGroups.list()).length;
await mapo.stop();
const mapoFigures: MachinesFigures = {
  label: `mapo (MachineSet 0 → ${N}, ${WORKERS} workers)`,
  create: serverCallsOf(up),
  reconciles: upReconciles,
  readyMs,
  p50Ms: percentile(times, 50),
  p90Ms: percentile(times, 90),
  deleteMs,
  del: serverCallsOf(down),
  left: left!,
  heapMb: heapMb(),
};
await env.close();
const mapoWallMs = performance.now() - started;
console.error(`done: mapo, ${N} Machines (${(mapoWallMs / 1000).toFixed(0)} s)`);

/* capo's scenario at the same N and TIME_SCALE, its own emulators and process. */

// Beside mapo, which runs on the bench's thread with the emulators: capo there too, like for like.
const capo = await runCapoMachines({ n: N, scale: SCALE, concurrency: [WORKERS], thread: false });

/* The tables. */

const { secs, unscaled, per, rw } = formats(N, SCALE);
console.log(
  `\n${N} Machine API Machines from one MachineSet (examples/mapo's worker: trunk, server group by ` +
    `name, no root volume) scaled 0 → ${N} → 0 through the mapo controllers and the machine-api-operator's; ` +
    `realistic profile × ${SCALE}, controller waits × ${SCALE}; unscaled = wall / ${SCALE}\n`,
);
const r = mapoFigures;
printTable(
  [
    'workers',
    'Keystone tokens',
    'Nova w / r per Machine',
    'Neutron w / r per Machine',
    'Cinder w / r per Machine',
    'reconciles per Machine (machine / oss / machineset / nodelink / drain)',
    'all Running (s)',
    '≈ unscaled (s)',
    'p50 / p90 ≈ unscaled (s)',
  ],
  [
    [
      String(WORKERS),
      String(r.create.tokens),
      rw(r.create.nova),
      rw(r.create.neutron),
      rw(r.create.cinder),
      MAPO_CONTROLLERS.map((c) => per(upReconciles[c] ?? 0)).join(' / '),
      secs(r.readyMs),
      unscaled(r.readyMs),
      `${unscaled(r.p50Ms)} / ${unscaled(r.p90Ms)}`,
    ],
  ],
);
console.log('');
printTable(
  [
    'scale to 0 (s)',
    '≈ unscaled (s)',
    'Keystone tokens',
    'Nova / Neutron / Cinder w / r per Machine',
    'reconciles per Machine (machine / oss / machineset / nodelink / drain)',
    'left in the cloud',
    'Nodes left',
    'server groups (kept, as MAPO)',
    'heap (MB)',
  ],
  [
    [
      secs(r.deleteMs),
      unscaled(r.deleteMs),
      String(r.del.tokens),
      `${rw(r.del.nova)} · ${rw(r.del.neutron)} · ${rw(r.del.cinder)}`,
      MAPO_CONTROLLERS.map((c) => per(downReconciles[c] ?? 0)).join(' / '),
      describeLeft(r.left),
      String(nodesLeft),
      `${groupsLeft} (${groups.length} named ${groupName} while Running)`,
      r.heapMb.toFixed(0),
    ],
  ],
);
console.log(
  `\nscale up writes: Nova ${describeOps(r.create.nova.writeOps)}; Neutron ${describeOps(r.create.neutron.writeOps)}; ` +
    `Cinder ${describeOps(r.create.cinder.writeOps)}`,
);
console.log(
  `scale to 0 writes: Nova ${describeOps(r.del.nova.writeOps)}; Neutron ${describeOps(r.del.neutron.writeOps)}; ` +
    `Cinder ${describeOps(r.del.cinder.writeOps)}`,
);

printCapoMachines(capo);

console.log(
  `\nSide by side (capo's workers have a root volume and 3 of its machines are control-plane ` +
    `load-balancer members; mapo's example has neither; capo's delete is of every Machine at once, ` +
    `mapo's a scale to 0 with drain):\n`,
);
printComparison(N, SCALE, [mapoFigures, ...capo.rows]);
console.log(
  `\nwhole run: ${secs(performance.now() - started)} s wall (mapo ${secs(mapoWallMs)}, capo ${secs(capo.wallMs)})`,
);
