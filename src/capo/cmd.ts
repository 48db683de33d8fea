/**
 * `shiftstack capo`: what CAPO's `main.go` wires, with its flag names and defaults: one Manager
 * (leader election on the Lease `controller-leader-election-capo`), one ScopeCache of OpenStack
 * clients (`--scope-cache-max-size`), and the OpenStackCluster, OpenStackMachine and
 * OpenStackServer controllers (plus OpenStackMachineTemplate capacity). Options come in parsed;
 * src/cli/commands/capo.ts reads the flags.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { UsageError } from '../lib/config.ts';
import type { Logger } from '../lib/log.ts';
import { createRegistry, type Registry } from '../lib/metrics.ts';
import { loadKubeConfig, Manager, podNamespace } from '../kube/index.ts';
import { secureServing, type SecureServing } from '../kube/secure-serving.ts';
import {
  ConversionWebhook,
  DEFAULT_WEBHOOK_CERT_DIR,
  DEFAULT_WEBHOOK_PORT,
} from '../kube/conversion/webhook.ts';
import { capoConversions } from './api/webhook.ts';
import type { OpenStackClientOptions } from '../openstack/client.ts';
import { registerClusterAPICoreControllers } from './controllers/capi-core.ts';
import {
  registerOpenStackClusterController,
  type OpenStackClusterControllerOptions,
} from './controllers/openstackcluster.ts';
import {
  registerOpenStackMachineController,
  type OpenStackMachineControllerOptions,
} from './controllers/openstackmachine.ts';
import {
  registerOpenStackMachineTemplateController,
  type OpenStackMachineTemplateControllerOptions,
} from './controllers/openstackmachinetemplate.ts';
import {
  registerOpenStackServerController,
  type OpenStackServerControllerOptions,
} from './controllers/openstackserver.ts';
import { CAPO_INFORMERS, CAPO_UNCACHED_KINDS, secretVersions } from './cache.ts';
import { clientConcurrency, ScopeCache } from './identity.ts';

/** CAPO's LeaderElectionID. */
export const CAPO_LEASE_NAME = 'controller-leader-election-capo';

/** A flag value the user must fix; the CLI exits 2 with the message. */
export class CapoUsageError extends UsageError {
  override readonly name = 'CapoUsageError';
}

export interface CapoOptions {
  kubeconfig?: string | undefined;
  /** CAPO `--leader-elect` (false; the Deployment turns it on). */
  leaderElect: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** The Lease's namespace; by default the pod's, as controller-runtime finds it (see `podNamespace()` in src/kube/kubeconfig.ts). */
  leaseNamespace?: string | undefined;
  /** CAPO `--openstackcluster-concurrency` (10). */
  openStackClusterConcurrency: number;
  /** CAPO `--openstackmachine-concurrency` (10); the OpenStackServer controller gets as many workers. */
  openStackMachineConcurrency: number;
  /** `--openstackmachinetemplate-concurrency` (10). */
  openStackMachineTemplateConcurrency: number;
  /** CAPO `--scope-cache-max-size` (10). */
  scopeCacheMaxSize: number;
  /** CAPO `--sync-period` (10 min): every cached object is reconciled again this often; 0 never. */
  syncPeriodMs: number;
  /** CAPO `--kube-api-qps` (20) and `--kube-api-burst` (30). */
  kubeApiQps: number;
  kubeApiBurst: number;
  /** CAPO `--health-addr` (`:9440`): /healthz and /readyz over plain HTTP, for the kubelet's probes; undefined: none. */
  health: { host: string; port: number } | undefined;
  /**
   * Cluster API's diagnostics flags: `--diagnostics-address` (`:8443`) serves /metrics over HTTPS to
   * bearer tokens the API server authenticates and authorizes (`secure`); `--insecure-diagnostics`
   * (or the deprecated `--metrics-bind-addr`) over plain HTTP to anyone. Undefined: no metrics server.
   */
  diagnostics?: { host: string; port: number; secure: boolean } | undefined;
  /**
   * shiftstack `--act-as-cluster-api-core`: also do what Cluster API core would (the Cluster's
   * infrastructureReady and endpoint, the Machines' owner references, providerID, addresses and
   * readiness). Only where no Cluster API core runs (the demo, tests); never next to Cluster API.
   */
  actAsClusterAPICore: boolean;
  /**
   * controller-runtime's webhook server: `--webhook-port` (9443; 0 serves none) and
   * `--webhook-cert-dir` (`tls.crt`, `tls.key`; when the default directory has none, a self-signed
   * certificate). It answers the API server's ConversionReviews for CAPO's kinds (and Cluster API's
   * stand-ins with `actAsClusterAPICore`). Undefined: no webhook server.
   */
  webhook?: CapoWebhookOptions | undefined;
}

