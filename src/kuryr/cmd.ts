/**
 * `shiftstack kuryr controller`: what upstream's `kuryr-k8s-controller` (KURYR
 * `controller/service.py`) runs, on shiftstack's controller runtime: one Manager with the
 * controllers of `[kubernetes] enabled_handlers`, one OpenStack client from `[neutron]`, the health
 * server on `[health_server] port` (upstream's /alive and /ready, and /healthz, /readyz) and the
 * metrics on `[prometheus_exporter] controller_exporter_port` (9654, as upstream's exporter), with
 * what upstream's exporter computes on a scrape (exporter.ts).
 *
 * High availability (`[kubernetes] controller_ha`): upstream ran a leader-elector sidecar on port
 * 16401 (`--election=kuryr-controller`, a 5 s TTL); here the controller campaigns itself for the
 * Lease `kuryr-controller` in its pod's namespace, with client-go's timings (15 s / 10 s / 2 s), and
 * runs no controller until it leads. Options and the cloud come in parsed
 * (src/kuryr/config, src/cli/commands/kuryr.ts).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../lib/log.ts';
import { createRegistry, type Registry } from '../lib/metrics.ts';
import { loadKubeConfig, Manager, podNamespace } from '../kube/index.ts';
import { OpenStackClient, type OpenStackClientOptions } from '../openstack/client.ts';
import type { CloudConfig } from '../openstack/config/types.ts';
import { kuryrContext, type KuryrContext } from './context.ts';
import { registerQuotaMetrics } from './exporter.ts';
import type { KuryrOptions } from './options.ts';
import {
  CONTROLLER_LOADERS,
  controllersFor,
  SECURITY_GROUPS_DRIVER_LOADERS,
  SUBNETS_DRIVER_LOADERS,
  type RegisterKuryrController,
} from './registry.ts';

/** The Lease of `[kubernetes] controller_ha`: upstream's election name. */
export const KURYR_LEASE_NAME = 'kuryr-controller';

/** Upstream's health server paths, which OpenShift's manifests probe. */
export const KURYR_HEALTH_PATHS = { healthz: ['/alive'], readyz: ['/ready'] } as const;

export const KURYR_LEASE_TIMINGS = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** Thrown when kuryr.conf enables a controller or driver this build does not hold. */
export class KuryrBuildError extends Error {
  override readonly name = 'KuryrBuildError';
}

export interface KuryrControllerOptions {
  kubeconfig?: string | undefined;
  options: KuryrOptions;
  cloud: CloudConfig;
  /** The Lease's namespace; by default the pod's. */
  leaseNamespace?: string | undefined;
  /** Where health and metrics listen (every address by default, as upstream's `::`). */
  host?: string;
}

export interface KuryrControllerDeps {
  log: Logger;
  registry?: Registry;
  /** Tests hand a KubeConfig instead of a file. */
  kubeConfig?: KubeConfig;
  /** The controllers by name; by default the registry's loaders (src/kuryr/registry.ts). */
  controllers?: Readonly<Record<string, RegisterKuryrController>>;
  openstack?: Omit<OpenStackClientOptions, 'log' | 'registry' | 'signal'>;
  leaseTimings?: Partial<typeof KURYR_LEASE_TIMINGS>;
  gracefulShutdownTimeoutMs?: number;
}

export interface KuryrController {
  manager: Manager;
  ctx: KuryrContext;
  /** The controllers registered, by work-queue name. */
  controllers: readonly string[];
  /** Runs until `signal` aborts (graceful) or the lease is lost (rejects); closes the client. */
  run(signal: AbortSignal): Promise<void>;
}

/**
 * Builds the manager, the client and the controllers. The project kuryr works in is
 * `[neutron_defaults] project`, else the token's: the one call made before `run`.
 */
