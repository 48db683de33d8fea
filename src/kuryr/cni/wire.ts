/**
 * The plugin ↔ daemon wire, as upstream's kuryr-cni (Go) and kuryr-daemon speak it, so either side
 * can be upstream's: `POST /addNetwork` (202 with the VIF's os-vif primitive), `POST /delNetwork`
 * (204); a failure is the status below with `{code, msg, details}`. `POST /checkNetwork` (204) is
 * ours: upstream's plugin answered CHECK itself without looking.
 */
import { CniError, CniErrorCode, type CniRequest } from './spec.ts';

export const DAEMON_PATHS = { ADD: '/addNetwork', DEL: '/delNetwork', CHECK: '/checkNetwork' } as const;
export type DaemonCommand = keyof typeof DAEMON_PATHS;

/** `[cni_daemon] bind_address`'s default, upstream's. */
export const DEFAULT_DAEMON_ADDRESS = '127.0.0.1:5036';

/** The request body: upstream's `KuryrDaemonData`. */
export interface DaemonRequest {
  CNI_COMMAND: string;
  CNI_CONTAINERID: string;
  CNI_NETNS: string;
  CNI_IFNAME: string;
  CNI_ARGS: string;
  CNI_PATH: string;
  /** The network configuration the runtime gave the plugin. */
  config_kuryr: unknown;
}

export function daemonRequest(req: CniRequest, conf: unknown): DaemonRequest {
  return {
    CNI_COMMAND: req.command,
    CNI_CONTAINERID: req.containerId,
    CNI_NETNS: req.netns,
    CNI_IFNAME: req.ifname,
    CNI_ARGS: req.args,
    CNI_PATH: req.path,
    config_kuryr: conf,
  };
}

/** The HTTP status a daemon answers an error with (upstream's choices). */
export function statusOf(err: CniError): number {
  switch (err.code) {
    case CniErrorCode.InvalidEnvironment:
    case CniErrorCode.DecodingFailure:
      return 400;
    case CniErrorCode.UnknownContainer:
      return 410;
    case CniErrorCode.TryAgainLater:
      return 504;
    default:
      return 500;
  }
}

/** The error body. */
export function errorBody(err: CniError): { code: number; msg: string; details: string } {
  return { code: err.code, msg: err.message, details: err.details };
}

/** An error body read back (anything not of that shape gives undefined). */
export function readErrorBody(body: unknown): CniError | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { code, msg, details } = body as Record<string, unknown>;
  if (typeof code !== 'number' || typeof msg !== 'string') return undefined;
  return new CniError(code, msg, typeof details === 'string' ? details : '');
}
