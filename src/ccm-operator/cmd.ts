/**
 * `shiftstack ccm-operator run`: what upstream's two operator binaries wire
 * (cluster-cloud-controller-manager-operator and config-sync-controllers), in one Manager: the
 * cloud config sync, the trusted CA bundle and the operands controllers, leader election on the
 * Lease `cluster-cloud-controller-manager-leader` (upstream's 137 s / 107 s / 26 s), /healthz and
 * /readyz on `--health-addr`, /metrics on `--metrics-bind-address`. Options come in parsed;
 * src/cli/commands/ccm-operator-run.ts reads the flags.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../lib/clock.ts';
import type { Logger } from '../lib/log.ts';
import { createRegistry, type Registry } from '../lib/metrics.ts';
import { loadKubeConfig, Manager, podNamespace } from '../kube/index.ts';
import { MANAGED_NAMESPACE, OPERATOR_NAMESPACE, SYSTEM_TRUST_BUNDLE } from './api/index.ts';
import { registerCloudConfigController } from './controllers/cloud-config.ts';
import { registerOperandsController, type OperandsControllerOptions } from './controllers/operands.ts';
import { registerTrustedCAController } from './controllers/trusted-ca.ts';
import { renderOperands } from './operands/index.ts';
import type { OpenStackCcm, OperandRenderer } from './operands/types.ts';
import type { OperatorSettings } from './settings.ts';

/** Upstream's LeaderElectionID. */
export const OPERATOR_LEASE_NAME = 'cluster-cloud-controller-manager-leader';

export interface CcmOperatorOptions {
  kubeconfig?: string | undefined;
  /** `--leader-elect` (true, as upstream's component-base default). */
  leaderElect: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** `--leader-elect-resource-name`. */
  leaseName: string;
  /** `--leader-elect-resource-namespace`; by default the operator's namespace. */
  leaseNamespace?: string | undefined;
  /** `--namespace`: where the operands and the synced ConfigMaps go. */
  managedNamespace: string;
  /** `--operator-namespace`: where the images ConfigMap is; by default the pod's, else upstream's. */
  operatorNamespace?: string | undefined;
  /** `--images-json`: the images file; without it the ConfigMap is read (and watched) from the API. */
  imagesFile?: string | undefined;
  /** `--system-ca-bundle`: the system trust bundle the CCM's is built on. */
  systemTrustBundle: string;
  /** `--openstack-ccm`: shiftstack ccm, or upstream OCCM. */
  openstackCcm: OpenStackCcm;
  /** RELEASE_VERSION: the version reported as `operator` (upstream: `unknown` when unset). */
  releaseVersion: string;
  /** `--health-addr`: /healthz and /readyz over plain HTTP; undefined: none. */
  health: { host: string; port: number } | undefined;
  /** `--metrics-bind-address`: /metrics over plain HTTP; undefined: none. */
  metrics: { host: string; port: number } | undefined;
}

export const CCM_OPERATOR_DEFAULTS: Omit<
  CcmOperatorOptions,
  'kubeconfig' | 'leaseNamespace' | 'operatorNamespace' | 'imagesFile'
> = {
  leaderElect: true,
  leaseDurationMs: 137_000,
  renewDeadlineMs: 107_000,
  retryPeriodMs: 26_000,
  leaseName: OPERATOR_LEASE_NAME,
  managedNamespace: MANAGED_NAMESPACE,
  systemTrustBundle: SYSTEM_TRUST_BUNDLE,
  openstackCcm: 'shiftstack',
  releaseVersion: 'unknown',
  health: { host: '', port: 9440 },
  metrics: { host: '', port: 8080 },
};

export interface CcmOperatorDeps {
  log: Logger;
  registry?: Registry;
  /** Tests hand a KubeConfig instead of a file. */
  kubeConfig?: KubeConfig;
  /** The operand renderers; `renderOperands` by default. */
  render?: OperandRenderer;
  clock?: Clock;
  operands?: OperandsControllerOptions;
  gracefulShutdownTimeoutMs?: number;
}

export interface CcmOperator {
  manager: Manager;
  settings: OperatorSettings;
  /** Runs until `signal` aborts (graceful) or the lease is lost (rejects). */
  run(signal: AbortSignal): Promise<void>;
}

/** The operator's three controllers on `mgr`. */
export function registerOperatorControllers(
  mgr: Manager,
  settings: OperatorSettings,
  operands: OperandsControllerOptions = {},
): void {
  registerCloudConfigController(mgr, settings);
  registerTrustedCAController(mgr, settings);
  registerOperandsController(mgr, settings, operands);
}

/** The pod's namespace (POD_NAMESPACE, the service account's); outside a pod, upstream's. */
function operatorNamespace(): string {
  const ns = podNamespace(process.env);
  return ns === 'default' ? OPERATOR_NAMESPACE : ns;
}

/** Builds the manager and the controllers; nothing connects until `run`. */
export function buildCcmOperator(opts: CcmOperatorOptions, deps: CcmOperatorDeps): CcmOperator {
  const log = deps.log;
  const kubeConfig = deps.kubeConfig ?? loadKubeConfig(opts.kubeconfig);
  const settings: OperatorSettings = {
    managedNamespace: opts.managedNamespace,
    operatorNamespace: opts.operatorNamespace ?? operatorNamespace(),
    releaseVersion: opts.releaseVersion,
    systemTrustBundle: opts.systemTrustBundle,
    imagesFile: opts.imagesFile,
    openstackCcm: opts.openstackCcm,
    render: deps.render ?? renderOperands,
  };
  const lease = opts.leaseNamespace ?? settings.operatorNamespace;
  const manager = new Manager({
    name: 'cloud-controller-manager-operator',
    kubeConfig,
    log,
    registry: deps.registry ?? createRegistry(),
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(opts.health ? { healthProbe: { ...opts.health, metrics: false } } : {}),
    ...(opts.metrics ? { metricsServer: opts.metrics } : {}),
    ...(deps.gracefulShutdownTimeoutMs !== undefined
      ? { gracefulShutdownTimeoutMs: deps.gracefulShutdownTimeoutMs }
      : {}),
    ...(opts.leaderElect
      ? {
          leaderElection: {
            leaseName: opts.leaseName,
            leaseNamespace: lease,
            leaseDurationMs: opts.leaseDurationMs,
            renewDeadlineMs: opts.renewDeadlineMs,
            retryPeriodMs: opts.retryPeriodMs,
            releaseOnCancel: true,
          },
        }
      : {}),
  });
  registerOperatorControllers(manager, settings, deps.operands);
  log.info(
    {
      leaderElect: opts.leaderElect,
      ...(opts.leaderElect ? { lease: `${lease}/${opts.leaseName}` } : {}),
      managedNamespace: settings.managedNamespace,
      operatorNamespace: settings.operatorNamespace,
      release: settings.releaseVersion,
      openstackCcm: settings.openstackCcm,
    },
    'cloud controller manager operator configured',
  );
  return { manager, settings, run: (signal) => manager.start(signal) };
}
