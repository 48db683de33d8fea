import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ConfigError, formatProblem, UsageError } from '../lib/config.ts';
import {
  configureRootLogger,
  LOG_FORMATS,
  LOG_LEVELS,
  rootLogger,
  type LogFormat,
  type LogLevel,
} from '../lib/log.ts';
import { ExitCodeError, type CliContext } from './context.ts';
import { InputError } from './inputs.ts';
import { VERSION } from './version.ts';

export interface MainOptions {
  out?: (text: string) => void;
  err?: (text: string) => void;
  signal?: AbortSignal;
}

/** Exit code for a usage or configuration error (as sysexits' EX_USAGE/EX_CONFIG intend: the user can fix it). */
export const EXIT_USAGE = 2;

type Configure = (command: Command, ctx: CliContext) => void;

/**
 * The subcommands: what `shiftstack --help` says of each, and the module that defines its flags and
 * action, imported only when that command runs (or shows its help). So `shiftstack ccm` loads the
 * ccm and what it uses, never the emulators the demo commands start (scripts/architecture.ts
 * checks what each production command can reach).
 */
const COMMANDS: readonly { name: string; description: string; load: () => Promise<Configure> }[] = [
  {
    name: 'up',
    description:
      'run the whole system on the emulators: a Cluster API cluster, its Nodes and a LoadBalancer Service (what `npm start` runs)',
    load: async () => (await import('./commands/up.ts')).configureUp,
  },
  {
    name: 'sim',
    description: 'run the emulators of the OpenStack and Kubernetes APIs on loopback',
    load: async () => (await import('./commands/sim.ts')).configureSim,
  },
  {
    name: 'openstack',
    description: 'check an OpenStack cloud config: who it authenticates as, its endpoints and token',
    load: async () => (await import('./commands/openstack.ts')).configureOpenstack,
  },
  {
    name: 'ccm',
    description:
      'the OpenStack cloud controller manager, a drop-in for openstack-cloud-controller-manager: cloud-node, cloud-node-lifecycle, service and route controllers',
    load: async () => (await import('./commands/ccm.ts')).configureCcm,
  },
  {
    name: 'ccm-operator',
    description:
      "the cloud controller manager operator, a drop-in for cluster-cloud-controller-manager-operator: every platform's CCM (OpenStack's is shiftstack ccm), rendered or applied",
    load: async () => (await import('./commands/ccm-operator.ts')).configureCcmOperator,
  },
  {
    name: 'capo',
    description:
      'the Cluster API provider for OpenStack, a drop-in for cluster-api-provider-openstack v0.14: OpenStackCluster, OpenStackMachine, OpenStackServer controllers',
    load: async () => (await import('./commands/capo.ts')).configureCapo,
  },
  {
    name: 'mapo',
    description:
      "OpenShift's Machine API provider for OpenStack, a drop-in for machine-api-provider-openstack: Machines on capo's OpenStackServer, MachineSet flavor annotations, migration to Cluster API",
    load: async () => (await import('./commands/mapo.ts')).configureMapo,
  },
  {
    name: 'kuryr',
    description:
      'Kuryr-Kubernetes, a drop-in for kuryr-controller and kuryr-daemon: pods as Neutron trunk subports, namespace networks, Services on Octavia, NetworkPolicies as security groups, the CNI plugin',
    load: async () => (await import('./commands/kuryr.ts')).configureKuryr,
  },
];

/**
 * The program for `argv`: every command named with its description, and the one argv asks for
 * (`help <name>` included) defined in full. `onCommand` hears the command path that runs.
 */
export async function buildProgram(
  ctx: CliContext,
  argv: readonly string[],
  onCommand: (path: string) => void = () => {},
): Promise<Command> {
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

  program.hook('preAction', (thisCommand, actionCommand) => {
    const opts = thisCommand.optsWithGlobals<{ logLevel: LogLevel; logFormat: LogFormat }>();
    configureRootLogger({ level: opts.logLevel, format: opts.logFormat });
    const path: string[] = [];
    for (let c: Command | null = actionCommand; c; c = c.parent) path.unshift(c.name());
    onCommand(path.join(' '));
  });

  const wanted = requestedCommand(program, argv.slice(2));
  for (const c of COMMANDS) {
    const command = program.command(c.name).description(c.description);
    if (c.name === wanted) (await c.load())(command, ctx);
  }
  return program;
}

/**
 * The subcommand `args` (argv without node and the script) ask for, read with the program's own
 * options so that a global option's value is not taken for it.
 */
function requestedCommand(program: Command, args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return args[i + 1];
    if (!arg.startsWith('-')) return arg === 'help' ? args[i + 1] : arg;
    const flag = arg.replace(/=.*$/, '');
    const option = program.options.find((o) => o.long === flag || o.short === flag);
    if (option?.required && !arg.includes('=')) i++;
  }
  return undefined;
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
  let running = 'shiftstack';
  try {
    const program = await buildProgram(ctx, argv, (path) => (running = path));
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof InvalidArgumentError) {
      // Thrown by our code outside commander's parsing, so not printed yet.
      ctx.err(`shiftstack: ${err.message}`);
      return EXIT_USAGE;
    }
    if (err instanceof CommanderError) {
      // --help and --version exit through here with code 0.
      return err.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    if (err instanceof ExitCodeError) return err.code;
    if (err instanceof InputError) {
      report(ctx, `${err.command}: not started; fix these inputs:`, err.problems, err.warnings);
      return EXIT_USAGE;
    }
    if (ConfigError.is(err)) {
      report(ctx, 'shiftstack: invalid configuration:', err.problems.map(formatProblem), err.warnings);
      return EXIT_USAGE;
    }
    if (err instanceof UsageError) {
      ctx.err(`shiftstack: ${err.message}`);
      return EXIT_USAGE;
    }
    logFailure(running, err);
    return 1;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/** One line per problem under a heading, then the warnings that may explain them. */
function report(ctx: CliContext, heading: string, problems: readonly string[], warnings: readonly string[]) {
  ctx.err(heading);
  for (const p of problems) ctx.err(p);
  for (const w of warnings) ctx.err(`warning: ${w}`);
}

/** Errors a bug throws; anything else is a failure the message explains (lost lease, refused connection). */
const BUGS = [TypeError, ReferenceError, RangeError, SyntaxError, EvalError, URIError];

/**
 * An expected failure is one ERROR line with its message and causes; the stack only at debug,
 * where someone chasing it looks. A bug keeps its stack at ERROR.
 */
function logFailure(command: string, err: unknown): void {
  const log = rootLogger();
  if (!(err instanceof Error) || BUGS.some((b) => err.constructor === b)) {
    log.error(
      { err },
      `${command} failed with an unexpected error (a bug: please report it with this stack)`,
    );
    return;
  }
  log.error(`${command} failed: ${messageChain(err)}`);
  log.debug({ err }, `${command} failed (stack)`);
}

/** `message: cause's message: …`, each once. */
export function messageChain(err: Error): string {
  const parts: string[] = [];
  let cur: unknown = err;
  for (let depth = 0; cur instanceof Error && depth < 5; depth++, cur = cur.cause) {
    const message = cur.message;
    if (!parts.some((p) => p.includes(message))) parts.push(message);
  }
  return parts.join(': ');
}
