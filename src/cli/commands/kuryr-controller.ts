/**
 * `shiftstack kuryr controller`: upstream's kuryr-k8s-controller with its oslo flags
 * (`--config-file`, repeatable, later files winning; `--config-dir`, every `*.conf` in it in name
 * order, after the files), `--debug`, plus `--kubeconfig`. Everything else comes from kuryr.conf: the
 * handlers, the cloud (`[neutron]`, else clouds.yaml / OS_*), HA on the Lease kuryr-controller
 * (`[kubernetes] controller_ha`), the health and metrics ports. Every problem with the inputs is
 * reported together before anything starts (exit 2); oslo.log's flags are accepted and each one
 * given is named in a warning.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { UsageError } from '../../lib/config.ts';
import { configureRootLogger, type LogFormat } from '../../lib/log.ts';
import { loadKubeConfig } from '../../kube/index.ts';
import { processContext } from '../../openstack/config/context.ts';
import { buildKuryrController, KURYR_LEASE_NAME, KuryrBuildError } from '../../kuryr/cmd.ts';
import { DEFAULT_CONFIG_FILE, loadKuryrConf } from '../../kuryr/config/kuryr-conf.ts';
import { neutronCloud } from '../../kuryr/config/neutron.ts';
import type { CliContext } from '../context.ts';
import { acceptEveryFlag, Inputs } from '../inputs.ts';
import { addCompatOptions, bool, compatWarnings, LOGS, value, type CompatFlag } from '../upstream-flags.ts';

interface Flags {
  debug?: boolean;
  configFile?: string[];
  configDir?: string[];
  kubeconfig?: string;
}

/** oslo.log's command-line flags, which upstream's manifests and scripts may pass. */
export const KURYR_COMPAT_FLAGS: readonly CompatFlag[] = [
  bool('verbose', LOGS),
  value('log-file', LOGS),
  value('log-dir', LOGS),
  value('log-config-append', LOGS),
  value('log-date-format', LOGS),
  bool('use-syslog', LOGS),
  bool('use-journal', LOGS),
  bool('use-json', `${LOGS} (--log-format=json)`),
  bool('use-eventlog', LOGS),
  bool('watch-log-file', LOGS),
  value('syslog-log-facility', LOGS),
];

export const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];

/**
 * `--config-file`s in order, then each `--config-dir`'s `*.conf` in name order (oslo's rule). A
 * directory that cannot be read is a problem of its own; the files found are still read.
 */
export async function configFiles(
  flags: Pick<Flags, 'configFile' | 'configDir'>,
  signal: AbortSignal,
  inputs: Inputs,
): Promise<string[]> {
  const files = [...(flags.configFile ?? [])];
  let unreadable = false;
  for (const dir of flags.configDir ?? []) {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      inputs.add(
        `--config-dir ${dir}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such directory' : (err as Error).message}. Fix: name the directory holding kuryr.conf`,
      );
      unreadable = true;
      continue;
    }
    signal.throwIfAborted();
    files.push(
      ...names
        .filter((n) => n.endsWith('.conf'))
        .sort()
        .map((n) => join(dir, n)),
    );
  }
  if (files.length === 0 && !unreadable) {
    throw new UsageError(
      `no kuryr.conf given${flags.configDir?.length ? ` (no *.conf in ${flags.configDir.join(', ')})` : ''}. Fix: pass --config-file ${DEFAULT_CONFIG_FILE} (or --config-dir with the directory holding it)`,
    );
  }
  return files;
}

function rootCommand(cmd: Command): Command {
  let c = cmd;
  while (c.parent) c = c.parent;
  return c;
}

/** oslo.config's `--config-file` and `--config-dir`, as the controller and the daemon take them. */
export function withOsloConfigFlags(command: Command): Command {
  return command
    .option(
      '--config-file <file>',
      'kuryr.conf (oslo.config INI); repeat it for more files, a later one winning',
      collect,
    )
    .option(
      '--config-dir <dir>',
      "every *.conf in the directory, in name order, after the --config-file's",
      collect,
    );
}

/** `shiftstack kuryr controller`'s flags and action, on the command kuryr.ts made. */
export function configureKuryrController(command: Command, ctx: CliContext): void {
  withOsloConfigFlags(command)
    .option('-d, --debug', "oslo's: log at debug level, as [DEFAULT] debug = true (--log-level, given, wins)")
    .option(
      '--kubeconfig <file>',
      "kubeconfig of the cluster (default: KUBECONFIG, ~/.kube/config, then the pod's service account)",
    )
    .addHelpText(
      'after',
      [
        '',
        `With [kubernetes] controller_ha = true, replicas campaign for the Lease ${KURYR_LEASE_NAME} in the`,
        "pod's namespace (POD_NAMESPACE) and only the leader runs the controllers. Without [neutron]",
        'auth options in kuryr.conf, the cloud comes from clouds.yaml (OS_CLOUD) or OS_* variables.',
        "oslo.log's other flags (--log-file, --use-syslog, …) are accepted; each one given is named in a warning.",
      ].join('\n'),
    )
    .action(async (flags: Flags, cmd: Command) => {
      const inputs = new Inputs('shiftstack kuryr controller', cmd);
      const warnings = compatWarnings(
        cmd,
        KURYR_COMPAT_FLAGS,
        undefined,
        'is not supported by shiftstack kuryr controller and is ignored',
      );
      for (const w of warnings) inputs.warn(w);
      const files = await inputs.checkAsync(() => configFiles(flags, ctx.signal, inputs));
      const conf = files?.length
        ? await inputs.checkAsync(() => loadKuryrConf(files, { component: 'controller', signal: ctx.signal }))
        : undefined;
      const cloud = conf
        ? await inputs.checkAsync(() => neutronCloud(conf.doc, processContext(ctx.signal)))
        : undefined;
      for (const w of [...(conf?.warnings ?? []), ...(cloud?.warnings ?? [])]) inputs.warn(w);
      const kubeConfig = inputs.check(() => loadKubeConfig(flags.kubeconfig));
      inputs.done();

      // `[DEFAULT] debug = true` is upstream's way to ask for debug logs; --log-level, given, wins.
      const globals = cmd.optsWithGlobals<{ logFormat: LogFormat }>();
      if ((flags.debug || conf!.debug) && rootCommand(cmd).getOptionValueSource('logLevel') !== 'cli') {
        configureRootLogger({ level: 'debug', format: globals.logFormat });
      }
      const log = ctx.log();
      for (const w of [...warnings, ...conf!.warnings, ...cloud!.warnings]) log.warn(w);
      log.info({ files, cloud: cloud!.from }, 'kuryr.conf read');
      let controller;
      try {
        controller = await buildKuryrController(
          { kubeconfig: flags.kubeconfig, options: conf!.options, cloud: cloud!.config },
          { log, ...(kubeConfig ? { kubeConfig } : {}) },
          ctx.signal,
        );
      } catch (err) {
        if (err instanceof KuryrBuildError) throw new UsageError(err.message);
        throw err;
      }
      await controller.run(ctx.signal);
    });
  acceptEveryFlag(command);
  addCompatOptions(command, KURYR_COMPAT_FLAGS);
}
