/**
 * `shiftstack ccm`: what upstream's NewCloudControllerManagerCommand wires, for the controllers
 * built so far. The flags keep upstream's names and defaults (k8s.io/cloud-provider options);
 * this module turns them into one OpenStack client, one Manager and the selected controllers.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../lib/clock.ts';
import { UsageError } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import { createRegistry, type Registry } from '../lib/metrics.ts';
import { leaderMigrationSetup, loadKubeConfig, Manager, type LeaderMigrationSetup } from '../kube/index.ts';
import { secureServing, type SecureServing } from '../kube/secure-serving.ts';
import { readServingCert, ServingCertError, type ServingCert } from '../lib/tls-cert.ts';
import type { LoadContext } from '../openstack/config/types.ts';
import { CcmConfigSource, rotatingClient, type OpenStackApi } from './secret-config.ts';
import type { CcmConfig } from './config/types.ts';
import {
  CLOUD_NODE_LIFECYCLE_CONTROLLER,
  registerCloudNodeLifecycleController,
} from './controllers/cloud-node-lifecycle.ts';
import { CLOUD_NODE_CONTROLLER, registerCloudNodeController } from './controllers/cloud-node.ts';
import {
  registerServiceController,
  SERVICE_CONTROLLER,
  type ServiceControllerOptions,
} from './controllers/service.ts';
import { registerRouteController, ROUTE_CONTROLLER } from './controllers/route.ts';
import { parseClusterCidrs } from './routes/plan.ts';
import type { Cidr } from '../lib/cidr.ts';

/** The controllers upstream's `--controllers` knows for a CCM. */
export const KNOWN_CONTROLLERS = [
  CLOUD_NODE_CONTROLLER,
  CLOUD_NODE_LIFECYCLE_CONTROLLER,
  SERVICE_CONTROLLER,
  ROUTE_CONTROLLER,
] as const;
export type ControllerName = (typeof KNOWN_CONTROLLERS)[number];
const BUILT: readonly ControllerName[] = [
  CLOUD_NODE_CONTROLLER,
  CLOUD_NODE_LIFECYCLE_CONTROLLER,
  SERVICE_CONTROLLER,
  ROUTE_CONTROLLER,
];
/**
 * What `*` turns on upstream. The route controller is among them but starts only with
 * `--configure-cloud-routes` (default true) and `[Route] router-id` (OCCM's Routes() is false
 * without it), so a cloud.conf without router-id runs no route controller.
 */
const DEFAULT_ON: readonly ControllerName[] = [
  CLOUD_NODE_CONTROLLER,
  CLOUD_NODE_LIFECYCLE_CONTROLLER,
  SERVICE_CONTROLLER,
  ROUTE_CONTROLLER,
];

/** A flag value the user must fix; the CLI exits 2 with the message. */
export class CcmUsageError extends UsageError {
  override readonly name = 'CcmUsageError';
}

