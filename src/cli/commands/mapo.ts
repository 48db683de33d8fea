/**
 * `shiftstack mapo`: OpenShift's Machine API provider for OpenStack, with MAPO's flag names and
 * defaults (its `cmd/manager/main.go`, and the `--max-concurrent-reconciles` and `--feature-gates`
 * of OpenShift's newer Machine API providers). Flag errors exit 2 with what to fix; the process runs
 * until SIGTERM/SIGINT and exits non-zero when it loses its lease.
 *
 * The CLI composes the parts (mapo imports none of capo's code): it builds capo's ScopeCache on
 * mapo's manager, with MAPO's CA fallback (ConfigMap `openshift-config/cloud-provider-config`, key
 * `ca-bundle.pem`, read uncached), and registers capo's OpenStackServer controller on the same
 * manager unless `--openstackserver-controller=false` (when a `shiftstack capo` of the cluster
 * runs it: one OpenStackServer controller per cluster). klog's flags are accepted so the
 * machine-api-operator's Deployment keeps working; each one given is named in a warning.
 */
import { Option, type Command } from 'commander';
import { UsageError } from '../../lib/config.ts';
import { registerOpenStackServerController } from '../../capo/controllers/openstackserver.ts';
import { ScopeCache } from '../../capo/identity.ts';
import { isNotFound, kinds, loadKubeConfig, type Manager } from '../../kube/index.ts';
import {
  buildMapo,
  MACHINE_API_MIGRATION_GATE,
  MAPO_DEFAULTS,
  MAPO_LEASE_NAME,
  type MapoOptions,
} from '../../mapo/cmd.ts';
import type { CliContext } from '../context.ts';
import { acceptEveryFlag, Inputs } from '../inputs.ts';
import {
  addCompatOptions,
  compatWarnings as warningsFor,
  durationFlag,
  goBool,
  intFlag,
  leaseTimingOptions,
  listenAddress,
  LOG_FLAGS,
  LOGS,
  value,
  type CompatFlag,
} from '../upstream-flags.ts';
import { VERSION } from '../version.ts';

/** Where MAPO finds the CA bundle for a clouds Secret without `cacert`. */
export const CA_BUNDLE_CONFIGMAP = { namespace: 'openshift-config', name: 'cloud-provider-config' };
export const CA_BUNDLE_KEY = 'ca-bundle.pem';

interface Flags {
  kubeconfig?: string;
  namespace?: string;
  leaderElect: boolean;
  leaderElectLeaseDuration: string;
  leaderElectRenewDeadline: string;
  leaderElectRetryPeriod: string;
  leaderElectResourceNamespace?: string;
  maxConcurrentReconciles: number;
  healthAddr: string;
  metricsBindAddress: string;
  metricsAddr?: string;
  featureGates?: string[];
  scopeCacheMaxSize: number;
  openstackserverController: boolean;
  actAsMachineApiOperator: boolean;
  version?: string | boolean;
}

/** Flags of MAPO's manager (klog's) that shiftstack does not support; see upstream-flags.ts. */
export const MAPO_COMPAT_FLAGS: readonly CompatFlag[] = [value('v', LOGS), ...LOG_FLAGS];

/** The warnings for the compatibility flags given. */
export function compatWarnings(cmd: Command): string[] {
  return warningsFor(
    cmd,
    MAPO_COMPAT_FLAGS,
    undefined,
    'is not supported yet by shiftstack mapo and is ignored',
  );
}

/**
 * `--feature-gates` as component-base reads it: `Name=bool` pairs, comma-separated, repeatable.
 * MachineAPIMigration is the one gate mapo acts on; other gates of OpenShift's list are accepted
 * and named in a warning (they change nothing here).
 */
export function featureGates(values: readonly string[]): { machineAPIMigration: boolean; ignored: string[] } {
  let machineAPIMigration = MAPO_DEFAULTS.machineAPIMigration;
  const ignored: string[] = [];
  for (const pair of values.flatMap((v) => v.split(',')).map((p) => p.trim())) {
    if (pair === '') continue;
    const m = /^([A-Za-z0-9]+)=(.*)$/.exec(pair);
    let on: boolean | undefined;
    try {
      on = m ? goBool(m[2]!) : undefined;
    } catch {
      on = undefined;
    }
    if (!m || on === undefined) {
      throw new UsageError(
        `--feature-gates: "${pair}" is not Name=true or Name=false; e.g. --feature-gates=${MACHINE_API_MIGRATION_GATE}=true`,
      );
    }
    if (m[1] === MACHINE_API_MIGRATION_GATE) machineAPIMigration = on;
    else ignored.push(m[1]!);
  }
  return { machineAPIMigration, ignored };
}

