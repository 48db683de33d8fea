import assert from 'node:assert/strict';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';

import { startCli } from './testing/spawn.ts';

describe('shiftstack sim openstack', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'shiftstack-sim-cli-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  it('prints the auth URL and the absolute clouds.yaml path, serves, and stops cleanly on SIGTERM', async () => {
    // The default path, under the working directory, printed absolute: the command it prints works anywhere.
    const cloudsYaml = join(await realpath(dir), '.shiftstack', 'openstack', 'clouds.yaml');
    const run = startCli(['sim', 'openstack', '--port', '0'], /serving until Ctrl-C/, { cwd: dir });
    try {
      const out = await run.ready;
      const authUrl = /auth URL:\s+(\S+)/.exec(out)?.[1];
      assert.ok(authUrl, out);
      assert.ok(out.includes(`clouds.yaml: ${cloudsYaml} `), out);
      assert.ok(out.includes(`OS_CLIENT_CONFIG_FILE=${cloudsYaml} openstack`), out);
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
    } finally {
      // Also when an assertion failed: a child left running would keep the test process alive.
      run.child.kill('SIGTERM');
    }
    assert.equal(await run.exited, 0);
  });

  it('refuses a bad port with a usage error', async () => {
    const run = startCli(['sim', 'openstack', '--port', 'eighty'], /never/);
    await assert.rejects(run.ready, /exited with 2/);
  });
});
