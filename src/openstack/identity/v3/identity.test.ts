/** Keystone v3 resources against the emulator or the real cloud of OS_CLOUD (admin parts with OS_CLOUD_ADMIN). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { OpenStackClient } from '../../client.ts';
import { authRequestBody } from '../../core/keystone.ts';
import { isNotFound } from '../../core/errors.ts';
import { openClientTarget, unique, type ClientTarget } from '../../core/testing/target.ts';

describe('identity v3', () => {
  let t: ClientTarget;
  let demo: OpenStackClient;
  let userId: string;
  let projectId: string;
  before(async () => {
    t = await openClientTarget();
    demo = await t.client(t.demo);
    const { token } = await demo.session.token();
    userId = token.user.id;
    projectId = token.project!.id;
  });
  after(async () => t?.close());

  it('issues, validates, checks and revokes tokens', async () => {
    const issued = await demo.identity.tokens.issue(authRequestBody(t.demo), { noCatalog: true });
    assert.equal(issued.token.user.id, userId);
    assert.equal(issued.token.catalog, undefined);
    const validated = await demo.identity.tokens.validate(issued.value);
    assert.deepEqual([validated.user.id, validated.project?.id], [userId, projectId]);
    assert.equal(await demo.identity.tokens.check(issued.value), true);
    await demo.identity.tokens.revoke(issued.value);
    assert.equal(await demo.identity.tokens.check(issued.value), false);
    await assert.rejects(demo.identity.tokens.validate(issued.value), isNotFound);
  });

  it('reads the catalog and the projects of the token', async () => {
    const catalog = await demo.identity.catalog();
    assert.ok(catalog.some((s) => s.type === 'compute') && catalog.some((s) => s.type === 'identity'));
    const mine = await demo.identity.projects.listMine().all();
    assert.ok(mine.some((p) => p.id === projectId));
  });

  it('lists and gets projects as an admin', async (s) => {
    if (!t.admin) return s.skip('no admin cloud (OS_CLOUD_ADMIN)');
    const admin = await t.client(t.admin);
    const all = await admin.identity.projects.list().all();
    assert.ok(all.some((p) => p.id === projectId));
    const byName = await admin.identity.projects.list({ name: t.demo.projectName }).all();
    assert.deepEqual(
      byName.map((p) => p.id),
      [projectId],
    );
    assert.equal((await admin.identity.projects.get(projectId)).name, t.demo.projectName);
    await assert.rejects(admin.identity.projects.get('00000000000000000000000000000000'), isNotFound);
  });

  it('creates, lists, gets and deletes application credentials', async () => {
    const name = unique('client-ac');
    const ac = await demo.identity.applicationCredentials.create(userId, {
      name,
      description: 'shiftstack client test',
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    try {
      assert.ok(ac.secret.length > 10);
      assert.equal(ac.project_id, projectId);
      assert.ok(!ac.unrestricted);
      const listed = await demo.identity.applicationCredentials.list(userId, { name }).all();
      assert.deepEqual(
        listed.map((a) => a.id),
        [ac.id],
      );
      assert.ok(!('secret' in (listed[0] ?? {})));
      assert.equal((await demo.identity.applicationCredentials.get(userId, ac.id)).name, name);
    } finally {
      await demo.identity.applicationCredentials.delete(userId, ac.id);
    }
    await assert.rejects(demo.identity.applicationCredentials.get(userId, ac.id), isNotFound);
  });
});
