import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { main } from './main.ts';
import { modulesLoadedBy, runCli } from './commands/testing/spawn.ts';
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

  it('loads only the command that runs: `ccm --help` loads no emulator, demo or other command', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'shiftstack-modules-'));
    try {
      const { run, files } = await modulesLoadedBy(['ccm', '--help'], dir);
      assert.equal(run.code, 0, run.err);
      assert.match(run.out, /--cloud-config <file>/);
      // Loaded, so the recording works.
      assert.ok(files.includes('src/cli/main.ts') && files.includes('src/ccm/cmd.ts'), files.join('\n'));
      const unwanted = files.filter((f) =>
        /^src\/(sim|demo)\/|^src\/capo\/|\/testing\/|\.test\.ts$|^src\/cli\/commands\/(up|sim|capo|openstack)/.test(
          f,
        ),
      );
      assert.deepEqual(unwanted, []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an expected failure is one ERROR line naming the command; its stack only at --log-level debug', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as AddressInfo).port);
    try {
      const plain = await runCli(['sim', 'openstack', '--port', port]);
      assert.equal(plain.code, 1, plain.err);
      const lines = plain.err.trimEnd().split('\n');
      assert.equal(lines.length, 1, plain.err);
      assert.match(
        lines[0]!,
        /ERROR: shiftstack sim openstack failed: listen EADDRINUSE: address already in use/,
      );
      const debug = await runCli(['--log-level', 'debug', 'sim', 'openstack', '--port', port]);
      assert.equal(debug.code, 1, debug.err);
      assert.match(debug.err, /^\s+at /m);
    } finally {
      taken.close();
    }
  });

  it('run by a Node too old for it (as `npx --prefix <checkout>` does from elsewhere), hands over to the pinned Node', async (t) => {
    const old = await olderNode();
    if (!old) {
      t.skip('no Node older than 22.18 on PATH outside node_modules');
      return;
    }
    const { stdout } = await promisify(execFile)(old, [bin, '--version'], { cwd: tmpdir() });
    assert.equal(stdout.trim(), VERSION);
    // Exit codes come through: a usage error is still 2.
    const bad = await promisify(execFile)(old, [bin, 'nope'], { cwd: tmpdir() }).catch(
      (e: { code?: number }) => e,
    );
    assert.equal((bad as { code?: number }).code, 2);
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

/** A `node` on PATH, outside any node_modules, older than this package needs (the system's, often). */
async function olderNode(): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '' || dir.includes('node_modules')) continue;
    const candidate = join(dir, 'node');
    try {
      await access(candidate, constants.X_OK);
      const { stdout } = await promisify(execFile)(candidate, ['-p', 'process.versions.node']);
      const [major = 0, minor = 0] = stdout.trim().split('.').map(Number);
      if (major < 22 || (major === 22 && minor < 18)) return candidate;
    } catch {
      // not there, or not runnable
    }
  }
  return undefined;
}
