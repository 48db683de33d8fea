/**
 * `shiftstack sim kube-controller-manager`: the stand-in of kube-controller-manager's in-tree
 * OpenStack cloud loops (src/demo/intree), with KCM's flag names and defaults. The demo's and the
 * tests' other side of a migration to `shiftstack ccm`; never part of a production command.
 */
import { Option, type Command } from 'commander';
import type { CliContext } from '../context.ts';
import { acceptEveryFlag, Inputs } from '../inputs.ts';
import { durationFlag, goBool, intFlag, seconds, leaseTimingOptions } from '../upstream-flags.ts';
import { parsePositive } from './sim.ts';

interface Flags {
  cloudProvider: string;
  cloudConfig?: string;
  kubeconfig?: string;
  controllers: string[];
  leaderElect: boolean;
  leaderElectLeaseDuration: string;
  leaderElectRenewDeadline: string;
  leaderElectRetryPeriod: string;
  leaderElectResourceName: string;
  leaderElectResourceNamespace: string;
  enableLeaderMigration: boolean;
  leaderMigrationConfig?: string;
  nodeMonitorPeriod: string;
  concurrentServiceSyncs: number;
  userAgent: string[];
  timeScale: number;
}

const ALL = ['*'];

export function registerSimKcm(sim: Command, ctx: CliContext): void {
  // kube-controller-manager's own defaults (15 s, 10 s, 2 s).
  const timings = leaseTimingOptions({
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
  });
  const command = sim
    .command('kube-controller-manager')
    .description(
      "stand in for kube-controller-manager's in-tree OpenStack cloud loops (service, cloud-node-lifecycle) as they ran before 1.26: the side a migration to shiftstack ccm starts from",
    )
    .option(
      '--cloud-provider <name>',
      'openstack runs the in-tree cloud loops; external (or none) runs none',
      '',
    )
    .option('--cloud-config <file>', "the in-tree provider's cloud.conf")
    .option(
      '--kubeconfig <file>',
      'kubeconfig of the cluster (default: KUBECONFIG, ~/.kube/config, then in-cluster)',
    )
    .option(
      '--controllers <list>',
      'controllers to run: "*", a name, "-name"; the cloud loops are service, cloud-node-lifecycle, route (not emulated)',
      // Repeated flags add up; the default is replaced by the first explicit value.
      (v: string, prev: string[]) => [...(prev === ALL ? [] : prev), ...v.split(',')],
      ALL,
    )
    .addOption(
      new Option('--leader-elect [bool]', 'campaign for a Lease before running controllers')
        .default(true)
        .argParser(goBool),
    )
    .addOption(timings.leaseDuration)
    .addOption(timings.renewDeadline)
    .addOption(timings.retryPeriod)
    .option('--leader-elect-resource-name <name>', 'the Lease name', 'kube-controller-manager')
    .option(
      '--leader-elect-resource-namespace <namespace>',
      'the Lease namespace (the migration Lease too)',
      'kube-system',
    )
    .addOption(
      new Option(
        '--enable-leader-migration [bool]',
        'KEP-2436: run the cloud loops only while holding the migration Lease too (component kube-controller-manager)',
      )
        .default(false)
        .argParser(goBool),
    )
    .option('--leader-migration-config <file>', "a LeaderMigrationConfiguration; default: upstream's")
    .option(
      '--node-monitor-period <duration>',
      'how often NotReady Nodes are checked against Nova',
      seconds(5_000),
    )
    .option(
      '--concurrent-service-syncs <n>',
      'Services synced at once (each blocks its worker while Octavia works)',
      intFlag(1),
      1,
    )
    .option(
      '--user-agent <data>',
      'put before shiftstack-kube-controller-manager in the User-Agent of OpenStack calls (repeatable)',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      '--time-scale <factor>',
      "multiply the in-tree provider's waits and back-offs (0.1 = ten times faster)",
      parsePositive,
      1,
    )
    .action(async (flags: Flags, cmd: Command) => {
      const inputs = new Inputs('shiftstack sim kube-controller-manager', cmd);
      if (!['', 'openstack', 'external'].includes(flags.cloudProvider))
        inputs.add(
          `--cloud-provider: "${flags.cloudProvider}" is not emulated; write --cloud-provider=openstack (in-tree) or external`,
        );
      // Loaded here: `sim openstack` and `sim kube` never load the stand-in.
      const { buildInTreeKcm, kcmLeaderMigration, selectCloudLoops, KCM_DEFAULTS } =
        await import('../../demo/intree/kcm.ts');
      const { loadKubeConfig } = await import('../../kube/index.ts');
      const { checkCcmConfigFile } = await import('../../ccm/config/cloud-conf.ts');
      const { processContext } = await import('../../openstack/config/context.ts');
      const duration = (flag: string, text: string) => inputs.check(() => durationFlag(flag, text)) ?? 0;
      const opts = {
        ...KCM_DEFAULTS,
        cloudProvider: flags.cloudProvider,
        cloudConfig: flags.cloudConfig,
        kubeconfig: flags.kubeconfig,
        controllers: flags.controllers,
        leaderElect: flags.leaderElect,
        leaseDurationMs: duration('--leader-elect-lease-duration', flags.leaderElectLeaseDuration),
        renewDeadlineMs: duration('--leader-elect-renew-deadline', flags.leaderElectRenewDeadline),
        retryPeriodMs: duration('--leader-elect-retry-period', flags.leaderElectRetryPeriod),
        leaseName: flags.leaderElectResourceName,
        leaseNamespace: flags.leaderElectResourceNamespace,
        enableLeaderMigration: flags.enableLeaderMigration,
        leaderMigrationConfig: flags.leaderMigrationConfig,
        nodeMonitorPeriodMs: duration('--node-monitor-period', flags.nodeMonitorPeriod),
        concurrentServiceSyncs: flags.concurrentServiceSyncs,
        userAgent: flags.userAgent,
        timeScale: flags.timeScale,
      };
      if (opts.cloudProvider === 'openstack' && !opts.cloudConfig)
        inputs.add(
          "--cloud-config: missing. Fix: give the in-tree provider's cloud.conf with --cloud-provider=openstack",
        );
      inputs.check(() => selectCloudLoops(opts.controllers));
      const migration = await inputs.checkAsync(() => kcmLeaderMigration(opts, ctx.signal));
      for (const w of migration?.warnings ?? []) inputs.warn(w);
      const kubeConfig = inputs.check(() => loadKubeConfig(flags.kubeconfig));
      const loadContext = processContext(ctx.signal);
      if (opts.cloudProvider === 'openstack' && opts.cloudConfig) {
        const path = opts.cloudConfig;
        await inputs.checkAsync(() => checkCcmConfigFile(path, loadContext));
      }
      inputs.done();

      const kcm = await buildInTreeKcm(opts, {
        log: ctx.log().child({ component: 'sim-kube-controller-manager' }),
        loadContext,
        ...(kubeConfig ? { kubeConfig } : {}),
      });
      await kcm.run(ctx.signal);
    });
  acceptEveryFlag(command);
}
