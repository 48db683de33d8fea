import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { main } from './main.ts';
import { VERSION } from './version.ts';

const bin = join(import.meta.dirname, '../../bin/shiftstack.js');

async function run(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['node', 'shiftstack', ...args], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    signal: new AbortController().signal,
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('shiftstack CLI', () => {
  it('prints help with the commands and global options', async () => {
    const { code, out } = await run('--help');
    assert.equal(code, 0);
    assert.match(out, /Usage: shiftstack/);
    assert.match(out, /--log-level <level>/);
    assert.match(out, /--log-format <format>/);
    assert.match(out, /\bup\b/);
  });

  it('prints the package version', async () => {
    const { code, out } = await run('--version');
    assert.equal(code, 0);
    assert.equal(out.trim(), VERSION);
  });

  it('rejects an unknown command and a bad log format with exit code 2', async () => {
    assert.equal((await run('nope')).code, 2);
    const bad = await run('--log-format', 'xml', 'up');
    assert.equal(bad.code, 2);
    assert.match(bad.err, /Allowed choices are json, text/);
  });

  it('runs as an executable through bin/shiftstack.js', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [bin, '--version']);
    assert.equal(stdout.trim(), VERSION);
  });

  it(
    'the process ends when main returns, even with work left behind that keeps Node alive',
    { timeout: 60_000 },
    async (t) => {
      // Stands in for a runnable that ignored its stop signal: a timer that would keep the process,
      // and its writes, going after a manager has handed its lease over.
      const leftBehind = 'data:text/javascript,setInterval(() => {}, 1000)';
      const child = spawn(process.execPath, ['--import', leftBehind, bin, '--version'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      t.after(() => child.kill('SIGKILL'));
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      assert.equal(code, 0);
      assert.equal(out.trim(), VERSION, 'what main printed is not lost to the exit');
    },
  );
});