export interface CapoWebhookOptions {
  port: number;
  /** The listen address: '' is every address, as controller-runtime's. */
  host: string;
  certDir: string;
  /** A self-signed certificate when `certDir` has none (the default directory), else refuse to start. */
  selfSignedWithoutCert: boolean;
}

export const CAPO_DEFAULTS: Omit<CapoOptions, 'kubeconfig' | 'leaseNamespace'> = {
  leaderElect: false,
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  openStackClusterConcurrency: 10,
  openStackMachineConcurrency: 10,
  openStackMachineTemplateConcurrency: 10,
  scopeCacheMaxSize: 10,
  syncPeriodMs: 600_000,
  kubeApiQps: 20,
  kubeApiBurst: 30,
  health: { host: '', port: 9440 },
  actAsClusterAPICore: false,
};

/**
 * The webhook server `shiftstack capo` runs unless told `--webhook-port=0`: controller-runtime's
 * defaults. Not in CAPO_DEFAULTS: a capo built in another process (`shiftstack up`, tests) serves
 * no webhook unless asked (the demo's CRDs name the one its world serves).
 */
export const CAPO_WEBHOOK_DEFAULTS: CapoWebhookOptions = {
  port: DEFAULT_WEBHOOK_PORT,
  host: '',
  certDir: DEFAULT_WEBHOOK_CERT_DIR,
  selfSignedWithoutCert: true,
};

export interface CapoDeps {
  log: Logger;
  registry?: Registry;
  /** Tests hand a KubeConfig instead of a file. */
  kubeConfig?: KubeConfig;
  /** For the OpenStack clients the scope cache builds (tests: retry delays, a fresh token cache). */
  openstackClient?: Omit<OpenStackClientOptions, 'signal'>;
  /** Per-controller settings besides the flags (tests and benchmarks scale the waits). */
  cluster?: Partial<OpenStackClusterControllerOptions>;
  machine?: Partial<OpenStackMachineControllerOptions>;
  server?: Partial<OpenStackServerControllerOptions>;
  machineTemplate?: Partial<OpenStackMachineTemplateControllerOptions>;
  gracefulShutdownTimeoutMs?: number;
}

export interface Capo {
  manager: Manager;
  scopes: ScopeCache;
  /** The conversion webhook server, when one is served (its URL and caBundle once started). */
  webhook: ConversionWebhook | undefined;
  /** Runs until `signal` aborts (graceful) or the lease is lost (rejects); closes the clients. */
  run(signal: AbortSignal): Promise<void>;
}

