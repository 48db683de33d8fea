import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, fetch as undiciFetch } from 'undici';
import { isAlreadyExists, kinds, type KubeClient } from '../../kube/index.ts';
import { freePort, testClient } from '../../kube/testing/env.ts';
import { startKubeSim, type RunningKubeSim } from '../../sim/kube/start.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { customResourceDefinitions } from '../../capo/api/index.ts';
import { CAPO_LEASE_NAME } from '../../capo/cmd.ts';
import { main } from '../main.ts';
import { envWithoutCluster, runCli } from './testing/spawn.ts';
import { VERSION } from '../version.ts';
import { selfSignedCert } from '../../lib/tls-cert.ts';

const bin = join(import.meta.dirname, '../../../bin/shiftstack.js');

async function run(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['node', 'shiftstack', '--log-level', 'silent', ...args], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    signal: new AbortController().signal,
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** `shiftstack --log-format json capo ...args` as a long-running child; its warnings as they come. */
function spawnCapo(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [bin, '--log-format', 'json', 'capo', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const warnings: string[] = [];
  let stderr = '';
  let pending = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    pending += d.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      try {
        const entry = JSON.parse(line) as { level?: string; msg?: string };
        if (entry.level === 'warn' && entry.msg) warnings.push(entry.msg);
      } catch {
        // not a log line
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, warnings, exited, stderr: () => stderr };
}

describe('shiftstack capo', () => {
  let dir: string;
  let kube: RunningKubeSim;
  let api: KubeClient;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-cli-capo-'));
    kube = await startKubeSim({ kubeconfigPath: join(dir, 'kubeconfig') });
    api = testClient(kube.kubeconfigPath);
    for (const crd of customResourceDefinitions()) {
      try {
        await api.create(kinds.CustomResourceDefinition, crd);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    }
  });
  after(async () => {
    await api?.close();
    await kube?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("--help lists CAPO's flags with their defaults", async () => {
    const { code, out } = await run('capo', '--help');
    assert.equal(code, 0);
    const help = out.replace(/\s+/g, ' ');
    for (const flag of [
      '--kubeconfig <file>',
      '--leader-elect [bool]',
      '--leader-elect-lease-duration <duration>',
      '--leader-elect-renew-deadline <duration>',
      '--leader-elect-retry-period <duration>',
      '--openstackcluster-concurrency <n>',
      '--openstackmachine-concurrency <n>',
      '--openstackmachinetemplate-concurrency <n>',
      '--scope-cache-max-size <n>',
      '--sync-period <duration>',
      '--kube-api-qps <n>',
      '--kube-api-burst <n>',
      '--health-addr <address>',
      '--diagnostics-address <address>',
      '--insecure-diagnostics [bool]',
      '--act-as-cluster-api-core [bool]',
      '--webhook-port <port>',
      '--webhook-cert-dir <dir>',
    ]) {
      assert.ok(help.includes(flag), flag);
    }
    assert.match(help, /--openstackmachine-concurrency <n> .*\(default: 10\)/);
    assert.match(help, /--scope-cache-max-size <n> .*\(default: 10\)/);
    assert.match(help, /--sync-period <duration> .*\(default: "10m0s"\)/);
    assert.match(help, /--health-addr <address> .*\(default: ":9440"\)/);
    assert.match(help, /--diagnostics-address <address> .*\(default: ":8443"\)/);
    assert.match(help, /--leader-elect \[bool\] .*\(default: false\)/);
    assert.match(help, /--act-as-cluster-api-core \[bool\] .*\(default: false\)/);
    assert.match(help, /--webhook-port <port> .*\(default: 9443\)/);
    assert.match(help, /--webhook-cert-dir <dir> .*\(default: "\/tmp\/k8s-webhook-server\/serving-certs"\)/);
  });

  it('--version prints the version, as CAPO does', async () => {
    const { code, out } = await run('capo', '--version');
    assert.equal(code, 0);
    assert.equal(out, VERSION);
  });

  it('--namespace and --watch-filter are refused with the reason; bad values are usage errors', async () => {
    const ns = await run('capo', '--namespace=team-a');
    assert.equal(ns.code, 2);
    assert.match(ns.err, /--namespace=team-a is not supported yet: .*act on every namespace/);
    const filter = await run('capo', '--watch-filter', 'blue');
    assert.equal(filter.code, 2);
    assert.match(filter.err, /--watch-filter=blue is not supported yet/);
    const period = await run('capo', '--sync-period', '10');
    assert.equal(period.code, 2);
    assert.match(period.err, /--sync-period: "10" is not a duration/);
    const addr = await run('capo', '--health-addr', 'localhost');
    assert.equal(addr.code, 2);
    assert.match(addr.err, /--health-addr: "localhost" is not an address/);
    const webhookPort = await run('capo', '--webhook-port=70000');
    assert.equal(webhookPort.code, 2);
    assert.match(
      webhookPort.err,
      /--webhook-port=70000 is not a port: write 1 to 65535, or 0 to serve no webhook/,
    );
    const workers = await run('capo', '--openstackmachine-concurrency', '0');
    assert.equal(workers.code, 2);
    assert.match(workers.err, /write a whole number ≥ 1/);
    const unknown = await run('capo', '--openstackmachine-concurency=3');
    assert.equal(unknown.code, 2);
    assert.match(
      unknown.err,
      /--openstackmachine-concurency: unknown flag \(did you mean --openstackmachine-concurrency\?\)/,
    );
  });

  it('checks every input before it starts: no kubeconfig, or a missing one with bad flags, all in one report, exit 2', async () => {
    const lines = (err: string) => {
      assert.doesNotMatch(err, /^\s+at /m, 'a stack trace');
      const all = err.trimEnd().split('\n');
      assert.equal(all[0], 'shiftstack capo: not started; fix these inputs:', err);
      return all.slice(1);
    };
    const none = await runCli(['capo'], { env: envWithoutCluster(join(dir, 'empty-home')) });
    assert.equal(none.code, 2, none.err);
    const [only, ...more] = lines(none.err);
    assert.deepEqual(more, []);
    assert.match(only!, /^kubeconfig: none found: .* Fix: pass --kubeconfig <file> or set KUBECONFIG/);

    const many = await runCli([
      'capo',
      '--kubeconfig=/nonexistent',
      '--sync-period=10',
      '--bogus',
      '--health-addr=localhost',
      '--watch-filter=blue',
    ]);
    assert.equal(many.code, 2, many.err);
    assert.deepEqual(
      lines(many.err).map((l) => l.replace(/[:.].*$/, '')),
      [
        '--bogus',
        '--watch-filter=blue is not supported yet',
        '--sync-period',
        '--health-addr',
        '/nonexistent',
      ],
    );
  });

  it("runs with CAPO's Deployment arguments: warns about the unsupported ones, leads on its Lease, serves health and secure metrics, stops on SIGTERM", async () => {
    const port = await freePort();
    const diagnostics = await freePort();
    await api.create(kinds.Namespace, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'capo-system' },
    });
    const capo = spawnCapo(
      [
        '--leader-elect',
        `--diagnostics-address=127.0.0.1:${diagnostics}`,
        '--insecure-diagnostics=false',
        '--v=2',
        `--kubeconfig=${kube.kubeconfigPath}`,
        `--health-addr=127.0.0.1:${port}`,
        '--openstackmachine-concurrency=4',
        '--webhook-port=0',
      ],
      { POD_NAMESPACE: 'capo-system' },
    );
    try {
      // The Lease of CAPO's name, in the pod's namespace, held by this process.
      const lease = await eventually(
        async () => {
          try {
            const l = await api.get(kinds.Lease, { namespace: 'capo-system', name: CAPO_LEASE_NAME });
            return l.spec?.holderIdentity ? l : undefined;
          } catch {
            return undefined;
          }
        },
        { timeoutMs: 30_000, intervalMs: 100, what: `Lease capo-system/${CAPO_LEASE_NAME} held` },
      );
      assert.ok(lease!.spec?.holderIdentity);
      const health = await eventually(
        async () => {
          const r = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
          return r?.status === 200 ? r : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 100, what: '/readyz 200' },
      );
      assert.equal(health!.status, 200);
      // Metrics are not on the probes' port but on the diagnostics address: HTTPS, a token required.
      assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404);
      const secure = new Agent({ connect: { rejectUnauthorized: false } });
      try {
        const url = `https://127.0.0.1:${diagnostics}/metrics`;
        assert.equal((await undiciFetch(url, { dispatcher: secure })).status, 401);
        const metrics = await undiciFetch(url, {
          dispatcher: secure,
          headers: { authorization: `Bearer ${kube.token}` },
        });
        assert.equal(metrics.status, 200);
        assert.match(
          await metrics.text(),
          /controller_runtime_max_concurrent_reconciles\{controller="openstackmachine"\} 4/,
        );
      } finally {
        await secure.close();
      }
      const named = capo.warnings.map((w) => /^(.*?) is not supported yet/.exec(w)?.[1] ?? w);
      assert.deepEqual(named, ['--v=2']);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${capo.stderr()}`, { cause: err });
    } finally {
      capo.child.kill('SIGTERM');
    }
    assert.equal(await capo.exited, 0, capo.stderr());
    // A graceful stop hands the lease over at once.
    const released = await api.get(kinds.Lease, { namespace: 'capo-system', name: CAPO_LEASE_NAME });
    assert.ok(!released.spec?.holderIdentity, JSON.stringify(released.spec));
  });

  it('serves the conversion webhook on --webhook-port with the certificate of --webhook-cert-dir, every replica, and /readyz says so', async () => {
    const port = await freePort();
    const webhookPort = await freePort();
    const certs = join(dir, 'serving-certs');
    await mkdir(certs, { recursive: true });
    const cert = selfSignedCert({ commonName: 'capo-webhook-service.capo-system.svc', hosts: ['127.0.0.1'] });
    await writeFile(join(certs, 'tls.crt'), cert.certPem);
    await writeFile(join(certs, 'tls.key'), cert.keyPem);
    const capo = spawnCapo(
      [
        `--kubeconfig=${kube.kubeconfigPath}`,
        `--health-addr=127.0.0.1:${port}`,
        '--diagnostics-address=0',
        `--webhook-port=${webhookPort}`,
        `--webhook-cert-dir=${certs}`,
        '--act-as-cluster-api-core',
        // Another replica leads: the webhook is served all the same.
        '--leader-elect',
        '--leader-elect-resource-namespace=no-such-namespace',
      ],
      {},
    );
    const trusting = new Agent({ connect: { ca: cert.certPem } });
    try {
      const ready = await eventually(
        async () => {
          const r = await fetch(`http://127.0.0.1:${port}/readyz?verbose`).catch(() => undefined);
          const text = await r?.text();
          return text?.includes('[+]webhook ok') ? text : undefined;
        },
        { timeoutMs: 30_000, intervalMs: 100, what: '/readyz with the webhook line' },
      );
      assert.match(ready!, /\[\+\]webhook ok/);
      const res = await undiciFetch(`https://127.0.0.1:${webhookPort}/convert`, {
        method: 'POST',
        dispatcher: trusting,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          request: {
            uid: 'u1',
            desiredAPIVersion: 'cluster.x-k8s.io/v1beta2',
            objects: [
              {
                apiVersion: 'cluster.x-k8s.io/v1beta1',
                kind: 'Cluster',
                metadata: { name: 'demo', namespace: 'capo-demo' },
                spec: {
                  infrastructureRef: {
                    apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
                    kind: 'OpenStackCluster',
                    name: 'demo',
                  },
                },
              },
            ],
          },
        }),
      });
      assert.equal(res.status, 200);
      const review = (await res.json()) as { response: { result: unknown; convertedObjects: any[] } };
      assert.deepEqual(review.response.result, { status: 'Success' });
      assert.deepEqual(review.response.convertedObjects[0].spec.infrastructureRef, {
        apiGroup: 'infrastructure.cluster.x-k8s.io',
        kind: 'OpenStackCluster',
        name: 'demo',
      });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${capo.stderr()}`, { cause: err });
    } finally {
      await trusting.close();
      capo.child.kill('SIGTERM');
    }
    assert.equal(await capo.exited, 0, capo.stderr());
  });

  it('a --webhook-cert-dir without tls.crt stops capo with the file named', async () => {
    const empty = join(dir, 'no-certs');
    await mkdir(empty, { recursive: true });
    const capo = spawnCapo(
      [
        `--kubeconfig=${kube.kubeconfigPath}`,
        '--health-addr=0',
        '--diagnostics-address=0',
        `--webhook-port=${await freePort()}`,
        `--webhook-cert-dir=${empty}`,
      ],
      {},
    );
    assert.equal(await capo.exited, 1, capo.stderr());
    assert.match(capo.stderr(), new RegExp(`${join(empty, 'tls.crt')}: cannot be read \\(ENOENT\\)`));
  });
});
