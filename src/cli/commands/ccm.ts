/**
 * `shiftstack ccm`: the cloud controller manager, with upstream's flag names and defaults
 * (openstack-cloud-controller-manager's). Flag and config errors exit 2 with what to fix; the
 * process runs until SIGTERM/SIGINT and exits non-zero when it loses its lease.
 */
import { existsSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import {
  buildCcm,
  CCM_DEFAULTS,
  clusterCidrFlag,
  ccmLeaderMigration,
  routeSetup,
  selectControllers,
  type CcmOptions,
} from '../../ccm/cmd.ts';
import { checkCcmConfigFile } from '../../ccm/config/cloud-conf.ts';
import { loadKubeConfig } from '../../kube/index.ts';
import { processContext } from '../../openstack/config/context.ts';
import type { CliContext } from '../context.ts';
import { acceptEveryFlag, Inputs } from '../inputs.ts';
import {
  addCompatOptions,
  bool,
  compatWarnings as warningsFor,
  durationFlag,
  givenValue,
  goBool,
  intFlag,
  isFalse,
  LOG_FLAGS,
  LOGS,
  kubeApiBurst,
  kubeApiQps,
  seconds,
  value,
  type CompatFlag,
  leaseTimingOptions,
} from '../upstream-flags.ts';

interface Flags {
  cloudConfig?: string;
  kubeconfig?: string;
  clusterName: string;
  leaderElect: boolean;
  leaderElectLeaseDuration: string;
  leaderElectRenewDeadline: string;
  leaderElectRetryPeriod: string;
  leaderElectResourceName: string;
  leaderElectResourceNamespace: string;
  controllers: string[];
  nodeMonitorPeriod: string;
  nodeStatusUpdateFrequency: string;
  concurrentNodeSyncs: number;
  concurrentServiceSyncs: number;
  kubeApiQps: number;
  kubeApiBurst: number;
  configureCloudRoutes: boolean;
  clusterCidr?: string;
  routeReconciliationPeriod: string;
  securePort: number;
  bindAddress: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  authenticationKubeconfig?: string;
  authorizationKubeconfig?: string;
  authorizationAlwaysAllowPaths: string[];
  authenticationTokenWebhookCacheTtl: string;
  authorizationWebhookCacheAuthorizedTtl: string;
  authorizationWebhookCacheUnauthorizedTtl: string;
  enableLeaderMigration: boolean;
  leaderMigrationConfig?: string;
  userAgent: string[];
}

function boolFlag(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidArgumentError('write true or false');
}

function listFlag(value: string, previous: string[] | undefined): string[] {
  // Repeated flags add up; the default ["*"] is replaced by the first explicit value.
  const items = value.split(',').map((s) => s.trim());
  return previous && previous !== CCM_DEFAULTS.controllers ? [...previous, ...items] : items;
}

/** `/a,/b` and repeated flags add up; the default is replaced by the first explicit value. */
function pathsFlag(value: string, previous: string[] | undefined): string[] {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return previous && previous !== CCM_DEFAULTS.authorizationAlwaysAllowPaths
    ? [...previous, ...items]
    : items;
}

const NO_SERVER = (_: unknown, f: Flags) => f.securePort === 0;
const SERVING =
  'the secure port serves TLS 1.2 and 1.3 with Node.js defaults, from --tls-cert-file or a self-signed certificate kept in memory (never written to --cert-dir)';
const AUTH =
  'the secure port authenticates bearer tokens only (TokenReview), not client certificates or front-proxy headers';
const IPAM =
  "shiftstack has no node IPAM controller; Nodes' podCIDRs come from kube-controller-manager or the network plugin";

/**
 * Flags of openstack-cloud-controller-manager (k8s.io/cloud-provider, component-base, OCCM) that
 * shiftstack does not implement; see upstream-flags.ts.
 */
export const COMPAT_FLAGS: readonly CompatFlag<Flags>[] = [
  bool(
    'use-service-account-credentials',
    "every controller uses the one client of the process (its kubeconfig, or the cloud-controller-manager ServiceAccount in a pod), so that identity needs every controller's permissions, as deploy/ccm/base/rbac.yaml grants",
    isFalse,
  ),
  bool('allocate-node-cidrs', IPAM, isFalse),
  value('cidr-allocator-type', IPAM),
  value('node-cidr-mask-size', IPAM),
  value('node-cidr-mask-size-ipv4', IPAM),
  value('node-cidr-mask-size-ipv6', IPAM),
  value(
    'external-cloud-volume-plugin',
    'a setting for in-tree volume plugins in kube-controller-manager; a cloud controller manager has none',
  ),
  value(
    'feature-gates',
    'shiftstack has no Kubernetes feature gates; it behaves as upstream does with the default gates',
  ),
  value('kube-api-content-type', 'the Kubernetes client always speaks JSON'),
  value('master', 'the API server is the one --kubeconfig names'),
  value(
    'leader-elect-resource-lock',
    'the leader election always uses a coordination.k8s.io Lease',
    (v) => v === 'leases',
  ),
  value('min-resync-period', 'informers never resync from their cache; controllers requeue what they need'),
  value('controller-start-interval', 'the controllers start together once the caches are synced'),
  bool('allow-untagged-cloud', 'a no-op upstream as well (deprecated)'),
  bool('profiling', 'there are no /debug/pprof endpoints', isFalse),
  bool('contention-profiling', 'there are no /debug/pprof endpoints', isFalse),
  value('debug-socket-path', 'there are no /debug/pprof endpoints'),
  value('cert-dir', SERVING, NO_SERVER),
  value('tls-cipher-suites', SERVING, NO_SERVER),
  value('tls-min-version', SERVING, NO_SERVER),
  value('tls-sni-cert-key', SERVING, NO_SERVER),
  value('http2-max-streams-per-connection', SERVING, NO_SERVER),
  bool('permit-port-sharing', SERVING, NO_SERVER),
  bool('permit-address-sharing', SERVING, NO_SERVER),
  // Client CAs are never looked up (no client-certificate authentication), so skipping or tolerating that is what happens anyway.
  bool('authentication-skip-lookup', AUTH, (v, f) => NO_SERVER(v, f) || goBool(v)),
  bool('authentication-tolerate-lookup-failure', AUTH, () => true),
  value('client-ca-file', AUTH, NO_SERVER),
  value('requestheader-allowed-names', AUTH, NO_SERVER),
  value('requestheader-client-ca-file', AUTH, NO_SERVER),
  value('requestheader-extra-headers-prefix', AUTH, NO_SERVER),
  value('requestheader-group-headers', AUTH, NO_SERVER),
  value('requestheader-username-headers', AUTH, NO_SERVER),
  value('requestheader-uid-headers', AUTH, NO_SERVER),
  value('webhooks', 'shiftstack ccm serves no admission webhooks'),
  value('webhook-bind-address', 'shiftstack ccm serves no admission webhooks'),
  value('webhook-secure-port', 'shiftstack ccm serves no admission webhooks'),
  value('webhook-cert-dir', 'shiftstack ccm serves no admission webhooks'),
  value('webhook-tls-cert-file', 'shiftstack ccm serves no admission webhooks'),
  value('webhook-tls-private-key-file', 'shiftstack ccm serves no admission webhooks'),
  // component-base/logs, and klog's flags that older OCCM releases still had.
  ...LOG_FLAGS,
];

/** Log lines for the compatibility flags given; a problem for a flag that cannot be honoured. */
function compatWarnings(cmd: Command, flags: Flags, inputs: Inputs): string[] {
  const out: string[] = [];
  const provider = givenValue(cmd, 'cloud-provider');
  if (provider !== undefined && provider !== 'openstack') {
    inputs.add(
      `--cloud-provider: "${String(provider)}" is not a cloud shiftstack ccm serves; write --cloud-provider=openstack or leave it out`,
    );
  }
  const v = givenValue(cmd, 'v');
  if (v !== undefined) {
    const level = Number(String(v).replace(/^=/, ''));
    if (!Number.isInteger(level) || level < 0) {
      inputs.add(`--v: "${String(v)}" is not a log level; write a whole number, e.g. --v=2`);
    } else if (level >= 4) {
      // klog's 0-3 are what info shows; 4 and up are debugging.
      out.push(`--v=${level} is accepted and ignored: ${LOGS} (--log-level debug for --v=4 and up)`);
    }
  }
  out.push(
    ...warningsFor(
      cmd,
      COMPAT_FLAGS,
      flags,
      'is accepted for compatibility with openstack-cloud-controller-manager and ignored',
    ),
  );
  return out;
}

function addCompatFlags(cmd: Command): Command {
  cmd.addOption(new Option('--cloud-provider <name>', 'upstream\'s; only "openstack"').hideHelp());
  cmd.addOption(new Option('-v, --v <level>', "klog's verbosity").hideHelp());
  addCompatOptions(cmd, COMPAT_FLAGS);
  return cmd.addHelpText(
    'after',
    '\nThe other flags of openstack-cloud-controller-manager (--cloud-provider=openstack, --v, ' +
      '--use-service-account-credentials, --feature-gates, --cert-dir, --tls-min-version, --client-ca-file, --requestheader-*, ' +
      'klog flags, …) are accepted so existing Deployments keep working; each one that changes nothing ' +
      'here is named in a warning at startup.',
  );
}

/** `shiftstack ccm`'s flags and action, on the command main.ts made (name and description). */
export function configureCcm(command: Command, ctx: CliContext): void {
  const d = CCM_DEFAULTS;
  const timings = leaseTimingOptions(d);
  command
    .option(
      '--cloud-config <file>',
      "OCCM's cloud.conf (gcfg): [Global] auth, [Networking], [LoadBalancer], …",
    )
    .option(
      '--kubeconfig <file>',
      'kubeconfig of the cluster (default: KUBECONFIG, ~/.kube/config, then in-cluster)',
    )
    .option('--cluster-name <name>', 'the cluster name in load balancer names', d.clusterName)
    .addOption(
      new Option('--leader-elect [bool]', 'campaign for a Lease before running controllers')
        .default(d.leaderElect)
        .argParser(boolFlag),
    )
    .addOption(timings.leaseDuration)
    .addOption(timings.renewDeadline)
    .addOption(timings.retryPeriod)
    .option('--leader-elect-resource-name <name>', 'the Lease name', d.leaseName)
    .option(
      '--leader-elect-resource-namespace <namespace>',
      'the Lease namespace (the migration Lease too)',
      d.leaseNamespace,
    )
    .addOption(
      new Option(
        '--enable-leader-migration [bool]',
        'KEP-2436: run the migrated controllers only while holding the migration Lease too, so kube-controller-manager and this never run them at once',
      )
        .default(false)
        .argParser(goBool),
    )
    .option(
      '--leader-migration-config <file>',
      "a LeaderMigrationConfiguration (controllermanager.config.k8s.io); default: upstream's (route, service, cloud-node-lifecycle, by whichever side holds the Lease cloud-provider-extraction-migration)",
    )
    .option(
      '--user-agent <data>',
      'put before shiftstack-ccm in the User-Agent of OpenStack calls (repeatable)',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      '--controllers <list>',
      'controllers to run: "*" (the defaults), a name to add, "-name" to remove; names: cloud-node, cloud-node-lifecycle, service, route',
      listFlag,
      d.controllers as string[],
    )
    .option(
      '--node-monitor-period <duration>',
      'how often NotReady Nodes are checked against Nova',
      seconds(d.nodeMonitorPeriodMs),
    )
    .option(
      '--node-status-update-frequency <duration>',
      'how often initialized Nodes get their addresses refreshed',
      '5m0s',
    )
    .option(
      '--concurrent-node-syncs <n>',
      'workers of the cloud-node controller',
      intFlag(1),
      d.concurrentNodeSyncs,
    )
    .option(
      '--concurrent-service-syncs <n>',
      'Services the service controller reconciles at once',
      intFlag(1),
      d.concurrentServiceSyncs ?? 1,
    )
    .option(
      '--kube-api-qps <n>',
      'Kubernetes API requests per second, negative for no limit (Events have a limiter of their own)',
      kubeApiQps,
      d.kubeApiQps,
    )
    .option('--kube-api-burst <n>', 'Kubernetes API requests in one burst', kubeApiBurst, d.kubeApiBurst)
    .addOption(
      new Option(
        '--configure-cloud-routes [bool]',
        'run the route controller (it also needs [Route] router-id and --cluster-cidr)',
      )
        .default(d.configureCloudRoutes ?? true)
        .argParser(goBool),
    )
    .option('--cluster-cidr <cidrs>', "the pods' CIDR, one per IP family, comma-separated (for routes)")
    .option(
      '--route-reconciliation-period <duration>',
      "how often the router's routes are reconciled",
      seconds(d.routeReconciliationPeriodMs ?? 10_000),
    )
    .option(
      '--secure-port <port>',
      'HTTPS port of /healthz, /readyz, /livez and /metrics, each request authenticated and authorized through the API server; 0 disables it',
      intFlag(0),
      d.securePort,
    )
    .option('--bind-address <address>', 'address of that port', d.bindAddress)
    .option(
      '--tls-cert-file <file>',
      'PEM certificate (chain) of the secure port (default: self-signed, in memory)',
    )
    .option('--tls-private-key-file <file>', 'PEM private key of --tls-cert-file')
    .option(
      '--authentication-kubeconfig <file>',
      "kubeconfig of the API server that reviews bearer tokens (TokenReview); default: the CCM's own",
    )
    .option(
      '--authorization-kubeconfig <file>',
      "kubeconfig of the API server that reviews access (SubjectAccessReview); default: the CCM's own",
    )
    .option(
      '--authorization-always-allow-paths <paths>',
      'paths served without an access review (comma-separated, repeatable)',
      pathsFlag,
      d.authorizationAlwaysAllowPaths as string[],
    )
    .option('--authentication-token-webhook-cache-ttl <duration>', 'how long token reviews are cached', '10s')
    .option(
      '--authorization-webhook-cache-authorized-ttl <duration>',
      'how long allowed access reviews are cached',
      '10s',
    )
    .option(
      '--authorization-webhook-cache-unauthorized-ttl <duration>',
      'how long denied access reviews are cached',
      '10s',
    )
    .action(async (flags: Flags, cmd: Command) => {
      // Every input is checked before anything starts; all problems are reported together.
      const inputs = new Inputs('shiftstack ccm', cmd);
      const warnings = compatWarnings(cmd, flags, inputs);
      for (const w of warnings) inputs.warn(w);
      if (!flags.cloudConfig) {
        inputs.add(
          "--cloud-config: missing. Fix: give OCCM's cloud.conf, e.g. --cloud-config=/etc/kubernetes/cloud.conf",
        );
      }
      const duration = (flag: string, text: string) => inputs.check(() => durationFlag(flag, text)) ?? 0;
      const opts: CcmOptions = {
        cloudConfig: flags.cloudConfig ?? '',
        kubeconfig: flags.kubeconfig,
        clusterName: flags.clusterName,
        leaderElect: flags.leaderElect,
        leaseDurationMs: duration('--leader-elect-lease-duration', flags.leaderElectLeaseDuration),
        renewDeadlineMs: duration('--leader-elect-renew-deadline', flags.leaderElectRenewDeadline),
        retryPeriodMs: duration('--leader-elect-retry-period', flags.leaderElectRetryPeriod),
        leaseName: flags.leaderElectResourceName,
        leaseNamespace: flags.leaderElectResourceNamespace,
        controllers: flags.controllers,
        nodeMonitorPeriodMs: duration('--node-monitor-period', flags.nodeMonitorPeriod),
        nodeStatusUpdateFrequencyMs: duration(
          '--node-status-update-frequency',
          flags.nodeStatusUpdateFrequency,
        ),
        concurrentNodeSyncs: flags.concurrentNodeSyncs,
        concurrentServiceSyncs: flags.concurrentServiceSyncs,
        kubeApiQps: flags.kubeApiQps,
        kubeApiBurst: flags.kubeApiBurst,
        configureCloudRoutes: flags.configureCloudRoutes,
        clusterCidr: flags.clusterCidr,
        routeReconciliationPeriodMs: duration(
          '--route-reconciliation-period',
          flags.routeReconciliationPeriod,
        ),
        securePort: flags.securePort,
        bindAddress: flags.bindAddress,
        tlsCertFile: flags.tlsCertFile,
        tlsPrivateKeyFile: flags.tlsPrivateKeyFile,
        authenticationKubeconfig: flags.authenticationKubeconfig,
        authorizationKubeconfig: flags.authorizationKubeconfig,
        authorizationAlwaysAllowPaths: flags.authorizationAlwaysAllowPaths,
        authenticationCacheTtlMs: duration(
          '--authentication-token-webhook-cache-ttl',
          flags.authenticationTokenWebhookCacheTtl,
        ),
        authorizedCacheTtlMs: duration(
          '--authorization-webhook-cache-authorized-ttl',
          flags.authorizationWebhookCacheAuthorizedTtl,
        ),
        unauthorizedCacheTtlMs: duration(
          '--authorization-webhook-cache-unauthorized-ttl',
          flags.authorizationWebhookCacheUnauthorizedTtl,
        ),
        enableLeaderMigration: flags.enableLeaderMigration,
        leaderMigrationConfig: flags.leaderMigrationConfig,
        userAgent: flags.userAgent,
      };
      if (opts.leaderMigrationConfig && !opts.enableLeaderMigration) {
        const w = `--leader-migration-config=${opts.leaderMigrationConfig} is ignored without --enable-leader-migration, as upstream does`;
        warnings.push(w);
        inputs.warn(w);
      }
      const migration = await inputs.checkAsync(() => ccmLeaderMigration(opts, ctx.signal));
      // buildCcm logs them when it starts.
      for (const w of migration?.warnings ?? []) inputs.warn(w);
      if (!opts.tlsCertFile !== !opts.tlsPrivateKeyFile)
        inputs.add(
          '--tls-cert-file and --tls-private-key-file go together. Fix: give both, or neither for a self-signed certificate',
        );
      for (const [flag, file] of [
        ['--authentication-kubeconfig', opts.authenticationKubeconfig],
        ['--authorization-kubeconfig', opts.authorizationKubeconfig],
      ] as const) {
        if (file && !existsSync(file))
          inputs.add(
            `${flag} ${file}: does not exist. Fix: check the path, or leave the flag out to use the ccm's own kubeconfig`,
          );
        else if (file) inputs.check(() => loadKubeConfig(file));
      }
      const controllers = inputs.check(() => selectControllers(opts.controllers));
      const cidrs = opts.clusterCidr === undefined || inputs.check(() => clusterCidrFlag(opts.clusterCidr!));
      const kubeConfig = inputs.check(() => loadKubeConfig(flags.kubeconfig));
      const loadContext = processContext(ctx.signal);
      const path = flags.cloudConfig;
      const config = path ? await inputs.checkAsync(() => checkCcmConfigFile(path, loadContext)) : undefined;
      if (config && controllers && cidrs) inputs.check(() => routeSetup(opts, config, controllers));
      inputs.done();

      for (const w of warnings) ctx.log().warn(w);
      const ccm = await buildCcm(opts, {
        log: ctx.log(),
        loadContext,
        ...(kubeConfig ? { kubeConfig } : {}),
      });
      await ccm.run(ctx.signal);
    });
  acceptEveryFlag(addCompatFlags(command));
}
