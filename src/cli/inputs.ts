/**
 * A command's inputs checked before anything starts — its flags, its kubeconfig, its cloud config —
 * with every problem reported in one run, one line each naming the input and the fix, then exit 2.
 * A typo in a flag and a broken cloud.conf show up together, and a command without a usable
 * kubeconfig stops at once instead of starting controllers that retry forever.
 *
 *   acceptEveryFlag(command);                        // once, after its last option is added
 *   const inputs = new Inputs('shiftstack ccm', cmd);  // unknown flags and bad values come first
 *   const kc = inputs.check(() => loadKubeConfig(flags.kubeconfig));
 *   const conf = await inputs.checkAsync(() => checkCcmConfigFile(path, ctx));
 *   inputs.done();                                   // InputError: main prints it, exit 2
 */
import { InvalidArgumentError, type Command } from 'commander';
import { closest, ConfigError, formatProblem, UsageError } from '../lib/config.ts';

/** What a flag's parser said about a value, kept instead of thrown so parsing goes on. */
class BadFlagValue {
  readonly value: string;
  readonly fix: string;
  constructor(value: string, fix: string) {
    this.value = value;
    this.fix = fix;
  }
}

/**
 * Makes `cmd` parse every argument however wrong (unknown flags, bad values, stray words), so that
 * `new Inputs(…, cmd)` can report them all with the command's other problems instead of commander
 * stopping at the first. `--help` still works as usual.
 */
export function acceptEveryFlag(cmd: Command): Command {
  cmd.allowUnknownOption().allowExcessArguments();
  for (const option of cmd.options) {
    const parse = option.parseArg;
    if (!parse) continue;
    option.parseArg = ((value: string, previous: unknown) => {
      try {
        return parse(value, previous);
      } catch (err) {
        if (!(err instanceof InvalidArgumentError)) throw err;
        return new BadFlagValue(value, err.message);
      }
    }) as typeof option.parseArg;
  }
  return cmd;
}

/** The problems found in one command's inputs; thrown by `done()` when there are any. */
export class InputError extends Error {
  override readonly name = 'InputError';
  readonly command: string;
  readonly problems: readonly string[];
  readonly warnings: readonly string[];
  constructor(command: string, problems: readonly string[], warnings: readonly string[]) {
    super(`${command}: ${problems.join('; ')}`);
    this.command = command;
    this.problems = problems;
    this.warnings = warnings;
  }
}

export class Inputs {
  private readonly command: string;
  private readonly problems: string[] = [];
  private readonly warnings: string[] = [];

  /** With `cmd` (prepared by acceptEveryFlag), its unknown flags and bad values are the first problems. */
  constructor(command: string, cmd?: Command) {
    this.command = command;
    if (cmd) this.problems.push(...unknownArguments(cmd, command), ...badValues(cmd));
  }

  /** True when `--flag` was given a value its parser refused (already reported). */
  static isBad(value: unknown): boolean {
    return value instanceof BadFlagValue;
  }

  add(problem: string): void {
    this.problems.push(problem);
  }

  /** Shown with the problems when there are any; the command logs its own when it starts. */
  warn(warning: string): void {
    this.warnings.push(warning);
  }

  /** `fn`'s result, or undefined when it threw a UsageError or ConfigError (kept as problems). */
  check<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      if (!this.keep(err)) throw err;
      return undefined;
    }
  }

  async checkAsync<T>(fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await fn();
    } catch (err) {
      if (!this.keep(err)) throw err;
      return undefined;
    }
  }

  get ok(): boolean {
    return this.problems.length === 0;
  }

  /** Throws an InputError with every problem (and warning) found, if any. */
  done(): void {
    if (!this.ok) throw new InputError(this.command, this.problems, this.warnings);
  }

  private keep(err: unknown): boolean {
    if (err instanceof UsageError) {
      this.problems.push(err.message);
      return true;
    }
    if (ConfigError.is(err)) {
      this.problems.push(...err.problems.map(formatProblem));
      this.warnings.push(...(err.warnings ?? []));
      return true;
    }
    return false;
  }
}

/** Flags the command does not have (with the nearest it has) and words it takes none of. */
function unknownArguments(cmd: Command, command: string): string[] {
  const known = cmd.options.flatMap((o) => (o.long && !o.hidden ? [o.long] : []));
  const out: string[] = [];
  let afterFlag = false;
  for (const arg of cmd.args) {
    if (arg.startsWith('-')) {
      const name = arg.replace(/=.*$/, '');
      const near = name.startsWith('--') ? closest(name, known) : undefined;
      out.push(
        `${name}: unknown flag${near ? ` (did you mean ${near}?)` : ''}. Fix: ${near ? `write ${near}, or remove it` : `remove it; \`${command} --help\` lists the flags`}`,
      );
      afterFlag = !arg.includes('=');
    } else if (afterFlag) {
      // The value of the unknown flag before it: reported with it.
      afterFlag = false;
    } else {
      out.push(`"${arg}": unexpected argument. Fix: remove it (${command} takes flags only)`);
    }
  }
  return out;
}

/** Values a flag's parser refused, named with the flag as given. */
function badValues(cmd: Command): string[] {
  const out: string[] = [];
  for (const option of cmd.options) {
    const value: unknown = cmd.getOptionValue(option.attributeName());
    if (value instanceof BadFlagValue) {
      out.push(`${option.long ?? option.short}: "${value.value}" is not valid. Fix: ${value.fix}`);
    }
  }
  return out;
}
