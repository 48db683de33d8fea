import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Agent, fetch as undiciFetch } from 'undici';
import { startHealthServer, type GuardedRequest } from './health-server.ts';
import { Counter, createRegistry } from './metrics.ts';
import { selfSignedCert } from './tls-cert.ts';

describe('health server', () => {
  it('serves /metrics, /healthz and /readyz with kube-style check output', async () => {
    const registry = createRegistry({ defaultMetrics: false });
    const counter = new Counter({
      name: 'shiftstack_test_total',
      help: 'test counter',
      registers: [registry],
    });
    counter.inc(3);
    let ready = false;
    const server = await startHealthServer({
      port: 0,
      registry,
      readyz: [
        {
          name: 'informers-synced',
          check: () => {
            if (!ready) throw new Error('not synced yet');
          },
        },
      ],
    });
    try {
      const metrics = await fetch(`${server.url}/metrics`);
      assert.equal(metrics.status, 200);
      assert.match(await metrics.text(), /^shiftstack_test_total 3$/m);

      const healthz = await fetch(`${server.url}/healthz`);
      assert.equal(healthz.status, 200);
      assert.equal(await healthz.text(), 'ok\n');

      const notReady = await fetch(`${server.url}/readyz`);
      assert.equal(notReady.status, 500);
      assert.match(await notReady.text(), /\[-\]informers-synced failed: not synced yet/);

      ready = true;
      const verbose = await fetch(`${server.url}/readyz?verbose`);
      assert.equal(verbose.status, 200);
      assert.match(await verbose.text(), /\[\+\]informers-synced ok\nok/);

      server.addHealthzCheck({ name: 'hung', check: () => new Promise(() => {}) });
      const hung = await fetch(`${server.url}/healthz`);
      assert.equal(hung.status, 500);
      assert.match(await hung.text(), /hung failed: timed out/);

      assert.equal((await fetch(`${server.url}/nope`)).status, 404);
    } finally {
      await server.close();
    }
  });

  it("answers the same checks on an upstream's own paths (Kuryr's /alive and /ready), nowhere else", async () => {
    const registry = createRegistry({ defaultMetrics: false });
    let ready = false;
    const server = await startHealthServer({
      port: 0,
      registry,
      paths: { healthz: ['/alive'], readyz: ['/ready'] },
      readyz: [
        {
          name: 'informers-synced',
          check: () => {
            if (!ready) throw new Error('not synced yet');
          },
        },
      ],
    });
    try {
      assert.equal((await fetch(`${server.url}/alive`)).status, 200);
      assert.equal((await fetch(`${server.url}/ready`)).status, 500);
      ready = true;
      assert.equal((await fetch(`${server.url}/ready`)).status, 200);
      assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
      assert.equal((await fetch(`${server.url}/alive/x`)).status, 404);
    } finally {
      await server.close();
    }
  });

  it('over HTTPS, asks the guard first and serves only what it is told to', async () => {
    const registry = createRegistry({ defaultMetrics: false });
    const cert = selfSignedCert({ commonName: 'test', hosts: ['127.0.0.1'] });
    const seen: GuardedRequest[] = [];
    const secure = await startHealthServer({
      port: 0,
      registry,
      tls: cert,
      guard: (req) => {
        seen.push(req);
        if (req.path === '/healthz') return Promise.resolve({ allowed: true });
        if (req.authorization === undefined)
          return Promise.resolve({ allowed: false, status: 401, message: 'Unauthorized' });
        return Promise.resolve(
          req.authorization === 'Bearer good'
            ? { allowed: true }
            : { allowed: false, status: 403, message: 'forbidden: User "x" cannot get path "/metrics"' },
        );
      },
    });
    // '' is every address, as `--health-addr=:9440`: a kubelet probe comes to the pod's IP.
    const plain = await startHealthServer({ port: 0, host: '', registry, serve: { metrics: false } });
    const agent = new Agent({ connect: { ca: cert.certPem } });
    const get = (path: string, token?: string) =>
      undiciFetch(`${secure.url}${path}`, {
        dispatcher: agent,
        ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
      });
    try {
      assert.match(secure.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.equal((await get('/healthz')).status, 200);
      const anonymous = await get('/metrics');
      assert.equal(anonymous.status, 401);
      assert.equal(await anonymous.text(), 'Unauthorized\n');
      assert.equal((await get('/metrics', 'bad')).status, 403);
      assert.equal((await get('/metrics', 'good')).status, 200);
      assert.deepEqual(
        seen.map((r) => [r.method, r.path, r.authorization]),
        [
          ['GET', '/healthz', undefined],
          ['GET', '/metrics', undefined],
          ['GET', '/metrics', 'Bearer bad'],
          ['GET', '/metrics', 'Bearer good'],
        ],
      );
      // Plain HTTP is refused by a TLS port, and a server told not to serve metrics has none.
      await assert.rejects(fetch(`${secure.url.replace('https', 'http')}/healthz`));
      assert.match(plain.url, /^http:\/\/(\[::\]|0\.0\.0\.0):\d+$/);
      const port = new URL(plain.url).port;
      assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
      assert.equal((await fetch(`${plain.url}/metrics`)).status, 404);
      assert.equal((await fetch(`${plain.url}/healthz`)).status, 200);
    } finally {
      await agent.close();
      await secure.close();
      await plain.close();
    }
  });
});
