/**
 * What kuryr-daemon puts on its host at start (upstream's DaemonSet did it in its init script):
 * the plugin in the CNI bin directory and the network configuration in the conf directory. The
 * plugin there is a wrapper that runs `shiftstack kuryr cni` inside this daemon's mount namespace
 * (`nsenter --target <pid> --mount`: the DaemonSet runs with hostPID, so the daemon's pid is the
 * host's), where Node and shiftstack are; the host needs neither. Files are replaced whole (a
 * temporary file renamed over), so a runtime never runs half a file.
 */
import { chmod, mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_DAEMON_ADDRESS } from './wire.ts';
import { DEFAULT_DAEMON_TIMEOUT_S } from './plugin.ts';

export const PLUGIN_FILE = 'kuryr-cni';
export const CONFLIST_FILE = '10-kuryr.conflist';

/** The network configuration for `bind_address` (deploy/kuryr/10-kuryr.conflist is the default's). */
export function kuryrConflist(bindAddress = DEFAULT_DAEMON_ADDRESS): object {
  return {
    cniVersion: '1.0.0',
    name: 'kuryr',
    plugins: [
      {
        type: 'kuryr-cni',
        kuryr_conf: '/etc/kuryr/kuryr.conf',
        debug: false,
        daemon_url: `http://${bindAddress}`,
        daemon_timeout: DEFAULT_DAEMON_TIMEOUT_S,
      },
    ],
  };
}

/** The wrapper that runs the plugin in the mount namespace of process `pid`. */
export function pluginWrapper(pid: number, node: string, entry: string): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return [
    '#!/bin/sh',
    `# The kuryr CNI plugin, written by shiftstack kuryr daemon (pid ${pid}): runs \`shiftstack kuryr cni\``,
    "# in the daemon's mount namespace, with the runtime's CNI_* variables and stdin.",
    `exec nsenter --target ${pid} --mount -- ${q(node)} ${q(entry)} kuryr cni "$@"`,
    '',
  ].join('\n');
}

export interface InstallOptions {
  binDir?: string | undefined;
  confDir?: string | undefined;
  bindAddress: string;
  pid?: number;
  /** The Node binary and shiftstack's entry point as this process sees them. */
  node?: string;
  entry?: string;
}

async function replace(path: string, text: string, mode: number): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, text, { mode });
  await chmod(tmp, mode);
  await rename(tmp, path);
}

/** Writes the plugin and the configuration where asked; returns the paths written. */
export async function installCni(o: InstallOptions): Promise<string[]> {
  const written: string[] = [];
  if (o.binDir) {
    await mkdir(o.binDir, { recursive: true });
    const path = join(o.binDir, PLUGIN_FILE);
    const entry = o.entry ?? fileURLToPath(new URL('../../../bin/shiftstack.js', import.meta.url));
    await replace(path, pluginWrapper(o.pid ?? process.pid, o.node ?? process.execPath, entry), 0o755);
    written.push(path);
  }
  if (o.confDir) {
    await mkdir(o.confDir, { recursive: true });
    const path = join(o.confDir, CONFLIST_FILE);
    await replace(path, `${JSON.stringify(kuryrConflist(o.bindAddress), null, 2)}\n`, 0o644);
    written.push(path);
  }
  return written;
}
