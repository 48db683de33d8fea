/**
 * Keystone auth end to end, against the emulator or the real cloud of OS_CLOUD: every auth method
 * and scope, the shared single-flight token cache, refresh before expiry, re-auth after a 401, and
 * endpoint selection.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRegistry } from '../../lib/metrics.ts';
import { startTestCloud } from '../../sim/openstack/testing/harness.ts';
import type { CloudConfig } from '../config/types.ts';
import { AuthenticationError, EndpointNotFoundError, isNotImplemented, isUnauthorized } from './errors.ts';
import { requestCount } from './testing/metrics.ts';
import {
  addFault,
  clearFaults,
  expireTokens,
  openClientTarget,
  openClientTargetOn,
  unique,
  type ClientTarget,
} from './testing/target.ts';
import { TokenCache } from './token-cache.ts';

const listNetworks = { method: 'GET', path: 'networks', query: { limit: 1 }, label: 'network_list' } as const;

describe('session: Keystone auth', () => {
  let t: ClientTarget;
  let demoIds: { userId: string; projectId: string };
  before(async () => {
    t = await openClientTarget();
    const token = await (await t.client(t.demo)).session.token();
    demoIds = { userId: token.token.user.id, projectId: token.token.project!.id };
  });
  after(async () => t?.close());

  it('authenticates with a password by names and reads the user, project, roles and catalog', async () => {
    const client = await t.client(t.demo, { tokenCache: new TokenCache() });
    const { token } = await client.session.token();
    assert.equal(token.user.name, t.demo.username);
    assert.equal(token.project?.name, t.demo.projectName);
    assert.ok((token.roles ?? []).length > 0);
    assert.ok(token.catalog?.some((s) => s.type === 'network'));
    assert.equal((await client.serviceClient('network').request(listNetworks)).status, 200);
  });

  it('authenticates with a password by user and project ids', async () => {
    const byIds: CloudConfig = {
      ...t.demo,
      username: undefined,
      userDomainName: undefined,
      projectName: undefined,
      projectDomainName: undefined,
      userId: demoIds.userId,
      projectId: demoIds.projectId,
    };
    const { token } = await (await t.client(byIds)).session.token();
    assert.deepEqual([token.user.id, token.project?.id], [demoIds.userId, demoIds.projectId]);
  });

  it('authenticates with an application credential by id, and by name and user', async () => {
    const demo = await t.client(t.demo);
    const name = unique('client-test');
    const ac = await demo.identity.applicationCredentials.create(demoIds.userId, { name });
    try {
      const common = {
        ...t.demo,
        authType: 'v3applicationcredential' as const,
        password: undefined,
        projectName: undefined,
        projectDomainName: undefined,
        applicationCredentialSecret: ac.secret,
      };
      const byId = await t.client({ ...common, username: undefined, applicationCredentialId: ac.id });
      const tokenById = (await byId.session.token()).token;
      assert.equal(tokenById.application_credential?.id, ac.id);
      assert.equal(tokenById.project?.id, demoIds.projectId);
      assert.equal((await byId.serviceClient('network').request(listNetworks)).status, 200);
      const byName = await t.client({ ...common, applicationCredentialName: name });
      assert.equal((await byName.session.token()).token.application_credential?.id, ac.id);

      const wrong = await t.client({
        ...common,
        applicationCredentialId: ac.id,
        applicationCredentialSecret: 'nope',
      });
      await assert.rejects(wrong.session.token(), (e: unknown) => {
        assert.ok(AuthenticationError.is(e) && e.status === 401, String(e));
        assert.match(e.message, new RegExp(`application credential ${ac.id}`));
        assert.ok(!e.message.includes(ac.secret) && !e.message.includes('nope'));
        return true;
      });
    } finally {
      await demo.identity.applicationCredentials.delete(demoIds.userId, ac.id);
    }
  });

  it('authenticates with a token, rescoping it to the project', async () => {
    const first = await (await t.client(t.demo)).session.token();
    const tokenConfig: CloudConfig = {
      ...t.demo,
      authType: 'token',
      token: first.value,
      username: undefined,
      password: undefined,
      userDomainName: undefined,
    };
    const rescoped = await t.client(tokenConfig);
    const { token, value } = await rescoped.session.token();
    assert.notEqual(value, first.value);
    assert.deepEqual(token.methods.includes('token'), true);
    assert.equal(token.project?.id, demoIds.projectId);
  });

  it('gets unscoped and system-scoped tokens', async (s) => {
    const unscoped: CloudConfig = { ...t.demo, projectName: undefined, projectDomainName: undefined };
    const u = (await (await t.client(unscoped)).session.token()).token;
    // A real Keystone scopes a token without scope to the user's default project, if it has one.
    if (t.sim || !u.project) {
      assert.equal(u.project, undefined);
      assert.deepEqual(u.catalog ?? [], []);
    }
    if (!t.admin) return s.skip('no admin cloud (OS_CLOUD_ADMIN)');
    const system: CloudConfig = {
      ...t.admin,
      projectName: undefined,
      projectDomainName: undefined,
      systemScope: true,
    };
    const sys = (await (await t.client(system)).session.token()).token;
    assert.deepEqual(sys.system, { all: true });
  });

  it('gets a domain-scoped token', async (s) => {
    if (!t.sim) return s.skip('the real cloud gives no user a role on a domain');
    const domain: CloudConfig = {
      ...t.admin!,
      projectName: undefined,
      projectDomainName: undefined,
      domainName: 'Default',
    };
    const token = (await (await t.client(domain)).session.token()).token;
    assert.equal(token.domain?.name, 'Default');
  });

  it('asks for a trust scope (the emulator answers 501; a real cloud issues the trustee a token)', async (s) => {
    if (t.sim) {
      const trust: CloudConfig = { ...t.alt!, trustId: 'a-trust' };
      await assert.rejects((await t.client(trust)).session.token(), (e: unknown) => isNotImplemented(e));
      return;
    }
    if (!t.alt) return s.skip('no second user (OS_CLOUD_ALT) to be the trustee');
    const alt = await t.client(t.alt);
    const trusteeId = (await alt.session.token()).token.user.id;
    const demo = await t.client(t.demo);
    const identity = demo.serviceClient('identity');
    const created = await identity.request<{ trust: { id: string } }>({
      method: 'POST',
      path: 'OS-TRUST/trusts',
      label: 'trust_create',
      body: {
        trust: {
          trustor_user_id: demoIds.userId,
          trustee_user_id: trusteeId,
          project_id: demoIds.projectId,
          impersonation: false,
          roles: [{ name: 'member' }],
        },
      },
      expect: [201],
    });
    try {
      const trustee = await t.client({
        ...t.alt,
        projectName: undefined,
        projectDomainName: undefined,
        trustId: created.body.trust.id,
      });
      const { token } = await trustee.session.token();
      assert.equal(token['OS-TRUST:trust']?.id, created.body.trust.id);
      assert.equal(token.project?.id, demoIds.projectId);
      assert.equal((await trustee.serviceClient('network').request(listNetworks)).status, 200);
    } finally {
      await identity.request({
        method: 'DELETE',
        path: `OS-TRUST/trusts/${created.body.trust.id}`,
        label: 'trust_delete',
        expect: [204],
      });
    }
  });

  it('fails a wrong password with the auth URL, the user and a fix, and no secret', async () => {
    const bad = await t.client({ ...t.demo, password: 'definitely-wrong' });
    await assert.rejects(bad.session.token(), (e: unknown) => {
      assert.ok(AuthenticationError.is(e), String(e));
      assert.equal(e.status, 401);
      assert.equal(e.authUrl, t.demo.authUrl);
      assert.match(
        e.message,
        new RegExp(`failed for user ${t.demo.username} \\(domain Default\\), project ${t.demo.projectName}`),
      );
      assert.match(e.message, /Fix: check the user name/);
      assert.ok(!e.message.includes('definitely-wrong') && !JSON.stringify(e).includes('definitely-wrong'));
      return true;
    });
  });

  it('issues exactly one token for 100 concurrent calls, shared by every session of the identity', async () => {
    const tokens = new TokenCache();
    const registry = createRegistry({ defaultMetrics: false });
    const before = t.sim?.cloud.stats.count('keystone', 'POST /v3/auth/tokens');
    const a = await t.client(t.demo, { tokenCache: tokens, registry });
    const b = await t.client(t.demo, { tokenCache: tokens, registry });
    const calls = Array.from({ length: 100 }, (_, i) =>
      (i % 2 ? a : b).serviceClient('network').request(listNetworks),
    );
    const results = await Promise.all(calls);
    assert.ok(results.every((r) => r.status === 200));
    assert.equal(await requestCount(registry, 'token_create'), 1);
    assert.equal(await requestCount(registry, 'network_list'), 100);
    if (t.sim) assert.equal(t.sim.cloud.stats.count('keystone', 'POST /v3/auth/tokens') - before!, 1);
    // Another password is another identity, with its own token.
    const other = await t.client({ ...t.demo, password: 'wrong' }, { tokenCache: tokens, registry });
    await assert.rejects(other.session.token(), AuthenticationError.is);
    assert.equal(await requestCount(registry, 'token_create'), 2);
  });

  it('authenticates again once after a 401, for all concurrent callers together', async () => {
    const registry = createRegistry({ defaultMetrics: false });
    const client = await t.client(t.demo, { tokenCache: new TokenCache(), registry });
    // Keystone checks revocations at once; other services cache token validations for minutes.
    const listProjects = () => client.identity.projects.listMine().all();
    await listProjects();
    const first = await client.session.token();
    // Revoke the token behind the client's back, as an expiry or a Keystone restart would.
    if (t.sim) await expireTokens(t.sim);
    else await client.identity.tokens.revoke(first.value);
    const results = await Promise.all(Array.from({ length: 20 }, listProjects));
    assert.ok(results.every((r) => r.some((p) => p.id === demoIds.projectId)));
    assert.equal(await requestCount(registry, 'token_create'), 2);
    assert.notEqual((await client.session.token()).value, first.value);
  });

  it('surfaces a second 401 as Unauthorized instead of looping', async (s) => {
    if (!t.sim) return s.skip('needs fault injection');
    const registry = createRegistry({ defaultMetrics: false });
    const client = await t.client(t.demo, { tokenCache: new TokenCache(), registry });
    await addFault(t.sim, {
      kind: 'request',
      service: 'neutron',
      status: 401,
      message: 'The request you have made requires authentication.',
    });
    try {
      await assert.rejects(client.serviceClient('network').request(listNetworks), isUnauthorized);
      assert.equal(await requestCount(registry, 'network_list'), 2);
      assert.equal(await requestCount(registry, 'token_create'), 2);
    } finally {
      await clearFaults(t.sim);
    }
  });

  it('selects endpoints by interface and region, and names what the catalog has when none matches', async () => {
    const internal = await t.client({ ...t.demo, interface: 'internal' });
    assert.ok((await internal.session.endpoint('network')).startsWith('http'));
    const elsewhere = await t.client({ ...t.demo, regionName: 'NoSuchRegion' });
    await assert.rejects(elsewhere.session.endpoint('network'), (e: unknown) => {
      assert.ok(EndpointNotFoundError.is(e));
      assert.match(
        e.message,
        /^no network endpoint for interface public, region NoSuchRegion; the catalog has: .*network \(/,
      );
      return true;
    });
    const client = await t.client(t.demo);
    await assert.rejects(client.session.endpoint('no-such-service'), EndpointNotFoundError.is);
    // Without a project there is no catalog, but identity still has the auth URL.
    const unscoped = await t.client({ ...t.demo, projectName: undefined, projectDomainName: undefined });
    assert.match(await unscoped.session.endpoint('identity'), /\/v3\/?$/);
  });

  it('uses endpoint overrides before the catalog, filling in the project id', async () => {
    const client = await t.client(t.demo);
    const real = await client.session.endpoint('network');
    const overridden = await t.client({
      ...t.demo,
      endpointOverride: { network: real, 'block-storage': 'https://cinder.example/v3/%(project_id)s' },
    });
    assert.equal(await overridden.session.endpoint('network'), real);
    assert.equal(
      await overridden.session.endpoint('volumev3'),
      `https://cinder.example/v3/${demoIds.projectId}`,
    );
    assert.equal((await overridden.serviceClient('network').request(listNetworks)).status, 200);
  });
});

describe('session: token refresh', () => {
  it('refreshes a token before it expires and keeps serving calls', async () => {
    const sim = await startTestCloud({ tokenTtlMs: 800 });
    const t = await openClientTargetOn(sim);
    try {
      const client = await t.client(t.demo, { refresh: { minMarginMs: 0, fraction: 0.5 } });
      const network = client.serviceClient('network');
      await network.request(listNetworks);
      const first = await client.session.token();
      await network.request(listNetworks);
      assert.equal(sim.cloud.stats.count('keystone', 'POST /v3/auth/tokens'), 1);
      await new Promise((r) => setTimeout(r, 450));
      // Past half its life, still valid: the next call gets a new token first.
      assert.ok(first.expiresAt > Date.now());
      await network.request(listNetworks);
      assert.equal(sim.cloud.stats.count('keystone', 'POST /v3/auth/tokens'), 2);
      assert.notEqual((await client.session.token()).value, first.value);
      assert.equal(sim.cloud.stats.count('neutron', 'GET /v2.0/networks'), 3);
    } finally {
      await t.close();
    }
  });
});
