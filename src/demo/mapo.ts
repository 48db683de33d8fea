/**
 * `shiftstack mapo` in the demo's process, as the CLI composes it but sharing the in-process capo's
 * ScopeCache (one Keystone token per identity for both) and running no second OpenStackServer
 * controller: capo's reconciles the Machine API's servers too. With the migration gate on and the
 * machine-api-operator's controllers (MachineSet, nodelink, drain), since no machine-api-operator
 * runs here; every wait scaled like the cloud.
 */
import type { Logger } from '../lib/log.ts';
import { createRegistry } from '../lib/metrics.ts';
import { DEMO_METRICS } from './metrics.ts';
import { buildMapo, MAPO_DEFAULTS, type Mapo } from '../mapo/cmd.ts';
import type { DemoCapo } from './capo.ts';
import type { World } from './world.ts';

export type DemoMapo = Mapo;

export function buildDemoMapo(
  world: World,
  capo: DemoCapo,
  opts: { log: Logger; scale: number },
): Promise<DemoMapo> {
  const scaled = (ms: number, floor = 20) => Math.max(floor, Math.round(ms * opts.scale));
  return buildMapo(
    {
      ...MAPO_DEFAULTS,
      leaderElect: false,
      health: undefined,
      metrics: DEMO_METRICS,
      maxConcurrentReconciles: 10,
      machineAPIMigration: true,
      actAsMachineAPIOperator: true,
    },
    {
      log: opts.log,
      kubeConfig: world.kubeConfig,
      registry: createRegistry({ defaultMetrics: false }),
      scopes: () => capo.scopes,
      machine: { retryMs: scaled(30_000) },
      migration: { refusedRetryMs: scaled(30_000) },
      machineAPIOperator: {
        drain: {
          backoff: { baseMs: scaled(5_000), maxMs: scaled(1_000_000) },
          podDeletionPollMs: scaled(5_000),
          requeueMs: scaled(20_000),
        },
      },
      gracefulShutdownTimeoutMs: 5_000,
    },
  );
}
