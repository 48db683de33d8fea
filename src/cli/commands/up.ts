/**
 * `shiftstack up` (what `npm start` runs): the whole system on the emulators, no cloud and no
 * cluster needed (src/demo). With `--kubeconfig`, `--os-cloud` or `--cloud-config` it runs the
 * same controllers against a real cluster and cloud instead, and creates no demo objects.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { buildCapo, CAPO_DEFAULTS } from '../../capo/cmd.ts';
import { buildCcm, CCM_DEFAULTS } from '../../ccm/cmd.ts';
import { checkCcmConfigFile } from '../../ccm/config/cloud-conf.ts';
import { runDemo } from '../../demo/run.ts';
import { loadKubeConfig } from '../../kube/index.ts';
import type { Logger } from '../../lib/log.ts';
import { processContext } from '../../openstack/config/context.ts';
import { ExitCodeError, type CliContext } from '../context.ts';
import { acceptEveryFlag, Inputs } from '../inputs.ts';
import { parsePort, parsePositive, untilStopped } from './sim.ts';

/**
 * Realistic delays × 0.4: a server boots in 4 s, an amphora load balancer takes 12 s, and the whole
 * `--once` run about a minute.
 */
export const DEFAULT_TIME_SCALE = 0.4;

interface Flags {
  once?: boolean;
  timeScale: number;
  port: number;
  kubeconfig?: string;
  osCloud?: string;
  cloudConfig?: string;
}

/** `shiftstack up`'s flags and action, on the command main.ts made (name and description). */
export function configureUp(command: Command, ctx: CliContext): void {
  command
    .option('--once', 'run the scenario, tear everything down, check that nothing leaked, and exit')
    .option(
      '--time-scale <factor>',
      "multiply the realistic profile's delays (1 = a real cloud's pace)",
      parsePositive,
      DEFAULT_TIME_SCALE,
    )
    .option('--port <port>', 'port of the OpenStack emulator (0 picks a free one)', parsePort, 0)
    .option('--kubeconfig <file>', 'run the controllers against this cluster instead of the emulator')
    .option('--os-cloud <name>', "the ccm's cloud: this clouds.yaml entry (instead of the emulator)")
    .option('--cloud-config <file>', "the ccm's cloud: this OCCM cloud.conf (instead of the emulator)")
    .action(async (opts: Flags, cmd: Command) => {
      const log = ctx.log();
      // The demo prints its own progress; the controllers' info lines would drown it.
      const controllersLog = log.child({}, { level: log.level === 'info' ? 'warn' : log.level });
      const inputs = new Inputs('shiftstack up', cmd);
      const real =
        opts.kubeconfig !== undefined || opts.osCloud !== undefined || opts.cloudConfig !== undefined;
      if (real) {
        if (opts.once) {
          inputs.add(
            '--once: it runs the demo on the emulators, so it cannot be used with --kubeconfig, --os-cloud or --cloud-config. Fix: leave --once out, or those flags',
          );
        }
        await runReal(opts, ctx, log, inputs);
        return;
      }
      inputs.done();
      // The live view is drawn only when the output goes straight to a terminal.
      const tty = process.stdout.isTTY ? process.stdout : undefined;
      const code = await runDemo({
        once: opts.once ?? false,
        timeScale: opts.timeScale,
        port: opts.port,
        dir: join(process.cwd(), '.shiftstack'),
        out: ctx.out,
        tty: tty ? { write: (t) => void tty.write(t), columns: tty.columns } : undefined,
        log: controllersLog,
        signal: ctx.signal,
        untilStopped: () => untilStopped(ctx.signal),
      });
      if (code !== 0) throw new ExitCodeError(code, 'not every step of the demo held');
    });
  acceptEveryFlag(command);
}

/**
 * Real mode: the controllers against the user's cluster and cloud. The ccm needs a cloud: a
 * cloud.conf, or a clouds.yaml entry (read through cloud.conf's `use-clouds`, as OCCM does).
 */
async function runReal(opts: Flags, ctx: CliContext, log: Logger, inputs: Inputs): Promise<void> {
  // Every input is checked before anything starts; all problems are reported together.
  const kubeConfig = inputs.check(() => loadKubeConfig(opts.kubeconfig));
  let tmp: string | undefined;
  let cloudConfig = opts.cloudConfig;
  if (!cloudConfig && opts.osCloud) {
    tmp = await mkdtemp(join(tmpdir(), 'shiftstack-up-'));
    cloudConfig = join(tmp, 'cloud.conf');
    await writeFile(cloudConfig, `[Global]\nuse-clouds = true\ncloud = ${opts.osCloud}\n`, { mode: 0o600 });
  }
  try {
    const loadContext = processContext(ctx.signal);
    if (!cloudConfig) {
      inputs.add('the ccm needs a cloud: give --cloud-config <cloud.conf> or --os-cloud <clouds.yaml entry>');
    } else {
      const path = cloudConfig;
      await inputs.checkAsync(() => checkCcmConfigFile(path, loadContext));
    }
    inputs.done();
    if (!kubeConfig || !cloudConfig) return;
    const cluster = kubeConfig.getCurrentCluster()?.server ?? '(none)';
    ctx.out(`shiftstack up against the cluster at ${cluster} (no demo objects are created):`);
    const ccm = await buildCcm(
      { ...CCM_DEFAULTS, cloudConfig, securePort: 0 },
      { log: log.child({ component: 'ccm' }), kubeConfig, loadContext },
    );
    // CAPO finds its clouds in the identity Secrets the OpenStackClusters name, as upstream does.
    const capo = buildCapo(
      { ...CAPO_DEFAULTS, health: undefined },
      { log: log.child({ component: 'capo' }), kubeConfig },
    );
    ctx.out(
      `  ccm:  ${ccm.controllers.run.join(', ')} with ${opts.cloudConfig ?? `clouds.yaml cloud ${opts.osCloud}`} (leader election on)`,
    );
    ctx.out(
      '  capo: openstackcluster, openstackmachine, openstackserver, openstackmachinetemplate ' +
        '(credentials from the identity Secrets the clusters name; no leader election)',
    );
    ctx.out('serving until Ctrl-C');
    // One failing stops the other: a half-running set of controllers is not what was asked for.
    const stop = new AbortController();
    const signal = AbortSignal.any([ctx.signal, stop.signal]);
    const runs = [ccm.run(signal), capo.run(signal)].map((p) =>
      p.catch((err: unknown) => {
        stop.abort(err);
        throw err;
      }),
    );
    await Promise.all(runs);
  } finally {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  }
}
