/**
 * Flags in the shape Go components give them (pflag, klog, component-base), for commands that
 * stand in for an upstream binary (`shiftstack ccm` for OCCM, `shiftstack capo` for CAPO's
 * manager): Go's bool parsing, durations shown as Go writes them, and the compatibility flags a
 * user's Deployment passes that shiftstack does not implement. Those are accepted, so manifests
 * keep working, and named once in a startup warning with what shiftstack does instead — unless the
 * value asks for what shiftstack does anyway (`harmless`).
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { UsageError } from '../lib/config.ts';
import { parseGoDuration } from '../openstack/config/duration.ts';

/** A default duration as Go prints it in `--help` (`15s`). */
export const seconds = (ms: number) => `${ms / 1000}s`;

/**
 * component-base's Lease timings (`--leader-elect-lease-duration`, `-renew-deadline`,
 * `-retry-period`), shown with the command's defaults as Go durations; each command parses them
 * with `durationFlag`.
 */
export function leaseTimingOptions(d: {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}): {
  leaseDuration: Option;
  renewDeadline: Option;
  retryPeriod: Option;
} {
  return {
    leaseDuration: new Option(
      '--leader-elect-lease-duration <duration>',
      'how long a standby waits before taking the lease',
    ).default(seconds(d.leaseDurationMs)),
    renewDeadline: new Option(
      '--leader-elect-renew-deadline <duration>',
      'how long the leader retries renewing before giving up',
    ).default(seconds(d.renewDeadlineMs)),
    retryPeriod: new Option('--leader-elect-retry-period <duration>', 'time between lease attempts').default(
      seconds(d.retryPeriodMs),
    ),
  };
}

/** Go's strconv.ParseBool, which pflag's bool flags use (`--flag`, `--flag=1`, `--flag=True`, …). */
export function goBool(value: string | boolean): boolean {
  if (typeof value === 'boolean') return value;
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(value)) return false;
  throw new InvalidArgumentError('write true or false');
}

/** A Go duration flag (`5s`, `5m0s`) in milliseconds; a UsageError naming the flag otherwise. */
export function durationFlag(flag: string, text: string): number {
  const ms = parseGoDuration(text);
  if (ms === undefined || ms < 0) {
    throw new UsageError(
      `${flag}: "${text}" is not a duration. Fix: write it as Go does, e.g. 15s, 5m0s, 500ms`,
    );
  }
  return ms;
}

/**
 * A Go listen address (`:9440`, `127.0.0.1:9440`, `[::1]:9440`); `0` or empty turns the server
 * off, as controller-runtime does.
 */
export function listenAddress(flag: string, text: string): { host: string; port: number } | undefined {
  if (text === '' || text === '0') return undefined;
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port >= 0 && port <= 65535)) {
    throw new UsageError(
      `${flag}: "${text}" is not an address; write host:port, e.g. :9440 or 127.0.0.1:9440 (0 turns it off)`,
    );
  }
  if (port === 0) return undefined;
  return { host: m[1] ?? m[2] ?? '', port };
}

/** client-go's rest.Config defaults for a QPS or burst of 0. */
const CLIENT_GO_DEFAULT_QPS = 5;
const CLIENT_GO_DEFAULT_BURST = 10;

/**
 * `--kube-api-qps` read as client-go reads rest.Config.QPS, so a Deployment's value means here what
 * it means upstream: a negative rate runs the client without a limiter (returned as 0, the
 * Kubernetes client's "no limit"), 0 is client-go's default of 5 a second, any other number the rate.
 */
export function kubeApiQps(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n))
    throw new InvalidArgumentError('write a number (a negative one: no client-side limit)');
  if (n < 0) return 0;
  return n === 0 ? CLIENT_GO_DEFAULT_QPS : n;
}

/** `--kube-api-burst` as client-go reads rest.Config.Burst: a whole number, 0 its default of 10. */
export function kubeApiBurst(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0)
    throw new InvalidArgumentError('write a whole number ≥ 0');
  return n === 0 ? CLIENT_GO_DEFAULT_BURST : n;
}

export function intFlag(min: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`write a whole number ≥ ${min}`);
    return n;
  };
}

