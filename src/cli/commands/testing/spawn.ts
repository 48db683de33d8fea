/**
 * Runs the built CLI in a child process, as a user would, so command tests cover argument
 * parsing, output and exit codes end to end.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const bin = join(import.meta.dirname, '../../../../bin/shiftstack.js');

/** Starts `shiftstack ...args`, collecting stdout until `until` matches it. */
export function startCli(args: string[], until: RegExp) {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no match for ${until} in: ${out}\n${err}`)), 20_000);
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
  return { child, ready, exited, output: () => out };
}
