/**
 * TLS: a private CA and certificates made with openssl, an HTTPS reverse proxy in front of the
 * emulator, and the client trusting it only when told to (caFile), or not checking (insecure), or
 * presenting a client certificate when the server asks for one.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { createSecureServer } from 'node:http2';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { request } from 'undici';
import { ConfigError } from '../../lib/config.ts';
import { createRegistry } from '../../lib/metrics.ts';
import type { CloudConfig } from '../config/types.ts';
import { ConnectionError } from './errors.ts';
import { requestCount } from './testing/metrics.ts';
import { createDispatcher } from './tls.ts';
import { TokenCache } from './token-cache.ts';
import { openClientTargetOn, type ClientTarget } from './testing/target.ts';
import { startTestCloud } from '../../sim/openstack/testing/harness.ts';

const run = promisify(execFile);

async function makeCertificates(dir: string) {
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  const key = (name: string) =>
    openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', `${name}.key`);
  await key('ca');
  await openssl(
    'req',
    '-x509',
    '-new',
    '-key',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '1',
    '-subj',
    '/CN=shiftstack test CA',
  );
  for (const [name, ext] of [
    ['server', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'],
    ['client', 'extendedKeyUsage=clientAuth\n'],
  ] as const) {
    await key(name);
    await openssl('req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    await writeFile(join(dir, `${name}.ext`), ext);
    await openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
    );
  }
}

/** An HTTPS server that forwards every request to `target` (plain HTTP). */
async function startProxy(
  dir: string,
  target: string,
  requireClientCert: boolean,
): Promise<{ server: Server; url: string }> {
  const [key, cert, ca] = await Promise.all(
    ['server.key', 'server.pem', 'ca.pem'].map((f) => readFile(join(dir, f))),
  );
  const upstream = new URL(target);
  const server = createServer(
    { key, cert, ca, requestCert: requireClientCert, rejectUnauthorized: requireClientCert },
    (req, res) => {
      const forward = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      forward.on('error', () => res.writeHead(502).end());
      req.pipe(forward);
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `https://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('TLS', () => {
  let dir: string;
  let t: ClientTarget;
  let proxy: { server: Server; url: string };
  let mtls: { server: Server; url: string };
  const config = (base: string, tls: CloudConfig['tls']): CloudConfig => ({
    ...t.demo,
    authUrl: `${base}/identity/v3`,
    tls,
    endpointOverride: { network: `${base}/networking` },
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-tls-'));
    await makeCertificates(dir);
    t = await openClientTargetOn(await startTestCloud());
    proxy = await startProxy(dir, t.sim!.url, false);
    mtls = await startProxy(dir, t.sim!.url, true);
  });
  after(async () => {
    for (const p of [proxy, mtls]) p?.server.closeAllConnections();
    await Promise.all([proxy, mtls].map((p) => p && new Promise<void>((r) => p.server.close(() => r()))));
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('trusts a server signed by a CA given as PEM text (a Secret key cacert), without a file', async () => {
    const caPem = await readFile(join(dir, 'ca.pem'), 'utf8');
    const client = await t.client(config(proxy.url, { caPem, insecure: false }));
    const { token } = await client.session.token();
    assert.equal(token.user.name, 'demo');
  });

  it('trusts a server signed by the CA of tls.caFile', async () => {
    const client = await t.client(config(proxy.url, { caFile: join(dir, 'ca.pem'), insecure: false }));
    const { token } = await client.session.token();
    assert.equal(token.user.name, 'demo');
    const res = await client
      .serviceClient('network')
      .request({ method: 'GET', path: 'networks', label: 'network_list' });
    assert.ok(res.url.startsWith('https://') && res.status === 200);
  });

  it('refuses it without the CA, with a clear error and no retry', async () => {
    const registry = createRegistry({ defaultMetrics: false });
    const client = await t.client(config(proxy.url, { insecure: false }), {
      registry,
      tokenCache: new TokenCache(),
    });
    await assert.rejects(client.session.token(), (e: unknown) => {
      assert.ok(ConnectionError.is(e), String(e));
      assert.match(e.code ?? '', /UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|UNABLE_TO_GET_ISSUER/);
      assert.match(
        e.message,
        /^POST https:\/\/127\.0\.0\.1:\d+\/identity\/v3\/auth\/tokens: TLS verification of the server failed .*give its certificate \(clouds\.yaml cacert/,
      );
      return true;
    });
    assert.equal(await requestCount(registry, 'token_create', 'openstack_api_request_retries_total'), 0);
  });

  it('skips verification only when told to (insecure)', async () => {
    const client = await t.client(config(proxy.url, { insecure: true }), { tokenCache: new TokenCache() });
    assert.equal((await client.session.token()).token.user.name, 'demo');
  });

  it('speaks HTTP/1.1 to a TLS front that offers HTTP/2 (undici tears HTTP/2 sessions down unsafely)', async () => {
    const [key, cert] = await Promise.all(['server.key', 'server.pem'].map((f) => readFile(join(dir, f))));
    const front = createSecureServer({ key, cert, allowHTTP1: true }, (req, res) => res.end(req.httpVersion));
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    const agent = await createDispatcher(config(proxy.url, { caFile: join(dir, 'ca.pem'), insecure: false }));
    try {
      const res = await request(`https://127.0.0.1:${(front.address() as AddressInfo).port}/`, {
        dispatcher: agent,
      });
      assert.equal(await res.body.text(), '1.1');
    } finally {
      await agent.close();
      await new Promise<void>((r) => front.close(() => r()));
    }
  });

  it('presents a client certificate when the server requires one', async () => {
    const tls = {
      caFile: join(dir, 'ca.pem'),
      certFile: join(dir, 'client.pem'),
      keyFile: join(dir, 'client.key'),
      insecure: false,
    };
    const client = await t.client(config(mtls.url, tls), { tokenCache: new TokenCache() });
    assert.equal((await client.session.token()).token.user.name, 'demo');
    // A fresh cache: the token above would otherwise serve this client without a connection.
    const without = await t.client(config(mtls.url, { caFile: join(dir, 'ca.pem'), insecure: false }), {
      tokenCache: new TokenCache(),
    });
    await assert.rejects(without.session.token(), ConnectionError.is);
  });

  it('names every TLS file that cannot be read at once, in the config order', async () => {
    const missing = (name: string) => join(dir, `missing-${name}.pem`);
    for (let i = 0; i < 20; i++) {
      await assert.rejects(
        t.client(
          config(proxy.url, {
            caFile: missing('ca'),
            certFile: missing('cert'),
            keyFile: missing('key'),
            insecure: false,
          }),
        ),
        (e: unknown) => {
          assert.ok(ConfigError.is(e));
          assert.deepEqual(
            e.problems.map((p) => p.key),
            ['clouds.demo.cacert', 'clouds.demo.cert', 'clouds.demo.key'],
          );
          return true;
        },
      );
    }
  });

  it('names the config key of a CA file that cannot be read', async () => {
    await assert.rejects(
      t.client(config(proxy.url, { caFile: join(dir, 'missing.pem'), insecure: false })),
      (e: unknown) => {
        assert.ok(ConfigError.is(e));
        assert.match(
          e.message,
          /key "clouds\.demo\.cacert" \(value ".*missing\.pem"\): the CA certificate file does not exist/,
        );
        return true;
      },
    );
  });
});