/** An upstream flag shiftstack accepts and ignores; `F` is the command's parsed flags. */
export interface CompatFlag<F = unknown> {
  name: string;
  kind: 'bool' | 'value';
  note: string;
  harmless?: (value: string | boolean, flags: F) => boolean;
}

export const bool = <F = unknown>(
  name: string,
  note: string,
  harmless?: CompatFlag<F>['harmless'],
): CompatFlag<F> => ({ name, kind: 'bool', note, ...(harmless ? { harmless } : {}) });

export const value = <F = unknown>(
  name: string,
  note: string,
  harmless?: CompatFlag<F>['harmless'],
): CompatFlag<F> => ({ name, kind: 'value', note, ...(harmless ? { harmless } : {}) });

export const isFalse = (v: string | boolean) => !goBool(v);

export const LOGS =
  'shiftstack logs to stderr; choose the level with --log-level and the format with --log-format';

/** component-base/logs and klog's flags, which every Kubernetes component's manifest may pass. */
export const LOG_FLAGS: readonly CompatFlag[] = [
  value('vmodule', LOGS),
  value('log-flush-frequency', LOGS),
  value('logging-format', LOGS, (v) => v === 'text'),
  value('log-json-info-buffer-size', LOGS),
  bool('log-json-split-stream', LOGS),
  value('log-text-info-buffer-size', LOGS),
  bool('log-text-split-stream', LOGS),
  bool('logtostderr', LOGS, (v) => goBool(v)),
  bool('alsologtostderr', LOGS, isFalse),
  value('log-dir', LOGS),
  value('log-file', LOGS),
  value('log-file-max-size', LOGS),
  value('log-backtrace-at', LOGS),
  value('stderrthreshold', LOGS),
  bool('skip-headers', LOGS, isFalse),
  bool('skip-log-headers', LOGS, isFalse),
  bool('one-output', LOGS, isFalse),
  bool('add-dir-header', LOGS, isFalse),
];

/** Attribute name commander gives `--some-flag`. */
const attr = (name: string) => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The value given on the command line for `--name`, or undefined when it came from a default. */
export function givenValue(cmd: Command, name: string): string | boolean | string[] | undefined {
  const key = attr(name);
  return cmd.getOptionValueSource(key) === 'cli'
    ? (cmd.getOptionValue(key) as string | boolean | string[])
    : undefined;
}

/** Hidden options for every compatibility flag; a flag named `v` also gets klog's `-v`. */
export function addCompatOptions(cmd: Command, flags: readonly CompatFlag<never>[]): void {
  for (const f of flags) {
    const flag = f.name === 'v' ? '-v, --v' : `--${f.name}`;
    const option =
      f.kind === 'bool'
        ? new Option(`${flag} [bool]`).argParser((v: string) => {
            goBool(v);
            return v;
          })
        : new Option(`${flag} <value>`).argParser((v: string, prev: string[] | undefined) => [
            ...(prev ?? []),
            v,
          ]);
    cmd.addOption(option.hideHelp());
  }
}

/**
 * One warning per compatibility flag given whose values are not all harmless, each as
 * `<the flags as given> <said>: <note>`.
 */
export function compatWarnings<F>(
  cmd: Command,
  compat: readonly CompatFlag<F>[],
  flags: F,
  said: string,
): string[] {
  const out: string[] = [];
  for (const f of compat) {
    const raw = givenValue(cmd, f.name);
    if (raw === undefined) continue;
    // A value its parser refused is an object here, reported as a problem by the command.
    const values = (Array.isArray(raw) ? raw : [raw]).filter(
      (x) => typeof x === 'string' || typeof x === 'boolean',
    );
    if (values.length === 0) continue;
    if (f.harmless && values.every((x) => f.harmless!(x, flags))) continue;
    // `-v=2` reaches commander as the value "=2".
    const shown = values
      .map((x) => (x === true ? `--${f.name}` : `--${f.name}=${String(x).replace(/^=/, '')}`))
      .join(' ');
    out.push(`${shown} ${said}: ${f.note}`);
  }
  return out;
}
