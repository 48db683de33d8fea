/**
 * `shiftstack kuryr daemon`: kuryr-daemon, one per node (a DaemonSet: host network, host PID,
 * privileged). kuryr.conf from upstream's oslo flags (`--config-file`, `--config-dir`, read as
 * `shiftstack kuryr controller` reads them), the node from `--node-name`, `NODE_NAME` or upstream's
 * `KUBERNETES_NODE_NAME`, the cluster from `--kubeconfig` (in a pod: its service account). With
 * `--cni-bin-dir` / `--cni-conf-dir` it first puts the plugin and its network configuration on the
 * host (src/kuryr/cni/install.ts). Serves the plugin on `[cni_daemon] bind_address`, metrics on
 * `[prometheus_exporter] cni_exporter_port`, health on 8090, until SIGTERM/SIGINT.
 */
import type { Command } from 'commander';
import { UsageError } from '../../lib/config.ts';
import { createRegistry } from '../../lib/metrics.ts';
import { KubeClient, loadKubeConfig } from '../../kube/index.ts';
import { loadKuryrConf } from '../../kuryr/config/kuryr-conf.ts';
import { bindingFor, startKuryrDaemon } from '../../kuryr/cni/daemon/daemon.ts';
import { installCni } from '../../kuryr/cni/install.ts';
import type { CliContext } from '../context.ts';
import { acceptEveryFlag, Inputs } from '../inputs.ts';
import { addCompatOptions, compatWarnings } from '../upstream-flags.ts';
import { VERSION } from '../version.ts';
import { configFiles, KURYR_COMPAT_FLAGS, withOsloConfigFlags } from './kuryr-controller.ts';

interface Flags {
  configFile?: string[];
  configDir?: string[];
  nodeName?: string;
  kubeconfig?: string;
  cniBinDir?: string;
  cniConfDir?: string;
}

/** The node this daemon serves: the flag, else NODE_NAME, else upstream's KUBERNETES_NODE_NAME. */
export function nodeNameOf(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  return flag || env.NODE_NAME || env.KUBERNETES_NODE_NAME || undefined;
}

export function configureKuryrDaemon(command: Command, ctx: CliContext): void {
  withOsloConfigFlags(command)
    .option('--node-name <name>', "this node's name (default: NODE_NAME, else KUBERNETES_NODE_NAME)")
    .option(
      '--kubeconfig <file>',
      "kubeconfig of the cluster (default: KUBECONFIG, ~/.kube/config, then the pod's service account)",
    )
    .option(
      '--cni-bin-dir <dir>',
      'put the kuryr-cni plugin here first (the host CNI bin directory, /opt/cni/bin)',
    )
    .option(
      '--cni-conf-dir <dir>',
      'put 10-kuryr.conflist here first (the host CNI conf directory, /etc/cni/net.d)',
    )
    .action(async (flags: Flags, cmd: Command) => {
      const inputs = new Inputs('shiftstack kuryr daemon', cmd);
      const warnings = compatWarnings(
        cmd,
        KURYR_COMPAT_FLAGS,
        undefined,
        'is not supported by shiftstack kuryr daemon and is ignored',
      );
      for (const w of warnings) inputs.warn(w);
      const nodeName = nodeNameOf(flags.nodeName, process.env);
      if (!nodeName)
        inputs.add(
          'the node is not known. Fix: give --node-name, or set NODE_NAME or KUBERNETES_NODE_NAME (in a DaemonSet: valueFrom.fieldRef spec.nodeName)',
        );
      const files = await inputs.checkAsync(() => configFiles(flags, ctx.signal, inputs));
      const conf = files
        ? await inputs.checkAsync(() => loadKuryrConf(files, { component: 'daemon', signal: ctx.signal }))
        : undefined;
      for (const w of conf?.warnings ?? []) inputs.warn(w);
      if (conf) inputs.check(() => bindingFor(conf.options));
      const kubeConfig = inputs.check(() => loadKubeConfig(flags.kubeconfig));
      inputs.done();
      if (!conf || !kubeConfig || !nodeName) throw new UsageError('the inputs were not checked');

      const log = ctx.log().child({ node: nodeName });
      for (const w of [...warnings, ...conf.warnings]) log.warn(w);
      log.info({ files }, 'kuryr.conf read');
      const installed = await installCni({
        binDir: flags.cniBinDir,
        confDir: flags.cniConfDir,
        bindAddress: conf.options.cniDaemon.bindAddress,
      });
      if (installed.length > 0) log.info({ files: installed }, 'CNI plugin and configuration installed');
      const registry = createRegistry();
      const client = new KubeClient(kubeConfig, {
        userAgent: `shiftstack-kuryr-daemon/${VERSION}`,
        log,
        registry,
      });
      try {
        const daemon = await startKuryrDaemon({ client, nodeName, options: conf.options, log, registry });
        const stopped = new Promise<void>((resolve) => {
          if (ctx.signal.aborted) resolve();
          ctx.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        try {
          // The KuryrPort watch ends only with the daemon: if it ends first, so does the process.
          await Promise.race([stopped, daemon.done]);
        } finally {
          await daemon.stop();
        }
      } finally {
        await client.close();
      }
    });
  acceptEveryFlag(command);
  addCompatOptions(command, KURYR_COMPAT_FLAGS);
}