export interface CcmOptions {
  cloudConfig: string;
  kubeconfig?: string | undefined;
  clusterName: string;
  leaderElect: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  leaseName: string;
  leaseNamespace: string;
  /** `--controllers` as given (comma lists already split). */
  controllers: readonly string[];
  nodeMonitorPeriodMs: number;
  nodeStatusUpdateFrequencyMs: number;
  concurrentNodeSyncs: number;
  /** Upstream `--concurrent-service-syncs` (1). */
  concurrentServiceSyncs?: number | undefined;
  /**
   * Upstream `--kube-api-qps` (20) and `--kube-api-burst` (30): a cluster with a thousand Services
   * needs more, since each costs about four writes to become ready.
   */
  kubeApiQps: number;
  kubeApiBurst: number;
  /**
   * The secure port: HTTPS `/healthz`, `/readyz`, `/livez` and `/metrics`, every request
   * authenticated and authorized through the API server; 0: none (as upstream `--secure-port=0`).
   */
  securePort: number;
  bindAddress: string;
  /** Upstream `--tls-cert-file` / `--tls-private-key-file`; a self-signed certificate in memory without. */
  tlsCertFile?: string | undefined;
  tlsPrivateKeyFile?: string | undefined;
  /** Upstream `--authentication-kubeconfig` / `--authorization-kubeconfig`: who reviews tokens and access (default: the cluster's kubeconfig). */
  authenticationKubeconfig?: string | undefined;
  authorizationKubeconfig?: string | undefined;
  /** Upstream `--authorization-always-allow-paths` (`/healthz`, `/readyz`, `/livez`): served without an access review. */
  authorizationAlwaysAllowPaths?: readonly string[] | undefined;
  /** Upstream `--authentication-token-webhook-cache-ttl`, `--authorization-webhook-cache-authorized-ttl` / `-unauthorized-ttl` (10 s each). */
  authenticationCacheTtlMs?: number | undefined;
  authorizedCacheTtlMs?: number | undefined;
  unauthorizedCacheTtlMs?: number | undefined;
  /** Upstream `--configure-cloud-routes` (true): false keeps the route controller off whatever cloud.conf says. */
  configureCloudRoutes?: boolean | undefined;
  /** Upstream `--cluster-cidr`: the pods' CIDR (one per family, comma-separated); the route controller needs it. */
  clusterCidr?: string | undefined;
  /** Upstream `--route-reconciliation-period` (10 s). */
  routeReconciliationPeriodMs?: number | undefined;
  /**
   * Upstream `--enable-leader-migration` (KEP-2436): the controllers the configuration migrates run
   * only while this process holds the migration Lease (in `leaseNamespace`) as well as its own.
   */
  enableLeaderMigration?: boolean | undefined;
  /** Upstream `--leader-migration-config`: a LeaderMigrationConfiguration file; upstream's default without. */
  leaderMigrationConfig?: string | undefined;
  /** OCCM's `--user-agent` (repeatable): put before `shiftstack-ccm` in the User-Agent of OpenStack calls. */
  userAgent?: readonly string[] | undefined;
}

/** This component's name in a LeaderMigrationConfiguration (upstream's, for every cloud controller manager). */
export const CCM_COMPONENT = 'cloud-controller-manager';

export const CCM_DEFAULTS: Omit<CcmOptions, 'cloudConfig' | 'kubeconfig'> = {
  clusterName: 'kubernetes',
  leaderElect: true,
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  leaseName: 'cloud-controller-manager',
  leaseNamespace: 'kube-system',
  controllers: ['*'],
  nodeMonitorPeriodMs: 5_000,
  nodeStatusUpdateFrequencyMs: 300_000,
  concurrentNodeSyncs: 1,
  kubeApiQps: 20,
  kubeApiBurst: 30,
  securePort: 10258,
  bindAddress: '0.0.0.0',
  authorizationAlwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
  configureCloudRoutes: true,
  routeReconciliationPeriodMs: 10_000,
};

export interface ControllerSelection {
  /** Built and selected: these run. */
  run: ControllerName[];
  /** Selected by `*` but not built yet: said in the log, never silently dropped. */
  notBuilt: ControllerName[];
}

/**
 * Upstream's IsControllerEnabled: `name` on, `-name` off, `*` the defaults; unknown names are an
 * error. Naming a controller that is not built yet is an error too; `*` only notes it.
 */
