import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
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

  it('prints the URL and the kubeconfig path, serves the API, and stops cleanly on SIGTERM', async () => {
    const kubeconfigPath = join(dir, 'kubeconfig');
    const run = startCli(
      ['sim', 'kube', '--port', '0', '--kubeconfig', kubeconfigPath],
      /serving until Ctrl-C/,
    );
    const out = await run.ready;
    const url = /listening on (https:\/\/\S+)/.exec(out)?.[1];
    assert.ok(url, out);
    assert.match(out, new RegExp(`kubeconfig: ${kubeconfigPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
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
    run.child.kill('SIGTERM');
    assert.equal(await run.exited, 0);
  });

  it('refuses a bad port with a usage error', async () => {
    const run = startCli(['sim', 'kube', '--port', 'many'], /never/);
    await assert.rejects(run.ready, /exited with 2/);
  });
});
