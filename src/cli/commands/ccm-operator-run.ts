/**
 * `shiftstack ccm-operator run`: the operator itself, with upstream's flag names and defaults
 * (cluster-cloud-controller-manager-operator's `main.go`, component-base's leader election
 * flags): `--namespace`, `--images-json`, `--metrics-bind-address`, `--health-addr`,
 * `--leader-elect*`. Every input is checked before anything starts; problems exit 2, all
 * reported together. Runs until SIGTERM/SIGINT; exits non-zero when it loses its lease.
 */
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { NODE_ROOT_CERTIFICATES } from '../../ccm-operator/controllers/trusted-ca.ts';
import { readImagesFile } from '../../ccm-operator/images.ts';
import { buildCcmOperator, CCM_OPERATOR_DEFAULTS, type CcmOperatorOptions } from '../../ccm-operator/cmd.ts';
import { UsageError } from '../../lib/config.ts';
import { checkPemBundle } from '../../lib/pem.ts';
import { loadKubeConfig } from '../../kube/index.ts';
import type { CliContext } from '../context.ts';
import { acceptEveryFlag, Inputs } from '../inputs.ts';
import { durationFlag, goBool, listenAddress, leaseTimingOptions } from '../upstream-flags.ts';

interface RunFlags {
  kubeconfig?: string;
  leaderElect: boolean;
  leaderElectLeaseDuration: string;
  leaderElectRenewDeadline: string;
  leaderElectRetryPeriod: string;
  leaderElectResourceName: string;
  leaderElectResourceNamespace?: string;
  leaderElectResourceLock: string;
  namespace: string;
  managedNamespace?: string;
  operatorNamespace?: string;
  imagesJson?: string;
  systemCaBundle: string;
  openstackCcm: CcmOperatorOptions['openstackCcm'];
  metricsBindAddress: string;
  healthAddr: string;
}

