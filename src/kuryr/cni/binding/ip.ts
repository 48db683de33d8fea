/**
 * iproute2's `ip`, run as a child process: the kernel's networking as the bindings drive it.
 * Node has no well-kept netlink library (the `netlink` package is a native addon last released
 * years ago), and `ip` is on every host a CNI plugin runs on; its `-json` output is stable. Inside a
 * pod's network namespace the command runs under `nsenter --net=<path>`, since `ip -n` takes only
 * names under /var/run/netns and a runtime may hand us `/proc/<pid>/ns/net`.
 * Every call has a bounded time (upstream's `[cni_daemon] pyroute2_timeout`, 10 s) and an AbortSignal.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface IpOptions {
  /** Bound on one command. */
  timeoutMs?: number;
  ipPath?: string;
  nsenterPath?: string;
  /**
   * The namespace that plays the host (a path): where host-side links are made and looked up. The
   * tests run a whole node inside one, so they never touch the real host's links.
   */
  hostNetns?: string;
}

/** `ip` failed: the command, where it ran and what it said. */
export class IpCommandError extends Error {
  override readonly name = 'IpCommandError';
  readonly argv: readonly string[];
  readonly netns: string | undefined;
  readonly stderr: string;
  readonly exitCode: number | undefined;
  constructor(
    argv: readonly string[],
    netns: string | undefined,
    stderr: string,
    exitCode: number | undefined,
  ) {
    const where = netns ? ` in ${netns}` : '';
    super(`ip ${argv.join(' ')}${where}: ${stderr.trim() || `exit code ${String(exitCode)}`}`);
    this.argv = argv;
    this.netns = netns;
    this.stderr = stderr;
    this.exitCode = exitCode;
  }
}

/** A link as `ip -json link` shows it (the fields the bindings read). */
export interface IpLink {
  ifindex: number;
  ifname: string;
  address?: string;
  mtu?: number;
  flags?: string[];
  operstate?: string;
  master?: string;
  link_type?: string;
  /** With `-details` only. */
  linkinfo?: { info_kind?: string; info_data?: { id?: number } };
  /** The lower link of a VLAN (with `-details`). */
  link?: string;
}

export interface IpAddress {
  family: 'inet' | 'inet6';
  local: string;
  prefixlen: number;
  scope?: string;
}

export interface IpRoute {
  dst: string;
  gateway?: string;
  dev?: string;
}

export class Ip {
  private readonly timeoutMs: number;
  private readonly ipPath: string;
  private readonly nsenterPath: string;
  private readonly hostNetns: string | undefined;

  constructor(options: IpOptions = {}) {
    this.hostNetns = options.hostNetns;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.ipPath = options.ipPath ?? 'ip';
    this.nsenterPath = options.nsenterPath ?? 'nsenter';
  }

  /** Runs `ip <args>` on the host, or inside `netns` (a path) when given; resolves with stdout. */
  run(args: readonly string[], inNetns?: string, signal?: AbortSignal): Promise<string> {
    const netns = inNetns ?? this.hostNetns;
    const [file, argv] = netns
      ? [this.nsenterPath, [`--net=${netns}`, this.ipPath, ...args]]
      : [this.ipPath, [...args]];
    return new Promise((resolve, reject) => {
      execFile(
        file,
        argv,
        { timeout: this.timeoutMs, killSignal: 'SIGKILL', encoding: 'utf8', ...(signal ? { signal } : {}) },
        (err, stdout, stderr) => {
          if (!err) return resolve(stdout);
          const timedOut = (err as { killed?: boolean }).killed && !signal?.aborted;
          const code = typeof err.code === 'number' ? err.code : undefined;
          const said = timedOut ? `no answer within ${this.timeoutMs} ms` : stderr || err.message;
          reject(new IpCommandError(args, netns, said, code));
        },
      );
    });
  }

  private async json<T>(args: readonly string[], netns?: string, signal?: AbortSignal): Promise<T> {
    const out = await this.run(['-json', ...args], netns, signal);
    return (out.trim() === '' ? [] : JSON.parse(out)) as T;
  }

  /** Every link of the namespace. */
  links(netns?: string, signal?: AbortSignal): Promise<IpLink[]> {
    return this.json<IpLink[]>(['link', 'show'], netns, signal);
  }

  /** The link named `name`, or undefined. */
  async link(name: string, netns?: string, signal?: AbortSignal): Promise<IpLink | undefined> {
    return (await this.links(netns, signal)).find((l) => l.ifname === name);
  }

  /** The link named `name` with its kind (`-details`), or undefined. */
  async linkDetails(name: string, netns?: string, signal?: AbortSignal): Promise<IpLink | undefined> {
    const rows = await this.json<IpLink[]>(['-details', 'link', 'show'], netns, signal);
    return rows.find((l) => l.ifname === name);
  }

  /** The global-scope addresses of `name`. */
  async addresses(name: string, netns?: string, signal?: AbortSignal): Promise<IpAddress[]> {
    const rows = await this.json<{ ifname: string; addr_info?: IpAddress[] }[]>(
      ['address', 'show', 'dev', name],
      netns,
      signal,
    );
    return rows.flatMap((r) => r.addr_info ?? []).filter((a) => a.scope !== 'link' && a.scope !== 'host');
  }

  /** The main table's routes of one family. */
  routes(family: 4 | 6, netns?: string, signal?: AbortSignal): Promise<IpRoute[]> {
    return this.json<IpRoute[]>([`-${family}`, 'route', 'show'], netns, signal);
  }
}

/** Whether a network namespace is there to enter (a DEL after the sandbox went is success). */
export function netnsExists(netns: string): boolean {
  return netns !== '' && existsSync(netns);
}

/** `ip` said the device is not there. */
export function isNoSuchDevice(err: unknown): boolean {
  return (
    err instanceof IpCommandError && /does not exist|Cannot find device|No such device/i.test(err.stderr)
  );
}
