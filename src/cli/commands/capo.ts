/**
 * `shiftstack capo`: the Cluster API provider for OpenStack, with CAPO's flag names and defaults
 * (its `main.go`). Flag errors exit 2 with what to fix; the process runs until SIGTERM/SIGINT and
 * exits non-zero when it loses its lease.
 *
 * The conversion webhook is served as controller-runtime serves it (`--webhook-port`,
 * `--webhook-cert-dir`). CAPO's other flags (TLS, klog) are accepted so an existing Deployment
 * keeps working; each one given is named in a warning saying shiftstack does not support it yet
 * and what it does instead. Two are refused: `--namespace` and `--watch-filter` narrow what a
 * CAPO instance acts on, and ignoring them would act on objects another instance owns.
 */
import { Option, type Command } from 'commander';
import {
  buildCapo,
  CAPO_DEFAULTS,
  CAPO_LEASE_NAME,
  CAPO_WEBHOOK_DEFAULTS,
  type CapoOptions,
} from '../../capo/cmd.ts';
import { loadKubeConfig } from '../../kube/index.ts';
import type { CliContext } from '../context.ts';
import { acceptEveryFlag, Inputs } from '../inputs.ts';
import {
  addCompatOptions,
  compatWarnings as warningsFor,
  durationFlag,
  goBool,
  intFlag,
  listenAddress,
  LOG_FLAGS,
  LOGS,
  kubeApiBurst,
  kubeApiQps,
  value,
  type CompatFlag,
  leaseTimingOptions,
} from '../upstream-flags.ts';
import { VERSION } from '../version.ts';

interface Flags {
  kubeconfig?: string;
  leaderElect: boolean;
  leaderElectLeaseDuration: string;
  leaderElectRenewDeadline: string;
  leaderElectRetryPeriod: string;
  leaderElectResourceNamespace?: string;
  openstackclusterConcurrency: number;
  openstackmachineConcurrency: number;
  openstackmachinetemplateConcurrency: number;
  scopeCacheMaxSize: number;
  syncPeriod: string;
  kubeApiQps: number;
  kubeApiBurst: number;
  healthAddr: string;
  diagnosticsAddress: string;
  insecureDiagnostics: boolean;
  metricsBindAddr?: string;
  actAsClusterApiCore: boolean;
  webhookPort: number;
  webhookCertDir: string;
  namespace?: string;
  watchFilter?: string;
  version?: string | boolean;
}

const TLS = 'the webhook and diagnostics ports serve TLS 1.2 and 1.3 with Node.js defaults';
/**
 * Flags of CAPO's manager (CAPO main.go, CAPI's diagnostics flags, component-base logs, klog) that
 * shiftstack does not support yet; see upstream-flags.ts.
 */
export const CAPO_COMPAT_FLAGS: readonly CompatFlag[] = [
  value('v', LOGS),
  value('tls-min-version', TLS),
  value('tls-max-version', TLS),
  value('tls-cipher-suites', TLS),
  value('profiler-address', 'there is no pprof endpoint', (v) => v === ''),
  value(
    'lb-provider',
    "the API load balancer uses the provider its OpenStackCluster names in apiServerLoadBalancer.provider, else Octavia's default",
  ),
  value(
    'ca-certs',
    'put the CA certificate under the key `cacert` of the identity Secret (next to clouds.yaml) instead',
  ),
  value('feature-gates', 'shiftstack has no feature gates; it behaves as CAPO does with the default gates'),
  ...LOG_FLAGS,
];

/** The warnings for the compatibility flags given. */
export function compatWarnings(cmd: Command): string[] {
  return warningsFor(
    cmd,
    CAPO_COMPAT_FLAGS,
    undefined,
    'is not supported yet by shiftstack capo and is ignored',
  );
}

function addCompatFlags(cmd: Command): Command {
  addCompatOptions(cmd, CAPO_COMPAT_FLAGS);
  return cmd.addHelpText(
    'after',
    "\nCAPO's other flags (" +
      '--tls-*, --v and the klog flags, --feature-gates, …) are accepted so existing Deployments keep working; ' +
      'each one given is named in a warning at startup. --namespace and --watch-filter are refused.',
  );
}

