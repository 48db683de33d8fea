/**
 * The capo machines scenario (bench/capo-machines.ts describes it), as a function so that another
 * benchmark can run it beside its own at the same N and TIME_SCALE (bench/mapo-machines.ts), and
 * CAPO's controller intervals scaled like the cloud, which any bench running capo's controllers
 * shares.
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  Informer,
  isNotFound,
  kinds,
  type KubernetesObject,
  type ResourceType,
} from '../../src/kube/index.ts';
import { eventually } from '../../src/sim/openstack/testing/harness.ts';
import type { StatsSnapshot } from '../../src/sim/openstack/core/stats.ts';
import { PROFILES } from '../../src/sim/openstack/core/timing.ts';
import {
  capoKinds,
  type Machine,
  type OpenStackCluster,
  type OpenStackMachine,
} from '../../src/capo/api/index.ts';
import type { OpenStackServerControllerOptions } from '../../src/capo/controllers/openstackserver.ts';
import { startCapoEnv, type StartCapoOptions } from '../../src/capo/testing/env.ts';
import {
  callsOf,
  census,
  describeLeft,
  describeOps,
  formats,
  heapMb,
  minus,
  percentile,
  printTable,
  reconciles,
  resetStats,
  serverCallsOf,
  stats,
  tokens,
  type Calls,
  type MachinesFigures,
} from './machines.ts';
import { gapsOf, splitOf, TimelineRecorder, type GapFigures } from './capo-timeline.ts';
import { startCapoThread, type CapoHandle } from './capo-thread.ts';

const POLL_MS = 100;
const CLUSTER = 'capo-demo';
const MACHINE_PORT = new RegExp(`^${CLUSTER}-(control-plane|md-0)-\\d+-`);

/**
 * One worker machine's floor on the realistic profile, unscaled: what the cloud itself takes when
 * nothing waits for anything else. The port and the root volume are asked side by side; the server
 * only once the volume is available; then Nova builds it.
 */
export function machineFloorMs(): number {
  const { transitions } = PROFILES.realistic;
  const port = answerMs('neutron POST /v2.0/ports');
  const volume = answerMs('cinder POST /v3/{project_id}/volumes') + transitions['cinder.volume.create'];
  return Math.max(port, volume) + answerMs('nova POST /v2.1/servers') + transitions['nova.server.build'];
}

/**
 * The floors of `n` machines created at once when each of `workers` workers waits for Nova's
 * answer to the create it sent, as CAPO's do (a worker is a goroutine blocked on the call): no
 * create goes before its volume is available, so the k-th server is answered no sooner than
 * ⌊k / workers⌋ answers after the first. A lower bound: the ports' and volumes' answers, which
 * hold workers too, are left out.
 */
function machineFloorsAtMs(n: number, workers: number): number[] {
  const one = machineFloorMs();
  const create = answerMs('nova POST /v2.1/servers');
  return Array.from({ length: n }, (_, k) => one + Math.floor(k / workers) * create);
}

function answerMs(op: string): number {
  const { latency } = PROFILES.realistic;
  return latency[op] ?? latency['*'] ?? 0;
}

/** `ms` of CAPO's scaled like the cloud (at least 1 ms). */
export const scaledBy = (scale: number) => (ms: number) => Math.max(1, Math.round(ms * scale));

/** The example's 10.6.0.0/24, grown to hold `n` machines' ports besides the router, DHCP and VIP. */
export function subnetFor(n: number): string {
  const prefix = Math.min(24, 32 - Math.ceil(Math.log2(n + 16)));
  return `10.6.0.0/${prefix}`;
}

/** Bound on any one wait: N servers one at a time, each ~15 unscaled seconds of BUILD and volume. */
export const waitBound = (n: number, scale: number): number => Math.max(300_000, n * 60_000 * scale);

/** The OpenStackServer controller with CAPO's intervals scaled like the cloud. */
export function scaledServerOptions(scale: number, workers: number): OpenStackServerControllerOptions {
  const s = scaledBy(scale);
  return {
    workers,
    backoff: { initialMs: s(1_000), maxMs: s(10_000), idleMs: s(60_000), volumeCreateMs: s(3_000) },
    waitMs: s(15_000),
    errorInitialMs: s(1_000),
    errorMaxMs: s(15_000),
  };
}

/** The bench's `--kube-api-burst` for a `--kube-api-qps`: 1.5×, as CAPO's defaults (20, 30). */
const burstOf = (qps: number) => Math.round(qps * 1.5);

