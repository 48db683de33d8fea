import assert from 'node:assert/strict';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, fetch } from 'undici';
import { parse } from 'yaml';

import { gadgetCRD, startConversionWebhook } from '../../sim/kube/testing/conversion-webhook.ts';
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

  it('reaches a conversion webhook Service at the --service-endpoint given', async () => {
    const hook = await startConversionWebhook();
    const origin = new URL(hook.url).origin;
    const kubeconfigPath = join(dir, 'webhook-kubeconfig');
    const run = startCli(
      [
        'sim',
        'kube',
        '--port',
        '0',
        '--kubeconfig',
        kubeconfigPath,
        '--service-endpoint',
        `default/gadget-webhook:8443=${origin}`,
      ],
      /serving until Ctrl-C/,
    );
    try {
      const out = await run.ready;
      const url = /listening on (https:\/\/\S+)/.exec(out)?.[1] ?? '';
      const kc = parse(await readFile(kubeconfigPath, 'utf8'));
      const agent = new Agent({
        connect: {
          ca: Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString(),
        },
      });
      const call = async (method: string, path: string, body: unknown) => {
        const res = await fetch(`${url}${path}`, {
          method,
          headers: { authorization: `Bearer ${kc.users[0].user.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
          dispatcher: agent,
        });
        return { status: res.status, text: await res.text() };
      };
      const service = { namespace: 'default', name: 'gadget-webhook', port: 8443, path: '/convert' };
      const crd = gadgetCRD({ service, caBundle: Buffer.from(hook.caPem).toString('base64') });
      const c = await call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
      assert.equal(c.status, 201, c.text);
      const gadget = { apiVersion: 'example.com/v2', kind: 'Gadget', metadata: { name: 'g' }, spec: {} };
      let created = { status: 0, text: '' };
      for (let i = 0; i < 50 && created.status !== 201; i++) {
        // The CRD's resources are served once it is established (a moment after it is created).
        created = await call('POST', '/apis/example.com/v2/namespaces/default/gadgets', gadget);
        if (created.status === 404) await new Promise((r) => setTimeout(r, 100));
        else break;
      }
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(
        hook.reviews.map((r) => r.desiredAPIVersion),
        ['example.com/v1', 'example.com/v2'],
      );
      await agent.close();
    } finally {
      run.child.kill('SIGTERM');
      await hook.close();
    }
    assert.equal(await run.exited, 0);
  });

  it('refuses a --service-endpoint it cannot read with a usage error', async () => {
    const run = startCli(['sim', 'kube', '--service-endpoint', 'gadget-webhook=https://x'], /never/);
    await assert.rejects(run.ready, /exited with 2/);
  });

  it('refuses a bad port with a usage error', async () => {
    const run = startCli(['sim', 'kube', '--port', 'many'], /never/);
    await assert.rejects(run.ready, /exited with 2/);
  });
});
