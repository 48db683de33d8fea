import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';
import { redact, redactText } from './redact.ts';

export type { Logger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['json', 'text'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LogOptions {
  level?: LogLevel;
  format?: LogFormat;
  /** Where lines go; stderr by default so stdout stays clean for command output. */
  destination?: DestinationStream | NodeJS.WritableStream;
  /** Static fields on every line, e.g. `{ component: 'ccm' }`. */
  base?: Record<string, unknown>;
}

/**
 * Creates the process logger. Every object logged and every message string passes through
 * {@link redact}, at every level, so a credential cannot reach the output by way of a debug line.
 */
export function createLogger(options: LogOptions = {}): Logger {
  const format = options.format ?? 'json';
  const pinoOptions: LoggerOptions = {
    level: options.level ?? 'info',
    base: options.base ?? null,
    timestamp: pino.stdTimeFunctions.isoTime,
    // pino's std serializers run before formatters and would turn Errors into plain objects
    // that still carry secrets in `message`; our formatter handles Errors itself.
    serializers: { err: (e: unknown) => redact(e) },
    formatters: {
      level: (label) => ({ level: label }),
      log: (object) => redact(object) as Record<string, unknown>,
    },
    hooks: {
      logMethod(args, method) {
        const scrubbed = args.map((a: unknown) => (typeof a === 'string' ? redactText(a) : a));
        method.apply(this, scrubbed as Parameters<typeof method>);
      },
    },
  };
  const destination = options.destination ?? process.stderr;
  if (format === 'text') {
    const stream = pretty({
      destination: destination as NodeJS.WritableStream,
      sync: true,
      colorize: false,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
      // One record, one line (as klog's text format): a failure with its object, error class and
      // request id stays one line a reader can grep, not a key per line.
      singleLine: true,
      // Only a real Error under `err` is printed as a block (its stack, at debug); an `error` field
      // holding a message stays on the record's line.
      errorLikeObjectKeys: ['err'],
    });
    return pino(pinoOptions, stream);
  }
  return pino(pinoOptions, destination);
}

let root: Logger | undefined;

/** The process-wide logger; the CLI configures it once from `--log-level` / `--log-format`. */
export function rootLogger(): Logger {
  root ??= createLogger();
  return root;
}

export function configureRootLogger(options: LogOptions): Logger {
  root = createLogger(options);
  return root;
}
