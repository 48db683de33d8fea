import assert from 'node:assert/strict';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, fetch } from 'undici';
import { parse } from 'yaml';

import { startCli } from './testing/spawn.ts';

describe('shiftstack sim kube', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'shiftstack-sim-kube-cli-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  it('prints the URL and the absolute kubeconfig path, serves the API, and stops cleanly on SIGTERM', async () => {
    // Given relative to the working directory, printed absolute: the command it prints works anywhere.
    const kubeconfigPath = join(await realpath(dir), 'files', 'kubeconfig');
    const run = startCli(
      ['sim', 'kube', '--port', '0', '--kubeconfig', join('files', 'kubeconfig')],
      /serving until Ctrl-C/,
      { cwd: dir },
    );
    try {
      const out = await run.ready;
      const url = /listening on (https:\/\/\S+)/.exec(out)?.[1];
      assert.ok(url, out);
      assert.ok(out.includes(`kubeconfig: ${kubeconfigPath}\n`), out);
      assert.ok(out.includes(`KUBECONFIG=${kubeconfigPath} kubectl`), out);
      const kc = parse(await readFile(kubeconfigPath, 'utf8'));
      const cluster = kc.clusters[0].cluster;
      assert.equal(cluster.server, url);
      const agent = new Agent({
        connect: { ca: Buffer.from(cluster['certificate-authority-data'], 'base64').toString() },
      });
      const res = await fetch(`${url}/api/v1/namespaces`, {
        headers: { authorization: `Bearer ${kc.users[0].user.token}` },
        dispatcher: agent,
      });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { items: { metadata: { name: string } }[] };
      assert.ok(body.items.some((n) => n.metadata.name === 'default'));
      await agent.close();
    } finally {
      // Also when an assertion failed: a child left running would keep the test process alive.
      run.child.kill('SIGTERM');
    }
    assert.equal(await run.exited, 0);
  });

  it('refuses a bad port with a usage error', async () => {
    const run = startCli(['sim', 'kube', '--port', 'many'], /never/);
    await assert.rejects(run.ready, /exited with 2/);
  });
});
