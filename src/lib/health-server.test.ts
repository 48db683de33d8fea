import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startHealthServer } from './health-server.ts';
import { Counter, createRegistry } from './metrics.ts';

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
});