/** Cluster API's GetDiagnosticsOptions: the deprecated address wins, insecure; else the diagnostics address. */
function diagnosticsFlags(flags: Flags): CapoOptions['diagnostics'] {
  if (flags.metricsBindAddr) {
    const at = listenAddress('--metrics-bind-addr', flags.metricsBindAddr);
    return at && { ...at, secure: false };
  }
  const at = listenAddress('--diagnostics-address', flags.diagnosticsAddress);
  return at && { ...at, secure: !flags.insecureDiagnostics };
}

/** `shiftstack capo`'s flags and action, on the command main.ts made (name and description). */
export function configureCapo(command: Command, ctx: CliContext): void {
  const d = CAPO_DEFAULTS;
  const timings = leaseTimingOptions(d);
  command
    .option(
      '--kubeconfig <file>',
      'kubeconfig of the management cluster (default: KUBECONFIG, ~/.kube/config, then in-cluster)',
    )
    .addOption(
      new Option('--leader-elect [bool]', 'campaign for a Lease before running controllers')
        .default(d.leaderElect)
        .argParser(goBool),
    )
    .addOption(timings.leaseDuration)
    .addOption(timings.renewDeadline)
    .addOption(timings.retryPeriod)
    .option(
      '--leader-elect-resource-namespace <namespace>',
      `the namespace of the Lease ${CAPO_LEASE_NAME} (default: the pod's: POD_NAMESPACE, the service account's, the kubeconfig context's)`,
    )
    .option(
      '--openstackcluster-concurrency <n>',
      'OpenStackClusters reconciled at once',
      intFlag(1),
      d.openStackClusterConcurrency,
    )
    .option(
      '--openstackmachine-concurrency <n>',
      'OpenStackMachines (and OpenStackServers) reconciled at once',
      intFlag(1),
      d.openStackMachineConcurrency,
    )
    .option(
      '--openstackmachinetemplate-concurrency <n>',
      'OpenStackMachineTemplates reconciled at once',
      intFlag(1),
      d.openStackMachineTemplateConcurrency,
    )
    .option(
      '--scope-cache-max-size <n>',
      'OpenStack clients (one per identity) kept; 0 is taken as 1',
      intFlag(0),
      d.scopeCacheMaxSize,
    )
    .option('--sync-period <duration>', 'every object is reconciled again this often', '10m0s')
    .option(
      '--kube-api-qps <n>',
      'Kubernetes API requests per second, negative for no limit',
      kubeApiQps,
      d.kubeApiQps,
    )
    .option('--kube-api-burst <n>', 'Kubernetes API requests in one burst', kubeApiBurst, d.kubeApiBurst)
    .option(
      '--health-addr <address>',
      'where /healthz and /readyz are served (plain HTTP); 0 turns it off',
      ':9440',
    )
    .option(
      '--diagnostics-address <address>',
      'where /metrics is served: HTTPS, to bearer tokens the API server authorizes for it (nonResourceURLs /metrics, get); 0 turns it off',
      ':8443',
    )
    .addOption(
      new Option(
        '--insecure-diagnostics [bool]',
        'serve --diagnostics-address over plain HTTP, without authentication or authorization',
      )
        .default(false)
        .argParser(goBool),
    )
    .addOption(
      new Option(
        '--metrics-bind-addr <address>',
        "Cluster API's deprecated flag: /metrics over plain HTTP there, without authentication (use --diagnostics-address)",
      ).hideHelp(),
    )
    .addOption(
      new Option(
        '--act-as-cluster-api-core [bool]',
        'also do what Cluster API core would (Cluster infrastructureReady, Machine providerID, addresses, owner references); only where Cluster API does not run (demos, tests)',
      )
        .default(d.actAsClusterAPICore)
        .argParser(goBool),
    )
    .option(
      '--webhook-port <port>',
      'where the conversion webhook is served (HTTPS, POST /convert, every address); 0 serves none',
      intFlag(0),
      CAPO_WEBHOOK_DEFAULTS.port,
    )
    .option(
      '--webhook-cert-dir <dir>',
      'the webhook serving certificate: tls.crt and tls.key (as a cert-manager Secret mounts them; re-read when they change); without them in the default directory, a self-signed one',
      CAPO_WEBHOOK_DEFAULTS.certDir,
    )
    .addOption(new Option('--namespace <namespace>', "CAPO's: refused, see below").hideHelp())
    .addOption(new Option('--watch-filter <value>', "CAPO's: refused, see below").hideHelp())
    .addOption(new Option('--version [bool]', "CAPO's: print the version").hideHelp().argParser(goBool))
    .action(async (flags: Flags, cmd: Command) => {
      if (flags.version !== undefined && flags.version !== false && !Inputs.isBad(flags.version)) {
        ctx.out(VERSION);
        return;
      }
      // Every input is checked before anything starts; all problems are reported together.
      const inputs = new Inputs('shiftstack capo', cmd);
      if (flags.namespace) {
        inputs.add(
          `--namespace=${flags.namespace} is not supported yet: shiftstack capo would act on every namespace, including objects another CAPO instance owns; run one shiftstack capo per management cluster and leave --namespace out`,
        );
      }
      if (flags.watchFilter) {
        inputs.add(
          `--watch-filter=${flags.watchFilter} is not supported yet: shiftstack capo would act on objects without the label too, including those another CAPO instance owns; leave --watch-filter out`,
        );
      }
      if (flags.webhookPort > 65535) {
        inputs.add(
          `--webhook-port=${flags.webhookPort} is not a port: write 1 to 65535, or 0 to serve no webhook`,
        );
      }
      const warnings = compatWarnings(cmd);
      let scopeCacheMaxSize = flags.scopeCacheMaxSize;
      if (scopeCacheMaxSize === 0) {
        warnings.push(
          '--scope-cache-max-size=0 is taken as 1: without a cache every reconcile would ask Keystone for a token (CAPO #1647)',
        );
        scopeCacheMaxSize = 1;
      }
      for (const w of warnings) inputs.warn(w);
      const duration = (flag: string, text: string) => inputs.check(() => durationFlag(flag, text)) ?? 0;
      const opts = {
        kubeconfig: flags.kubeconfig,
        leaderElect: flags.leaderElect,
        leaseDurationMs: duration('--leader-elect-lease-duration', flags.leaderElectLeaseDuration),
        renewDeadlineMs: duration('--leader-elect-renew-deadline', flags.leaderElectRenewDeadline),
        retryPeriodMs: duration('--leader-elect-retry-period', flags.leaderElectRetryPeriod),
        leaseNamespace: flags.leaderElectResourceNamespace,
        openStackClusterConcurrency: flags.openstackclusterConcurrency,
        openStackMachineConcurrency: flags.openstackmachineConcurrency,
        openStackMachineTemplateConcurrency: flags.openstackmachinetemplateConcurrency,
        scopeCacheMaxSize,
        syncPeriodMs: duration('--sync-period', flags.syncPeriod),
        kubeApiQps: flags.kubeApiQps,
        kubeApiBurst: flags.kubeApiBurst,
        health: inputs.check(() => listenAddress('--health-addr', flags.healthAddr)),
        diagnostics: inputs.check(() => diagnosticsFlags(flags)),
        actAsClusterAPICore: flags.actAsClusterApiCore,
        webhook:
          flags.webhookPort === 0
            ? undefined
            : {
                ...CAPO_WEBHOOK_DEFAULTS,
                port: flags.webhookPort,
                certDir: flags.webhookCertDir,
                // Only the default directory may be empty (no cert-manager): a directory named on
                // the command line without a certificate is a mistake to report, not to paper over.
                selfSignedWithoutCert: cmd.getOptionValueSource('webhookCertDir') === 'default',
              },
      };
      const kubeConfig = inputs.check(() => loadKubeConfig(flags.kubeconfig));
      inputs.done();

      for (const w of warnings) ctx.log().warn(w);
      const capo = buildCapo(opts, { log: ctx.log(), ...(kubeConfig ? { kubeConfig } : {}) });
      await capo.run(ctx.signal);
    });
  acceptEveryFlag(addCompatFlags(command));
}
