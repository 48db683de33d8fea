/**
 * The transport's promises, against the emulator's fault injection (skipped on a real cloud) and,
 * where the server side must be observed, a small local server: safe retries only, Retry-After
 * honoured, bounded attempts, timeouts, the concurrency limit, redirects, logs and metrics.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createRegistry } from '../../lib/metrics.ts';
import type { Clock } from '../../lib/clock.ts';
import {
  ConnectionError,
  isInternalServerError,
  isNotFound,
  isNotImplemented,
  isRateLimited,
  OpenStackHttpError,
} from './errors.ts';
import { requestCount } from './testing/metrics.ts';
import {
  addFault,
  capturingLog,
  clearFaults,
  openClientTarget,
  setLatency,
  type ClientTarget,
} from './testing/target.ts';
import { TokenCache } from './token-cache.ts';
import { Transport } from './transport.ts';

/** A clock that records back-off delays instead of sleeping them. */
function recordingClock(): Clock & { sleeps: number[] } {
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => Date.now(),
    random: () => 0.5,
    // The transport sets no timers on its clock.
    setTimer: () => () => {},
    sleep: (ms, signal) => {
      sleeps.push(ms);
      return signal?.aborted ? Promise.reject(signal.reason as Error) : Promise.resolve();
    },
  };
}

const list = { method: 'GET', path: 'networks', label: 'network_list' } as const;
const create = (name: string) =>
  ({ method: 'POST', path: 'networks', body: { network: { name } }, label: 'network_create' }) as const;

describe('transport against a cloud', () => {
  let t: ClientTarget;
  before(async () => {
    t = await openClientTarget();
  });
  after(async () => t?.close());

  const setup = async (options: { clock?: Clock; requestTimeoutMs?: number } = {}) => {
    const registry = createRegistry({ defaultMetrics: false });
    const client = await t.client(t.demo, { registry, ...options });
    return { registry, network: client.serviceClient('network'), client };
  };
  const ops = (op: string) => t.sim!.cloud.stats.count('neutron', op);

  it('honours Retry-After on 429 and 503 for any method', async (s) => {
    if (!t.sim) return s.skip('needs fault injection');
    const clock = recordingClock();
    const { network, registry } = await setup({ clock });
    await addFault(t.sim, {
      kind: 'request',
      service: 'neutron',
      operation: 'GET',
      status: 429,
      retryAfterSeconds: 2,
      times: 2,
    });
    assert.equal((await network.request(list)).status, 200);
    await addFault(t.sim, {
      kind: 'request',
      service: 'neutron',
      operation: 'POST',
      status: 503,
      retryAfterSeconds: 1,
      times: 1,
    });
    const before = ops('POST /v2.0/networks');
    const created = await network.request<{ network: { id: string } }>(create('retry-after'));
    assert.equal(created.status, 201);
    assert.equal(ops('POST /v2.0/networks') - before, 2);
    assert.deepEqual(clock.sleeps, [2000, 2000, 1000]);
    assert.equal(await requestCount(registry, 'network_list', 'openstack_api_request_retries_total'), 2);
    await network.request({
      method: 'DELETE',
      path: `networks/${created.body.network.id}`,
      label: 'network_delete',
    });
  });

  it('gives up at once on a Retry-After beyond its patience, carrying it for the caller to requeue', async (s) => {
    if (!t.sim) return s.skip('needs fault injection');
    const clock = recordingClock();
    const { network } = await setup({ clock });
    await addFault(t.sim, {
      kind: 'request',
      service: 'neutron',
      status: 429,
      retryAfterSeconds: 3600,
      times: 1,
    });
    await assert.rejects(network.request(list), (e: unknown) => {
      assert.ok(isRateLimited(e) && e.retryAfterMs === 3_600_000, String(e));
      return true;
    });
    assert.deepEqual(clock.sleeps, []);
  });

  it('retries a 500 for GET but not for POST, and never a 501', async (s) => {
    if (!t.sim) return s.skip('needs fault injection');
    const clock = recordingClock();
    const { network } = await setup({ clock });
    await addFault(t.sim, { kind: 'request', service: 'neutron', operation: 'GET', status: 500, times: 2 });
    let before = ops('GET /v2.0/networks');
    assert.equal((await network.request(list)).status, 200);
    assert.equal(ops('GET /v2.0/networks') - before, 3);
    // Full jitter at random() = 0.5: half of 10 ms, then half of 20 ms.
    assert.deepEqual(clock.sleeps, [5, 10]);

    await addFault(t.sim, { kind: 'request', service: 'neutron', operation: 'POST', status: 500, times: 1 });
    before = ops('POST /v2.0/networks');
    await assert.rejects(network.request(create('no-retry')), isInternalServerError);
    assert.equal(ops('POST /v2.0/networks') - before, 1);

    await addFault(t.sim, { kind: 'request', service: 'neutron', operation: 'GET', status: 501, times: 1 });
    before = ops('GET /v2.0/networks');
    await assert.rejects(network.request(list), isNotImplemented);
    assert.equal(ops('GET /v2.0/networks') - before, 1);
  });

  it('stops after 4 attempts and reports the last answer', async (s) => {
    if (!t.sim) return s.skip('needs fault injection');
    const { network, registry } = await setup({ clock: recordingClock() });
    await addFault(t.sim, { kind: 'request', service: 'neutron', operation: 'GET', status: 503 });
    try {
      const before = ops('GET /v2.0/networks');
      await assert.rejects(network.request(list), (e: unknown) => {
        assert.ok(OpenStackHttpError.is(e) && e.kind === 'ServiceUnavailable' && e.service === 'network');
        assert.match(
          e.message,
          /^GET http:\/\/.*\/networking\/v2\.0\/networks → 503 ServiceUnavailable \(req-[0-9a-f-]+\): /,
        );
        return true;
      });
      assert.equal(ops('GET /v2.0/networks') - before, 4);
      assert.equal(await requestCount(registry, 'network_list', 'openstack_api_request_errors_total'), 1);
    } finally {
      await clearFaults(t.sim);
    }
  });

  it('times out an attempt, and does not repeat it', async (s) => {
    if (!t.sim) return s.skip('needs emulator latency');
    const { network, registry } = await setup({ requestTimeoutMs: 50 });
    await network.request(list); // token first, so the timeout applies to the network call
    await setLatency(t.sim, { 'neutron GET /v2.0/networks': 400 });
    try {
      await assert.rejects(network.request(list), (e: unknown) => {
        assert.ok(ConnectionError.is(e) && e.timedOut, String(e));
        assert.match(e.message, /no complete answer within 50 ms/);
        return true;
      });
      assert.equal(await requestCount(registry, 'network_list', 'openstack_api_request_retries_total'), 0);
    } finally {
      await setLatency(t.sim, { 'neutron GET /v2.0/networks': 0 });
    }
  });

  it("rejects with the caller's reason when the caller aborts", async () => {
    const { network } = await setup();
    const abort = new AbortController();
    abort.abort(new Error('reconcile cancelled'));
    await assert.rejects(network.request({ ...list, signal: abort.signal }), /reconcile cancelled/);
  });

  it('logs one debug line per call, without token or password, and counts calls per OCCM label', async () => {
    const { log, lines } = capturingLog();
    const registry = createRegistry({ defaultMetrics: false });
    const client = await t.client(t.demo, { log, registry, tokenCache: new TokenCache() });
    const network = client.serviceClient('network');
    await network.request(list);
    await assert.rejects(
      network.request({ method: 'GET', path: 'ports/does-not-exist', label: 'port_get' }),
      isNotFound,
    );
    // A second client on the same registry reuses the metrics.
    const again = await t.client(t.demo, { registry });
    await again.serviceClient('network').request(list);

    const calls = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'openstack api call');
    assert.deepEqual(
      calls.map((c) => [c.service, c.request, c.method, c.status]),
      [
        ['identity', 'token_create', 'POST', 201],
        ['network', 'network_list', 'GET', 200],
        ['network', 'port_get', 'GET', 404],
      ],
    );
    assert.ok(
      calls.every((c) => typeof c.ms === 'number' && /^req-/.test(c.requestId) && c.path.startsWith('/')),
    );
    const token = (await client.session.token()).value;
    const all = lines.join('\n');
    assert.ok(!all.includes(token) && !all.includes(t.demo.password!));
    assert.equal(await requestCount(registry, 'network_list'), 2);
    assert.equal(await requestCount(registry, 'port_get', 'openstack_api_request_errors_total'), 1);
    const text = await registry.metrics();
    assert.match(text, /openstack_api_request_duration_seconds_bucket\{le="0.005",request="network_list"\}/);
  });
});

