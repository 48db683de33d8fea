import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import { createRegistry } from '../lib/metrics.ts';
import { KubeClient } from './client.ts';
import type { Clock } from '../lib/clock.ts';
import { ignoreNotFound, isConflict, isNotFound, KubeApiError } from './errors.ts';
import { kinds, metadataOnly } from './resource.ts';
import { configMap, GADGET, gadgetCRD, kubeConfigFrom, testClient } from './testing/env.ts';

const NS = 'client-test';

describe('KubeClient against the emulator', () => {
  let k: TestKube;
  let client: KubeClient;

  before(async () => {
    k = await startTestKube();
    client = testClient(k.kubeconfigPath);
    await client.create(kinds.Namespace, { metadata: { name: NS } });
  });
  after(async () => {
    await client.close();
    await k.close();
  });

  it('creates, reads, updates, patches and deletes; kind and apiVersion are filled in', async () => {
    const created = await client.create(kinds.ConfigMap, configMap('a', NS, { v: '1' }));
    assert.equal(created.metadata?.name, 'a');
    const got = await client.get(kinds.ConfigMap, { namespace: NS, name: 'a' });
    assert.equal(got.data?.v, '1');
    const updated = await client.update(kinds.ConfigMap, { ...got, data: { v: '2' } });
    assert.equal(updated.data?.v, '2');
    const patched = await client.patch(kinds.ConfigMap, { namespace: NS, name: 'a' }, 'merge', {
      data: { w: '3' },
    });
    assert.deepEqual(patched.data, { v: '2', w: '3' });
    const listed = await client.list(kinds.ConfigMap, { namespace: NS });
    assert.equal(listed.items[0]?.kind, 'ConfigMap', 'list items get their kind back');
    assert.ok(Number(listed.resourceVersion) > 0);
    assert.equal(await client.delete(kinds.ConfigMap, { namespace: NS, name: 'a' }), undefined);
    assert.equal(await ignoreNotFound(client.get(kinds.ConfigMap, { namespace: NS, name: 'a' })), undefined);
  });

  it('creates a subresource: a ServiceAccount token the API server then accepts as that account', async () => {
    await client.create(kinds.ServiceAccount, { metadata: { name: 'robot', namespace: NS } });
    const answer = await client.createSubresource<{ status?: { token?: string } }>(
      kinds.ServiceAccount,
      { namespace: NS, name: 'robot' },
      'token',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    );
    const token = answer.status?.token;
    assert.ok(token, 'a TokenRequest answers with a token');
    const review = await k.req('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    });
    assert.equal(review.body.status.user.username, `system:serviceaccount:${NS}:robot`);
  });

  it('turns a metav1.Status into a KubeApiError with code and reason', async () => {
    const err = await client
      .get(kinds.ConfigMap, { namespace: NS, name: 'missing' })
      .catch((e: unknown) => e);
    assert.ok(KubeApiError.is(err));
    assert.equal(err.code, 404);
    assert.equal(err.reason, 'NotFound');
    assert.ok(isNotFound(err));
    assert.match(err.message, /configmaps "missing" not found/);

    const cm = await client.create(kinds.ConfigMap, configMap('rv', NS));
    await client.patch(kinds.ConfigMap, { namespace: NS, name: 'rv' }, 'merge', { data: { x: '1' } });
    const stale = await client.update(kinds.ConfigMap, { ...cm, data: { y: '2' } }).catch((e: unknown) => e);
    assert.ok(isConflict(stale), 'a stale resourceVersion is 409 Conflict');
  });

  it('speaks HTTP/1.1 though the API server offers HTTP/2 (undici tears HTTP/2 sessions down unsafely)', async () => {
    const before = k.em.stats().http;
    await Promise.all([
      client.list(kinds.ConfigMap, { namespace: NS }),
      client.get(kinds.Namespace, { name: NS }),
    ]);
    const after = k.em.stats().http;
    assert.equal((after['1.1'] ?? 0) - (before['1.1'] ?? 0), 2);
    assert.equal(after['2.0'] ?? 0, before['2.0'] ?? 0);
  });

  /** A client whose kubeconfig sends it through `proxyUrl`, as `proxy-url` in a cluster entry. */
  const clientVia = (proxyUrl: string) => {
    const base = kubeConfigFrom(k.kubeconfigPath);
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: base.clusters.map((c) => ({ ...c, proxyUrl })),
      contexts: base.contexts,
      currentContext: base.getCurrentContext(),
      users: base.users,
    });
    return new KubeClient(kc, { qps: 0 });
  };

  /** Joins a proxy's client to the address it asked for; `established` answers the client first. */
  const tunnel = (client: Socket, host: string, port: number, established: Buffer, head?: Buffer) => {
    const upstream = connect(port, host, () => {
      client.write(established);
      if (head?.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  };

  it("goes through the kubeconfig's proxy-url (HTTP CONNECT), still over HTTP/1.1", async () => {
    const tunnels: string[] = [];
    const proxy = createServer();
    proxy.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
      tunnels.push(req.url ?? '');
      const [host = '', port] = (req.url ?? '').split(':');
      tunnel(client, host, Number(port), Buffer.from('HTTP/1.1 200 Connection Established\r\n\r\n'), head);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const viaProxy = clientVia(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
    try {
      const before = k.em.stats().http['1.1'] ?? 0;
      const ns = await viaProxy.get(kinds.Namespace, { name: NS });
      assert.equal(ns.metadata?.name, NS);
      assert.deepEqual(tunnels, [new URL(k.sim.url).host]);
      assert.equal((k.em.stats().http['1.1'] ?? 0) - before, 1);
    } finally {
      await viaProxy.close();
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it("goes through a SOCKS5 proxy-url (client-node's connector), still over HTTP/1.1", async () => {
    // client-node builds the SOCKS dispatcher itself; its TLS offers no ALPN, so no HTTP/2 either.
    // This holds it to that: HTTP/2 through undici can end the process (see getDispatcher).
    const tunnels: string[] = [];
    const sockets = new Set<Socket>();
    const proxy = createNetServer((client) => {
      sockets.add(client);
      let buf = Buffer.alloc(0);
      let greeted = false;
      const onData = (chunk: Buffer) => {
        buf = Buffer.concat([buf, chunk]);
        if (!greeted) {
          if (buf.length < 2 || buf.length < 2 + buf.readUInt8(1)) return;
          buf = buf.subarray(2 + buf.readUInt8(1));
          greeted = true;
          client.write(Buffer.from([5, 0])); // version 5, no authentication
        }
        // CONNECT request: version, command, reserved, address type, address, port.
        if (buf.length < 5) return;
        const type = buf.readUInt8(3); // 1 IPv4, 3 a name: the emulator listens on 127.0.0.1
        const addrLen = type === 1 ? 4 : 1 + buf.readUInt8(4);
        if (buf.length < 4 + addrLen + 2) return;
        const host =
          type === 1 ? [...buf.subarray(4, 8)].join('.') : buf.subarray(5, 5 + buf.readUInt8(4)).toString();
        const port = buf.readUInt16BE(4 + addrLen);
        client.off('data', onData);
        tunnels.push(`${host}:${port}`);
        tunnel(
          client,
          host,
          port,
          Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
          buf.subarray(4 + addrLen + 2),
        );
      };
      client.on('data', onData);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const viaProxy = clientVia(`socks5://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
    try {
      const before = k.em.stats().http;
      const ns = await viaProxy.get(kinds.Namespace, { name: NS });
      assert.equal(ns.metadata?.name, NS);
      assert.deepEqual(tunnels, [new URL(k.sim.url).host]);
      const after = k.em.stats().http;
      assert.equal((after['1.1'] ?? 0) - (before['1.1'] ?? 0), 1);
      assert.equal(after['2.0'] ?? 0, before['2.0'] ?? 0);
    } finally {
      await viaProxy.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    }
  });

  it('lists in pages at one resourceVersion', async () => {
    for (let i = 0; i < 7; i++) await client.create(kinds.ConfigMap, configMap(`page-${i}`, NS));
    const first = await client.list(kinds.ConfigMap, { namespace: NS, limit: 3, labelSelector: '' });
    assert.equal(first.items.length, 3);
    assert.ok(first.continue);
    const all = await client.listAll(kinds.ConfigMap, { namespace: NS, pageSize: 2 });
    assert.ok(all.items.filter((c) => c.metadata?.name?.startsWith('page-')).length === 7);
  });

  it('watches from a resourceVersion and turns a 410 ERROR event into an exception', async () => {
    const list = await client.list(kinds.ConfigMap, { namespace: NS });
    const ac = new AbortController();
    const seen: string[] = [];
    const watching = (async () => {
      for await (const ev of client.watch(kinds.ConfigMap, {
        namespace: NS,
        resourceVersion: list.resourceVersion,
        signal: ac.signal,
      })) {
        if (ev.type !== 'BOOKMARK') seen.push(`${ev.type} ${ev.object.metadata?.name}`);
        if (seen.length === 2) break;
      }
    })();
    await client.create(kinds.ConfigMap, configMap('w1', NS));
    await client.delete(kinds.ConfigMap, { namespace: NS, name: 'w1' });
    await watching;
    assert.deepEqual(seen, ['ADDED w1', 'DELETED w1']);

    k.em.compact();
    const expired = (async () => {
      for await (const ev of client.watch(kinds.ConfigMap, {
        namespace: NS,
        resourceVersion: list.resourceVersion,
      })) {
        void ev;
      }
    })();
    const err = await expired.catch((e: unknown) => e);
    assert.ok(KubeApiError.is(err));
    assert.equal(err.code, 410);
    ac.abort();
  });

  it('metadata-only reads: PartialObjectMetadata without the data, managedFields or the last-applied copy', async () => {
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'meta-only', namespace: NS, labels: { role: 'bootstrap' } },
      stringData: { value: 'the-secret-value' },
    };
    const ac = new AbortController();
    const meta = metadataOnly(kinds.Secret);
    const start = await client.list(meta, { namespace: NS });
    const seen: unknown[] = [];
    const watching = (async () => {
      for await (const ev of client.watch(meta, {
        namespace: NS,
        resourceVersion: start.resourceVersion,
        signal: ac.signal,
      })) {
        if (ev.type === 'BOOKMARK') continue;
        seen.push(ev.object);
        break;
      }
    })();
    await client.create(kinds.Secret, {
      ...secret,
      metadata: {
        ...secret.metadata,
        annotations: {
          'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(secret),
          keep: 'me',
        },
      },
    });
    await watching;
    const got = await client.get(meta, { namespace: NS, name: 'meta-only' });
    const listed = (await client.list(meta, { namespace: NS })).items.find(
      (o) => o.metadata.name === 'meta-only',
    );
    for (const obj of [got, listed, seen[0]]) {
      assert.ok(obj);
      assert.deepEqual(Object.keys(obj).sort(), ['apiVersion', 'kind', 'metadata']);
      assert.equal((obj as { kind: string }).kind, 'PartialObjectMetadata');
      assert.doesNotMatch(JSON.stringify(obj), /the-secret-value|managedFields/);
      const m = (obj as { metadata: { labels?: object; annotations?: object } }).metadata;
      assert.deepEqual(m.labels, { role: 'bootstrap' });
      assert.deepEqual(m.annotations, { keep: 'me' });
    }
    ac.abort();
  });

  it('discovers the REST mapping of a CRD', async () => {
    await client.create(kinds.CustomResourceDefinition, gadgetCRD());
    const t = await client.discover('test.shiftstack.io/v1', 'Gadget');
    assert.deepEqual({ ...t }, { ...GADGET });
  });

  it('waits on the QPS/burst token bucket before every call and counts requests', async () => {
    const sleeps: number[] = [];
    const clock: Clock = {
      now: () => 0,
      random: () => 0,
      setTimer: () => () => {},
      sleep: (ms) => {
        sleeps.push(ms);
        return Promise.resolve();
      },
    };
    const registry = createRegistry({ defaultMetrics: false });
    const limited = new KubeClient(kubeConfigFrom(k.kubeconfigPath), { qps: 2, burst: 3, clock, registry });
    for (let i = 0; i < 6; i++) await limited.get(kinds.Namespace, { name: NS });
    // Time stands still on this clock: 3 calls from the burst, then each waits for its own token.
    assert.deepEqual(sleeps, [500, 1000, 1500]);
    const text = await registry.metrics();
    assert.match(text, /rest_client_requests_total\{code="200",method="GET",host="127\.0\.0\.1:\d+"\} 6/);
    await limited.close();
  });
});
