import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { createRegistry } from '../../lib/metrics.ts';
import { selfSignedCert } from '../../lib/tls-cert.ts';
import { Manager } from '../manager/manager.ts';
import { KubeConfig } from '@kubernetes/client-node';
import { ConversionError, type ConvertibleObject, type KindConversion } from './types.ts';
import { ConversionWebhook, serveConversionWebhook, type RunningWebhook } from './webhook.ts';

/**
 * A tiny kind in two versions: v1 `spec.size` (a number) is v2 `spec.dimensions.size`; v2's
 * `spec.color` has no v1 field and travels in an annotation. Sizes below 0 cannot be converted.
 */
const WIDGETS: KindConversion = {
  group: 'example.com',
  kind: 'Widget',
  versions: ['v1', 'v2'],
  convert(obj, toVersion) {
    const spec = (obj['spec'] ?? {}) as Record<string, unknown>;
    const meta = { ...(obj['metadata'] as Record<string, unknown>) };
    if (toVersion === 'v2') {
      const size = spec['size'] as number;
      if (size < 0) {
        throw new ConversionError(`Widget ${String(meta['name'])}: size ${size} is negative`, {
          kind: 'Widget',
          name: meta['name'] as string,
        });
      }
      return { ...obj, apiVersion: 'example.com/v2', metadata: meta, spec: { dimensions: { size } } };
    }
    const dims = spec['dimensions'] as Record<string, unknown>;
    return { ...obj, apiVersion: 'example.com/v1', metadata: meta, spec: { size: dims['size'] } };
  },
};

const widget = (name: string, size: number): ConvertibleObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name, namespace: 'ns', uid: `uid-${name}` },
  spec: { size },
});

const review = (apiVersion: string, desiredAPIVersion: string, objects: unknown[]) => ({
  apiVersion,
  kind: 'ConversionReview',
  request: { uid: 'review-1', desiredAPIVersion, objects },
});

