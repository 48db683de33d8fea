/**
 * capo at scale: N Cluster API machines (1,000 by default; Machine + OpenStackMachine + bootstrap
 * Secret each) in one capo process (Cluster API core's Machine status left to its own process, as
 * in bench:capo; CLUSTER_API_CORE=1 stands in for it; KUBE_QPS and WARM as there), on the OpenStack
 * emulator's realistic profile — the scenario of bench/capo-machines.ts
 * (bench/lib/capo-scenario.ts) with the figures that matter at that size: time to all ready (wall
 * and unscaled, p50/p90 against one machine's floor), calls per machine by service, Keystone tokens
 * (one per identity), Nova server reads and the poll budget they come to, Kubernetes API requests,
 * heap per machine, the event loop's delay, then the deletion and what it left (must be nothing).
 * Prints; asserts nothing.
 *
 *   npm run bench:scale-capo                          N=1000 TIME_SCALE=0.5 WORKERS=10
 *   N=200 npm run bench:scale-capo                    a quick run
 *   BUILD_POLL_MS=0 npm run bench:scale-capo          without the shared build poll (each server by its age)
 *
 * The objects are sent 20 machines at a time (SEND_AT_ONCE), as a client applying a thousand
 * manifests would; the controllers see them as fast as the API server stores them.
 */
import { machineFloorMs, printCapoMachines, runCapoMachines } from './lib/capo-scenario.ts';
import { formats, printTable } from './lib/machines.ts';

/** One machine's floor, unscaled seconds: the cloud's own, as bench:capo prints it. */
const FLOOR_S = machineFloorMs() / 1000;

const N = Number(process.env.N ?? 1_000);
const SCALE = Number(process.env.TIME_SCALE ?? 0.5);
const WORKERS = Number(process.env.WORKERS ?? 10);
const SEND_AT_ONCE = Number(process.env.SEND_AT_ONCE ?? 20);
const BUILD_POLL_MS = process.env.BUILD_POLL_MS === undefined ? undefined : Number(process.env.BUILD_POLL_MS);

const run = await runCapoMachines({
  n: N,
  scale: SCALE,
  concurrency: [WORKERS],
  createConcurrency: SEND_AT_ONCE,
  progress: true,
  clusterAPICore: process.env.CLUSTER_API_CORE === '1',
  kubeApiQps: Number(process.env.KUBE_QPS ?? 0),
  warmClient: process.env.WARM !== '0',
  ...(BUILD_POLL_MS !== undefined ? { buildPollMs: BUILD_POLL_MS } : {}),
});
printCapoMachines(run);

const f = formats(N, SCALE);
const row = run.rows[0]!;
const minutes = row.readyMs / SCALE / 60_000;
const poll = BUILD_POLL_MS ?? 1_000;
console.log(
  `\nAt scale (${N} machines, ${WORKERS} workers, objects sent ${SEND_AT_ONCE} machines at a time, ` +
    `build poll ${poll === 0 ? 'off' : `${poll} ms`}; unscaled = wall / ${SCALE}; floor ${FLOOR_S.toFixed(2)} s):`,
);
printTable(
  ['figure', 'value'],
  [
    ['all ready, wall / ≈ unscaled (s)', `${f.secs(row.readyMs)} / ${f.unscaled(row.readyMs)}`],
    [
      'p50 / p90 ≈ unscaled (s), × floor',
      `${f.unscaled(row.p50Ms)} / ${f.unscaled(row.p90Ms)}, ` +
        `${(row.p50Ms / 1000 / SCALE / FLOOR_S).toFixed(2)}× / ${(row.p90Ms / 1000 / SCALE / FLOOR_S).toFixed(2)}×`,
    ],
    ['Keystone tokens (one identity)', String(row.create.tokens)],
    [
      'calls per machine: Nova / Neutron / Cinder (w + r)',
      [row.create.nova, row.create.neutron, row.create.cinder]
        .map((c) => f.per(c.writes + c.reads))
        .join(' / '),
    ],
    [
      'Nova server reads: by id / lists (total)',
      `${row.scale.serverReads.byId} / ${row.scale.serverReads.lists}`,
    ],
    [
      'poll budget used: server reads per machine per minute (unscaled)',
      ((row.scale.serverReads.byId + row.scale.serverReads.lists) / N / minutes).toFixed(2),
    ],
    [
      'Kubernetes API requests per machine: create / delete',
      `${f.per(row.scale.kubeRequests.create)} / ${f.per(row.scale.kubeRequests.delete)}`,
    ],
    ['heap per machine (KiB): capo', row.scale.heapPerMachineKb.toFixed(1)],
    ...(row.scale.emulatorHeapPerMachineKb !== undefined
      ? [
          [
            'heap per machine (KiB): the emulators and the bench',
            row.scale.emulatorHeapPerMachineKb.toFixed(1),
          ],
        ]
      : []),
    [
      `event-loop delay while creating: p50 / p99 / max (ms)${row.capoLagMs ? ', the emulators' : ''}`,
      `${row.scale.lagMs.p50.toFixed(0)} / ${row.scale.lagMs.p99.toFixed(0)} / ${row.scale.lagMs.max.toFixed(0)}`,
    ],
    ...(row.capoLagMs
      ? [
          [
            "event-loop delay while creating: p50 / p99 / max (ms), capo's thread",
            `${row.capoLagMs.p50.toFixed(0)} / ${row.capoLagMs.p99.toFixed(0)} / ${row.capoLagMs.max.toFixed(0)}`,
          ],
        ]
      : []),
    ['delete, wall / ≈ unscaled (s)', `${f.secs(row.deleteMs)} / ${f.unscaled(row.deleteMs)}`],
    [
      'left in the cloud',
      Object.values(row.left).every((v) => v === 0) ? 'nothing' : JSON.stringify(row.left),
    ],
  ],
);
console.log(`\nwhole run: ${(run.wallMs / 1000).toFixed(1)} s wall`);
