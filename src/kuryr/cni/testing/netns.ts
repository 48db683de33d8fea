/**
 * Real network namespaces for the CNI tests. Each test gets a "node" namespace that plays the host
 * (bridges, host ends, the trunk-parent link live there, never on the real host) and pod
 * namespaces, all deleted when the test ends, failed or not; deleting a namespace deletes every
 * link in it. Without root (or where `ip netns add` is refused) the tests are skipped LOUDLY.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { Ip } from '../binding/ip.ts';

const RUN_DIR = '/var/run/netns';

let probed: string | undefined | null = null;

/** Why namespaces cannot be used here, or undefined when they can (probed once per process). */
export function netnsUnavailable(): string | undefined {
  if (probed !== null) return probed;
  if (process.getuid?.() !== 0) {
    probed = `not running as root (uid ${String(process.getuid?.())})`;
    return probed;
  }
  const name = `kcniprobe${randomBytes(3).toString('hex')}`;
  try {
    execFileSync('ip', ['netns', 'add', name], { stdio: 'pipe', timeout: 10_000 });
    execFileSync('ip', ['netns', 'del', name], { stdio: 'pipe', timeout: 10_000 });
    probed = undefined;
  } catch (err) {
    probed = `\`ip netns add\` was refused: ${err instanceof Error ? err.message : String(err)}`;
  }
  return probed;
}

/** Skips `t` with a message on stderr that nobody can miss; true when it did. */
export function skipWithoutNetns(t: TestContext): boolean {
  const why = netnsUnavailable();
  if (why === undefined) return false;
  const line = `##### SKIPPED: ${t.name}: needs real network namespaces, but ${why}. CI runs these as root. #####`;
  process.stderr.write(`\n${'#'.repeat(line.length)}\n${line}\n${'#'.repeat(line.length)}\n`);
  t.skip(why);
  return true;
}

/** A tool the test needs (ping), or a loud skip. */
export function skipWithout(t: TestContext, tool: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'pipe' });
    return false;
  } catch {
    const line = `##### SKIPPED: ${t.name}: \`${tool}\` is not installed (CI installs it in .ci/run) #####`;
    process.stderr.write(`\n${line}\n`);
    t.skip(`${tool} is not installed`);
    return true;
  }
}

export interface NetnsBed {
  /** The namespace playing the host. */
  node: string;
  /** `ip` with the node namespace as its host. */
  ip: Ip;
  /** A new pod namespace's path. */
  pod(): string;
  /** Runs a command inside a namespace; resolves with stdout. */
  exec(netns: string, argv: string[]): string;
  /** Whether this kernel can make 802.1Q devices (asked in a scratch namespace). */
  kernelHasVlan(): boolean;
}

/** A node namespace and a factory of pod namespaces, all removed after `t`. */
export function netnsBed(t: TestContext): NetnsBed {
  const tag = randomBytes(3).toString('hex');
  const made: string[] = [];
  const add = (suffix: string): string => {
    const name = `kcni${tag}${suffix}`;
    execFileSync('ip', ['netns', 'add', name], { stdio: 'pipe', timeout: 10_000 });
    made.push(name);
    return `${RUN_DIR}/${name}`;
  };
  t.after(() => {
    for (const name of made) {
      try {
        execFileSync('ip', ['netns', 'del', name], { stdio: 'pipe', timeout: 10_000 });
      } catch {
        // already gone (a test that deleted its pod namespace itself)
      }
    }
  });
  const node = add('n');
  execFileSync('nsenter', [`--net=${node}`, 'ip', 'link', 'set', 'lo', 'up'], { stdio: 'pipe' });
  let pods = 0;
  const exec = (netns: string, argv: string[]) =>
    execFileSync('nsenter', [`--net=${netns}`, ...argv], {
      encoding: 'utf8',
      stdio: 'pipe',
      timeout: 20_000,
    });
  return {
    node,
    ip: new Ip({ hostNetns: node }),
    pod: () => add(`p${pods++}`),
    exec,
    kernelHasVlan() {
      const ns = add(`v${pods++}`);
      exec(ns, ['ip', 'link', 'add', 'probe0', 'type', 'veth', 'peer', 'name', 'probe1']);
      try {
        exec(ns, ['ip', 'link', 'add', 'link', 'probe0', 'name', 'probe0.9', 'type', 'vlan', 'id', '9']);
        return true;
      } catch {
        return false;
      } finally {
        deleteNetns(ns);
      }
    },
  };
}

/** Deletes a namespace the test made (the sandbox going away before DEL). */
export function deleteNetns(path: string): void {
  execFileSync('ip', ['netns', 'del', path.slice(RUN_DIR.length + 1)], { stdio: 'pipe', timeout: 10_000 });
}
