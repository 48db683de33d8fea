/**
 * `shiftstack ccm`: the cloud controller manager, with upstream's flag names and defaults
 * (openstack-cloud-controller-manager's). Flag and config errors exit 2 with what to fix; the
 * process runs until SIGTERM/SIGINT and exits non-zero when it loses its lease.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { buildCcm, CCM_DEFAULTS, CcmUsageError, durationFlag, type CcmOptions } from '../../ccm/cmd.ts';
import { processContext } from '../../openstack/config/context.ts';
import type { CliContext } from '../context.ts';

interface Flags {
  cloudConfig: string;
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
  securePort: number;
  bindAddress: string;
}

const seconds = (ms: number) => `${ms / 1000}s`;

function boolFlag(value: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidArgumentError('write true or false');
}

function intFlag(min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`write a whole number ≥ ${min}`);
    return n;
  };
}

function listFlag(value: string, previous: string[] | undefined): string[] {
  // Repeated flags add up; the default ["*"] is replaced by the first explicit value.
  const items = value.split(',').map((s) => s.trim());
  return previous && previous !== CCM_DEFAULTS.controllers ? [...previous, ...items] : items;
}

export function registerCcm(program: Command, ctx: CliContext): void {
  const d = CCM_DEFAULTS;
  program
    .command('ccm')
    .description(
      'the OpenStack cloud controller manager, a drop-in for openstack-cloud-controller-manager: node controllers (the service controller is not built yet)',
    )
    .requiredOption(
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
    .option(
      '--leader-elect-lease-duration <duration>',
      'how long a standby waits before taking the lease',
      seconds(d.leaseDurationMs),
    )
    .option(
      '--leader-elect-renew-deadline <duration>',
      'how long the leader retries renewing before giving up',
      seconds(d.renewDeadlineMs),
    )
    .option('--leader-elect-retry-period <duration>', 'time between lease attempts', seconds(d.retryPeriodMs))
    .option('--leader-elect-resource-name <name>', 'the Lease name', d.leaseName)
    .option('--leader-elect-resource-namespace <namespace>', 'the Lease namespace', d.leaseNamespace)
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
      '--secure-port <port>',
      'port of /healthz, /readyz and /metrics (plain HTTP); 0 disables them',
      intFlag(0),
      d.securePort,
    )
    .option('--bind-address <address>', 'address of that port', d.bindAddress)
    .action(async (flags: Flags, cmd: Command) => {
      let opts: CcmOptions;
      try {
        opts = {
          cloudConfig: flags.cloudConfig,
          kubeconfig: flags.kubeconfig,
          clusterName: flags.clusterName,
          leaderElect: flags.leaderElect,
          leaseDurationMs: durationFlag('--leader-elect-lease-duration', flags.leaderElectLeaseDuration),
          renewDeadlineMs: durationFlag('--leader-elect-renew-deadline', flags.leaderElectRenewDeadline),
          retryPeriodMs: durationFlag('--leader-elect-retry-period', flags.leaderElectRetryPeriod),
          leaseName: flags.leaderElectResourceName,
          leaseNamespace: flags.leaderElectResourceNamespace,
          controllers: flags.controllers,
          nodeMonitorPeriodMs: durationFlag('--node-monitor-period', flags.nodeMonitorPeriod),
          nodeStatusUpdateFrequencyMs: durationFlag(
            '--node-status-update-frequency',
            flags.nodeStatusUpdateFrequency,
          ),
          concurrentNodeSyncs: flags.concurrentNodeSyncs,
          securePort: flags.securePort,
          bindAddress: flags.bindAddress,
        };
        const ccm = await buildCcm(opts, { log: ctx.log(), loadContext: processContext(ctx.signal) });
        await ccm.run(ctx.signal);
      } catch (err) {
        // commander's error() exits 2 through main (a usage error the user can fix).
        if (err instanceof CcmUsageError) cmd.error(`shiftstack ccm: ${err.message}`, { exitCode: 2 });
        throw err;
      }
    });
}
