/**
 * `shiftstack mapo`: what MAPO's `cmd/manager/main.go` wires, with its flag names and defaults:
 * one Manager (leader election on the Lease `cluster-api-provider-openstack-leader`, 120 s / 110 s /
 * 20 s, health on `:9440`, metrics on `:8081`), the machine controller and the machineset-flavor
 * controller; the migration controller under the feature gate MachineAPIMigration; and, only with
 * `--act-as-machine-api-operator`, the machine-api-operator's MachineSet, nodelink and drain
 * controllers (loaded only then). Options come in parsed; src/cli/commands/mapo.ts reads the flags.
 *
 * The OpenStack side comes in by injection (the dependency rule: mapo imports none of capo's code):
 * `deps.scopes` builds the scope cache on the manager's client, and `deps.extraControllers` puts
 * other controllers on the manager — the CLI: capo's OpenStackServer controller, which turns each
 * Machine's OpenStackServer into a server. A process that also runs capo passes capo's scope cache
 * and no extra controller, so there is one OpenStackServer controller and one token per identity.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../lib/log.ts';
import { createRegistry, type Registry } from '../lib/metrics.ts';
import { kinds, loadKubeConfig, Manager, podNamespace, type ResourceType } from '../kube/index.ts';
import { registerMachineController, type MachineControllerOptions } from './controllers/machine.ts';
import {
  registerMachineSetFlavorController,
  type MachineSetFlavorControllerOptions,
} from './controllers/machineset-flavor.ts';
import type { MachineAPIOperatorOptions } from './mao/index.ts';
import { registerMigrationController, type MigrationControllerOptions } from './migration/index.ts';
import type { MapoScopes } from './scopes.ts';

/** MAPO's LeaderElectionID. */
export const MAPO_LEASE_NAME = 'cluster-api-provider-openstack-leader';

/** OpenShift's feature gate that turns the migration controller on (TechPreview: off by default). */
export const MACHINE_API_MIGRATION_GATE = 'MachineAPIMigration';

/**
 * Never cached: Secrets (credentials, user data) and ConfigMaps (the CA bundle), read from the API
 * server when needed, as MAPO reads them through a plain clientset.
 */
export const MAPO_UNCACHED_KINDS: readonly ResourceType[] = [kinds.Secret, kinds.ConfigMap];

export interface MapoOptions {
  kubeconfig?: string | undefined;
  /** MAPO `--namespace`: watch only this namespace (all when undefined). */
  namespace?: string | undefined;
  /** MAPO `--leader-elect` (false; the Deployment turns it on). */
  leaderElect: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** The Lease's namespace; by default the pod's. */
  leaseNamespace?: string | undefined;
  /** MAPO `--max-concurrent-reconciles` (1): workers of each controller. */
  maxConcurrentReconciles: number;
  /** MAPO `--health-addr` (`:9440`); undefined: none. */
  health: { host: string; port: number } | undefined;
  /** MAPO `--metrics-bind-address` (`:8081`), plain HTTP; undefined: none. */
  metrics: { host: string; port: number } | undefined;
  /** The cache resync (10 minutes, as OpenShift's Machine API providers set it). */
  syncPeriodMs: number;
  /** `--feature-gates=MachineAPIMigration=true`: the migration controller runs. */
  machineAPIMigration: boolean;
  /** shiftstack `--act-as-machine-api-operator`: MachineSet, nodelink, drain. Never beside a machine-api-operator. */
  actAsMachineAPIOperator: boolean;
}

export const MAPO_DEFAULTS: Omit<MapoOptions, 'kubeconfig' | 'namespace' | 'leaseNamespace'> = {
  leaderElect: false,
  leaseDurationMs: 120_000,
  renewDeadlineMs: 110_000,
  retryPeriodMs: 20_000,
  maxConcurrentReconciles: 1,
  health: { host: '', port: 9440 },
  metrics: { host: '', port: 8081 },
  syncPeriodMs: 600_000,
  machineAPIMigration: false,
  actAsMachineAPIOperator: false,
};

