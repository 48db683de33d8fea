/**
 * How a failed reconcile is logged: one ERROR line that names the object, the error's message and
 * class and the request id of the call that failed; the stack only at debug. The failures are real
 * ones, as controllers meet them: an OpenStack 400 from the emulator (which sends a request id) and
 * a 409 Conflict from the Kubernetes emulator.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createLogger, type LogFormat, type LogLevel } from '../../lib/log.ts';
import { openClientTarget, type ClientTarget } from '../../openstack/core/testing/target.ts';
import type { OpenStackClient } from '../../openstack/client.ts';
import { eventually, startTestKube, type TestKube } from '../../sim/kube/testing/harness.ts';
import type { KubeClient } from '../client.ts';
import { Manager } from '../manager/manager.ts';
import type { ReconcileFunc } from '../reconcile/types.ts';
import { kinds } from '../resource.ts';
import { configMap, kubeConfigFrom, testClient } from '../testing/env.ts';

interface Line {
  level: string;
  msg: string;
  [key: string]: unknown;
}

function capture(level: LogLevel, format: LogFormat) {
  const text: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      text.push(chunk.toString('utf8'));
      done();
    },
  });
  return { log: createLogger({ level, format, destination }), output: () => text.join('') };
}

describe('reconcile errors in the log', () => {
  let k: TestKube;
  let client: KubeClient;
  let t: ClientTarget;
  let os: OpenStackClient;
  const stops: (() => Promise<void>)[] = [];

  before(async () => {
    k = await startTestKube();
    client = testClient(k.kubeconfigPath);
    t = await openClientTarget();
    os = await t.client(t.demo);
  });
  after(async () => {
    for (const s of stops) await s();
    await t.close();
    await client.close();
    await k.close();
  });

  /** One ConfigMap controller in `ns` running `reconcile`, logging to `log`; resolves once it has failed `times` (2). */
  const failTwice = async (
    ns: string,
    log: ReturnType<typeof capture>['log'],
    reconcile: ReconcileFunc,
    times = 2,
  ) => {
    await client.create(kinds.Namespace, { metadata: { name: ns } });
    const mgr = new Manager({
      name: `errlog-${ns}`,
      kubeConfig: kubeConfigFrom(k.kubeconfigPath),
      qps: 0,
      namespace: ns,
      log,
    });
    const c = mgr.controller('failing').for(kinds.ConfigMap).complete(reconcile);
    const ac = new AbortController();
    const done = mgr.start(ac.signal);
    stops.push(async () => {
      ac.abort();
      await done;
    });
    await client.create(kinds.ConfigMap, configMap('subject', ns));
    await eventually(() => c.stats.errors >= times, { what: `${times} failed reconciles` });
  };

  /** A Neutron 400: a subnet whose CIDR is not one. */
  const badSubnet = async () => {
    const net = await os.network.networks.create({ name: 'errlog' });
    try {
      await os.network.subnets.create({ network_id: net.id, cidr: 'not-a-cidr', ip_version: 4 });
    } finally {
      await os.network.networks.delete(net.id);
    }
  };

  it('an OpenStack 400: one ERROR line with message, object, class and request id; the stack at debug', async () => {
    const { log, output } = capture('debug', 'json');
    await failTwice('errlog-os', log, async () => {
      await badSubnet();
    });
    const lines = output()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);
    const errors = lines.filter((l) => l.level === 'error' && l.controller === 'failing');
    assert.ok(errors.length >= 2, JSON.stringify(lines));
    for (const e of errors) {
      assert.equal(e.msg, 'reconcile failed; requeued with back-off');
      assert.equal(e.namespace, 'errlog-os');
      assert.equal(e.name, 'subject');
      assert.equal(e.errorClass, 'OpenStackHttpError');
      assert.equal(e.code, 400);
      assert.match(String(e.error), /400 BadRequest.*cidr/i);
      assert.match(String(e.requestId), /^req-[0-9a-f-]{36}$/);
      assert.doesNotMatch(JSON.stringify(e), /\\n\s+at /, 'no stack at ERROR');
    }
    const stacks = lines.filter(
      (l) =>
        l.level === 'debug' &&
        l.reconcileId === errors[0]?.reconcileId &&
        /\\n\s+at /.test(JSON.stringify(l)),
    );
    assert.equal(stacks.length, 1, 'the stack of that failure is logged once, at debug');
  });

  it('a 409 Conflict from the API server: a race at info at first, an ERROR once it keeps coming back; the class and code, and no stack lines in text format', async () => {
    const { log, output } = capture('info', 'text');
    await failTwice(
      'errlog-kube',
      log,
      async (req, signal) => {
        const cm = await client.get(
          kinds.ConfigMap,
          { namespace: req.namespace, name: req.name },
          { signal },
        );
        // An update from a stale read: someone else's write came in between.
        await client.update(kinds.ConfigMap, { ...cm, data: { n: String(Math.random()) } }, { signal });
        await client.update(kinds.ConfigMap, { ...cm, data: { n: 'stale' } }, { signal });
      },
      5,
    );
    const text = output();
    const lines = text.split('\n');
    const races = lines.filter((l) => l.includes('write raced another writer (409 Conflict); requeued'));
    assert.equal(races.length, 3, `the first three conflicts in a row are races, at info:\n${text}`);
    assert.ok(
      races.every((l) => l.includes('INFO')),
      text,
    );
    const failures = lines.filter((l) => l.includes('reconcile failed; requeued with back-off'));
    assert.ok(failures.length >= 2, text);
    assert.ok(
      failures.every((l) => l.includes('409 Conflict')),
      `each failure is one line with its cause:\n${text}`,
    );
    assert.doesNotMatch(text, /^\s+at /m, `no stack lines at info:\n${text}`);
    assert.match(text, /"errorClass":"KubeApiError"/);
    assert.match(text, /"code":409/);
    assert.match(text, /409 Conflict/);
    assert.match(
      text,
      /ERROR \(subject\): reconcile failed/,
      'the object (pino-pretty shows `name` in the header)',
    );
    assert.match(text, /"namespace":"errlog-kube"/);
  });

  it('a programming error keeps where it happened on its one line', async () => {
    const { log, output } = capture('info', 'json');
    await failTwice('errlog-bug', log, () => {
      const o = undefined as unknown as { x: { y: number } };
      return Promise.resolve(o.x.y).then(() => undefined);
    });
    const e = output()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line)
      .find((l) => l.level === 'error' && l.controller === 'failing');
    assert.equal(e?.errorClass, 'TypeError');
    assert.match(String(e?.at), /error-log\.test\.ts:\d+:\d+/);
    assert.ok(!JSON.stringify(e).includes('\\n'), 'one line, no stack');
  });
});