export function selectControllers(list: readonly string[]): ControllerSelection {
  const on = new Set<ControllerName>();
  const off = new Set<ControllerName>();
  let star = false;
  const known = (n: string): n is ControllerName => (KNOWN_CONTROLLERS as readonly string[]).includes(n);
  for (const raw of list) {
    const item = raw.trim();
    if (item === '') continue;
    if (item === '*') {
      star = true;
      continue;
    }
    const negated = item.startsWith('-');
    const name = negated ? item.slice(1) : item;
    if (!known(name)) {
      throw new CcmUsageError(
        `--controllers: unknown controller "${name}"; known: ${KNOWN_CONTROLLERS.join(', ')} (and "*", "-name")`,
      );
    }
    (negated ? off : on).add(name);
  }
  for (const name of on) {
    if (!BUILT.includes(name)) {
      throw new CcmUsageError(
        `--controllers: the ${name} controller is not built yet in shiftstack; remove "${name}" (the built controllers run with "*")`,
      );
    }
  }
  const wanted = new Set<ControllerName>([...(star ? DEFAULT_ON : []), ...on]);
  for (const name of off) wanted.delete(name);
  return {
    run: [...wanted].filter((n) => BUILT.includes(n)),
    notBuilt: [...wanted].filter((n) => !BUILT.includes(n)),
  };
}

/**
 * `--enable-leader-migration` and `--leader-migration-config` for this component (see the kube
 * runtime's leaderMigrationSetup): a CcmUsageError without leader election, a ConfigError for a bad
 * file, warnings for entries that name no controller of a cloud controller manager.
 */
export async function ccmLeaderMigration(
  opts: Pick<CcmOptions, 'enableLeaderMigration' | 'leaderMigrationConfig' | 'leaderElect'>,
  signal?: AbortSignal,
): Promise<LeaderMigrationSetup | undefined> {
  try {
    return await leaderMigrationSetup(opts, CCM_COMPONENT, KNOWN_CONTROLLERS, signal);
  } catch (err) {
    if (err instanceof UsageError && !(err instanceof CcmUsageError)) throw new CcmUsageError(err.message);
    throw err;
  }
}

export interface CcmDeps {
  log: Logger;
  /** Where cloud.conf paths resolve and OS_CCM_REGIONAL is read; the process by default. */
  loadContext?: LoadContext;
  registry?: Registry;
  /** Tests hand a KubeConfig instead of a file. */
  kubeConfig?: KubeConfig;
  /** The service controller's requeue backoff (benchmarks scale it with a time-scaled cloud). */
  serviceBackoff?: ServiceControllerOptions['backoff'];
  /** The service controller's failure back-off (upstream's 5 s to 300 s; scaled the same way). */
  serviceRetry?: ServiceControllerOptions['retry'];
  /** The service controller's node batch window (tests). */
  serviceNodeBatchWindowMs?: number;
  /** The manager's clock (tests move it); the system's by default. */
  clock?: Clock;
}

export interface Ccm {
  manager: Manager;
  openstack: OpenStackApi & { close(): Promise<void> };
  config: CcmConfig;
  controllers: ControllerSelection;
  /** Runs until `signal` aborts (graceful) or the lease is lost (rejects); closes the clients. */
  run(signal: AbortSignal): Promise<void>;
}

