/**
 * Runs the built CLI in a child process, as a user would, so command tests cover argument
 * parsing, output and exit codes end to end.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

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
    const timer = setTimeout(
      () => reject(new Error(`no match for ${until} in: ${out}\n${err}`)),
      opts.timeoutMs ?? 20_000,
    );
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