describe('transport against a local server', () => {
  let server: Server;
  let base: string;
  let inFlight = 0;
  let maxInFlight = 0;
  const seen: { url: string; token: string | undefined }[] = [];
  before(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url ?? '', token: req.headers['x-auth-token'] as string | undefined });
      if (req.url === '/redirect') {
        res.writeHead(302, { Location: 'http://127.0.0.1:1/elsewhere' }).end();
        return;
      }
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      setTimeout(() => {
        inFlight--;
        res
          .writeHead(200, { 'content-type': 'application/json', 'x-openstack-request-id': 'req-local' })
          .end('{}');
      }, 10);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('keeps at most `concurrency` requests in flight per service and queues the rest', async () => {
    const transport = new Transport({ concurrency: 3 });
    const res = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        transport.send({ method: 'GET', url: `${base}/x/${i}`, service: 'network', label: 'x_get' }),
      ),
    );
    assert.ok(res.every((r) => r.status === 200 && r.requestId === 'req-local'));
    assert.equal(maxInFlight, 3);
    await transport.close();
  });

  it('does not follow redirects, so a token never travels to where one points', async () => {
    const transport = new Transport();
    const res = await transport.send({
      method: 'GET',
      url: `${base}/redirect`,
      service: 'network',
      label: 'x_get',
      headers: { 'X-Auth-Token': 'secret-token' },
    });
    assert.equal(res.status, 302);
    assert.equal(seen.filter((s) => s.url === '/elsewhere').length, 0);
  });

  it('retries a refused connection, then reports it with the URL and code', async () => {
    const registry = createRegistry({ defaultMetrics: false });
    const clock = recordingClock();
    const transport = new Transport({ registry, clock, retry: { baseDelayMs: 1 } });
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/v3/auth/tokens`;
    await new Promise<void>((r) => closed.close(() => r()));
    await assert.rejects(
      transport.send({ method: 'POST', url, service: 'identity', label: 'token_create', body: '{}' }),
      (e: unknown) => {
        assert.ok(ConnectionError.is(e) && e.code === 'ECONNREFUSED', String(e));
        assert.equal(e.message, `POST ${url}: connection refused (ECONNREFUSED)`);
        return true;
      },
    );
    assert.equal(clock.sleeps.length, 3);
    assert.equal(await requestCount(registry, 'token_create', 'openstack_api_request_errors_total'), 1);
  });
});