export interface MapoDeps {
  log: Logger;
  registry?: Registry;
  /** Tests hand a KubeConfig instead of a file. */
  kubeConfig?: KubeConfig;
  /** The OpenStack scope cache, built on the manager (whose client reads the identity Secrets). Its owner closes it. */
  scopes: (manager: Manager) => MapoScopes;
  /** Controllers of another part on mapo's manager, after mapo's (the CLI: capo's OpenStackServer controller). */
  extraControllers?: (manager: Manager, ctx: { workers: number }) => void;
  /** Per-controller settings besides the flags (tests scale the waits). */
  machine?: Partial<MachineControllerOptions>;
  machineSetFlavor?: Partial<MachineSetFlavorControllerOptions>;
  migration?: Partial<MigrationControllerOptions>;
  machineAPIOperator?: MachineAPIOperatorOptions;
  gracefulShutdownTimeoutMs?: number;
}

export interface Mapo {
  manager: Manager;
  scopes: MapoScopes;
  /** The controllers registered, by work-queue name. */
  controllers: readonly string[];
  /** Runs until `signal` aborts (graceful) or the lease is lost (rejects). */
  run(signal: AbortSignal): Promise<void>;
}

/** Builds the manager and the controllers; nothing connects until `run`. */
export async function buildMapo(opts: MapoOptions, deps: MapoDeps): Promise<Mapo> {
  const log = deps.log;
  const kubeConfig = deps.kubeConfig ?? loadKubeConfig(opts.kubeconfig);
  const registry = deps.registry ?? createRegistry();
  const lease = opts.leaseNamespace ?? podNamespace(process.env, undefined, kubeConfig);
  const manager = new Manager({
    name: 'machine-api-provider-openstack',
    kubeConfig,
    log,
    registry,
    disableCacheFor: MAPO_UNCACHED_KINDS,
    ...(opts.namespace ? { namespace: opts.namespace } : {}),
    ...(opts.syncPeriodMs > 0 ? { informers: { resyncPeriodMs: opts.syncPeriodMs } } : {}),
    ...(opts.health ? { healthProbe: { ...opts.health, metrics: false } } : {}),
    ...(opts.metrics ? { metricsServer: opts.metrics } : {}),
    ...(deps.gracefulShutdownTimeoutMs !== undefined
      ? { gracefulShutdownTimeoutMs: deps.gracefulShutdownTimeoutMs }
      : {}),
    ...(opts.leaderElect
      ? {
          leaderElection: {
            leaseName: MAPO_LEASE_NAME,
            leaseNamespace: lease,
            leaseDurationMs: opts.leaseDurationMs,
            renewDeadlineMs: opts.renewDeadlineMs,
            retryPeriodMs: opts.retryPeriodMs,
            releaseOnCancel: true,
          },
        }
      : {}),
  });
  const scopes = deps.scopes(manager);
  const workers = opts.maxConcurrentReconciles;
  const controllers: string[] = ['machine', 'machineset-flavor'];
  registerMachineController(manager, scopes, { workers, ...deps.machine });
  registerMachineSetFlavorController(manager, scopes, { workers, ...deps.machineSetFlavor });
  if (opts.machineAPIMigration) {
    registerMigrationController(manager, { workers, ...deps.migration });
    controllers.push('migration');
  }
  if (opts.actAsMachineAPIOperator) {
    // Loaded only here: on OpenShift the machine-api-operator runs these, and a process without
    // the flag never loads them.
    const { registerMachineAPIOperatorControllers } = await import('./mao/index.ts');
    registerMachineAPIOperatorControllers(manager, deps.machineAPIOperator);
    controllers.push('machineset', 'nodelink', 'machine-drain');
  }
  deps.extraControllers?.(manager, { workers });
  log.info(
    {
      leaderElect: opts.leaderElect,
      ...(opts.leaderElect ? { lease: `${lease}/${MAPO_LEASE_NAME}` } : {}),
      ...(opts.namespace ? { namespace: opts.namespace } : {}),
      controllers,
    },
    'machine-api-provider-openstack configured',
  );
  return {
    manager,
    scopes,
    controllers,
    run: (signal) => manager.start(signal),
  };
}