/** CAPO's intervals (see each controller's options) scaled like the cloud. */
function capoOptions(
  scale: number,
  workers: number,
  {
    buildPollMs,
    core = true,
    kubeApiQps = 0,
  }: { buildPollMs?: number; core?: boolean; kubeApiQps?: number } = {},
): StartCapoOptions {
  const s = scaledBy(scale);
  const server = scaledServerOptions(scale, workers);
  return {
    controllers: ['openstackcluster', 'openstackmachine', 'openstackserver'],
    kubeApiQps,
    kubeApiBurst: burstOf(kubeApiQps),
    machine: {
      workers,
      actAsClusterAPICore: core,
      infrastructureWaitMs: s(15_000),
      buildWaitMs: s(10_000),
      otherStateWaitMs: s(15_000),
      deleteWaitMs: s(10_000),
      ingressWaitMs: s(5_000),
    },
    // The shared build poll (1 s by default) scaled like the rest; 0 turns it off.
    server: { ...server, buildPollMs: buildPollMs === 0 ? 0 : s(buildPollMs ?? 1_000) },
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

export interface CapoMachinesOptions {
  n: number;
  scale: number;
  /** The machine and server controllers' workers, one run each. */
  concurrency: number[];
  /**
   * Machines whose objects are sent at once (each one's Secret, Machine and OpenStackMachine in
   * order); all of them by default. At 1,000, as kubectl or a GitOps tool would, a bounded number:
   * a thousand connections opened together time out on a 2-core machine before any controller runs.
   */
  createConcurrency?: number;
  /** The OpenStackServer controller's shared build poll (unscaled ms; 0 turns it off); 1 s by default. */
  buildPollMs?: number;
  /** A line on stderr every few seconds while waiting for the machines. */
  progress?: boolean;
  /**
   * capo on a thread of its own (bench/lib/capo-thread.ts), the emulators on the bench's, as a
   * deployment has them on other hosts: true by default; false runs all three on one event loop.
   */
  thread?: boolean;
  /**
   * While the machines are made, the machine controller also does Cluster API core's part
   * (actAsClusterAPICore: the Machines' providerID, addresses, phase and conditions). Off by
   * default: in a deployment that is another process's work (capi-controller-manager), and the
   * bench measures the provider; the cluster's own set-up keeps it (the Cluster's
   * infrastructureReady is what lets machines start).
   */
  clusterAPICore?: boolean;
  /** capo's `--kube-api-qps` (burst 1.5×); 0, the default, lifts the client's limit. */
  kubeApiQps?: number;
  /** The bench's client opens its connections before the clock starts (true by default). */
  warmClient?: boolean;
}

/** What the scale benchmark adds to a row: the process's own costs while N machines come up. */
export interface CapoScaleFigures {
  /** Kubernetes API requests the controllers sent (rest_client_requests_total) while creating and deleting. */
  kubeRequests: { create: number; delete: number };
  /**
   * capo's heap grown per machine between before the objects and all ready (after a GC each): its
   * thread's own, or the whole process's (emulators too) when capo shares the bench's thread.
   */
  heapPerMachineKb: number;
  /** With capo on its own thread: the bench's thread (both emulators, the bench's watches) the same way. */
  emulatorHeapPerMachineKb?: number;
  /** The event loop's delay while creating (p50, p99, max; ms). */
  lagMs: { p50: number; p99: number; max: number };
  /** Nova reads of servers while creating: by id, and lists (the build poll's and the adoptions'). */
  serverReads: { byId: number; lists: number };
}

export interface CapoRow extends MachinesFigures {
  workers: number;
  /** Where each machine's time went (bench/lib/capo-timeline.ts), unscaled medians. */
  gaps: GapFigures[];
  /** Per machine, the cloud's own time (volume + build) and everything else, unscaled medians. */
  split: { cloudMs: number; restMs: number; totalMs: number };
  /**
   * Per controller, seconds of worker time (reconciles' total duration) and of waiting in the queue
   * (ready but no worker free): at W workers, busy / W is the least time the work could take.
   */
  busySec: Record<string, number>;
  queuedSec: Record<string, number>;
  /** The 1-minute load average when the machines were ready. */
  load: number;
  /** CPU time of the whole process (emulators and controllers) per machine while creating, ms. */
  cpuPerMachineMs: number;
  /** Of it, capo's own (its thread's; the whole process when capo shares the bench's thread), ms. */
  capoCpuPerMachineMs: number;
  /** capo's event-loop delay while creating, on its own thread (p50, p99, max; ms). */
  capoLagMs?: { p50: number; p99: number; max: number };
  octavia: Calls;
  delOctavia: Calls;
  scale: CapoScaleFigures;
}

export interface CapoMachinesRun {
  opts: CapoMachinesOptions;
  controlPlane: number;
  clusterMs: number;
  clusterStats: StatsSnapshot;
  clusterReconciles: Record<string, number>;
  rows: CapoRow[];
  wallMs: number;
}

type Obj = KubernetesObject & { spec?: Record<string, unknown> };

export async function runCapoMachines(opts: CapoMachinesOptions): Promise<CapoMachinesRun> {
  const { n: N, scale: SCALE } = opts;
  const CONTROL_PLANE = Math.min(3, N);
  const WAIT_MS = waitBound(N, SCALE);
  const wait = (what: string) => ({ timeoutMs: WAIT_MS, intervalMs: POLL_MS, what });

  const env = await startCapoEnv({ profile: 'realistic', overrides: { timeScale: SCALE } });
  const launch = async (o: StartCapoOptions): Promise<CapoHandle> => {
    if (opts.thread !== false) return startCapoThread(env.kube.kubeconfigPath, o);
    const capo = await env.startCapo(o);
    return {
      registry: capo.registry,
      cpuUsage: () => Promise.resolve(process.cpuUsage()),
      heapMb: () => Promise.resolve(heapMb()),
      stop: () => capo.stop(),
    };
  };
  let stopWatching = () => {};
  try {
    const { api, admin, sim, namespace } = env;
    await env.os.compute.keypairs.create({ name: 'capo-demo' });

    /* The example's objects: the cluster, and one control-plane and one worker machine as templates. */

    const example = parseAllDocuments(
      await readFile(join(import.meta.dirname, '..', '..', 'examples', 'capo', 'cluster.yaml'), 'utf8'),
    )
      .map((d) => d.toJSON() as Obj)
      .map((o) => ({ ...o, metadata: { ...o.metadata, namespace } }));
    const first = (kind: string, pred: (o: Obj) => boolean = () => true): Obj =>
      structuredClone(example.find((o) => o.kind === kind && pred(o))!);
    const isControlPlane = (o: Obj) => o.metadata?.labels?.['cluster.x-k8s.io/control-plane'] !== undefined;

    /* The cluster: ready before any machine exists. */

    const started = performance.now();
    await resetStats(sim.url);
    let capo = await launch(capoOptions(SCALE, 10));
    const osc = first('OpenStackCluster') as OpenStackCluster;
    delete osc.spec.bastion;
    // The example's /24 holds 250-odd ports: beyond that every further port fails with Neutron's
    // IpAddressGenerationFailure. A cluster of N machines gets a subnet with room for them all.
    osc.spec.managedSubnets = osc.spec.managedSubnets?.map((s) => ({ ...s, cidr: subnetFor(N) }));
    let t0 = performance.now();
    await api.create(capoKinds.Cluster, first('Cluster'));
    await api.create(capoKinds.OpenStackCluster, osc);
    await eventually(async () => {
      const c = await api.get(capoKinds.OpenStackCluster, { namespace, name: CLUSTER });
      return c.status?.ready === true && c.status.apiServerLoadBalancer?.id !== undefined;
    }, wait('the OpenStackCluster ready'));
    const clusterMs = performance.now() - t0;
    const clusterStats = await stats(sim.url);
    const clusterReconciles = await reconciles(capo.registry);
    await capo.stop();

    /* The machines, once per concurrency. */

    const rows: CapoRow[] = [];
    const machineName = (i: number) =>
      i < CONTROL_PLANE ? `${CLUSTER}-control-plane-${i}` : `${CLUSTER}-md-0-${i - CONTROL_PLANE}`;
    function machineObjects(i: number): Obj[] {
      const name = machineName(i);
      const cp = i < CONTROL_PLANE;
      const pick = (o: Obj) => isControlPlane(o) === cp;
      const secret = first(
        'Secret',
        (o) => o.metadata?.labels?.['cluster.x-k8s.io/cluster-name'] === CLUSTER,
      );
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
    // Cluster API's Machine controller owns the OpenStackMachine before any provider sees it (in
    // its own process); the stand-in in capo adopts only what nobody owns. The bench creates each
    // OpenStackMachine owned by its Machine, so capo's CPU and writes here are the provider's own.
    async function createMachine(i: number): Promise<void> {
      const [secret, machine, osm] = machineObjects(i) as [Obj, Obj, Obj];
      await api.create(kinds.Secret, secret);
      const owner = (await api.create(capoKinds.Machine, machine as Machine)).metadata!;
      osm.metadata!.ownerReferences = [
        {
          apiVersion: capoKinds.Machine.apiVersion,
          kind: 'Machine',
          name: owner.name!,
          uid: owner.uid!,
          controller: true,
          blockOwnerDeletion: true,
        },
      ];
      await api.create(capoKinds.OpenStackMachine, osm as OpenStackMachine);
    }

    // The bench watches the objects as an informer does (one list, then a watch): a list of every
    // OpenStackMachine every 100 ms costs the API server O(N) each time, O(N²) over the run, and
    // at 1,000 machines that, not the controllers, was the limit.
    const watching = new AbortController();
    const informer = <T extends KubernetesObject>(type: ResourceType<T>) => {
      const inf = new Informer({ client: api, type, namespace });
      void inf.start(watching.signal);
      return inf;
    };
    const osms = informer(capoKinds.OpenStackMachine);
    const servers = informer(capoKinds.OpenStackServer);
    stopWatching = () => watching.abort();
    await Promise.all([osms.waitForSync(), servers.waitForSync()]);

    for (const workers of opts.concurrency) {
      // A fresh process (fresh token cache): its Keystone tokens, all of them, count here.
      await resetStats(sim.url);
      capo = await launch(
        capoOptions(SCALE, workers, {
          ...(opts.buildPollMs !== undefined ? { buildPollMs: opts.buildPollMs } : {}),
          core: opts.clusterAPICore === true,
          kubeApiQps: opts.kubeApiQps ?? 0,
        }),
      );
      const before = await reconciles(capo.registry);
      const sendAtOnce = Math.max(1, Math.min(N, opts.createConcurrency ?? N));
      // The bench's client opens its connections before the clock starts: a client applying 100
      // machines sends them over one HTTP/2 connection, this one over as many HTTP/1.1 connections
      // as requests at once, whose TLS handshakes (both ends on the emulators' thread) are neither
      // the API server's nor capo's work.
      if (opts.warmClient !== false)
        await Promise.all(
          Array.from({ length: sendAtOnce }, () =>
            api.get(kinds.Secret, { namespace, name: machineName(0) }).catch(() => undefined),
          ),
        );
      const heapBefore = heapMb();
      const capoHeapBefore = await capo.heapMb();
      const lag = monitorEventLoopDelay({ resolution: 10 });
      lag.enable();
      const timeline = await TimelineRecorder.start(servers, osms, sim.url);
      const busyBefore = await histogramSums(
        capo.registry,
        'controller_runtime_reconcile_time_seconds',
        'controller',
      );
      const queuedBefore = await histogramSums(capo.registry, 'workqueue_queue_duration_seconds', 'name');
      const cpuBefore = process.cpuUsage();
      const capoCpuBefore = await capo.cpuUsage();
      t0 = performance.now();
      const { readyAt, stop: stopReady } = watchReady(osms, t0);
      await forEachMachine(N, sendAtOnce, async (i) => {
        await createMachine(i);
        timeline.created(machineName(i));
      });
      let lastSaid = 0;
      await eventually(
        () => {
          const now = performance.now() - t0;
          if (opts.progress && now - lastSaid > 5_000) {
            lastSaid = now;
            console.error(`  ${(now / 1000).toFixed(0)} s: ${readyAt.size} of ${N} ready`);
          }
          return readyAt.size >= N;
        },
        wait(`${N} OpenStackMachines ready (${workers} workers)`),
      );
      const readyMs = performance.now() - t0;
      stopReady();
      lag.disable();
      const load = loadavg()[0]!;
      const cpu = process.cpuUsage(cpuBefore);
      const capoCpuAfter = await capo.cpuUsage();
      const capoCpuMs =
        (capoCpuAfter.user + capoCpuAfter.system - capoCpuBefore.user - capoCpuBefore.system) / 1000;
      const capoLag = await capo.lag?.();
      const busySec = minus(
        await histogramSums(capo.registry, 'controller_runtime_reconcile_time_seconds', 'controller'),
        busyBefore,
      );
      const queuedSec = minus(
        await histogramSums(capo.registry, 'workqueue_queue_duration_seconds', 'name'),
        queuedBefore,
      );
      const lines = await timeline.finish(admin);
      const heapReady = heapMb();
      const capoHeapReady = await capo.heapMb();
      const kubeCreate = await kubeRequests(capo.registry);
      const snap = await stats(sim.url);
      const times = [...readyAt.values()].sort((a, b) => a - b);
      const createCalls = serverCallsOf(snap);
      const octavia = callsOf(snap, 'octavia');
      const created = minus(await reconciles(capo.registry), before);

      // Every Machine deleted (as many requests at once as when creating: a thousand connections
      // opened together time out): the garbage collector takes the OpenStackMachines, whose
      // finalizers wait for their OpenStackServers, whose finalizers wait for OpenStack.
      await resetStats(sim.url);
      t0 = performance.now();
      await forEachMachine(N, sendAtOnce, async (i) => {
        await api.delete(capoKinds.Machine, { namespace, name: machineName(i) });
      });
      await eventually(
        () => osms.list().length === 0 && servers.list().length === 0,
        wait(`${N} machines deleted`),
      );
      const deleteMs = performance.now() - t0;
      const del = await stats(sim.url);
      const kubeDelete = (await kubeRequests(capo.registry)) - kubeCreate;
      const novaOps = snap.services['nova']?.operations ?? {};
      // Nova's delete takes the root volumes along, after the server is gone: let them go too.
      const left = await eventually(
        async () => {
          const c = await census(admin, MACHINE_PORT);
          return Object.values(c).every((v) => v === 0) ? c : undefined;
        },
        { timeoutMs: Math.max(5_000, 60_000 * SCALE), intervalMs: POLL_MS, what: 'an empty cloud' },
      ).catch(() => census(admin, MACHINE_PORT));
      for (const i of Array.from({ length: N }, (_, k) => k)) {
        await api.delete(kinds.Secret, { namespace, name: machineName(i) }).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
      }
      await capo.stop();
      rows.push({
        label: `capo (${workers} workers)`,
        workers,
        gaps: gapsOf(lines, SCALE),
        split: splitOf(lines, SCALE),
        busySec,
        queuedSec,
        load,
        cpuPerMachineMs: (cpu.user + cpu.system) / 1000 / N,
        capoCpuPerMachineMs: capoCpuMs / N,
        ...(capoLag ? { capoLagMs: capoLag } : {}),
        create: createCalls,
        octavia,
        reconciles: created,
        readyMs,
        p50Ms: percentile(times, 50),
        p90Ms: percentile(times, 90),
        deleteMs,
        del: serverCallsOf(del),
        delOctavia: callsOf(del, 'octavia'),
        left: left!,
        heapMb: heapMb(),
        scale: {
          kubeRequests: { create: kubeCreate, delete: kubeDelete },
          heapPerMachineKb: ((capoHeapReady - capoHeapBefore) * 1024) / N,
          ...(capo.lag ? { emulatorHeapPerMachineKb: ((heapReady - heapBefore) * 1024) / N } : {}),
          lagMs: {
            p50: lag.percentile(50) / 1e6,
            p99: lag.percentile(99) / 1e6,
            max: lag.max / 1e6,
          },
          serverReads: {
            byId: novaOps['GET /v2.1/servers/{server_id}']?.count ?? 0,
            lists: novaOps['GET /v2.1/servers/detail']?.count ?? 0,
          },
        },
      });
      console.error(
        `done: ${N} machines, ${workers} workers (${((performance.now() - started) / 1000).toFixed(0)} s so far)`,
      );
    }
    return {
      opts,
      controlPlane: CONTROL_PLANE,
      clusterMs,
      clusterStats,
      clusterReconciles,
      rows,
      wallMs: performance.now() - started,
    };
  } finally {
    stopWatching();
    await env.close();
  }
}

/** A histogram's `_sum` per value of `label` (a controller's or a queue's name). */
async function histogramSums(
  registry: RunningCapoRegistry,
  name: string,
  label: string,
): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const out: Record<string, number> = {};
  for (const v of metric?.values ?? []) {
    if ((v as { metricName?: string }).metricName !== `${name}_sum`) continue;
    const key = String(v.labels[label]);
    out[key] = (out[key] ?? 0) + v.value;
  }
  return out;
}

/** `fn(i)` for i in 0…n−1, at most `atOnce` at a time. */
async function forEachMachine(n: number, atOnce: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, atOnce) }, async () => {
      for (let i = next++; i < n; i = next++) await fn(i);
    }),
  );
}

