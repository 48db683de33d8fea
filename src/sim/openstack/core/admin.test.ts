import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { startOpenStackSim } from '../server.ts';
import { eventually, startTestCloud, type TestCloud } from '../testing/harness.ts';

const admin = async (t: TestCloud, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${t.url}/_sim${path}`, {
    method,
    ...(body !== undefined
      ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
      : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

describe('emulator admin API: faults, stats, profile', () => {
  let t: TestCloud;
  before(async () => (t = await startTestCloud({ seed: 42 })));
  after(async () => t.close());

  it('counts requests per service and operation, and resets', async () => {
    await admin(t, 'DELETE', '/stats');
    await t.request('neutron', 'GET', '/v2.0/networks');
    await t.request('neutron', 'GET', '/v2.0/networks');
    await t.request('neutron', 'GET', '/v2.0/networks/does-not-exist');
    const stats = (await admin(t, 'GET', '/stats')).body;
    const ops = stats.services.neutron.operations;
    assert.equal(ops['GET /v2.0/networks'].count, 2);
    assert.equal(ops['GET /v2.0/networks/{network_id}'].errors, 1);
    assert.equal(ops['GET /v2.0/networks/{network_id}'].statuses['404'], 1);
    assert.ok(
      stats.services.keystone.operations['POST /v3/auth/tokens'].count >= 1,
      'the harness token call is counted',
    );
    await admin(t, 'DELETE', '/stats');
    assert.equal((await admin(t, 'GET', '/stats')).body.total, 0);
  });

  it('tells callers apart by User-Agent: counts per caller, and a journal of who wrote what, when', async () => {
    await admin(t, 'DELETE', '/stats');
    const { last: start } = (await admin(t, 'GET', '/requests?since=0')).body as { last: number };
    const as = (ua: string) => ({ headers: { 'user-agent': ua } });
    await t.request('neutron', 'GET', '/v2.0/networks', as('side-a'));
    const net = await t.request('neutron', 'POST', '/v2.0/networks', {
      body: { network: { name: 'by-b' } },
      ...as('side-b'),
    });
    assert.equal(net.status, 201);
    await t.request('neutron', 'DELETE', `/v2.0/networks/${net.body.network.id}`, as('side-a'));

    const callers = (await admin(t, 'GET', '/stats')).body.callers;
    assert.deepEqual(callers['side-a'], {
      count: 2,
      writes: 1,
      operations: { 'neutron GET /v2.0/networks': 1, 'neutron DELETE /v2.0/networks/{network_id}': 1 },
    });
    assert.deepEqual(callers['side-b'].operations, { 'neutron POST /v2.0/networks': 1 });

    const writes = (await admin(t, 'GET', `/requests?since=${start}&writes=true`)).body;
    assert.deepEqual(
      writes.requests.map((r: { caller: string; operation: string; status: number }) => [
        r.caller,
        r.operation,
        r.status,
      ]),
      [
        ['side-b', 'POST /v2.0/networks', 201],
        ['side-a', 'DELETE /v2.0/networks/{network_id}', 204],
      ],
    );
    const [first, second] = writes.requests as { seq: number; at: number }[];
    assert.ok(first!.seq < second!.seq && first!.at <= second!.at, 'in the order they were answered');
    assert.equal(writes.dropped, 0);
    const mine = (await admin(t, 'GET', `/requests?since=${start}&caller=side-a&service=neutron`)).body;
    assert.equal(mine.requests.length, 2);
    assert.equal((await admin(t, 'GET', '/requests?since=-1')).status, 400);
  });

  it('journals when each volume reached each status, to the millisecond', async () => {
    const { last: start } = (await admin(t, 'GET', '/statuses?since=0')).body as { last: number };
    const project = t.cloud.identity.validate(await t.token()).projectId ?? '';
    const made = await t.request('cinder', 'POST', `/v3/${project}/volumes`, {
      body: { volume: { name: 'journaled', size: 1 } },
    });
    assert.equal(made.status, 202);
    const id = made.body.volume.id as string;
    type Journal = { statuses: { seq: number; at: number; resource: string; id: string; status: string }[] };
    const mine = (await eventually(
      async () => {
        const j = (await admin(t, 'GET', `/statuses?since=${start}&service=cinder`)).body as Journal;
        const of = j.statuses.filter((r) => r.id === id);
        return of.some((r) => r.status === 'available') ? of : undefined;
      },
      { what: 'the volume available in the journal' },
    ))!;
    assert.deepEqual(
      mine.map((r) => [r.resource, r.status]),
      [
        ['volume', 'creating'],
        ['volume', 'available'],
      ],
    );
    assert.ok(mine[0]!.at <= mine[1]!.at);
    const nova = (await admin(t, 'GET', `/statuses?since=${start}&service=nova`)).body as Journal;
    assert.equal(nova.statuses.length, 0, 'filtered by service');
    assert.equal((await admin(t, 'GET', '/statuses?since=x')).status, 400);
  });

  it('injects a 503 with Retry-After for a number of calls, in the service’s error format', async () => {
    const added = await admin(t, 'POST', '/faults', {
      kind: 'request',
      service: 'neutron',
      operation: 'POST /v2.0/ports',
      status: 503,
      retryAfterSeconds: 2,
      times: 2,
    });
    assert.equal(added.status, 201);
    const net = await t.request('neutron', 'POST', '/v2.0/networks', {
      body: { network: { name: 'faulty' } },
    });
    assert.equal(net.status, 201, 'other operations are not affected');
    for (let i = 0; i < 2; i++) {
      const res = await t.request('neutron', 'POST', '/v2.0/ports', {
        body: { port: { network_id: net.body.network.id } },
      });
      assert.equal(res.status, 503);
      assert.equal(res.headers.get('retry-after'), '2');
      assert.ok(res.body.NeutronError, 'rendered as a Neutron error');
    }
    const ok = await t.request('neutron', 'POST', '/v2.0/ports', {
      body: { port: { network_id: net.body.network.id } },
    });
    assert.equal(ok.status, 201, 'the fault is used up after `times` calls');
  });

  it('opens a 429 window for a whole service and closes it after its duration', async () => {
    await admin(t, 'POST', '/faults', { kind: 'request', service: 'nova', status: 429, durationMs: 150 });
    const limited = await t.request('nova', 'GET', '/v2.1/servers');
    assert.equal(limited.status, 429);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await t.request('nova', 'GET', '/v2.1/servers')).status, 200);
  });

  it('applies an error rate with seeded dice', async () => {
    await admin(t, 'POST', '/faults', {
      kind: 'request',
      service: 'glance',
      operation: 'GET',
      status: 500,
      rate: 0.5,
      durationMs: 10_000,
    });
    const statuses = [];
    for (let i = 0; i < 40; i++) statuses.push((await t.request('glance', 'GET', '/v2/images')).status);
    const failures = statuses.filter((s) => s === 500).length;
    assert.ok(failures > 5 && failures < 35, `${failures} of 40 failed`);
    await admin(t, 'DELETE', '/faults');
    assert.deepEqual((await admin(t, 'GET', '/faults')).body.faults, []);
  });

  it('rejects invalid fault specs and unknown admin calls with a message', async () => {
    const bad = await admin(t, 'POST', '/faults', { kind: 'request', status: 200 });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /invalid fault/);
    const badPath = await admin(t, 'POST', '/faults', { kind: 'request', status: 503, path: '([' });
    assert.equal(badPath.status, 400);
    assert.match(badPath.body.error.message, /path is not a regular expression/);
    assert.equal(
      (await t.request('neutron', 'GET', '/v2.0/networks')).status,
      200,
      'no fault was left behind',
    );
    const unknown = await admin(t, 'GET', '/nope');
    assert.equal(unknown.status, 404);
  });

  it('changes the profile at run time', async () => {
    const res = await admin(t, 'PATCH', '/profile', {
      timeScale: 2,
      transitions: { 'nova.server.build': 7 },
    });
    assert.equal(res.status, 200);
    assert.equal(t.cloud.timing.transition('nova.server.build'), 14);
    await admin(t, 'PATCH', '/profile', { timeScale: 1 });
  });
});

describe('emulator state file and clouds.yaml', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'shiftstack-state-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  it('writes a clouds.yaml that reaches the emulator', async () => {
    const sim = await startOpenStackSim({ cloudsYamlPath: join(dir, 'clouds.yaml') });
    try {
      const yaml = parse(await readFile(sim.cloudsYamlPath, 'utf8')) as {
        clouds: Record<string, { auth: Record<string, string> }>;
      };
      assert.deepEqual(Object.keys(yaml.clouds), [
        'shiftstack-admin',
        'shiftstack-demo',
        'shiftstack-alt-demo',
      ]);
      assert.equal(yaml.clouds['shiftstack-demo']!.auth.auth_url, sim.authUrl);
    } finally {
      await sim.stop();
    }
  });

  it('keeps the cloud across a restart', async () => {
    const stateFile = join(dir, 'state.json');
    const first = await startOpenStackSim({ stateFile, cloudsYamlPath: join(dir, 'c1.yaml') });
    const token = await login(first.authUrl);
    const created = await fetch(`${first.cloud.serviceUrl('neutron')}/v2.0/networks`, {
      method: 'POST',
      headers: { 'x-auth-token': token, 'content-type': 'application/json' },
      body: JSON.stringify({ network: { name: 'survivor' } }),
    });
    assert.equal(created.status, 201);
    const id = ((await created.json()) as { network: { id: string } }).network.id;
    await first.stop();

    const second = await startOpenStackSim({ stateFile, cloudsYamlPath: join(dir, 'c2.yaml') });
    try {
      const token2 = await login(second.authUrl);
      const got = await fetch(`${second.cloud.serviceUrl('neutron')}/v2.0/networks/${id}`, {
        headers: { 'x-auth-token': token2 },
      });
      assert.equal(got.status, 200);
      assert.equal(((await got.json()) as { network: { name: string } }).network.name, 'survivor');
    } finally {
      await second.stop();
    }
  });
});

async function login(authUrl: string): Promise<string> {
  const res = await fetch(`${authUrl}/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: 'demo', domain: { id: 'default' }, password: 'secret' } },
        },
        scope: { project: { name: 'demo', domain: { id: 'default' } } },
      },
    }),
  });
  return res.headers.get('x-subject-token')!;
}
