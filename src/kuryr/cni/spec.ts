/**
 * The CNI protocol (containernetworking/cni SPEC.md, version 1.0) as a runtime speaks it to a
 * plugin: the `CNI_*` variables, the network configuration on stdin, the result and the error
 * JSON. Pure: reading and writing these shapes, nothing else.
 */

/** The version this plugin writes, and the ones whose configuration it accepts. */
export const CNI_VERSION = '1.0.0';
/**
 * 0.3.0 is the first version with the result's `interfaces` and `ips[].interface`; kubelet's
 * runtimes and upstream's own 10-kuryr.conflist (0.3.1) are all in this range.
 */
export const SUPPORTED_VERSIONS: readonly string[] = ['0.3.0', '0.3.1', '0.4.0', '1.0.0'];

export const CNI_COMMANDS = ['ADD', 'DEL', 'CHECK', 'VERSION'] as const;
export type CniCommand = (typeof CNI_COMMANDS)[number];

/** The spec's well-known error codes (1–99 are reserved for it; plugins use 100 and up). */
export const CniErrorCode = {
  IncompatibleVersion: 1,
  UnsupportedField: 2,
  UnknownContainer: 3,
  InvalidEnvironment: 4,
  IoFailure: 5,
  DecodingFailure: 6,
  InvalidNetworkConfig: 7,
  TryAgainLater: 11,
  /** Upstream kuryr-daemon's code for anything else that went wrong (`ErrInternal`). */
  Internal: 999,
} as const;

/** A failure as the spec reports it: the error JSON on stdout and a non-zero exit. */
export class CniError extends Error {
  override readonly name = 'CniError';
  readonly code: number;
  readonly details: string;
  constructor(code: number, msg: string, details = '') {
    super(msg);
    this.code = code;
    this.details = details;
  }

  /** The error JSON of the spec (`cniVersion`, `code`, `msg`, `details`). */
  toJSON(cniVersion = CNI_VERSION): { cniVersion: string; code: number; msg: string; details?: string } {
    return {
      cniVersion,
      code: this.code,
      msg: this.message,
      ...(this.details ? { details: this.details } : {}),
    };
  }
}