/** When each OpenStackMachine became ready with a providerID (ms after `t0`), as the watch saw it. */
function watchReady(
  osms: Informer<OpenStackMachine>,
  t0: number,
): { readyAt: Map<string, number>; stop: () => void } {
  const readyAt = new Map<string, number>();
  const see = (m: OpenStackMachine) => {
    const name = m.metadata!.name!;
    if (m.status?.ready === true && m.spec.providerID && !readyAt.has(name))
      readyAt.set(name, performance.now() - t0);
  };
  const stop = osms.addHandler({ onAdd: see, onUpdate: (_old, m) => see(m) });
  return { readyAt, stop };
}

/** `rest_client_requests_total` summed: every request the controllers' Kubernetes client sent. */
async function kubeRequests(registry: RunningCapoRegistry): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'rest_client_requests_total');
  return (metric?.values ?? []).reduce((sum, v) => sum + v.value, 0);
}
type RunningCapoRegistry = CapoHandle['registry'];

/** capo's own table: one row per concurrency, then the writes each made. */
export function printCapoMachines(run: CapoMachinesRun): void {
  const { n: N, scale: SCALE } = run.opts;
  const { secs, unscaled, per, rw } = formats(N, SCALE);
  const { clusterMs, clusterStats, clusterReconciles, controlPlane: CONTROL_PLANE } = run;
  const floor = machineFloorMs();
  const tenths = (ms: number) => (ms / 1000 / SCALE).toFixed(1);
  // Sent in batches, the machines wait less on each other than the floors at the workers assume.
  const allAtOnce = (run.opts.createConcurrency ?? N) >= N;
  const floorsAt = (workers: number): [number, number] => {
    const floors = machineFloorsAtMs(N, workers);
    return [percentile(floors, 50), percentile(floors, 90)];
  };
  const ratios = (p50: number, p90: number, f50: number, f90: number) =>
    `×${(p50 / SCALE / f50).toFixed(2)} / ×${(p90 / SCALE / f90).toFixed(2)}`;
  console.log(
    `\n${N} Cluster API machines (${CONTROL_PLANE} control plane, ${N - CONTROL_PLANE} workers with a ` +
      `root volume) created at once through the capo controllers; realistic profile × ${SCALE}, ` +
      `controller waits × ${SCALE}; unscaled = wall / ${SCALE}; one worker machine's floor (the cloud's ` +
      `answers, Cinder's 3 s and Nova's build, nothing waiting) ${(floor / 1000).toFixed(2)} s unscaled` +
      (allAtOnce
        ? ` (the floor at the workers: each worker waits for Nova's answer to its create, as CAPO's do, so the ` +
          `k-th server is answered no sooner than ⌊k / workers⌋ answers after the first); `
        : '; ') +
      `Cluster API core's Machine status ${run.opts.clusterAPICore ? 'stood in for by capo' : 'left to its own process'}; ` +
      `--kube-api-qps ${run.opts.kubeApiQps ? `${run.opts.kubeApiQps} (burst ${burstOf(run.opts.kubeApiQps)})` : 'unlimited'}`,
  );
  console.log(
    `The cluster first (managed subnet, router, security groups, API load balancer): ${secs(clusterMs)} s ` +
      `(≈ ${unscaled(clusterMs)} s unscaled), ${tokens(clusterStats)} Keystone token(s), ` +
      `Neutron ${callsOf(clusterStats, 'neutron').writes} writes / ${callsOf(clusterStats, 'neutron').reads} reads, ` +
      `Octavia ${callsOf(clusterStats, 'octavia').writes} / ${callsOf(clusterStats, 'octavia').reads}, ` +
      `reconciles ${JSON.stringify(clusterReconciles)}\n`,
  );
  printTable(
    [
      'workers',
      'Keystone tokens',
      'Nova w / r per machine',
      'Neutron w / r per machine',
      'Cinder w / r per machine',
      'Octavia w / r (total)',
      'reconciles per machine (osm / oss)',
      'all ready (s)',
      '≈ unscaled (s)',
      allAtOnce
        ? 'p50 / p90 ≈ unscaled (s) (÷ floor; ÷ floor at the workers)'
        : 'p50 / p90 ≈ unscaled (s) (÷ floor)',
      'delete (s)',
      '≈ unscaled (s)',
      'delete: tokens, Nova / Neutron / Cinder w / r per machine',
      'left',
      'heap (MB)',
    ],
    run.rows.map((r) => [
      String(r.workers),
      String(r.create.tokens),
      rw(r.create.nova),
      rw(r.create.neutron),
      rw(r.create.cinder),
      `${r.octavia.writes} / ${r.octavia.reads}`,
      `${per(r.reconciles['openstackmachine'] ?? 0)} / ${per(r.reconciles['openstackserver'] ?? 0)}`,
      secs(r.readyMs),
      unscaled(r.readyMs),
      `${tenths(r.p50Ms)} / ${tenths(r.p90Ms)} (${ratios(r.p50Ms, r.p90Ms, floor, floor)}` +
        (allAtOnce ? `; ${ratios(r.p50Ms, r.p90Ms, ...floorsAt(r.workers))})` : ')'),
      secs(r.deleteMs),
      unscaled(r.deleteMs),
      `${r.del.tokens}, ${rw(r.del.nova)} · ${rw(r.del.neutron)} · ${rw(r.del.cinder)}`,
      describeLeft(r.left),
      r.heapMb.toFixed(0),
    ]),
  );
  for (const r of run.rows) {
    const s = (sec: number | undefined) => (sec ?? 0).toFixed(1);
    console.log(
      `\n${r.workers} workers: where each machine's time went (unscaled medians; load average ${r.load.toFixed(2)}, ` +
        `${r.capoLagMs ? "the emulators' " : ''}event-loop delay p50 / p99 / max ${r.scale.lagMs.p50.toFixed(0)} / ${r.scale.lagMs.p99.toFixed(0)} / ` +
        `${r.scale.lagMs.max.toFixed(0)} ms)`,
    );
    printTable(
      ['gap', 'whose', 'median (s)', 'machines'],
      r.gaps.map((g) => [g.what, g.cloud ? 'cloud' : 'capo', (g.medianMs / 1000).toFixed(2), String(g.n)]),
    );
    const own = r.capoLagMs
      ? `, capo's own thread ${r.capoCpuPerMachineMs.toFixed(0)} ms (its event-loop delay p50 / p99 / max ` +
        `${r.capoLagMs.p50.toFixed(0)} / ${r.capoLagMs.p99.toFixed(0)} / ${r.capoLagMs.max.toFixed(0)} ms)`
      : ' (emulators and capo on one thread)';
    console.log(
      `  CPU of the whole process: ${r.cpuPerMachineMs.toFixed(0)} ms per machine${own}; ` +
        `capo's Kubernetes requests: ${(r.scale.kubeRequests.create / N).toFixed(1)} per machine`,
    );
    console.log(
      `  per machine: ${(r.split.totalMs / 1000).toFixed(1)} s created → ready, of which the cloud ` +
        `${(r.split.cloudMs / 1000).toFixed(1)} s (volume + build) and capo ${(r.split.restMs / 1000).toFixed(1)} s`,
    );
    console.log(
      `  worker time (wall s): openstackmachine ${s(r.busySec['openstackmachine'])}, openstackserver ` +
        `${s(r.busySec['openstackserver'])} → at ${r.workers} workers at least ` +
        `${s((r.busySec['openstackserver'] ?? 0) / r.workers / SCALE)} s unscaled of the servers' work in a row; ` +
        `waiting for a worker: ${s(r.queuedSec['openstackmachine'])} / ${s(r.queuedSec['openstackserver'])} s in all ` +
        `(${s((r.queuedSec['openstackserver'] ?? 0) / N / SCALE)} s unscaled per machine for the servers)`,
    );
  }
  for (const r of run.rows) {
    console.log(`\n${r.workers} workers, create writes: Nova ${describeOps(r.create.nova.writeOps)}`);
    console.log(
      `  Neutron ${describeOps(r.create.neutron.writeOps)}; Cinder ${describeOps(r.create.cinder.writeOps)}`,
    );
    console.log(`  Octavia ${describeOps(r.octavia.writeOps)}`);
    console.log(
      `  delete writes: Nova ${describeOps(r.del.nova.writeOps)}; Neutron ${describeOps(r.del.neutron.writeOps)}; ` +
        `Cinder ${describeOps(r.del.cinder.writeOps)}; Octavia ${describeOps(r.delOctavia.writeOps)}`,
    );
  }
}
