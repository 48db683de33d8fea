/** A throwaway home, working directory and /etc for config tests, so no real clouds.yaml or OS_* leaks in. */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ConfigError } from '../../../lib/config.ts';
import type { ConfigProblem } from '../../../lib/config.ts';
import type { LoadContext } from '../types.ts';

export interface Sandbox {
  root: string;
  home: string;
  cwd: string;
  etc: string;
  ctx(env?: Record<string, string>): LoadContext;
  /** Writes a file under the sandbox root and returns its absolute path. */
  write(path: string, text: string): Promise<string>;
  cleanup(): Promise<void>;
}

export async function sandbox(): Promise<Sandbox> {
  const root = await mkdtemp(join(tmpdir(), 'shiftstack-os-config-'));
  const home = join(root, 'home');
  const cwd = join(root, 'work');
  const etc = join(root, 'etc', 'openstack');
  await Promise.all([home, cwd, etc].map((d) => mkdir(d, { recursive: true })));
  return {
    root,
    home,
    cwd,
    etc,
    ctx: (env = {}) => ({ env, homedir: home, cwd, siteConfigDir: etc }),
    async write(path, text) {
      const full = join(root, path);
      await mkdir(dirname(full), { recursive: true });
      await writeFile(full, text);
      return full;
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** The problems of the ConfigError that `promise` rejects with. */
export async function rejection(promise: Promise<unknown>): Promise<ConfigProblem[]> {
  try {
    await promise;
  } catch (err) {
    assert.ok(ConfigError.is(err), String(err));
    return [...err.problems];
  }
  assert.fail('expected a ConfigError');
}

/** Asserts a problem names the place, the key and a fix, then returns it for closer checks. */
export function findProblem(problems: ConfigProblem[], key: string): ConfigProblem {
  const p = problems.find((q) => q.key === key);
  assert.ok(p, `no problem for ${key}; got ${JSON.stringify(problems, null, 1)}`);
  assert.ok(p.file.length > 0 && p.fix.length > 0, JSON.stringify(p));
  return p;
}
