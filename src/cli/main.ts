import { Command, CommanderError, Option } from 'commander';
import { ConfigError } from '../lib/config.ts';
import {
  configureRootLogger,
  LOG_FORMATS,
  LOG_LEVELS,
  rootLogger,
  type LogFormat,
  type LogLevel,
} from '../lib/log.ts';
import { registerCapo } from './commands/capo.ts';
import { registerCcm } from './commands/ccm.ts';
import { registerOpenstack } from './commands/openstack.ts';
import { registerSim } from './commands/sim.ts';
import { registerUp } from './commands/up.ts';
import { ExitCodeError, type CliContext } from './context.ts';
import { VERSION } from './version.ts';

export interface MainOptions {
  out?: (text: string) => void;
  err?: (text: string) => void;
  signal?: AbortSignal;
}

/** Exit code for a usage or configuration error (as sysexits' EX_USAGE/EX_CONFIG intend: the user can fix it). */
export const EXIT_USAGE = 2;

export function buildProgram(ctx: CliContext): Command {
  const program = new Command('shiftstack')
    .description(
      'Kubernetes and OpenShift on OpenStack: cloud controller manager, Cluster API provider and emulators',
    )
    .version(VERSION, '-V, --version', 'print the version')
    .addOption(new Option('--log-level <level>', 'log verbosity').choices(LOG_LEVELS).default('info'))
    .addOption(new Option('--log-format <format>', 'log line format').choices(LOG_FORMATS).default('text'))
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput({
      writeOut: (s) => ctx.out(s.replace(/\n$/, '')),
      writeErr: (s) => ctx.err(s.replace(/\n$/, '')),
    })
    .exitOverride();

  program.hook('preAction', (thisCommand) => {
    const opts = thisCommand.optsWithGlobals<{ logLevel: LogLevel; logFormat: LogFormat }>();
    configureRootLogger({ level: opts.logLevel, format: opts.logFormat });
  });

  registerUp(program, ctx);
  registerSim(program, ctx);
  registerOpenstack(program, ctx);
  registerCcm(program, ctx);
  registerCapo(program, ctx);
  return program;
}

/** Runs the CLI and returns the process exit code; never calls process.exit so it can run inside tests. */
export async function main(argv: string[], options: MainOptions = {}): Promise<number> {
  const controller = new AbortController();
  const stop = () => controller.abort(new Error('interrupted'));
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
  if (!options.signal) {
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
  const ctx: CliContext = {
    out: options.out ?? ((t) => process.stdout.write(`${t}\n`)),
    err: options.err ?? ((t) => process.stderr.write(`${t}\n`)),
    log: rootLogger,
    signal,
  };
  try {
    await buildProgram(ctx).parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit through here with code 0.
      return err.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    if (err instanceof ExitCodeError) return err.code;
    if (ConfigError.is(err)) {
      ctx.err(`shiftstack: invalid configuration:\n${err.message}`);
      return EXIT_USAGE;
    }
    rootLogger().error({ err }, 'shiftstack failed');
    return 1;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
