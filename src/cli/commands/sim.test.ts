import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';

const bin = join(import.meta.dirname, '../../../bin/shiftstack.js');

/** Runs the CLI as a user would, collecting stdout until `until` matches it. */
function start(args: string[], until: RegExp) {
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

describe('shiftstack sim openstack', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'shiftstack-sim-cli-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  it('prints the auth URL and a clouds.yaml path, serves, and stops cleanly on SIGTERM', async () => {
    const cloudsYaml = join(dir, 'clouds.yaml');
    const run = start(
      ['sim', 'openstack', '--port', '0', '--clouds-yaml', cloudsYaml],
      /serving until Ctrl-C/,
    );
    const out = await run.ready;
    const authUrl = /auth URL:\s+(\S+)/.exec(out)?.[1];
    assert.ok(authUrl, out);
    assert.match(out, new RegExp(`clouds.yaml: ${cloudsYaml.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const clouds = parse(await readFile(cloudsYaml, 'utf8')) as {
      clouds: Record<string, { auth: { auth_url: string } }>;
    };
    assert.equal(clouds.clouds['shiftstack-demo']?.auth.auth_url, authUrl);

    const token = await fetch(`${authUrl}/auth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: 'demo', domain: { id: 'default' }, password: 'secret' } },
          },
        },
      }),
    });
    assert.equal(token.status, 201);

    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0);
  });

  it('refuses a bad port with a usage error', async () => {
    const run = start(['sim', 'openstack', '--port', 'eighty'], /never/);
    await assert.rejects(run.ready, /exited with 2/);
  });
});

describe('shiftstack up --once', () => {
  it('starts the emulator, checks it answers, says what is not built yet, and exits 0', async () => {
    const run = start(['up', '--once'], /self-check:/);
    const out = await run.ready;
    assert.match(out, /\[runs\] start the OpenStack emulator/);
    assert.match(out, /\[not built yet\]/);
    assert.equal(await run.exited, 0);
  });
});
