/**
 * `shiftstack capo` in the demo's process: its three controllers (and the machine-template one)
 * on their own manager, acting as Cluster API core too (no CAPI core controller runs here), with
 * every wait CAPO makes on the cloud scaled like the cloud. Its identity comes from the Secret the
 * manifest names, as on a real management cluster.
 */
import type { Logger } from '../lib/log.ts';
import { createRegistry } from '../lib/metrics.ts';
import { DEMO_METRICS } from './metrics.ts';
import { buildCapo, CAPO_DEFAULTS, type Capo } from '../capo/cmd.ts';
import type { World } from './world.ts';

export type DemoCapo = Capo;

export function buildDemoCapo(world: World, opts: { log: Logger; scale: number }): DemoCapo {
  const scaled = (ms: number, floor = 20) => Math.max(floor, Math.round(ms * opts.scale));
  const capo = buildCapo(
    {
      ...CAPO_DEFAULTS,
      leaderElect: false,
      health: undefined,
      // /metrics on a free loopback port, plain HTTP (only this machine reaches it).
      diagnostics: { ...DEMO_METRICS, secure: false },
      // The demo's own client is not rate-limited either: the API server is in this process.
      kubeApiQps: 0,
      actAsClusterAPICore: true,
    },
    {
      log: opts.log,
      kubeConfig: world.kubeConfig,
      registry: createRegistry({ defaultMetrics: false }),
      cluster: {
        bastionWaitMs: scaled(15_000),
        machinesWaitMs: scaled(5_000),
        deleteWaitMs: scaled(15_000),
        errorRetryMs: scaled(15_000),
        loadBalancerBackoff: { initialMs: scaled(1_000), maxMs: scaled(10_000) },
      },
      machine: {
        infrastructureWaitMs: scaled(15_000),
        buildWaitMs: scaled(10_000),
        otherStateWaitMs: scaled(15_000),
        deleteWaitMs: scaled(10_000),
        ingressWaitMs: scaled(5_000),
      },
      server: {
        backoff: { initialMs: scaled(1_000), maxMs: scaled(10_000), idleMs: scaled(60_000) },
        waitMs: scaled(15_000),
        errorInitialMs: scaled(1_000),
        errorMaxMs: scaled(15_000),
      },
      machineTemplate: { errorRetryMs: scaled(15_000) },
      gracefulShutdownTimeoutMs: 5_000,
    },
  );
  return capo;
}