/** MAPO's CA fallback: the bundle of `openshift-config/cloud-provider-config`, read each time (never cached). */
export function cloudProviderConfigCA(manager: Manager) {
  return async (signal: AbortSignal | undefined): Promise<string | undefined> => {
    try {
      const cm = await manager.api.get(kinds.ConfigMap, CA_BUNDLE_CONFIGMAP, { signal });
      return cm.data?.[CA_BUNDLE_KEY] || undefined;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
}

/** `shiftstack mapo`'s flags and action, on the command main.ts made (name and description). */
export function configureMapo(command: Command, ctx: CliContext): void {
  const d = MAPO_DEFAULTS;
  const timings = leaseTimingOptions(d);
  command
    .option(
      '--kubeconfig <file>',
      'kubeconfig of the cluster (default: KUBECONFIG, ~/.kube/config, then in-cluster)',
    )
    .option(
      '--namespace <namespace>',
      'watch Machines and MachineSets of this namespace only (default: every namespace)',
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
      `the namespace of the Lease ${MAPO_LEASE_NAME} (default: the pod's: POD_NAMESPACE, the service account's, the kubeconfig context's)`,
    )
    .option(
      '--max-concurrent-reconciles <n>',
      'objects each controller reconciles at once',
      intFlag(1),
      d.maxConcurrentReconciles,
    )
    .option(
      '--health-addr <address>',
      'where /healthz and /readyz are served (plain HTTP); 0 turns it off',
      ':9440',
    )
    .option(
      '--metrics-bind-address <address>',
      'where /metrics is served (plain HTTP); 0 turns it off',
      ':8081',
    )
    .addOption(new Option('--metrics-addr <address>', 'the older name of --metrics-bind-address').hideHelp())
    .addOption(
      new Option(
        '--feature-gates <gates>',
        `Name=bool pairs, comma-separated; ${MACHINE_API_MIGRATION_GATE}=true runs the migration controller (Machines switched between the Machine API and Cluster API by spec.authoritativeAPI)`,
      ).argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]),
    )
    .option(
      '--scope-cache-max-size <n>',
      'OpenStack clients (one per identity) kept, as shiftstack capo',
      intFlag(1),
      10,
    )
    .addOption(
      new Option(
        '--openstackserver-controller [bool]',
        "run capo's OpenStackServer controller in this process, which builds each Machine's server; false only where a shiftstack capo of the same cluster runs it",
      )
        .default(true)
        .argParser(goBool),
    )
    .addOption(
      new Option(
        '--act-as-machine-api-operator [bool]',
        "also run the machine-api-operator's MachineSet, nodelink and drain controllers; only where no machine-api-operator runs (plain Kubernetes, demos)",
      )
        .default(d.actAsMachineAPIOperator)
        .argParser(goBool),
    )
    .addOption(new Option('--version [bool]', "MAPO's: print the version").hideHelp().argParser(goBool))
    .action(async (flags: Flags, cmd: Command) => {
      if (flags.version !== undefined && flags.version !== false && !Inputs.isBad(flags.version)) {
        ctx.out(VERSION);
        return;
      }
      const inputs = new Inputs('shiftstack mapo', cmd);
      const warnings = compatWarnings(cmd);
      const gates = inputs.check(() => featureGates(flags.featureGates ?? []));
      for (const g of gates?.ignored ?? []) {
        warnings.push(
          `--feature-gates: ${g} is not a gate shiftstack mapo acts on and is ignored (only ${MACHINE_API_MIGRATION_GATE})`,
        );
      }
      for (const w of warnings) inputs.warn(w);
      const duration = (flag: string, text: string) => inputs.check(() => durationFlag(flag, text)) ?? 0;
      const metricsFlag = flags.metricsAddr !== undefined ? '--metrics-addr' : '--metrics-bind-address';
      const opts: MapoOptions = {
        kubeconfig: flags.kubeconfig,
        namespace: flags.namespace || undefined,
        leaderElect: flags.leaderElect,
        leaseDurationMs: duration('--leader-elect-lease-duration', flags.leaderElectLeaseDuration),
        renewDeadlineMs: duration('--leader-elect-renew-deadline', flags.leaderElectRenewDeadline),
        retryPeriodMs: duration('--leader-elect-retry-period', flags.leaderElectRetryPeriod),
        leaseNamespace: flags.leaderElectResourceNamespace,
        maxConcurrentReconciles: flags.maxConcurrentReconciles,
        health: inputs.check(() => listenAddress('--health-addr', flags.healthAddr)),
        metrics: inputs.check(() =>
          listenAddress(metricsFlag, flags.metricsAddr ?? flags.metricsBindAddress),
        ),
        syncPeriodMs: d.syncPeriodMs,
        machineAPIMigration: gates?.machineAPIMigration ?? false,
        actAsMachineAPIOperator: flags.actAsMachineApiOperator,
      };
      const kubeConfig = inputs.check(() => loadKubeConfig(flags.kubeconfig));
      inputs.done();

      const log = ctx.log();
      for (const w of warnings) log.warn(w);
      let scopes: ScopeCache | undefined;
      const mapo = await buildMapo(opts, {
        log,
        ...(kubeConfig ? { kubeConfig } : {}),
        scopes: (manager) =>
          (scopes = new ScopeCache({
            reader: manager.client,
            maxSize: flags.scopeCacheMaxSize,
            client: { log, registry: manager.registry, userAgent: 'shiftstack-mapo' },
            log,
            caFallback: cloudProviderConfigCA(manager),
          })),
        ...(flags.openstackserverController
          ? {
              extraControllers: (manager: Manager, { workers }: { workers: number }) =>
                registerOpenStackServerController(manager, scopes!, { workers }),
            }
          : {}),
      });
      try {
        await mapo.run(ctx.signal);
      } finally {
        await scopes?.close();
      }
    });
  acceptEveryFlag(addCompatFlags(command));
}

function addCompatFlags(command: Command): Command {
  addCompatOptions(command, MAPO_COMPAT_FLAGS);
  return command.addHelpText(
    'after',
    "\nklog's flags (--v, --logtostderr, …), which the machine-api-operator's Deployment passes, are accepted; " +
      'each one given is named in a warning at startup.',
  );
}