/** Reads the config (ConfigError on problems), builds the clients and registers the controllers. */
export async function buildCcm(opts: CcmOptions, deps: CcmDeps): Promise<Ccm> {
  const log = deps.log;
  const controllers = selectControllers(opts.controllers);
  if (controllers.notBuilt.length > 0) {
    log.warn({ controllers: controllers.notBuilt }, 'not built yet in shiftstack, so not running');
  }
  // A malformed --cluster-cidr is a usage error before anything connects.
  if (opts.clusterCidr) clusterCidrFlag(opts.clusterCidr);

  const migration = await ccmLeaderMigration(opts);
  for (const w of migration?.warnings ?? []) log.warn(w);
  const kubeConfig = deps.kubeConfig ?? loadKubeConfig(opts.kubeconfig);
  const registry = deps.registry ?? createRegistry();
  const secure = opts.securePort > 0 ? await securePort(opts, kubeConfig, log) : undefined;
  const manager = new Manager({
    name: 'cloud-controller-manager',
    kubeConfig,
    qps: opts.kubeApiQps,
    burst: opts.kubeApiBurst,
    log,
    registry,
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(secure ? { healthProbe: secure.serving } : {}),
    ...(opts.leaderElect
      ? {
          leaderElection: {
            leaseName: opts.leaseName,
            leaseNamespace: opts.leaseNamespace,
            leaseDurationMs: opts.leaseDurationMs,
            renewDeadlineMs: opts.renewDeadlineMs,
            retryPeriodMs: opts.retryPeriodMs,
            releaseOnCancel: true,
          },
        }
      : {}),
    ...(migration ? { leaderMigration: { config: migration.config, component: CCM_COMPONENT } } : {}),
  });
  // The file, overlaid by the Secret its [Global] secret-name names (watched on every replica,
  // leader or not, so a new leader starts with the current credentials).
  let source: CcmConfigSource;
  let openstack: Awaited<ReturnType<typeof rotatingClient>>;
  try {
    source = await CcmConfigSource.open({
      path: opts.cloudConfig,
      kube: manager.api,
      events: manager.events,
      log,
      ...(deps.loadContext ? { loadContext: deps.loadContext } : {}),
    });
    openstack = await rotatingClient(source, {
      registry,
      log,
      userAgent: [...(opts.userAgent ?? []), 'shiftstack-ccm'].join(' '),
    });
  } catch (err) {
    await manager.api.close();
    await secure?.close();
    throw err;
  }
  const config = source.current();
  for (const w of config.warnings) log.warn(w);
  let route: RouteSetup | undefined;
  try {
    route = routeSetup(opts, config, controllers, log);
  } catch (err) {
    await openstack.close();
    await manager.api.close();
    await secure?.close();
    throw err;
  }
  if (!route) controllers.run = controllers.run.filter((n) => n !== ROUTE_CONTROLLER);
  manager.add(source);
  if (controllers.run.includes(CLOUD_NODE_CONTROLLER)) {
    registerCloudNodeController(manager, openstack, source, {
      statusUpdateFrequencyMs: opts.nodeStatusUpdateFrequencyMs,
      workers: opts.concurrentNodeSyncs,
    });
  }
  if (controllers.run.includes(CLOUD_NODE_LIFECYCLE_CONTROLLER)) {
    registerCloudNodeLifecycleController(manager, openstack, source, {
      monitorPeriodMs: opts.nodeMonitorPeriodMs,
    });
  }
  if (controllers.run.includes(SERVICE_CONTROLLER)) {
    if (config.loadBalancer.enabled) {
      registerServiceController(manager, openstack, source, {
        clusterName: opts.clusterName,
        workers: opts.concurrentServiceSyncs ?? 1,
        ...(deps.serviceBackoff ? { backoff: deps.serviceBackoff } : {}),
        ...(deps.serviceRetry ? { retry: deps.serviceRetry } : {}),
        ...(deps.serviceNodeBatchWindowMs !== undefined
          ? { nodeBatchWindowMs: deps.serviceNodeBatchWindowMs }
          : {}),
      });
    } else {
      // Upstream: LoadBalancer() returns false and the service controller is not started.
      log.warn('[LoadBalancer] enabled = false: the service controller does not run');
    }
  }
  if (route) registerRouteController(manager, openstack, source, route);
  log.info(
    {
      controllers: controllers.run,
      cluster: opts.clusterName,
      leaderElect: opts.leaderElect,
      ...(migration
        ? {
            leaderMigration: migration.config.leaderName,
            migrated: migration.config.controllerLeaders
              .filter((l) => l.component === CCM_COMPONENT || l.component === '*')
              .map((l) => l.name),
          }
        : {}),
    },
    'cloud controller manager configured',
  );
  return {
    manager,
    openstack,
    config,
    controllers,
    async run(signal) {
      try {
        await manager.start(signal);
      } finally {
        await openstack.close();
        await secure?.close();
      }
    },
  };
}

interface RouteSetup {
  routerId: string;
  clusterCidrs: Cidr[];
  periodMs: number;
}

/** `--cluster-cidr` parsed; a CcmUsageError naming what is wrong otherwise. */
export function clusterCidrFlag(text: string): Cidr[] {
  try {
    return parseClusterCidrs(text);
  } catch (err) {
    throw new CcmUsageError((err as Error).message);
  }
}

