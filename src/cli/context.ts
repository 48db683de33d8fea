import type { Logger } from '../lib/log.ts';

/** What every subcommand gets: where to write results, the configured logger, and a stop signal. */
export interface CliContext {
  /** Command results (tables, paths, YAML) go here; logs go to stderr through `log`. */
  out: (text: string) => void;
  err: (text: string) => void;
  log: () => Logger;
  /** Aborted on SIGINT/SIGTERM. */
  signal: AbortSignal;
}

/** Thrown by a command that has already said what went wrong: the process exits with `code`, nothing more is printed. */
export class ExitCodeError extends Error {
  override readonly name = 'ExitCodeError';
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}
