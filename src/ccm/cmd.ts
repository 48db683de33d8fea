/**
 * `shiftstack ccm`: what upstream's NewCloudControllerManagerCommand wires, for the controllers
 * built so far. The flags keep upstream's names and defaults (k8s.io/cloud-provider options);
 * this module turns them into one OpenStack client, one Manager and the selected controllers.
 */
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../lib/log.ts';
import { createRegistry, type Registry } from '../lib/metrics.ts';
import { Manager } from '../kube/index.ts';
import { OpenStackClient } from '../openstack/client.ts';
import { parseGoDuration } from '../openstack/config/duration.ts';
import type { LoadContext } from '../openstack/config/types.ts';
import { loadCcmConfig } from './config/cloud-conf.ts';
import type { CcmConfig } from './config/types.ts';
import {
  CLOUD_NODE_LIFECYCLE_CONTROLLER,
  registerCloudNodeLifecycleController,
} from './controllers/cloud-node-lifecycle.ts';
import { CLOUD_NODE_CONTROLLER, registerCloudNodeController } from './controllers/cloud-node.ts';

/** The controllers upstream's `--controllers` knows for a CCM (route only with [Route]). */
export const KNOWN_CONTROLLERS = [
  CLOUD_NODE_CONTROLLER,
  CLOUD_NODE_LIFECYCLE_CONTROLLER,
  'service',
  'route',
] as const;
export type ControllerName = (typeof KNOWN_CONTROLLERS)[number];
const BUILT: readonly ControllerName[] = [CLOUD_NODE_CONTROLLER, CLOUD_NODE_LIFECYCLE_CONTROLLER];
/** What `*` turns on upstream (route is off by default in OCCM deployments: no router-id). */
const DEFAULT_ON: readonly ControllerName[] = [
  CLOUD_NODE_CONTROLLER,
  CLOUD_NODE_LIFECYCLE_CONTROLLER,
  'service',
];

/** A flag value the user must fix; the CLI exits 2 with the message. */
export class CcmUsageError extends Error {
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
  /** 0: no health and metrics server (as upstream `--secure-port=0`). */
  securePort: number;
  bindAddress: string;
}

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
  securePort: 10258,
  bindAddress: '0.0.0.0',
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
        `--controllers: the ${name} controller is not built yet in shiftstack; remove "${name}" (the node controllers run with "*")`,
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

/** A Go duration flag (`5s`, `5m0s`) in milliseconds. */
export function durationFlag(flag: string, text: string): number {
  const ms = parseGoDuration(text);
  if (ms === undefined || ms < 0) {
    throw new CcmUsageError(
      `${flag}: "${text}" is not a duration; write it as Go does, e.g. 15s, 5m0s, 500ms`,
    );
  }
  return ms;
}

export interface CcmDeps {
  log: Logger;
  /** Where cloud.conf paths resolve and OS_CCM_REGIONAL is read; the process by default. */
  loadContext?: LoadContext;
  registry?: Registry;
  /** Tests hand a KubeConfig instead of a file. */
  kubeConfig?: KubeConfig;
}

export interface Ccm {
  manager: Manager;
  openstack: OpenStackClient;
  config: CcmConfig;
  controllers: ControllerSelection;
  /** Runs until `signal` aborts (graceful) or the lease is lost (rejects); closes the clients. */
  run(signal: AbortSignal): Promise<void>;
}

/** Reads the config (ConfigError on problems), builds the clients and registers the controllers. */
export async function buildCcm(opts: CcmOptions, deps: CcmDeps): Promise<Ccm> {
  const log = deps.log;
  const controllers = selectControllers(opts.controllers);
  const config = await loadCcmConfig(opts.cloudConfig, deps.loadContext);
  for (const w of config.warnings) log.warn(w);
  if (config.secret) {
    log.warn(
      { secret: `${config.secret.namespace}/${config.secret.name}` },
      '[Global] secret-name is set, but reading the config from that Secret is not built yet: only the file is used',
    );
  }
  if (controllers.notBuilt.length > 0) {
    log.warn(
      { controllers: controllers.notBuilt },
      'not built yet in shiftstack, so not running: the service controller (LoadBalancer Services are left alone)',
    );
  }

  const kubeConfig = deps.kubeConfig ?? loadKubeConfig(opts.kubeconfig);
  const registry = deps.registry ?? createRegistry();
  const openstack = await OpenStackClient.fromConfig(config.cloud, {
    registry,
    log,
    userAgent: 'shiftstack-ccm',
  });
  const manager = new Manager({
    name: 'cloud-controller-manager',
    kubeConfig,
    log,
    registry,
    ...(opts.securePort > 0 ? { healthProbe: { port: opts.securePort, host: opts.bindAddress } } : {}),
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
  });
  if (controllers.run.includes(CLOUD_NODE_CONTROLLER)) {
    registerCloudNodeController(manager, openstack, config, {
      statusUpdateFrequencyMs: opts.nodeStatusUpdateFrequencyMs,
      workers: opts.concurrentNodeSyncs,
    });
  }
  if (controllers.run.includes(CLOUD_NODE_LIFECYCLE_CONTROLLER)) {
    registerCloudNodeLifecycleController(manager, openstack, config, {
      monitorPeriodMs: opts.nodeMonitorPeriodMs,
    });
  }
  log.info(
    { controllers: controllers.run, cluster: opts.clusterName, leaderElect: opts.leaderElect },
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
      }
    },
  };
}

/** `--kubeconfig`, else client-node's default chain: KUBECONFIG, ~/.kube/config, in-cluster. */
function loadKubeConfig(file: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (file) kc.loadFromFile(file);
  else kc.loadFromDefault();
  return kc;
}