/** Adds `run` under `shiftstack ccm-operator`. */
export function configureRun(parent: Command, ctx: CliContext): void {
  const d = CCM_OPERATOR_DEFAULTS;
  const timings = leaseTimingOptions(d);
  const cmd = parent
    .command('run')
    .description(
      "run the operator: sync the cloud config and the trust bundle, deploy the platform's cloud controller manager, report the ClusterOperator",
    )
    .option(
      '--kubeconfig <file>',
      'kubeconfig of the cluster (default: KUBECONFIG, ~/.kube/config, then in-cluster)',
    )
    .addOption(
      new Option('--leader-elect [bool]', 'campaign for a Lease before running the controllers')
        .default(d.leaderElect)
        .argParser(goBool),
    )
    .addOption(timings.leaseDuration)
    .addOption(timings.renewDeadline)
    .addOption(timings.retryPeriod)
    .option('--leader-elect-resource-name <name>', 'the Lease', d.leaseName)
    .option(
      '--leader-elect-resource-namespace <namespace>',
      "the Lease's namespace (default: the operator's)",
    )
    .option('--leader-elect-resource-lock <kind>', 'the lock kind; only leases is supported', 'leases')
    .option(
      '--namespace <namespace>',
      'where the cloud controller manager, cloud-conf and ccm-trusted-ca go',
      d.managedNamespace,
    )
    .addOption(new Option('--managed-namespace <namespace>', 'same as --namespace').hideHelp())
    .option(
      '--operator-namespace <namespace>',
      "where the images ConfigMap cloud-controller-manager-images is (default: the pod's, else openshift-cloud-controller-manager-operator)",
    )
    .option(
      '--images-json <file>',
      'the images file (images.json of the ConfigMap, mounted); without it the ConfigMap is read and watched through the API',
    )
    .option(
      '--system-ca-bundle <file>',
      "the system's CA bundle, the base of the CCM's trust bundle; `node`: the CA certificates Node.js trusts",
      d.systemTrustBundle,
    )
    .addOption(
      new Option('--openstack-ccm <which>', "OpenStack's CCM: shiftstack ccm, or upstream OCCM")
        .choices(['shiftstack', 'upstream'])
        .default(d.openstackCcm),
    )
    .option(
      '--metrics-bind-address <address>',
      'where /metrics is served (plain HTTP); 0 turns it off',
      ':8080',
    )
    .option(
      '--health-addr <address>',
      'where /healthz and /readyz are served (plain HTTP); 0 turns it off',
      ':9440',
    )
    .addHelpText(
      'after',
      '\nThe version reported on the ClusterOperator is RELEASE_VERSION (unknown when unset), as upstream.',
    )
    .action(async (flags: RunFlags, command: Command) => {
      const inputs = new Inputs('shiftstack ccm-operator run', command);
      const duration = (flag: string, text: string) => inputs.check(() => durationFlag(flag, text)) ?? 0;
      if (flags.leaderElectResourceLock !== 'leases') {
        inputs.add(
          `--leader-elect-resource-lock=${flags.leaderElectResourceLock} is not supported: the operator takes a Lease; leave the flag out or write leases`,
        );
      }
      if (
        flags.managedNamespace &&
        flags.namespace !== d.managedNamespace &&
        flags.managedNamespace !== flags.namespace
      ) {
        inputs.add(
          `--namespace=${flags.namespace} and --managed-namespace=${flags.managedNamespace} disagree: give one of them`,
        );
      }
      // The operator reads it again at each reconcile (a mounted ConfigMap changes in place) and
      // reports its unknown keys then.
      if (flags.imagesJson)
        await inputs.checkAsync(() => readImagesFile(flags.imagesJson!, { flag: '--images-json' }));
      inputs.check(() => {
        if (flags.systemCaBundle === NODE_ROOT_CERTIFICATES) return;
        const pem = checkPemBundle(
          readText(
            flags.systemCaBundle,
            '--system-ca-bundle',
            'give the system CA bundle, or --system-ca-bundle=node for Node.js’s own CA certificates',
          ),
        );
        if (!pem.ok) {
          inputs.add(
            `--system-ca-bundle ${flags.systemCaBundle}: ${pem.problem}; point it at a PEM bundle of CA certificates`,
          );
        }
      });
      const opts: CcmOperatorOptions = {
        kubeconfig: flags.kubeconfig,
        leaderElect: flags.leaderElect,
        leaseDurationMs: duration('--leader-elect-lease-duration', flags.leaderElectLeaseDuration),
        renewDeadlineMs: duration('--leader-elect-renew-deadline', flags.leaderElectRenewDeadline),
        retryPeriodMs: duration('--leader-elect-retry-period', flags.leaderElectRetryPeriod),
        leaseName: flags.leaderElectResourceName,
        leaseNamespace: flags.leaderElectResourceNamespace,
        managedNamespace: flags.managedNamespace ?? flags.namespace,
        operatorNamespace: flags.operatorNamespace,
        imagesFile: flags.imagesJson,
        systemTrustBundle: flags.systemCaBundle,
        openstackCcm: flags.openstackCcm,
        releaseVersion: process.env.RELEASE_VERSION || d.releaseVersion,
        health: inputs.check(() => listenAddress('--health-addr', flags.healthAddr)),
        metrics: inputs.check(() => listenAddress('--metrics-bind-address', flags.metricsBindAddress)),
      };
      const kubeConfig = inputs.check(() => loadKubeConfig(flags.kubeconfig));
      inputs.done();

      const operator = buildCcmOperator(opts, { log: ctx.log(), ...(kubeConfig ? { kubeConfig } : {}) });
      await operator.run(ctx.signal);
    });
  acceptEveryFlag(cmd);
}

/** A file's text, or a UsageError naming the flag (kept by Inputs as a problem). */
function readText(path: string, flag: string, fix: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      `${flag} ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}). Fix: ${fix}`,
    );
  }
}