/** Builds the manager, the scope cache and the controllers; nothing connects until `run`. */
export function buildCapo(opts: CapoOptions, deps: CapoDeps): Capo {
  const log = deps.log;
  if (opts.scopeCacheMaxSize < 1) throw new CapoUsageError('--scope-cache-max-size must be at least 1');
  const kubeConfig = deps.kubeConfig ?? loadKubeConfig(opts.kubeconfig);
  const registry = deps.registry ?? createRegistry();
  const lease = opts.leaseNamespace ?? podNamespace(process.env, undefined, kubeConfig);
  const metrics = diagnostics(opts, kubeConfig, log);
  const manager = new Manager({
    name: 'capo-controller-manager',
    kubeConfig,
    log,
    registry,
    qps: opts.kubeApiQps,
    burst: opts.kubeApiBurst,
    disableCacheFor: CAPO_UNCACHED_KINDS,
    informers: { ...CAPO_INFORMERS, ...(opts.syncPeriodMs > 0 ? { resyncPeriodMs: opts.syncPeriodMs } : {}) },
    ...(opts.health ? { healthProbe: { ...opts.health, metrics: false } } : {}),
    ...(metrics ? { metricsServer: metrics.serving } : {}),
    ...(deps.gracefulShutdownTimeoutMs !== undefined
      ? { gracefulShutdownTimeoutMs: deps.gracefulShutdownTimeoutMs }
      : {}),
    ...(opts.leaderElect
      ? {
          leaderElection: {
            leaseName: CAPO_LEASE_NAME,
            leaseNamespace: lease,
            leaseDurationMs: opts.leaseDurationMs,
            renewDeadlineMs: opts.renewDeadlineMs,
            retryPeriodMs: opts.retryPeriodMs,
            releaseOnCancel: true,
          },
        }
      : {}),
  });
  // Identity Secrets are read uncached (CAPO_UNCACHED_KINDS), again only once their resourceVersion
  // moved in the metadata-only cache: a rotated clouds.yaml is seen by the first reconcile after
  // the watch brings the change (a new digest, a new client).
  const scopes = new ScopeCache({
    reader: manager.client,
    secretVersion: secretVersions(manager),
    maxSize: opts.scopeCacheMaxSize,
    client: {
      log,
      registry,
      userAgent: 'shiftstack-capo',
      // The machine and server controllers' workers (one flag) and the others', all on one client.
      concurrency: clientConcurrency(
        2 * opts.openStackMachineConcurrency +
          opts.openStackClusterConcurrency +
          opts.openStackMachineTemplateConcurrency,
      ),
      ...deps.openstackClient,
    },
    log,
  });
  const actAsClusterAPICore = opts.actAsClusterAPICore;
  registerOpenStackClusterController(manager, scopes, {
    workers: opts.openStackClusterConcurrency,
    actAsClusterAPICore,
    ...deps.cluster,
  });
  registerOpenStackMachineController(manager, scopes, {
    workers: opts.openStackMachineConcurrency,
    actAsClusterAPICore,
    ...deps.machine,
  });
  registerOpenStackServerController(manager, scopes, {
    workers: opts.openStackMachineConcurrency,
    ...deps.server,
  });
  registerOpenStackMachineTemplateController(manager, scopes, {
    workers: opts.openStackMachineTemplateConcurrency,
    ...deps.machineTemplate,
  });
  // Cluster API core's Machine and Cluster status (nodeRef, phases) where no CAPI core runs.
  if (actAsClusterAPICore) registerClusterAPICoreControllers(manager);
  const webhook = opts.webhook
    ? new ConversionWebhook({
        conversions: capoConversions({ clusterAPI: actAsClusterAPICore }),
        port: opts.webhook.port,
        host: opts.webhook.host,
        certDir: opts.webhook.certDir,
        selfSignedWithoutCert: opts.webhook.selfSignedWithoutCert,
        registry,
        log,
      })
    : undefined;
  if (webhook) {
    // As controller-runtime's: every replica serves (the Service picks any pod), leader or not.
    manager.add(webhook);
    manager.addReadyzCheck(webhook.readyCheck);
  }
  log.info(
    {
      leaderElect: opts.leaderElect,
      ...(opts.leaderElect ? { lease: `${lease}/${CAPO_LEASE_NAME}` } : {}),
      actAsClusterAPICore,
      ...(opts.webhook ? { webhookPort: opts.webhook.port } : {}),
    },
    'capo controller manager configured',
  );
  return {
    manager,
    scopes,
    webhook,
    async run(signal) {
      try {
        await manager.start(signal);
      } finally {
        await scopes.close();
        await metrics?.close();
      }
    },
  };
}

/**
 * The metrics server as Cluster API's GetDiagnosticsOptions sets up controller-runtime's: secure
 * serving with controller-runtime's authentication filter (a request without a token is 401; answers
 * cached 1 minute for tokens, 5 minutes for allowed and 30 s for denied access), or plain HTTP.
 */
function diagnostics(opts: CapoOptions, kubeConfig: KubeConfig, log: Logger): SecureServing | undefined {
  const d = opts.diagnostics;
  if (!d) return undefined;
  if (!d.secure) return { serving: { port: d.port, host: d.host }, close: () => Promise.resolve() };
  return secureServing({
    port: d.port,
    host: d.host,
    commonName: 'shiftstack-capo',
    authentication: kubeConfig,
    userAgent: 'shiftstack-capo-auth',
    anonymous: false,
    tokenCacheTtlMs: 60_000,
    authorizedCacheTtlMs: 300_000,
    unauthorizedCacheTtlMs: 30_000,
    log,
  });
}