export async function buildKuryrController(
  opts: KuryrControllerOptions,
  deps: KuryrControllerDeps,
  signal?: AbortSignal,
): Promise<KuryrController> {
  const log = deps.log;
  const options = opts.options;
  const names = controllersFor(options.kubernetes.enabledHandlers);
  const registrations = await loadControllers(names, deps.controllers);
  const kubeConfig = deps.kubeConfig ?? loadKubeConfig(opts.kubeconfig);
  const registry = deps.registry ?? createRegistry();
  const leaseNamespace = opts.leaseNamespace ?? podNamespace(process.env, undefined, kubeConfig);
  const host = opts.host ?? '';
  const timings = { ...KURYR_LEASE_TIMINGS, ...deps.leaseTimings };
  const os = await OpenStackClient.fromConfig(opts.cloud, {
    log,
    registry,
    userAgent: 'shiftstack-kuryr-controller',
    ...deps.openstack,
    ...(signal ? { signal } : {}),
  });
  let manager: Manager | undefined;
  try {
    const projectId =
      options.neutronDefaults.project || (await os.session.token(signal)).token.project?.id || '';
    manager = new Manager({
      name: 'kuryr-controller',
      kubeConfig,
      log,
      registry,
      healthProbe: { host, port: options.healthServer.port, metrics: false, paths: KURYR_HEALTH_PATHS },
      metricsServer: { host, port: options.prometheusExporter.controllerExporterPort },
      ...(deps.gracefulShutdownTimeoutMs !== undefined
        ? { gracefulShutdownTimeoutMs: deps.gracefulShutdownTimeoutMs }
        : {}),
      ...(options.kubernetes.controllerHa
        ? {
            leaderElection: {
              leaseName: KURYR_LEASE_NAME,
              leaseNamespace,
              ...timings,
              releaseOnCancel: true,
            },
          }
        : {}),
    });
    const ctx = kuryrContext({ os, options, projectId, log, registry });
    registerQuotaMetrics(registry, os, ctx.projectId, log);
    await applyDrivers(manager, ctx);
    for (const name of names) registrations[name]!(manager, ctx);
    log.info(
      {
        controllerHa: options.kubernetes.controllerHa,
        ...(options.kubernetes.controllerHa ? { lease: `${leaseNamespace}/${KURYR_LEASE_NAME}` } : {}),
        handlers: options.kubernetes.enabledHandlers,
        controllers: names,
        project: projectId,
        subnetsDriver: ctx.subnets.name,
        securityGroupsDriver: ctx.securityGroups.name,
      },
      'kuryr-controller configured',
    );
    const built = manager;
    return {
      manager: built,
      ctx,
      controllers: names,
      run: async (stop) => {
        try {
          await built.start(stop);
        } finally {
          await os.close();
        }
      },
    };
  } catch (err) {
    await manager?.api.close();
    await os.close();
    throw err;
  }
}

async function loadControllers(
  names: readonly string[],
  given: Readonly<Record<string, RegisterKuryrController>> | undefined,
): Promise<Record<string, RegisterKuryrController>> {
  const out: Record<string, RegisterKuryrController> = {};
  const missing: string[] = [];
  for (const name of names) {
    const register = given ? given[name] : await CONTROLLER_LOADERS[name]?.();
    if (register) out[name] = register;
    else missing.push(name);
  }
  if (missing.length > 0) {
    throw new KuryrBuildError(
      `[kubernetes] enabled_handlers enables controller(s) ${missing.join(', ')}, which this build of shiftstack does not hold; remove their handlers from enabled_handlers`,
    );
  }
  return out;
}

/** The subnets and security-groups drivers kuryr.conf names, in place of the default ones. */
async function applyDrivers(manager: Manager, ctx: KuryrContext): Promise<void> {
  const { kubernetes } = ctx.options;
  if (kubernetes.podSubnetsDriver !== 'default') {
    const load = SUBNETS_DRIVER_LOADERS[kubernetes.podSubnetsDriver];
    if (!load) {
      throw new KuryrBuildError(
        `[kubernetes] pod_subnets_driver = ${kubernetes.podSubnetsDriver} is not in this build of shiftstack; use default`,
      );
    }
    ctx.subnets = (await load())(manager, ctx);
  }
  if (kubernetes.podSecurityGroupsDriver !== 'default') {
    const load = SECURITY_GROUPS_DRIVER_LOADERS[kubernetes.podSecurityGroupsDriver];
    if (!load) {
      throw new KuryrBuildError(
        `[kubernetes] pod_security_groups_driver = ${kubernetes.podSecurityGroupsDriver} is not in this build of shiftstack; use default`,
      );
    }
    ctx.securityGroups = (await load())(manager, ctx);
  }
}
