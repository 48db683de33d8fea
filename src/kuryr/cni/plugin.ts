/**
 * The CNI plugin kubelet's runtime runs (`shiftstack kuryr cni`, `image/bin/kuryr-cni`), as thin as
 * upstream's Go kuryr-cni: VERSION is answered here; ADD, DEL and CHECK go to the node's
 * kuryr-daemon over HTTP (../wire.ts), and ADD's answer, the VIF, becomes the spec's result.
 * Everything the runtime reads comes back on stdout: the result, or the spec's error JSON with a
 * non-zero exit.
 */
import { podInterface } from './interface.ts';
import { cniResult } from './result.ts';
import {
  CNI_VERSION,
  CniError,
  CniErrorCode,
  parseNetConf,
  readCniEnv,
  versionAtLeast,
  versionResult,
  type NetConf,
} from './spec.ts';
import { DAEMON_PATHS, DEFAULT_DAEMON_ADDRESS, daemonRequest, readErrorBody } from './wire.ts';

/** The plugin's default wait for the daemon: a little over the daemon's own bound (180 s), so its answer arrives. */
export const DEFAULT_DAEMON_TIMEOUT_S = 190;

export interface PluginRun {
  env: NodeJS.ProcessEnv;
  stdin: string;
  signal?: AbortSignal;
}

export interface PluginOutcome {
  /** What goes to stdout: the result, VERSION's answer, or the error JSON. */
  stdout: string;
  exitCode: number;
  /** One line for stderr (the runtime's log) when it failed. */
  log?: string;
}

/** Runs one CNI command. Never throws: every failure is the spec's error JSON. */
export async function runCniPlugin(run: PluginRun): Promise<PluginOutcome> {
  let cniVersion = CNI_VERSION;
  try {
    if (run.env.CNI_COMMAND === 'VERSION') return ok(versionResult());
    const req = readCniEnv(run.env);
    const conf = parseNetConf(run.stdin);
    cniVersion = conf.cniVersion;
    if (req.command === 'CHECK' && !versionAtLeast(conf.cniVersion, '0.4.0'))
      throw new CniError(
        CniErrorCode.IncompatibleVersion,
        `CHECK is not defined for cniVersion ${conf.cniVersion}`,
        'CHECK came with CNI 0.4.0',
      );
    const answer = await callDaemon(
      req.command as keyof typeof DAEMON_PATHS,
      daemonRequest(req, conf),
      conf,
      run.signal,
    );
    if (req.command !== 'ADD') return { stdout: '', exitCode: 0 };
    let iface;
    try {
      iface = podInterface(answer, req.ifname);
    } catch (err) {
      throw new CniError(
        CniErrorCode.Internal,
        'kuryr-daemon answered ADD with a VIF this plugin cannot read',
        err instanceof Error ? err.message : String(err),
      );
    }
    return ok(cniResult(iface, req.netns, conf.cniVersion));
  } catch (err) {
    const error =
      err instanceof CniError
        ? err
        : new CniError(
            CniErrorCode.Internal,
            'kuryr-cni failed',
            err instanceof Error ? err.message : String(err),
          );
    return {
      stdout: `${JSON.stringify(error.toJSON(cniVersion))}\n`,
      exitCode: 1,
      log: `kuryr-cni: ${error.message}${error.details ? ` (${error.details})` : ''}`,
    };
  }
}

function ok(value: unknown): PluginOutcome {
  return { stdout: `${JSON.stringify(value)}\n`, exitCode: 0 };
}

/** The daemon's base URL from the network configuration: `daemon_url`, else upstream's address. */
export function daemonUrl(conf: NetConf): string {
  const raw = conf.daemon_url ?? `http://${DEFAULT_DAEMON_ADDRESS}`;
  try {
    const url = new URL(raw);
    if (url.protocol !== 'http:') throw new Error('not http');
    return url.origin;
  } catch {
    throw new CniError(
      CniErrorCode.InvalidNetworkConfig,
      `"daemon_url" ${raw} is not an http:// URL`,
      `kuryr-daemon listens on [cni_daemon] bind_address, ${DEFAULT_DAEMON_ADDRESS} by default`,
    );
  }
}

async function callDaemon(
  command: keyof typeof DAEMON_PATHS,
  body: unknown,
  conf: NetConf,
  signal: AbortSignal | undefined,
): Promise<unknown> {
  const url = `${daemonUrl(conf)}${DAEMON_PATHS[command]}`;
  const timeoutS = conf.daemon_timeout ?? DEFAULT_DAEMON_TIMEOUT_S;
  const bound = AbortSignal.timeout(timeoutS * 1000);
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: signal ? AbortSignal.any([signal, bound]) : bound,
    });
    text = await res.text();
  } catch (err) {
    const cause =
      err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err);
    if (bound.aborted)
      throw new CniError(
        CniErrorCode.TryAgainLater,
        `kuryr-daemon at ${url} did not answer ${command} within ${timeoutS} s`,
        cause,
      );
    throw new CniError(
      CniErrorCode.TryAgainLater,
      `kuryr-daemon cannot be reached at ${url}: is it running on this node?`,
      cause,
    );
  }
  const expected = command === 'ADD' ? 202 : 204;
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (res.status !== expected) {
    throw (
      readErrorBody(parsed) ??
      new CniError(
        CniErrorCode.Internal,
        `kuryr-daemon answered ${command} with HTTP ${res.status}`,
        text.slice(0, 500),
      )
    );
  }
  if (command === 'ADD' && parsed === undefined)
    throw new CniError(CniErrorCode.Internal, 'kuryr-daemon answered ADD without a VIF', text.slice(0, 500));
  return parsed;
}
