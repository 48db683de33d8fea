import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestCloud, type TestCloud } from '../testing/harness.ts';

const passwordAuth = (user: string, password: string, scope?: unknown) => ({
  auth: {
    identity: {
      methods: ['password'],
      password: { user: { name: user, domain: { id: 'default' }, password } },
    },
    ...(scope ? { scope } : {}),
  },
});

describe('keystone emulator', () => {
  let t: TestCloud;
  before(async () => (t = await startTestCloud()));
  after(async () => t.close());

  it('serves the version documents: 300 at the root, the v3 document below it', async () => {
    const root = await t.request('keystone', 'GET', '', { token: null });
    assert.equal(root.status, 300);
    assert.equal(root.headers.get('location'), `${t.authUrl}/`);
    assert.equal(root.body.versions.values[0].id, 'v3.14');
    const v3 = await t.request('keystone', 'GET', '/v3', { token: null });
    assert.equal(v3.status, 200);
    assert.equal(v3.body.version.status, 'stable');
  });

  it('issues project-scoped tokens by names and by ids, with roles and the catalog', async () => {
    const byName = await t.request('keystone', 'POST', '/v3/auth/tokens', {
      token: null,
      body: passwordAuth('demo', 'secret', { project: { name: 'demo', domain: { name: 'Default' } } }),
    });
    assert.equal(byName.status, 201);
    assert.ok(byName.headers.get('x-subject-token'));
    assert.ok(byName.headers.get('x-openstack-request-id')?.startsWith('req-'));
    const token = byName.body.token;
    assert.equal(token.project.name, 'demo');
    assert.deepEqual(token.roles.map((r: { name: string }) => r.name).sort(), [
      'load-balancer_member',
      'member',
      'reader',
    ]);
    assert.match(token.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const types = token.catalog.map((s: { type: string }) => s.type);
    for (const type of [
      'identity',
      'compute',
      'network',
      'load-balancer',
      'image',
      'block-storage',
      'volumev3',
      'placement',
    ]) {
      assert.ok(types.includes(type), `catalog has ${type}`);
    }
    const identity = token.catalog.find((s: { type: string }) => s.type === 'identity');
    assert.deepEqual(
      identity.endpoints.map((e: { interface: string }) => e.interface),
      ['public', 'internal', 'admin'],
    );
    const volume = token.catalog.find((s: { type: string }) => s.type === 'volumev3');
    assert.ok(
      volume.endpoints[0].url.endsWith(`/v3/${token.project.id}`),
      'cinder endpoint carries the project id',
    );

    const byId = await t.request('keystone', 'POST', '/v3/auth/tokens', {
      token: null,
      body: {
        auth: {
          identity: { methods: ['password'], password: { user: { id: token.user.id, password: 'secret' } } },
          scope: { project: { id: token.project.id } },
        },
      },
    });
    assert.equal(byId.status, 201);
    assert.equal(byId.body.token.project.id, token.project.id);
  });

  it('answers every authentication failure with the same generic 401', async () => {
    const cases = [
      passwordAuth('admin', 'wrong'),
      passwordAuth('nobody', 'secret'),
      passwordAuth('admin', 'secret', { project: { name: 'nope', domain: { id: 'default' } } }),
      passwordAuth('demo', 'secret', { project: { name: 'admin', domain: { id: 'default' } } }),
    ];
    for (const body of cases) {
      const res = await t.request('keystone', 'POST', '/v3/auth/tokens', { token: null, body });
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, {
        error: {
          code: 401,
          message: 'The request you have made requires authentication.',
          title: 'Unauthorized',
        },
      });
      assert.match(res.headers.get('www-authenticate') ?? '', /^Keystone uri="/);
    }
  });

  it('rejects malformed auth bodies with 400 and Keystone’s wording', async () => {
    const res = await t.request('keystone', 'POST', '/v3/auth/tokens', {
      token: null,
      body: { auth: { identity: { methods: ['password'] } } },
    });
    assert.equal(res.status, 400);
    assert.match(
      res.body.error.message,
      /^Expecting to find password in identity\. The server could not comply/,
    );
    const bad = await t.request('keystone', 'POST', '/v3/auth/tokens', { token: null, raw: '{"auth":' });
    assert.equal(bad.status, 400);
  });

  it('issues unscoped, system-scoped and domain-scoped tokens', async () => {
    const unscoped = await t.request('keystone', 'POST', '/v3/auth/tokens', {
      token: null,
      body: passwordAuth('admin', 'secret'),
    });
    assert.equal(unscoped.status, 201);
    assert.equal(unscoped.body.token.catalog, undefined);
    assert.equal(unscoped.body.token.roles, undefined);
    const system = await t.request('keystone', 'POST', '/v3/auth/tokens', {
      token: null,
      body: passwordAuth('admin', 'secret', { system: { all: true } }),
    });
    assert.equal(system.status, 201);
    assert.deepEqual(system.body.token.system, { all: true });
    const demoSystem = await t.request('keystone', 'POST', '/v3/auth/tokens', {
      token: null,
      body: passwordAuth('demo', 'secret', { system: { all: true } }),
    });
    assert.equal(demoSystem.status, 401);
  });

  it('rescopes with the token method, never past the original expiry', async () => {
    const unscoped = await t.request('keystone', 'POST', '/v3/auth/tokens', {
      token: null,
      body: passwordAuth('demo', 'secret'),
    });
    const id = unscoped.headers.get('x-subject-token');
    const rescoped = await t.request('keystone', 'POST', '/v3/auth/tokens', {
      token: null,
      body: {
        auth: {
          identity: { methods: ['token'], token: { id } },
          scope: { project: { name: 'demo', domain: { id: 'default' } } },
        },
      },
    });
    assert.equal(rescoped.status, 201);
    assert.deepEqual(rescoped.body.token.methods, ['token', 'password']);
    assert.ok(Date.parse(rescoped.body.token.expires_at) <= Date.parse(unscoped.body.token.expires_at));
  });

  it('validates tokens with X-Subject-Token and 404s unknown ones', async () => {
    const demo = await t.token('demo');
    const ok = await t.request('keystone', 'GET', '/v3/auth/tokens', {
      headers: { 'X-Subject-Token': demo },
    });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.token.user.name, 'demo');
    assert.equal(ok.headers.get('x-subject-token'), demo);
    const bad = await t.request('keystone', 'GET', '/v3/auth/tokens', {
      headers: { 'X-Subject-Token': 'gAAAAABbogus' },
    });
    assert.equal(bad.status, 404);
    assert.equal(bad.body.error.message, 'Could not recognize Fernet token');
    const noAuth = await t.request('keystone', 'GET', '/v3/projects', { token: 'bogus' });
    assert.equal(noAuth.status, 401);
  });

  it('lists projects for admins only, and the caller’s own projects for anyone', async () => {
    const all = await t.request('keystone', 'GET', '/v3/projects?limit=1');
    assert.equal(all.status, 200);
    assert.ok(all.body.projects.length >= 4, 'Keystone ignores limit');
    assert.deepEqual(all.body.links, { next: null, self: `${t.authUrl}/projects`, previous: null });
    const denied = await t.request('keystone', 'GET', '/v3/projects', { user: 'demo' });
    assert.equal(denied.status, 403);
    assert.equal(
      denied.body.error.message,
      'You are not authorized to perform the requested action: identity:list_projects.',
    );
    const mine = await t.request('keystone', 'GET', '/v3/auth/projects', { user: 'demo' });
    assert.deepEqual(
      mine.body.projects.map((p: { name: string }) => p.name),
      ['demo'],
    );
    const missing = await t.request('keystone', 'GET', `/v3/projects/${'0'.repeat(32)}`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.message, `Could not find project: ${'0'.repeat(32)}.`);
    const otherAsMember = await t.request('keystone', 'GET', `/v3/projects/${'0'.repeat(32)}`, {
      user: 'demo',
    });
    assert.equal(otherAsMember.status, 403, 'a member is refused before the lookup, as Keystone does');
  });

  it('creates projects, refusing duplicates and bodies without a name', async () => {
    const created = await t.request('keystone', 'POST', '/v3/projects', {
      body: { project: { name: 'team-a', domain_id: 'default' } },
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.project.parent_id, 'default');
    const dup = await t.request('keystone', 'POST', '/v3/projects', {
      body: { project: { name: 'admin', domain_id: 'default' } },
    });
    assert.equal(dup.status, 409);
    assert.match(dup.body.error.message, /same name or same id in the same domain: name is admin/);
    const invalid = await t.request('keystone', 'POST', '/v3/projects', { body: { project: { nam: 'x' } } });
    assert.equal(invalid.status, 400);
    assert.match(invalid.body.error.message, /^'name' is a required property/);
  });

  it('serves the catalog, services, endpoints and regions', async () => {
    const catalog = await t.request('keystone', 'GET', '/v3/auth/catalog');
    assert.ok(catalog.body.catalog.length >= 7);
    const endpoints = await t.request('keystone', 'GET', '/v3/endpoints?interface=internal');
    assert.ok(endpoints.body.endpoints.every((e: { interface: string }) => e.interface === 'internal'));
    const services = await t.request('keystone', 'GET', '/v3/services');
    assert.ok(services.body.services.some((s: { type: string }) => s.type === 'load-balancer'));
    const regions = await t.request('keystone', 'GET', '/v3/regions');
    assert.equal(regions.body.regions[0].id, 'RegionOne');
  });

  it('creates application credentials and authenticates with them by id and by name', async () => {
    const demo = await t.request('keystone', 'GET', '/v3/auth/tokens', {
      headers: { 'X-Subject-Token': await t.token('demo') },
    });
    const userId = demo.body.token.user.id;
    const created = await t.request('keystone', 'POST', `/v3/users/${userId}/application_credentials`, {
      user: 'demo',
      body: {
        application_credential: { name: 'ccm', description: 'for the ccm', roles: [{ name: 'member' }] },
      },
    });
    assert.equal(created.status, 201);
    const ac = created.body.application_credential;
    assert.ok(ac.secret.length > 20);
    assert.deepEqual(
      ac.roles.map((r: { name: string }) => r.name),
      ['member'],
    );

    const dup = await t.request('keystone', 'POST', `/v3/users/${userId}/application_credentials`, {
      user: 'demo',
      body: { application_credential: { name: 'ccm' } },
    });
    assert.equal(dup.status, 409);
    assert.equal(
      dup.body.error.message,
      'Conflict occurred attempting to store application_credential - Duplicate entry found with name ccm.',
    );

    const byId = await t.request('keystone', 'POST', '/v3/auth/tokens', {
      token: null,
      body: {
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: { id: ac.id, secret: ac.secret },
          },
        },
      },
    });
    assert.equal(byId.status, 201);
    assert.equal(byId.body.token.project.name, 'demo');
    assert.deepEqual(
      byId.body.token.roles.map((r: { name: string }) => r.name),
      ['member'],
    );
    assert.equal(byId.body.token.application_credential.id, ac.id);

    const byName = await t.request('keystone', 'POST', '/v3/auth/tokens', {
      token: null,
      body: {
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: {
              name: 'ccm',
              user: { name: 'demo', domain: { id: 'default' } },
              secret: ac.secret,
            },
          },
        },
      },
    });
    assert.equal(byName.status, 201);

    const wrong = await t.request('keystone', 'POST', '/v3/auth/tokens', {
      token: null,
      body: {
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: { id: ac.id, secret: 'x' },
          },
        },
      },
    });
    assert.equal(wrong.status, 401);

    const listed = await t.request('keystone', 'GET', `/v3/users/${userId}/application_credentials`, {
      user: 'demo',
    });
    assert.equal(listed.body.application_credentials.length, 1);
    assert.equal(
      listed.body.application_credentials[0].secret,
      undefined,
      'the secret is shown once, at creation',
    );

    const acToken = byId.headers.get('x-subject-token')!;
    assert.equal(
      (
        await t.request('keystone', 'DELETE', `/v3/users/${userId}/application_credentials/${ac.id}`, {
          user: 'demo',
        })
      ).status,
      204,
    );
    const gone = await t.request('keystone', 'GET', `/v3/users/${userId}/application_credentials/${ac.id}`, {
      user: 'demo',
    });
    assert.equal(gone.status, 404);
    assert.equal(gone.body.error.message, `Could not find Application Credential: ${ac.id}.`);
    const revoked = await t.request('keystone', 'GET', '/v3/auth/catalog', { token: acToken });
    assert.equal(revoked.status, 401, 'tokens of a deleted application credential stop working');
    const deleted = await t.request('keystone', 'POST', '/v3/auth/tokens', {
      token: null,
      body: {
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: { id: ac.id, secret: ac.secret },
          },
        },
      },
    });
    assert.equal(deleted.status, 404, 'Keystone tells an unknown credential id from a wrong secret');
    assert.equal(deleted.body.error.message, `Could not find Application Credential: ${ac.id}.`);
  });

  it('expires tokens after their lifetime and on demand through /_sim', async () => {
    const short = await startTestCloud({ tokenTtlMs: 50 });
    try {
      const token = await short.token('demo');
      assert.equal((await short.request('keystone', 'GET', '/v3/auth/catalog', { token })).status, 200);
      await new Promise((r) => setTimeout(r, 80));
      assert.equal((await short.request('keystone', 'GET', '/v3/auth/catalog', { token })).status, 401);
    } finally {
      await short.close();
    }
    const token = await t.request('keystone', 'POST', '/v3/auth/tokens', {
      token: null,
      body: passwordAuth('admin', 'secret', { project: { name: 'admin', domain: { id: 'default' } } }),
    });
    const id = token.headers.get('x-subject-token')!;
    assert.equal((await fetch(`${t.url}/_sim/tokens/expire`, { method: 'POST' })).status, 204);
    assert.equal((await t.request('keystone', 'GET', '/v3/auth/catalog', { token: id })).status, 401);
  });
});

describe('keystone emulator: a cloud without block storage', () => {
  let t: TestCloud;
  before(async () => (t = await startTestCloud({ notInCatalog: ['cinder'] })));
  after(async () => t.close());

  it('leaves Cinder out of the token catalog and the services list; the rest stays', async () => {
    const issued = await t.request('keystone', 'POST', '/v3/auth/tokens', {
      token: null,
      body: passwordAuth('demo', 'secret', { project: { name: 'demo', domain: { name: 'Default' } } }),
    });
    const types: string[] = issued.body.token.catalog.map((s: { type: string }) => s.type);
    assert.ok(!types.includes('block-storage') && !types.includes('volumev3'), types.join(', '));
    assert.ok(types.includes('compute') && types.includes('network'));
    const services = await t.request('keystone', 'GET', '/v3/services');
    assert.ok(!services.body.services.some((s: { type: string }) => s.type === 'volumev3'));
  });
});
