import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { EventsV1Event, V1Secret } from '@kubernetes/client-node';
import { ConfigError } from '../lib/config.ts';
import { createLogger } from '../lib/log.ts';
import { kinds, type KubeClient } from '../kube/index.ts';
import { OpenStackClient } from '../openstack/client.ts';
import { testClient } from '../kube/testing/env.ts';
import { startKubeSim, type RunningKubeSim } from '../sim/kube/start.ts';
import { eventually, startTestCloud, type TestCloud } from '../sim/openstack/testing/harness.ts';
import {
  CcmConfigSource,
  REASON_INVALID,
  REASON_RELOADED,
  rotatingClient,
  type RotatingClient,
} from './secret-config.ts';
import { tracked } from './secret/tracking.ts';

const NS = 'kube-system';
const TOKENS = 'POST /v3/auth/tokens';

function creds(user: string, password: string): string {
  return (
    `[Global]\nusername = ${user}\npassword = ${password}\ntenant-name = demo\n` +
    'user-domain-name = Default\ntenant-domain-name = Default\n'
  );
}

describe('CcmConfigSource: cloud.conf from a Secret, rotated live', () => {
  let dir: string;
  let kube: RunningKubeSim;
  let sim: TestCloud;
  let api: KubeClient;
  const logLines: string[] = [];
  const stops: (() => Promise<void>)[] = [];
  let confs = 0;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-secret-config-'));
    kube = await startKubeSim({ kubeconfigPath: join(dir, 'kubeconfig') });
    sim = await startTestCloud();
    api = testClient(kube.kubeconfigPath);
  });

  after(async () => {
    for (const stop of stops) await stop();
    await api.close();
    await kube.dispose();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A cloud.conf naming the Secret; the file's own credentials are wrong, so only the Secret's can work. */
  async function file(secretName: string, extra = ''): Promise<string> {
    const path = join(dir, `cloud-${++confs}.conf`);
    await writeFile(
      path,
      `[Global]\nauth-url = ${sim.authUrl}\nregion = RegionOne\nusername = nobody\npassword = from-the-file\n` +
        `secret-name = ${secretName}\nsecret-namespace = ${NS}\n${extra}`,
    );
    return path;
  }

  async function putSecret(name: string, data: Record<string, string>): Promise<void> {
    const body: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: NS },
      stringData: data,
    };
    try {
      const old = await api.get(kinds.Secret, { namespace: NS, name });
      await api.update(kinds.Secret, {
        ...body,
        metadata: { ...body.metadata, resourceVersion: old.metadata!.resourceVersion! },
      });
    } catch {
      await api.create(kinds.Secret, body);
    }
  }

  const log = createLogger({
    level: 'debug',
    destination: { write: (line: string) => void logLines.push(line) },
  });

  async function open(path: string): Promise<CcmConfigSource> {
    return CcmConfigSource.open({
      path,
      kube: api,
      loadContext: { env: {}, homedir: dir, cwd: dir },
      log,
      informer: { backoff: { initialMs: 50, maxMs: 200 } },
    });
  }

  /** Starts the watch and the rotating client; both stop when the suite ends. */
  async function run(source: CcmConfigSource, closed: string[] = []): Promise<RotatingClient> {
    const stopper = new AbortController();
    const done = source.start(stopper.signal);
    const os = await rotatingClient(source, {
      graceMs: 1_000,
      log,
      async build(config, options) {
        const client = await OpenStackClient.fromConfig(config, options);
        const close = client.close.bind(client);
        client.close = async () => {
          closed.push(config.username ?? '');
          await close();
        };
        return client;
      },
    });
    stops.push(async () => {
      stopper.abort();
      await done;
      await os.close();
    });
    return os;
  }

  async function eventsOn(name: string, reason: string): Promise<EventsV1Event[]> {
    const { items } = await api.list(kinds.EventsV1Event, { namespace: NS });
    return items.filter((e) => e.regarding?.name === name && e.reason === reason);
  }

  it('lays the Secret over the file: its credentials are the ones used', async () => {
    await putSecret('cc-override', { 'cloud.conf': creds('demo', 'secret') });
    const source = await open(await file('cc-override', '[LoadBalancer]\nlb-method = SOURCE_IP\n'));
    const config = source.current();
    assert.equal(config.cloud.username, 'demo');
    assert.equal(config.cloud.password, 'secret');
    assert.equal(
      config.loadBalancer.lbMethod,
      'SOURCE_IP',
      'what the Secret does not set keeps the file value',
    );
    assert.deepEqual(source.secret, { namespace: NS, name: 'cc-override' });
    const os = await run(source);
    await os.network.networks.list().all();
    assert.equal((await os.session.token()).token.user.name, 'demo');
  });

  it('accepts the in-tree key clouds.conf', async () => {
    await putSecret('cc-intree', { 'clouds.conf': creds('demo', 'secret') });
    const source = await open(await file('cc-intree'));
    assert.equal(source.current().cloud.username, 'demo');
    assert.ok(logLines.some((l) => l.includes(`Secret ${NS}/cc-intree key clouds.conf`)));
  });

  it('refuses to start without the Secret or its key, naming the fix', async () => {
    const missing = await open(await file('cc-absent')).then(
      () => assert.fail('opened'),
      (err: unknown) => err,
    );
    assert.ok(ConfigError.is(missing));
    assert.equal(missing.problems[0]?.file, `Secret ${NS}/cc-absent`);
    assert.match(missing.problems[0].fix, /kubectl create secret generic cc-absent -n kube-system/);

    await putSecret('cc-nokey', { other: 'x' });
    const nokey = await open(await file('cc-nokey')).then(
      () => assert.fail('opened'),
      (err: unknown) => err,
    );
    assert.ok(ConfigError.is(nokey));
    assert.match(nokey.problems[0]!.problem, /neither a "cloud.conf" nor a "clouds.conf" key/);
  });

  it('a password rotation in the Secret makes the next call authenticate as the new identity, without a restart', async () => {
    // The emulated Keystone has no PATCH /v3/users: rotate from user demo to a second user of the project.
    const project = (await sim.request('keystone', 'GET', '/v3/projects?name=demo')).body.projects[0]
      .id as string;
    const member = (
      (await sim.request('keystone', 'GET', '/v3/roles')).body.roles as { id: string; name: string }[]
    ).find((r) => r.name === 'member')!.id;
    const created = await sim.request('keystone', 'POST', '/v3/users', {
      body: {
        user: {
          name: 'ccm-rotated',
          password: 'rotated-pass',
          domain_id: 'default',
          default_project_id: project,
        },
      },
    });
    assert.equal(created.status, 201);
    const userId = created.body.user.id as string;
    assert.equal(
      (await sim.request('keystone', 'PUT', `/v3/projects/${project}/users/${userId}/roles/${member}`))
        .status,
      204,
    );

    await putSecret('cc-rotate', { 'cloud.conf': creds('demo', 'secret') });
    const source = await open(await file('cc-rotate'));
    const closed: string[] = [];
    const os = await run(source, closed);
    const changes: string[] = [];
    source.onChange(
      (next, previous) => void changes.push(`${previous.cloud.username}->${next.cloud.username}`),
    );
    await os.network.networks.list().all();
    assert.equal((await os.session.token()).token.user.name, 'demo');
    const tokensBefore = sim.cloud.stats.count('keystone', TOKENS);

    await putSecret('cc-rotate', { 'cloud.conf': creds('ccm-rotated', 'rotated-pass') });
    await eventually(() => os.generation === 2, { what: 'the rotated client' });
    assert.deepEqual(changes, ['demo->ccm-rotated']);
    assert.equal(source.current().cloud.username, 'ccm-rotated');
    await eventually(() => closed.includes('demo'), { what: 'the old client closed once idle' });

    const networks = await os.network.networks.list().all();
    assert.ok(Array.isArray(networks));
    assert.equal(
      sim.cloud.stats.count('keystone', TOKENS),
      tokensBefore + 1,
      'one new token, for the new user',
    );
    assert.equal((await os.session.token()).token.user.name, 'ccm-rotated');

    const reloaded = await eventually(() => eventsOn('cc-rotate', REASON_RELOADED).then((e) => e[0]), {
      what: 'the CloudConfigReloaded Event',
    });
    assert.equal(reloaded!.type, 'Normal');
    assert.match(reloaded!.note!, /Secret kube-system\/cc-rotate key cloud.conf \(changed: \[Global\]\)/);
    const reloadLine = logLines.find((l) => l.includes('cloud config reloaded from'));
    assert.ok(reloadLine);
    for (const text of [reloaded!.note!, ...logLines]) {
      assert.ok(
        !text.includes('rotated-pass') && !/password\W+secret/.test(text),
        `a credential leaked: ${text}`,
      );
    }
  });

  it('says which rotated keys only a restart applies', async () => {
    await putSecret('cc-restart', { 'cloud.conf': creds('demo', 'secret') });
    const source = await open(await file('cc-restart'));
    await run(source);
    await putSecret('cc-restart', {
      'cloud.conf': `${creds('demo', 'secret')}[LoadBalancer]\nenabled = false\n[Route]\nrouter-id = r-1\n`,
    });
    const reloaded = await eventually(() => eventsOn('cc-restart', REASON_RELOADED).then((e) => e[0]), {
      what: 'the CloudConfigReloaded Event',
    });
    assert.match(
      reloaded!.note!,
      /\(changed: \[LoadBalancer\], \[Route\]\); the controllers use it from their next reconcile; \[LoadBalancer\] enabled and \[Route\] router-id only take effect after a restart$/,
    );
  });

  it('an invalid Secret keeps the last config and records a Warning naming the key and the fix', async () => {
    await putSecret('cc-invalid', { 'cloud.conf': creds('demo', 'secret') });
    const source = await open(await file('cc-invalid'));
    const os = await run(source);
    const before = source.current();

    await putSecret('cc-invalid', {
      'cloud.conf': `${creds('demo', 'typo-pass')}[LoadBalancer]\nmonitor-max-retries = 20\n`,
    });
    const warning = await eventually(() => eventsOn('cc-invalid', REASON_INVALID).then((e) => e[0]), {
      what: 'the InvalidCloudConfig Event',
    });
    assert.equal(warning!.type, 'Warning');
    assert.match(
      warning!.note!,
      /Secret kube-system\/cc-invalid key cloud.conf:8: key "\[LoadBalancer\] monitor-max-retries"/,
    );
    assert.match(warning!.note!, /the last valid cloud config stays in use\. Fix: /);
    assert.ok(!warning!.note!.includes('typo-pass'));
    assert.equal(source.current(), before);
    assert.equal(os.generation, 1);
    assert.ok(logLines.some((l) => l.includes('monitor-max-retries') && l.includes('"level":"warn"')));

    // The key gone: the same, with the fix for the key.
    await putSecret('cc-invalid', { other: 'x' });
    await eventually(
      () =>
        eventsOn('cc-invalid', REASON_INVALID).then((e) =>
          e.some((x) => x.note?.includes('neither a "cloud.conf"')),
        ),
      { what: 'the missing-key Warning' },
    );
    assert.equal(source.current(), before);

    // Corrected: applied.
    await putSecret('cc-invalid', {
      'cloud.conf': `${creds('demo', 'secret')}[LoadBalancer]\nlb-method = SOURCE_IP\n`,
    });
    await eventually(() => source.current().loadBalancer.lbMethod === 'SOURCE_IP', {
      what: 'the corrected Secret',
    });
    assert.equal(os.generation, 1, 'credentials unchanged: the same OpenStack client');
  });
});

describe('tracked: calls in flight on a client', () => {
  class Pager {
    readonly #items: number[];
    constructor(items: number[]) {
      this.#items = items;
    }
    all(): Promise<number[]> {
      return Promise.resolve([...this.#items]);
    }
  }

  it('counts a call until its promise settles, and calls made later through what it returned', async () => {
    let inFlight = 0;
    let peak = 0;
    const leases = {
      acquire: () => void (peak = Math.max(peak, ++inFlight)),
      release: () => void inFlight--,
    };
    let finish!: () => void;
    const api = Object.freeze({
      servers: Object.freeze({
        get: () => new Promise<string>((r) => (finish = () => r('server'))),
        list: (n: number) => new Pager([n]),
      }),
    });
    const view = tracked(leases, api);
    const pending = view.servers.get();
    assert.equal(inFlight, 1);
    finish();
    assert.equal(await pending, 'server');
    assert.equal(inFlight, 0);
    const pager = view.servers.list(3);
    assert.equal(inFlight, 0);
    const all = pager.all();
    assert.equal(inFlight, 1);
    assert.deepEqual(await all, [3]);
    assert.equal(inFlight, 0);
    assert.equal(peak, 1);
    assert.equal(view.servers, view.servers, 'one wrapper per object');
  });
});