/**
 * upstream startRouteController: off with `--configure-cloud-routes=false`, off without a router
 * (OCCM's Routes() is false), and a startup error (CcmUsageError) without `--cluster-cidr`. The CLI
 * calls it without a logger to check its inputs before anything starts.
 */
export function routeSetup(
  opts: CcmOptions,
  config: Pick<CcmConfig, 'route'>,
  controllers: ControllerSelection,
  log?: Logger,
): RouteSetup | undefined {
  if (!controllers.run.includes(ROUTE_CONTROLLER)) return undefined;
  // Named on its own (not only through "*"): not running it deserves a warning.
  const named = opts.controllers.some((c) => c.trim() === ROUTE_CONTROLLER);
  if (!(opts.configureCloudRoutes ?? true)) {
    log?.info('--configure-cloud-routes=false: the route controller does not run');
    return undefined;
  }
  const routerId = config.route.routerId;
  if (!routerId) {
    if (named) log?.warn('[Route] router-id is not set: the route controller does not run');
    return undefined;
  }
  const clusterCidrs = opts.clusterCidr ? clusterCidrFlag(opts.clusterCidr) : undefined;
  if (!clusterCidrs) {
    throw new CcmUsageError(
      "--cluster-cidr is required by the route controller ([Route] router-id is set): give the pods' CIDR (e.g. 10.244.0.0/16), or --configure-cloud-routes=false",
    );
  }
  return { routerId, clusterCidrs, periodMs: opts.routeReconciliationPeriodMs ?? 10_000 };
}

/**
 * Upstream's secure serving for the CCM (k8s.io/cloud-provider options): component-base's
 * delegated authentication (a request without a token is `system:anonymous`) and authorization
 * (`--authorization-always-allow-paths` skip the access review). The reviews go to the API server
 * of `--authentication-kubeconfig` / `--authorization-kubeconfig`, else of the CCM's own kubeconfig
 * (upstream looks only in-cluster, which in a pod is the same).
 */
async function securePort(opts: CcmOptions, kubeConfig: KubeConfig, log: Logger): Promise<SecureServing> {
  if (!opts.tlsCertFile !== !opts.tlsPrivateKeyFile) {
    throw new CcmUsageError(
      '--tls-cert-file and --tls-private-key-file go together: give both, or neither for a self-signed certificate',
    );
  }
  const authentication = opts.authenticationKubeconfig
    ? loadKubeConfig(opts.authenticationKubeconfig)
    : kubeConfig;
  let tls: ServingCert | undefined;
  try {
    if (opts.tlsCertFile && opts.tlsPrivateKeyFile)
      tls = await readServingCert(opts.tlsCertFile, opts.tlsPrivateKeyFile);
  } catch (err) {
    if (err instanceof ServingCertError)
      throw new CcmUsageError(`--tls-cert-file / --tls-private-key-file: ${err.message}`);
    throw err;
  }
  return secureServing({
    port: opts.securePort,
    host: opts.bindAddress,
    tls,
    commonName: 'shiftstack-ccm',
    authentication,
    // Each defaults to the CCM's own kubeconfig, whatever the other says.
    authorization: opts.authorizationKubeconfig
      ? loadKubeConfig(opts.authorizationKubeconfig)
      : opts.authenticationKubeconfig
        ? kubeConfig
        : undefined,
    userAgent: 'shiftstack-ccm-auth',
    anonymous: true,
    alwaysAllowPaths: opts.authorizationAlwaysAllowPaths ?? CCM_DEFAULTS.authorizationAlwaysAllowPaths,
    tokenCacheTtlMs: opts.authenticationCacheTtlMs,
    authorizedCacheTtlMs: opts.authorizedCacheTtlMs,
    unauthorizedCacheTtlMs: opts.unauthorizedCacheTtlMs,
    log,
  });
}
