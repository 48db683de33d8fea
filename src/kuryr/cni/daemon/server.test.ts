/**
 * The daemon's endpoint on its own: upstream's wire (paths, statuses, error bodies), the bound on
 * requests served at once and on each request's time. The handler here is the daemon's seam
 * (CniHandler), held open or failed on purpose; the real one is tested in daemon.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRegistry } from '../../../lib/metrics.ts';
import { rootLogger } from '../../../lib/log.ts';
import { eventually } from '../../../sim/kube/testing/harness.ts';
import { CniError, CniErrorCode, type CniRequest } from '../spec.ts';
import { daemonMetrics } from './metrics.ts';
import { splitHostPort, startDaemonServer, type CniHandler } from './server.ts';

const BODY = {
  CNI_COMMAND: 'ADD',
  CNI_CONTAINERID: 'c1',
  CNI_NETNS: '/var/run/netns/p1',
  CNI_IFNAME: 'eth0',
  CNI_ARGS: 'K8S_POD_NAMESPACE=default;K8S_POD_NAME=p1',
  CNI_PATH: '/opt/cni/bin',
  config_kuryr: { cniVersion: '1.0.0', name: 'kuryr', type: 'kuryr-cni' },
};

async function withServer(
  handler: CniHandler,
  opts: { workers?: number; requestTimeoutMs?: number },
  fn: (url: string, metrics: () => Promise<string>) => Promise<void>,
) {
  const registry = createRegistry({ defaultMetrics: false });
  const server = await startDaemonServer({
    bindAddress: '127.0.0.1:0',
    handler,
    workers: opts.workers ?? 30,
    requestTimeoutMs: opts.requestTimeoutMs ?? 180_000,
    metrics: daemonMetrics(registry),
    log: rootLogger().child({}, { level: 'silent' }),
  });
  try {
    await fn(server.url, () => registry.metrics());
  } finally {
    await server.close();
  }
}

const post = (url: string, body: unknown = BODY) =>
  fetch(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

describe('kuryr-daemon endpoint', () => {
  it("answers upstream's wire: 202 with the VIF for ADD, 204 for DEL and CHECK, the request read as the plugin's CNI_* variables", async () => {
    const seen: CniRequest[] = [];
    const handler: CniHandler = {
      add: (req) => (seen.push(req), Promise.resolve({ 'versioned_object.name': 'VIFVlanNested' })),
      del: (req) => (seen.push(req), Promise.resolve()),
      check: (req) => (seen.push(req), Promise.resolve()),
    };
    await withServer(handler, {}, async (url) => {
      const add = await post(`${url}/addNetwork`);
      assert.equal(add.status, 202);
      assert.deepEqual(await add.json(), { 'versioned_object.name': 'VIFVlanNested' });
      assert.equal((await post(`${url}/delNetwork`, { ...BODY, CNI_NETNS: '' })).status, 204);
      assert.equal((await post(`${url}/checkNetwork`)).status, 204);
      assert.deepEqual(
        seen.map((r) => [r.command, r.pod.namespace, r.pod.name, r.netns]),
        [
          ['ADD', 'default', 'p1', '/var/run/netns/p1'],
          ['DEL', 'default', 'p1', ''],
          ['CHECK', 'default', 'p1', '/var/run/netns/p1'],
        ],
      );
      const bad = await post(`${url}/addNetwork`, { ...BODY, CNI_ARGS: '' });
      assert.equal(bad.status, 400);
      assert.equal(((await bad.json()) as { code: number }).code, 4);
      assert.equal((await fetch(`${url}/addNetwork`)).status, 405);
      assert.equal((await post(`${url}/nothing`)).status, 404);
    });
  });

  it('answers a handler error with its code, and anything else as an internal error', async () => {
    const handler: CniHandler = {
      add: () => Promise.reject(new CniError(CniErrorCode.UnknownContainer, 'gone', 'the pod was deleted')),
      del: () => Promise.reject(new Error('boom')),
      check: () => Promise.resolve(),
    };
    await withServer(handler, {}, async (url, metrics) => {
      const add = await post(`${url}/addNetwork`);
      assert.equal(add.status, 410);
      assert.deepEqual(await add.json(), { code: 3, msg: 'gone', details: 'the pod was deleted' });
      const del = await post(`${url}/delNetwork`);
      assert.equal(del.status, 500);
      assert.deepEqual(await del.json(), { code: 999, msg: 'Error processing DEL request', details: 'boom' });
      assert.match(
        await metrics(),
        /kuryr_cni_request_duration_seconds_count\{command="ADD",error="true"\} 1/,
      );
    });
  });

  it('serves at most `workers` requests at once; the others wait their turn', async () => {
    const release: (() => void)[] = [];
    let running = 0;
    let most = 0;
    const handler: CniHandler = {
      add: async () => {
        running++;
        most = Math.max(most, running);
        await new Promise<void>((r) => release.push(r));
        running--;
        return {};
      },
      del: () => Promise.resolve(),
      check: () => Promise.resolve(),
    };
    await withServer(handler, { workers: 2 }, async (url, metrics) => {
      const answers = [1, 2, 3, 4].map(() => post(`${url}/addNetwork`));
      await eventually(
        async () => /shiftstack_kuryr_cni_requests\{state="queued"\} 2/.test(await metrics()),
        {
          what: 'two requests queued behind two running',
        },
      );
      assert.equal(running, 2);
      // Release the held requests one by one as they reach the handler: all four get through.
      for (let released = 0; released < 4; released++) {
        await eventually(() => release.length > 0, { what: 'a request in the handler' });
        release.shift()!();
      }
      assert.deepEqual(
        (await Promise.all(answers)).map((a) => a.status),
        [202, 202, 202, 202],
      );
      assert.equal(most, 2);
    });
  });

  it('answers "try again later" (504, code 11) to a request past its time bound, and aborts its work', async () => {
    let aborted = false;
    const handler: CniHandler = {
      add: (_req, _conf, signal) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          }),
        ),
      del: () => Promise.resolve(),
      check: () => Promise.resolve(),
    };
    await withServer(handler, { requestTimeoutMs: 200 }, async (url) => {
      const res = await post(`${url}/addNetwork`);
      assert.equal(res.status, 504);
      const body = (await res.json()) as { code: number; msg: string };
      assert.equal(body.code, 11);
      assert.match(body.msg, /did not finish ADD within 0\.2 s/);
      assert.ok(aborted);
    });
  });

  it('reads [cni_daemon] bind_address as host:port', () => {
    assert.deepEqual(splitHostPort('127.0.0.1:5036'), { host: '127.0.0.1', port: 5036 });
    assert.deepEqual(splitHostPort('[::1]:5036'), { host: '::1', port: 5036 });
    assert.throws(() => splitHostPort('localhost'), /not host:port/);
  });
});
