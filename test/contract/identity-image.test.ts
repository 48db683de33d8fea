import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openTarget, unique, type Target } from './target.ts';

describe('contract: identity and image', () => {
  let t: Target;
  before(async () => (t = await openTarget()));
  after(async () => t?.close());

  it('publishes every service we use in the catalog', () => {
    for (const type of ['identity', 'compute', 'network', 'load-balancer', 'image'])
      assert.ok(t.demo.url(type), type);
  });

  it('creates an application credential, authenticates with it, and revokes it', async () => {
    const name = unique('contract-ac');
    const created = await t.demo.request(
      'identity',
      'POST',
      `/users/${t.demo.userId}/application_credentials`,
      {
        application_credential: { name, roles: [{ name: 'member' }] },
      },
    );
    assert.equal(created.status, 201);
    const ac = created.body.application_credential;
    const authUrl = t.demo.url('identity');
    const auth = await fetch(`${authUrl}/auth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: { id: ac.id, secret: ac.secret },
          },
        },
      }),
    });
    assert.equal(auth.status, 201);
    assert.ok(auth.headers.get('x-subject-token'));
    const body = (await auth.json()) as { token: { project: { id: string } } };
    assert.equal(body.token.project.id, t.demo.projectId);
    assert.equal(
      (await t.demo.request('identity', 'DELETE', `/users/${t.demo.userId}/application_credentials/${ac.id}`))
        .status,
      204,
    );
    const again = await fetch(`${authUrl}/auth/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: { id: ac.id, secret: ac.secret },
          },
        },
      }),
    });
    assert.equal(again.status, 404, 'a deleted credential is not found (a wrong secret would be 401)');
  });

  it('creates, uploads, finds by name and deletes an image', async () => {
    const name = unique('contract-image');
    const created = await t.demo.request('image', 'POST', '/v2/images', {
      name,
      disk_format: 'raw',
      container_format: 'bare',
      tags: ['contract'],
    });
    assert.equal(created.status, 201);
    assert.equal(created.body.status, 'queued');
    const id: string = created.body.id;
    try {
      const upload = await t.demo.request('image', 'PUT', `/v2/images/${id}/file`, new Uint8Array(1024), {
        'content-type': 'application/octet-stream',
      });
      assert.equal(upload.status, 204);
      const got = await t.demo.request('image', 'GET', `/v2/images/${id}`);
      assert.equal(got.body.status, 'active');
      assert.equal(got.body.size, 1024);
      const found = await t.demo.request('image', 'GET', `/v2/images?name=${name}`);
      assert.deepEqual(
        found.body.images.map((i: { id: string }) => i.id),
        [id],
      );
      const tagged = await t.demo.request('image', 'GET', `/v2/images?tag=contract&name=${name}`);
      assert.equal(tagged.body.images.length, 1);
    } finally {
      assert.equal((await t.demo.request('image', 'DELETE', `/v2/images/${id}`)).status, 204);
    }
    assert.equal((await t.demo.request('image', 'GET', `/v2/images/${id}`)).status, 404);
  });
});
