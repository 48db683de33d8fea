/**
 * Runs the built CLI in a child process, as a user would, so command tests cover argument
 * parsing, output and exit codes end to end.
 */
import { execFile, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const bin = join(import.meta.dirname, '../../../../bin/shiftstack.js');

/**
 * Starts `shiftstack ...args`, collecting stdout until `until` matches it (within `timeoutMs`, 20 s
 * by default), in `cwd` when given.
 */
export function startCli(args: string[], until: RegExp, opts: { cwd?: string; timeoutMs?: number } = {}) {
  const child = spawn(process.execPath, [bin, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // A run that never got ready would outlive the test and hold its file open.
      child.kill('SIGKILL');
      reject(new Error(`no match for ${until} in: ${out}\n${err}`));
    }, opts.timeoutMs ?? 20_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (until.test(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before ready: ${out}\n${err}`));
    });
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, ready, exited, output: () => out, errors: () => err };
}

export interface CliRun {
  /** The exit code (null when killed, e.g. at the time bound). */
  code: number | null;
  out: string;
  err: string;
}

/**
 * Runs `shiftstack ...args` to its end, in `cwd`, with exactly `env` and with `nodeArgs` before
 * the script when given; a run that does not end within `timeoutMs` (60 s by default, a bound,
 * not a measure) is killed.
 */
export function runCli(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; nodeArgs?: string[] } = {},
): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...(opts.nodeArgs ?? []), bin, ...args],
      {
        timeout: opts.timeoutMs ?? 60_000,
        ...(opts.cwd ? { cwd: opts.cwd } : {}),
        ...(opts.env ? { env: opts.env } : {}),
      },
      (error, out, err) => {
        const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
        resolve({ code, out, err });
      },
    );
  });
}

/** The process's environment without the variables that point a command at a cluster. */
export function envWithoutCluster(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  for (const name of ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT']) delete env[name];
  return env;
}

/**
 * The source files (relative to the repository, e.g. `src/cli/main.ts`) that `shiftstack ...args`
 * loads, as Node's module loader saw them, with the run itself.
 */
export async function modulesLoadedBy(
  args: string[],
  dir: string,
): Promise<{ run: CliRun; files: string[] }> {
  const file = join(dir, `modules-${process.pid}-${Date.now()}.txt`);
  const run = await runCli(args, {
    nodeArgs: ['--import', pathToFileURL(join(import.meta.dirname, 'record-modules.ts')).href],
    env: { ...process.env, SHIFTSTACK_MODULES_FILE: file },
  });
  const repo = pathToFileURL(join(import.meta.dirname, '../../../..')).href;
  const files = (await readFile(file, 'utf8'))
    .split('\n')
    .filter((url) => url.startsWith(`${repo}/`) && !url.includes('/node_modules/'))
    .map((url) => url.slice(repo.length + 1));
  return { run, files };
}
