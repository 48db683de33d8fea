/**
 * identityRef → client through both emulators: a Secret in the namespace, an OpenStackClusterIdentity
 * lending a Secret of another namespace (and refusing a namespace its selector does not allow), the
 * errors a user sees, and the scope cache's promise: one Keystone token for many reconciles.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Informer, isNotFound, keyString, kinds, metadataOnly } from '../kube/index.ts';
import { eventually } from '../sim/openstack/testing/harness.ts';
import type { OpenStackClient } from '../openstack/client.ts';
import { ClientClosedError } from '../openstack/core/errors.ts';
import { TokenCache } from '../openstack/core/token-cache.ts';
import { selfSignedCert } from '../lib/tls-cert.ts';
import { capoKinds } from './api/index.ts';
import { apiReader, IdentityError, ScopeCache } from './identity.ts';
import { buildCapo, CAPO_DEFAULTS } from './cmd.ts';
import { createLogger } from '../lib/log.ts';
import { kubeConfigFrom } from '../kube/testing/env.ts';
import { startCapoEnv, type CapoEnv } from './testing/env.ts';

interface SimStats {
  services: Record<string, { operations: Record<string, { count: number }> }>;
}

async function tokenRequests(env: CapoEnv): Promise<number> {
  const res = await fetch(`${env.sim.url}/_sim/stats`);
  const stats = (await res.json()) as SimStats;
  return stats.services.keystone?.operations['POST /v3/auth/tokens']?.count ?? 0;
}

async function rejectsWith(p: Promise<unknown>, reason: string, pattern: RegExp): Promise<IdentityError> {
  try {
    await p;
  } catch (err) {
    assert.ok(IdentityError.is(err), `not an IdentityError: ${String(err)}`);
    assert.equal(err.reason, reason, err.message);
    assert.match(`${err.message} Fix: ${err.fix}`, pattern);
    return err;
  }
  assert.fail(`expected ${reason}`);
}

describe('ScopeCache', () => {
  let env: CapoEnv;

  before(async () => {
    env = await startCapoEnv();
  });
  after(async () => {
    await env?.close();
  });

  function cache(maxSize?: number): ScopeCache {
    return new ScopeCache({
      reader: apiReader(env.api),
      ...(maxSize !== undefined ? { maxSize } : {}),
      client: { tokenCache: new TokenCache(), retry: { baseDelayMs: 10, maxDelayMs: 50 } },
    });
  }

  it('builds a working client from a Secret in the object’s namespace, region from identityRef', async () => {
    const scopes = cache();
    try {
      const scope = await scopes.scopeFor({ namespace: env.namespace, identityRef: env.identityRef });
      assert.equal(scope.cloudName, 'openstack');
      assert.equal(scope.region, 'RegionOne');
      assert.equal(scope.source, `Secret ${env.namespace}/capo-demo-cloud-config`);
      const projects = await scope.client.identity.projects.listMine().all();
      assert.deepEqual(
        projects.map((p) => p.name),
        ['demo'],
      );
      const other = await scopes.scopeFor({
        namespace: env.namespace,
        identityRef: { ...env.identityRef, region: 'RegionTwo' },
      });
      assert.equal(other.region, 'RegionTwo');
      assert.notEqual(other.client, scope.client, 'another region is another client');
      assert.equal(scopes.size, 2);
    } finally {
      await scopes.close();
    }
  });

  it('caFallback: read when the Secret has no cacert (the Machine API’s cloud-provider-config CA), never over the Secret’s', async () => {
    const fallback = selfSignedCert({ commonName: 'fallback-ca', hosts: ['localhost'] }).certPem;
    const own = selfSignedCert({ commonName: 'secret-ca', hosts: ['localhost'] }).certPem;
    let asked = 0;
    const scopes = new ScopeCache({
      reader: apiReader(env.api),
      client: { tokenCache: new TokenCache(), retry: { baseDelayMs: 10, maxDelayMs: 50 } },
      caFallback: () => {
        asked++;
        return Promise.resolve(fallback);
      },
    });
    try {
      const plain = await scopes.scopeFor({ namespace: env.namespace, identityRef: env.identityRef });
      assert.equal(plain.config.tls?.caPem, fallback);
      assert.equal(asked, 1);
      const ref = await env.identitySecret('with-cacert', { cacert: own });
      const withCa = await scopes.scopeFor({ namespace: env.namespace, identityRef: ref });
      assert.equal(withCa.config.tls?.caPem, own);
      assert.equal(asked, 1, 'not read when the Secret has its own');
    } finally {
      await scopes.close();
    }
  });

  it('one client and one Keystone token for 50 concurrent reconciles of the same identity', async () => {
    const ref = await env.identitySecret('token-once');
    const scopes = cache();
    try {
      const before = await tokenRequests(env);
      const scopesSeen = await Promise.all(
        Array.from({ length: 50 }, async () => {
          const scope = await scopes.scopeFor({ namespace: env.namespace, identityRef: ref });
          await scope.client.compute.flavors.list().all();
          return scope;
        }),
      );
      assert.equal(new Set(scopesSeen.map((s) => s.client)).size, 1);
      assert.equal((await tokenRequests(env)) - before, 1);
      // Later reconciles reuse the client and its token.
      for (let i = 0; i < 5; i++) {
        const scope = await scopes.scopeFor({ namespace: env.namespace, identityRef: ref });
        await scope.client.network.networks.list().all();
      }
      assert.equal((await tokenRequests(env)) - before, 1);
    } finally {
      await scopes.close();
    }
  });

  it('a changed Secret gives a new client; the old entry is dropped', async () => {
    const ref = await env.identitySecret('rotated');
    const scopes = cache();
    try {
      const first = await scopes.scopeFor({ namespace: env.namespace, identityRef: ref });
      const again = await scopes.scopeFor({ namespace: env.namespace, identityRef: ref });
      assert.equal(again.client, first.client);
      await env.identitySecret('rotated', { cacert: '' });
      // Same clouds.yaml, an extra (empty) key: the content digest is what counts, not the key set.
      const sameContent = await scopes.scopeFor({ namespace: env.namespace, identityRef: ref });
      assert.equal(sameContent.client, first.client);
      await env.identitySecret('rotated', { authUrl: `${env.sim.authUrl}/` });
      first.release();
      again.release();
      sameContent.release();
      const rotated = await scopes.scopeFor({ namespace: env.namespace, identityRef: ref });
      assert.notEqual(rotated.client, first.client);
      assert.equal(scopes.size, 1);
      assert.equal(first.client.closed, true, 'the replaced client, no longer held, is closed');
      await rotated.client.compute.flavors.list().all();
    } finally {
      await scopes.close();
    }
  });

  it('keeps at most maxSize clients, least recently used out first', async () => {
    const scopes = cache(2);
    try {
      // Distinct content per Secret (a cloud name of its own), so each is a client of its own.
      const refs = await Promise.all(
        ['lru-a', 'lru-b', 'lru-c'].map((n, i) => env.identitySecret(n, { cloudName: `cloud-${i}` })),
      );
      const scopeOf = async (i: number) =>
        (await scopes.scopeFor({ namespace: env.namespace, identityRef: refs[i]! })).client;
      const a = await scopeOf(0);
      const b = await scopeOf(1);
      assert.equal(await scopeOf(0), a);
      await scopeOf(2);
      assert.equal(scopes.size, 2);
      // a was used more recently than b, so b went.
      assert.equal(await scopeOf(0), a);
      assert.notEqual(await scopeOf(1), b);
    } finally {
      await scopes.close();
    }
  });

  it('closes the clients it evicts once no reconcile holds them: 6 identities, a cache of 2, at most 2 open', async () => {
    const scopes = cache(2);
    const built = new Set<OpenStackClient>();
    try {
      const refs = await Promise.all(
        Array.from({ length: 6 }, (_, i) => env.identitySecret(`many-${i}`, { cloudName: `many-${i}` })),
      );
      // Round robin over more identities than the cache holds: every reconcile misses.
      for (let round = 0; round < 3; round++) {
        for (const ref of refs) {
          const scope = await scopes.scopeFor({ namespace: env.namespace, identityRef: ref });
          built.add(scope.client);
          try {
            await scope.client.compute.flavors.list().all();
          } finally {
            scope.release();
          }
        }
      }
      assert.equal(built.size, 18, 'each miss built a client');
      const open = [...built].filter((c) => !c.closed);
      assert.equal(open.length, 2, 'only the cached clients keep a connection pool');
      assert.equal(scopes.openClients, 2);
      const retired = [...built].find((c) => c.closed)!;
      await assert.rejects(retired.compute.flavors.list().all(), ClientClosedError.is);
    } finally {
      await scopes.close();
    }
  });

  it('an evicted client serves the reconcile holding it to the end, and is closed when released', async () => {
    const scopes = cache(1);
    try {
      const [a, b] = await Promise.all(
        ['held-a', 'held-b'].map((n) => env.identitySecret(n, { cloudName: n })),
      );
      const held = await scopes.scopeFor({ namespace: env.namespace, identityRef: a! });
      const inFlight = held.client.compute.flavors.list().all();
      const other = await scopes.scopeFor({ namespace: env.namespace, identityRef: b! });
      other.release();
      assert.notEqual(other.client, held.client);
      assert.equal(scopes.size, 1, 'a is evicted');
      assert.ok((await inFlight).length > 0, 'the call in flight at eviction got its answer');
      // The reconcile goes on with the client it was given.
      await held.client.network.networks.list().all();
      assert.equal(held.client.closed, false);
      assert.equal(scopes.openClients, 2);
      held.release();
      held.release();
      assert.equal(held.client.closed, true);
      assert.equal(scopes.openClients, 1);
      assert.equal(other.client.closed, false, 'the cached client stays open when idle');
      await assert.rejects(held.client.compute.flavors.list().all(), ClientClosedError.is);
    } finally {
      await scopes.close();
    }
  });

  it('OpenStackClusterIdentity: lends its Secret to the namespaces its selector allows, refuses others', async () => {
    await env.identitySecret('shared-credentials', { namespace: 'capo-system' });
    await env.ensureNamespace('tenant-a', { 'capo.example/tenant': 'true' });
    await env.ensureNamespace('tenant-b');
    await env.api.create(capoKinds.OpenStackClusterIdentity, {
      apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
      kind: 'OpenStackClusterIdentity',
      metadata: { name: 'shared-openstack' },
      spec: {
        secretRef: { name: 'shared-credentials', namespace: 'capo-system' },
        namespaceSelector: { matchLabels: { 'capo.example/tenant': 'true' } },
      },
    });
    const ref = { type: 'ClusterIdentity' as const, name: 'shared-openstack', cloudName: 'openstack' };
    const scopes = cache();
    try {
      const scope = await scopes.scopeFor({ namespace: 'tenant-a', identityRef: ref });
      assert.equal(
        scope.source,
        'Secret capo-system/shared-credentials (OpenStackClusterIdentity shared-openstack)',
      );
      await scope.client.compute.flavors.list().all();
      await rejectsWith(
        scopes.scopeFor({ namespace: 'tenant-b', identityRef: ref }),
        'IdentityNotAllowed',
        /may not be used from namespace tenant-b.*label namespace tenant-b/,
      );
      await rejectsWith(
        scopes.scopeFor({ namespace: 'tenant-a', identityRef: { ...ref, name: 'nope' } }),
        'IdentityNotFound',
        /OpenStackClusterIdentity nope not found/,
      );
    } finally {
      await scopes.close();
    }
  });

  it('reports a missing Secret, a missing clouds.yaml key and an unknown cloudName with a suggestion', async () => {
    const scopes = cache();
    try {
      await rejectsWith(
        scopes.scopeFor({ namespace: env.namespace, identityRef: { ...env.identityRef, name: 'absent' } }),
        'IdentityNotFound',
        /Secret capo-demo\/absent not found/,
      );
      await env.api.create(kinds.Secret, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'wrong-key', namespace: env.namespace },
        stringData: { 'cloud.yaml': env.cloudsYaml() },
      });
      await rejectsWith(
        scopes.scopeFor({ namespace: env.namespace, identityRef: { ...env.identityRef, name: 'wrong-key' } }),
        'IdentityInvalid',
        /has no key clouds\.yaml \(it has cloud\.yaml\)/,
      );
      const err = await rejectsWith(
        scopes.scopeFor({
          namespace: env.namespace,
          identityRef: { ...env.identityRef, cloudName: 'opnstack' },
        }),
        'IdentityInvalid',
        /no cloud named "opnstack".*did you mean "openstack"/,
      );
      assert.doesNotMatch(`${err.message} ${err.fix}`, /secret$|password/i);
      assert.equal(scopes.size, 0, 'failures are not cached');
    } finally {
      await scopes.close();
    }
  });
  it('authenticatedScopeFor: Keystone refusing the password is an IdentityError; a fixed Secret authenticates once', async () => {
    const ref = await env.identitySecret('auth-check');
    await env.api.patch(kinds.Secret, { namespace: env.namespace, name: 'auth-check' }, 'merge', {
      stringData: { 'clouds.yaml': env.cloudsYaml().replace(/password: .*/, 'password: not-the-password') },
    });
    const scopes = cache();
    try {
      // Building the client alone calls nothing: the wrong password passes unseen.
      await scopes.scopeFor({ namespace: env.namespace, identityRef: ref });
      const err = await rejectsWith(
        scopes.authenticatedScopeFor({ namespace: env.namespace, identityRef: ref }),
        'OpenStackAuthenticationFailed',
        /Keystone at .* refused the credentials of Secret capo-demo\/auth-check, cloud openstack.*\(401\).*Fix: check the user name/,
      );
      assert.doesNotMatch(`${err.message} ${err.fix}`, /not-the-password/);

      await env.identitySecret('auth-check');
      const before = await tokenRequests(env);
      const scope = await scopes.authenticatedScopeFor({ namespace: env.namespace, identityRef: ref });
      await scopes.authenticatedScopeFor({ namespace: env.namespace, identityRef: ref });
      await scope.client.network.networks.list().all();
      assert.equal((await tokenRequests(env)) - before, 1, 'one token for the check and the calls after it');
    } finally {
      await scopes.close();
    }
  });

  it('secretVersion: an identity Secret is read again only once its resourceVersion moved; a rotation is seen', async () => {
    const ref = await env.identitySecret('versioned');
    const key = { namespace: env.namespace, name: 'versioned' };
    // The metadata-only cache capo runs (src/capo/cache.ts secretVersions): versions, never contents.
    const watching = new AbortController();
    const secrets = new Informer({
      client: env.api,
      type: metadataOnly(kinds.Secret),
      namespace: env.namespace,
    });
    void secrets.start(watching.signal);
    await secrets.waitForSync();
    const version = () => secrets.get(keyString(key))?.metadata?.resourceVersion;
    let reads = 0;
    const scopes = new ScopeCache({
      reader: {
        async get(type, k, opts) {
          if (type.kind === 'Secret' && k.name === key.name) reads++;
          try {
            return await env.api.get(type, k, { signal: opts?.signal });
          } catch (err) {
            if (isNotFound(err)) return undefined;
            throw err;
          }
        },
      },
      secretVersion: (k) => secrets.get(keyString(k))?.metadata?.resourceVersion,
      client: { tokenCache: new TokenCache(), retry: { baseDelayMs: 10, maxDelayMs: 50 } },
    });
    try {
      const first = await scopes.scopeFor({ namespace: env.namespace, identityRef: ref });
      for (let i = 0; i < 10; i++) {
        const again = await scopes.scopeFor({ namespace: env.namespace, identityRef: ref });
        assert.equal(again.client, first.client);
        again.release();
      }
      assert.equal(reads, 1, 'ten reconciles of an unchanged Secret: one read');
      first.release();

      const before = version();
      await env.identitySecret('versioned', { authUrl: `${env.sim.authUrl}/` });
      await eventually(() => version() !== before, {
        timeoutMs: 10_000,
        what: 'the watch brings the change',
      });
      const rotated = await scopes.scopeFor({ namespace: env.namespace, identityRef: ref });
      assert.equal(reads, 2, 'read again once its version moved');
      assert.notEqual(rotated.client, first.client, 'the rotated clouds.yaml gives a new client');
      await rotated.client.compute.flavors.list().all();
      rotated.release();

      await env.api.delete(kinds.Secret, key);
      await eventually(() => version() === undefined, {
        timeoutMs: 10_000,
        what: 'the watch brings the delete',
      });
      await rejectsWith(
        scopes.scopeFor({ namespace: env.namespace, identityRef: ref }),
        'IdentityNotFound',
        /Secret capo-demo\/versioned not found/,
      );
    } finally {
      watching.abort();
      await scopes.close();
    }
  });

  it('shiftstack capo: an identity client lets every worker call a service at once (not 16 in all)', async () => {
    const capo = buildCapo(
      { ...CAPO_DEFAULTS, leaderElect: false, health: undefined, openStackMachineConcurrency: 50 },
      { log: createLogger({ level: 'silent' }), kubeConfig: kubeConfigFrom(env.kube.kubeconfigPath) },
    );
    try {
      const scope = await capo.scopes.scopeFor({ namespace: env.namespace, identityRef: env.identityRef });
      // 50 server workers, 50 machine workers, the cluster's and the templates' 10 each.
      assert.equal(scope.client.session.transport.concurrency, 120);
      scope.release();
    } finally {
      await capo.scopes.close();
    }
  });
});