describe('the conversion webhook server', () => {
  let webhook: RunningWebhook;
  let trusting: Agent;
  const registry = createRegistry({ defaultMetrics: false });

  before(async () => {
    webhook = await serveConversionWebhook({ conversions: [WIDGETS], port: 0, registry });
    trusting = new Agent({ connect: { ca: Buffer.from(webhook.caBundle, 'base64').toString() } });
  });
  after(async () => {
    await trusting.close();
    await webhook.close();
  });

  const post = async (body: unknown, path = '/convert') => {
    const base = new URL(webhook.url);
    const res = await request(`${base.origin}${path}`, {
      method: 'POST',
      dispatcher: trusting,
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.body.text();
    return { status: res.statusCode, text, json: () => JSON.parse(text) as Record<string, any> };
  };

  it('serves HTTPS at /convert with the certificate its caBundle names', () => {
    assert.match(webhook.url, /^https:\/\/127\.0\.0\.1:\d+\/convert$/);
  });

  it('converts every object and echoes the uid and the review version (v1)', async () => {
    const res = await post(
      review('apiextensions.k8s.io/v1', 'example.com/v2', [widget('a', 1), widget('b', 2)]),
    );
    assert.equal(res.status, 200);
    const body = res.json();
    assert.equal(body['apiVersion'], 'apiextensions.k8s.io/v1');
    assert.equal(body['kind'], 'ConversionReview');
    assert.equal(body['request'], undefined);
    assert.equal(body['response'].uid, 'review-1');
    assert.deepEqual(body['response'].result, { status: 'Success' });
    assert.deepEqual(
      body['response'].convertedObjects.map((o: any) => [o.apiVersion, o.metadata.name, o.spec]),
      [
        ['example.com/v2', 'a', { dimensions: { size: 1 } }],
        ['example.com/v2', 'b', { dimensions: { size: 2 } }],
      ],
    );
  });

  it('answers a v1beta1 review in v1beta1', async () => {
    const res = await post(review('apiextensions.k8s.io/v1beta1', 'example.com/v2', [widget('a', 1)]));
    assert.equal(res.json()['apiVersion'], 'apiextensions.k8s.io/v1beta1');
    assert.equal(res.json()['response'].convertedObjects.length, 1);
  });

  it("a ConversionError fails the whole review with the error's message, nothing converted", async () => {
    const res = await post(
      review('apiextensions.k8s.io/v1', 'example.com/v2', [widget('a', 1), widget('neg', -3)]),
    );
    assert.equal(res.status, 200);
    const response = res.json()['response'];
    assert.equal(response.uid, 'review-1');
    assert.deepEqual(response.result, { status: 'Failure', message: 'Widget neg: size -3 is negative' });
    assert.deepEqual(response.convertedObjects, []);
  });

  it('refuses a kind, group or version it does not convert, naming the object', async () => {
    const gadget = { ...widget('g', 1), kind: 'Gadget' };
    let response = (await post(review('apiextensions.k8s.io/v1', 'example.com/v2', [gadget]))).json()[
      'response'
    ];
    assert.deepEqual(response.result, {
      status: 'Failure',
      message: 'Gadget.example.com ns/g: this webhook converts no Gadget.example.com',
    });
    response = (await post(review('apiextensions.k8s.io/v1', 'example.com/v3', [widget('a', 1)]))).json()[
      'response'
    ];
    assert.equal(response.result.status, 'Failure');
    assert.match(response.result.message, /example\.com\/v3 is not a version of Widget \(v1, v2\)/);
    response = (await post(review('apiextensions.k8s.io/v1', 'other.com/v2', [widget('a', 1)]))).json()[
      'response'
    ];
    assert.match(response.result.message, /cannot convert example\.com\/v1 to other\.com\/v2/);
  });

  it('answers 400 to a body that is no ConversionReview, 404 elsewhere, 405 to a GET', async () => {
    assert.equal((await post('not json')).status, 400);
    assert.equal(
      (await post({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview' })).status,
      400,
    );
    assert.equal((await post(review('apiextensions.k8s.io/v2', 'example.com/v2', []))).status, 400);
    assert.equal((await post(review('apiextensions.k8s.io/v1', 'example.com/v2', []), '/other')).status, 404);
    const res = await request(webhook.url, { dispatcher: trusting });
    await res.body.text();
    assert.equal(res.statusCode, 405);
  });

  it('counts conversions by kind, versions and result, and requests by code', async () => {
    const text = await registry.metrics();
    assert.match(
      text,
      /conversion_webhook_conversions_total\{group="example.com",kind="Widget",from="v1",to="v2",result="success"\} [1-9]/,
    );
    assert.match(
      text,
      /conversion_webhook_conversions_total\{group="example.com",kind="Widget",from="v1",to="v2",result="failure"\} [1-9]/,
    );
    assert.match(text, /controller_runtime_webhook_requests_total\{webhook="\/convert",code="400"\} [1-9]/);
    assert.match(text, /controller_runtime_webhook_latency_seconds_count\{webhook="\/convert"\} [1-9]/);
  });
});

describe('the conversion webhook server, bounded', () => {
  it('refuses a body over the limit with 413', async () => {
    const webhook = await serveConversionWebhook({ conversions: [WIDGETS], port: 0, maxBodyBytes: 1024 });
    const agent = new Agent({ connect: { ca: Buffer.from(webhook.caBundle, 'base64').toString() } });
    try {
      const big = review('apiextensions.k8s.io/v1', 'example.com/v2', [
        { ...widget('a', 1), spec: { size: 1, pad: 'x'.repeat(4096) } },
      ]);
      const res = await request(webhook.url, {
        method: 'POST',
        dispatcher: agent,
        body: JSON.stringify(big),
      });
      await res.body.text();
      assert.equal(res.statusCode, 413);
    } finally {
      await agent.close();
      await webhook.close();
    }
  });
});

describe('the conversion webhook certificate', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'webhook-certs-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  it('serves tls.crt and tls.key of the certificate directory, and a rotated pair once the files change', async () => {
    const first = selfSignedCert({ commonName: 'first', hosts: ['127.0.0.1'] });
    await writeFile(join(dir, 'tls.crt'), first.certPem);
    await writeFile(join(dir, 'tls.key'), first.keyPem);
    const webhook = await serveConversionWebhook({
      conversions: [WIDGETS],
      port: 0,
      certDir: dir,
      certPollMs: 20,
    });
    try {
      assert.equal(Buffer.from(webhook.caBundle, 'base64').toString(), first.certPem);
      const convert = async (ca: string) => {
        const agent = new Agent({ connect: { ca } });
        try {
          const res = await request(webhook.url, {
            method: 'POST',
            dispatcher: agent,
            body: JSON.stringify(review('apiextensions.k8s.io/v1', 'example.com/v2', [widget('a', 1)])),
          });
          await res.body.text();
          return res.statusCode;
        } finally {
          await agent.close();
        }
      };
      assert.equal(await convert(first.certPem), 200);
      const second = selfSignedCert({ commonName: 'second', hosts: ['127.0.0.1'] });
      await writeFile(join(dir, 'tls.key'), second.keyPem);
      await writeFile(join(dir, 'tls.crt'), second.certPem);
      // The next handshakes trust only the new certificate once the files are read again.
      let status: number | string = 0;
      for (let i = 0; i < 200 && status !== 200; i++) {
        status = await convert(second.certPem).catch((err: Error) => err.message);
        if (status !== 200) await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(status, 200);
      assert.equal(Buffer.from(webhook.caBundle, 'base64').toString(), second.certPem);
    } finally {
      await webhook.close();
    }
  });

  it('fails to start naming the file when the directory has no certificate, unless self-signing is allowed', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'webhook-empty-'));
    try {
      await assert.rejects(serveConversionWebhook({ conversions: [WIDGETS], port: 0, certDir: empty }), {
        name: 'ServingCertError',
        message: new RegExp(`${join(empty, 'tls.crt')}: cannot be read \\(ENOENT\\)`),
      });
      const webhook = await serveConversionWebhook({
        conversions: [WIDGETS],
        port: 0,
        certDir: empty,
        selfSignedWithoutCert: true,
      });
      assert.match(Buffer.from(webhook.caBundle, 'base64').toString(), /BEGIN CERTIFICATE/);
      await webhook.close();
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe('the conversion webhook as a manager runnable', () => {
  it('serves whether or not the manager leads, and /readyz has its webhook line', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const runnable = new ConversionWebhook({ conversions: [WIDGETS], port: 0 });
    assert.equal(runnable.needLeaderElection, false);
    const manager = new Manager({ name: 'webhook-test', kubeConfig: kc, healthProbe: { port: 0 } });
    manager.add(runnable);
    manager.addReadyzCheck(runnable.readyCheck);
    const stop = new AbortController();
    const done = manager.start(stop.signal);
    try {
      const running = await runnable.started();
      const agent = new Agent({ connect: { ca: Buffer.from(running.caBundle, 'base64').toString() } });
      const res = await request(running.url, {
        method: 'POST',
        dispatcher: agent,
        body: JSON.stringify(review('apiextensions.k8s.io/v1', 'example.com/v2', [widget('a', 1)])),
      });
      assert.equal(res.statusCode, 200);
      await res.body.text();
      await agent.close();
      const ready = await request(`${manager.healthUrl}/readyz?verbose`);
      assert.match(await ready.body.text(), /\[\+\]webhook ok/);
    } finally {
      stop.abort();
      await done;
    }
  });
});