/** The `CNI_ARGS` pairs (`K8S_POD_NAMESPACE=ns;K8S_POD_NAME=name;...`). */
export function parseCniArgs(args: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (args ?? '').split(';')) {
    if (pair.trim() === '') continue;
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw new CniError(
        CniErrorCode.InvalidEnvironment,
        `CNI_ARGS: "${pair}" is not KEY=VALUE`,
        'CNI_ARGS is a list of KEY=VALUE pairs separated by ";"',
      );
    out[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return out;
}

/** What a runtime asks, from the `CNI_*` variables. */
export interface CniRequest {
  command: CniCommand;
  containerId: string;
  /** A path to the network namespace (`/var/run/netns/<name>`, `/proc/<pid>/ns/net`); may be empty on DEL. */
  netns: string;
  ifname: string;
  /** The raw `CNI_ARGS`, forwarded to the daemon as is (upstream's wire carries the string). */
  args: string;
  path: string;
  /** The Kubernetes pod the runtime names in `CNI_ARGS`. */
  pod: { namespace: string; name: string; uid: string | undefined };
}

/**
 * The request of `env`, checked as far as the command needs it: ADD and CHECK need the container,
 * the namespace, the interface and the pod; DEL may come without a namespace (the spec: the
 * sandbox may be gone already). VERSION needs nothing and is answered before this is read.
 */
export function readCniEnv(env: NodeJS.ProcessEnv): CniRequest {
  const command = env.CNI_COMMAND ?? '';
  if (!(CNI_COMMANDS as readonly string[]).includes(command))
    throw new CniError(
      CniErrorCode.InvalidEnvironment,
      command === ''
        ? 'CNI_COMMAND is not set'
        : `CNI_COMMAND "${command}" is not one of ADD, DEL, CHECK, VERSION`,
      'this is a CNI plugin: a container runtime runs it with CNI_COMMAND and the other CNI_* variables',
    );
  const missing = (name: string) =>
    new CniError(CniErrorCode.InvalidEnvironment, `${name} is required for ${command}`);
  const need = (name: string): string => {
    const value = env[name];
    if (value === undefined || value === '') throw missing(name);
    return value;
  };
  const containerId = need('CNI_CONTAINERID');
  const ifname = need('CNI_IFNAME');
  const netns = command === 'DEL' ? (env.CNI_NETNS ?? '') : need('CNI_NETNS');
  const args = env.CNI_ARGS ?? '';
  const pairs = parseCniArgs(args);
  const namespace = pairs.K8S_POD_NAMESPACE;
  const name = pairs.K8S_POD_NAME;
  if (!namespace || !name)
    throw new CniError(
      CniErrorCode.InvalidEnvironment,
      'CNI_ARGS must name the pod (K8S_POD_NAMESPACE and K8S_POD_NAME)',
      `CNI_ARGS was "${args}"; kubelet's container runtime sets both`,
    );
  return {
    command: command as CniCommand,
    containerId,
    netns,
    ifname,
    args,
    path: env.CNI_PATH ?? '',
    pod: { namespace, name, uid: pairs.K8S_POD_UID || undefined },
  };
}

/** The part of the network configuration this plugin reads (the rest is passed on untouched). */
export interface NetConf {
  cniVersion: string;
  name: string;
  type: string;
  /** Where kuryr-daemon listens (ours; upstream's plugin always used http://localhost:5036/). */
  daemon_url?: string;
  /** How long to wait for the daemon's answer, in seconds (ours). */
  daemon_timeout?: number;
  prevResult?: unknown;
  [key: string]: unknown;
}

/** The network configuration on stdin, decoded and checked (code 6 undecodable, 7 invalid, 1 version). */
export function parseNetConf(stdin: string): NetConf {
  let raw: unknown;
  try {
    raw = JSON.parse(stdin);
  } catch (err) {
    throw new CniError(
      CniErrorCode.DecodingFailure,
      'the network configuration on stdin is not JSON',
      err instanceof Error ? err.message : String(err),
    );
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new CniError(
      CniErrorCode.DecodingFailure,
      'the network configuration on stdin is not a JSON object',
    );
  const conf = raw as Record<string, unknown>;
  const str = (key: string): string => {
    const v = conf[key];
    if (typeof v !== 'string' || v === '')
      throw new CniError(CniErrorCode.InvalidNetworkConfig, `the network configuration has no "${key}"`);
    return v;
  };
  const cniVersion = str('cniVersion');
  if (!SUPPORTED_VERSIONS.includes(cniVersion))
    throw new CniError(
      CniErrorCode.IncompatibleVersion,
      `cniVersion ${cniVersion} is not supported`,
      `supported versions: ${SUPPORTED_VERSIONS.join(', ')}`,
    );
  str('name');
  str('type');
  if (conf.daemon_url !== undefined && typeof conf.daemon_url !== 'string')
    throw new CniError(CniErrorCode.InvalidNetworkConfig, '"daemon_url" must be a string (http://host:port)');
  if (
    conf.daemon_timeout !== undefined &&
    (typeof conf.daemon_timeout !== 'number' || !(conf.daemon_timeout > 0))
  )
    throw new CniError(
      CniErrorCode.InvalidNetworkConfig,
      '"daemon_timeout" must be a positive number of seconds',
    );
  return conf as NetConf;
}

/** Whether `version` (a spec version) is at least `min`. */
export function versionAtLeast(version: string, min: string): boolean {
  const a = version.split('.').map(Number);
  const b = min.split('.').map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d > 0;
  }
  return true;
}

/** The answer to VERSION. */
export function versionResult(): { cniVersion: string; supportedVersions: string[] } {
  return { cniVersion: CNI_VERSION, supportedVersions: [...SUPPORTED_VERSIONS] };
}

/** A successful ADD's result (the spec's "Success" output). */
export interface CniResult {
  cniVersion: string;
  interfaces: { name: string; mac: string; sandbox: string }[];
  ips: { address: string; gateway?: string; interface: number; version?: '4' | '6' }[];
  routes: { dst: string; gw?: string }[];
  dns: { nameservers?: string[]; domain?: string; search?: string[]; options?: string[] };
}
