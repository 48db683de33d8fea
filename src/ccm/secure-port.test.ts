/**
 * The CCM's secure port as upstream serves it: HTTPS, kubelet probes without a token, /metrics
 * only for a user the API server says may get it (TokenReview + SubjectAccessReview).
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { Agent, fetch } from 'undici';
import { selfSignedCert } from '../lib/tls-cert.ts';
import { freePort } from '../kube/testing/env.ts';
import { kubeconfigText } from '../sim/kube/kubeconfig.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
import { startCcmEnv, type CcmEnv, type RunningCcm } from './testing/env.ts';

async function peerFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerX509Certificate()!.fingerprint256);
      socket.end();
    });
    socket.once('error', reject);
  });
}

describe('ccm secure port (--secure-port, delegated authentication and authorization)', () => {
  let env: CcmEnv;
  let dir: string;
  let ccm: RunningCcm;
  let base: string;
  const tokens: Record<string, string> = {};
  // The self-signed certificate lives only in the process: scrape like `curl -k`.
  const insecure = new Agent({ connect: { rejectUnauthorized: false } });
  const get = (path: string, token?: string) =>
    fetch(`${base}${path}`, {
      dispatcher: insecure,
      ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    });

  before(async () => {
    env = await startCcmEnv();
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-ccm-tls-'));
    const kube = env.kube.emulator;
    kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'monitoring' } });
    for (const name of ['prometheus', 'nobody']) {
      kube.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: 'monitoring' } });
    }
    for (const name of ['prometheus', 'nobody'])
      tokens[name] = kube.auth.issueServiceAccountToken('monitoring', name);
    kube.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'metrics-reader' },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    });
    kube.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'prometheus-metrics-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: 'monitoring' }],
    });
    const port = await freePort();
    ccm = await env.startCcm({ securePort: port, bindAddress: '127.0.0.1' });
    base = `https://127.0.0.1:${port}`;
  });
  after(async () => {
    await insecure.close();
    await env?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves HTTPS only, the probes to anyone', async () => {
    await eventually(async () => (await get('/healthz')).status === 200, { what: 'the secure port' });
    assert.equal(ccm.ccm.manager.healthUrl, base);
    await assert.rejects(globalThis.fetch(`${base.replace('https', 'http')}/healthz`));
    assert.equal((await get('/livez')).status, 200);
    await eventually(async () => (await get('/readyz')).status === 200, { what: 'ready' });
  });

  it('/metrics: anonymous 403, a bad token 401, an unauthorized user 403, an authorized one 200', async () => {
    const anonymous = await get('/metrics');
    assert.equal(anonymous.status, 403);
    assert.equal(await anonymous.text(), 'forbidden: User "system:anonymous" cannot get path "/metrics"\n');
    assert.equal((await get('/metrics', 'not-a-token')).status, 401);
    const nobody = await get('/metrics', tokens.nobody);
    assert.equal(nobody.status, 403);
    assert.match(
      await nobody.text(),
      /User "system:serviceaccount:monitoring:nobody" cannot get path "\/metrics"/,
    );
    const prometheus = await get('/metrics', tokens.prometheus);
    assert.equal(prometheus.status, 200);
    assert.match(await prometheus.text(), /^# HELP /m);
  });

  it('reviews through --authentication-kubeconfig / --authorization-kubeconfig when given', async () => {
    const kube = env.kube.emulator;
    kube.create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'no-reviews', namespace: 'monitoring' },
    });
    const kubeconfig = join(dir, 'no-reviews.kubeconfig');
    await writeFile(
      kubeconfig,
      kubeconfigText({
        server: env.kube.url,
        token: kube.auth.issueServiceAccountToken('monitoring', 'no-reviews'),
        ...(env.kube.caPem ? { caPem: env.kube.caPem } : {}),
      }),
    );
    const port = await freePort();
    const other = await env.startCcm({
      securePort: port,
      bindAddress: '127.0.0.1',
      authenticationKubeconfig: kubeconfig,
      authorizationKubeconfig: kubeconfig,
    });
    try {
      const url = `https://127.0.0.1:${port}`;
      await eventually(async () => (await fetch(`${url}/healthz`, { dispatcher: insecure })).status === 200, {
        what: 'the secure port',
      });
      // That identity may not create TokenReviews: the scrape cannot be checked, so it is refused.
      const r = await fetch(`${url}/metrics`, {
        dispatcher: insecure,
        headers: { authorization: `Bearer ${tokens.prometheus}` },
      });
      assert.equal(r.status, 500);
      const reviews = kube.auth.audit.filter((e) => e.user === 'system:serviceaccount:monitoring:no-reviews');
      assert.deepEqual(
        reviews.map((e) => [e.verb, e.resource, e.allowed]),
        [['create', 'tokenreviews', false]],
      );
    } finally {
      await other.stop();
    }
  });

  it('serves the certificate of --tls-cert-file, and refuses a key that is not its own', async () => {
    const cert = selfSignedCert({ commonName: 'ccm.example', hosts: ['127.0.0.1'] });
    const other = selfSignedCert({ commonName: 'other', hosts: ['127.0.0.1'] });
    await writeFile(join(dir, 'tls.crt'), cert.certPem);
    await writeFile(join(dir, 'tls.key'), cert.keyPem);
    await writeFile(join(dir, 'other.key'), other.keyPem);
    const port = await freePort();
    const withCert = await env.startCcm({
      securePort: port,
      bindAddress: '127.0.0.1',
      tlsCertFile: join(dir, 'tls.crt'),
      tlsPrivateKeyFile: join(dir, 'tls.key'),
    });
    try {
      await eventually(() => peerFingerprint(port), { what: 'the secure port' });
      assert.equal(await peerFingerprint(port), new X509Certificate(cert.certPem).fingerprint256);
      // A client that trusts exactly that certificate gets in without -k.
      const trusting = new Agent({ connect: { ca: cert.certPem } });
      try {
        const r = await fetch(`https://127.0.0.1:${port}/healthz`, { dispatcher: trusting });
        assert.equal(r.status, 200);
      } finally {
        await trusting.close();
      }
    } finally {
      await withCert.stop();
    }
    await assert.rejects(
      env.startCcm({
        securePort: await freePort(),
        tlsCertFile: join(dir, 'tls.crt'),
        tlsPrivateKeyFile: join(dir, 'other.key'),
      }),
      /--tls-cert-file \/ --tls-private-key-file: .*other\.key: is not the private key of the certificate/,
    );
    await assert.rejects(
      env.startCcm({ securePort: await freePort(), tlsCertFile: join(dir, 'tls.crt') }),
      /--tls-cert-file and --tls-private-key-file go together/,
    );
  });
});
