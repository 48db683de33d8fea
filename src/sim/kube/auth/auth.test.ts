import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestKube, type TestKube } from '../testing/harness.ts';

const SA = 'system:serviceaccount:kube-system:ccm';

describe('kube emulator authentication and RBAC', () => {
  let k: TestKube;
  let token: string;
  const as = (t: string) => ({ token: t });

  before(async () => {
    k = await startTestKube();
    await k.req('POST', '/api/v1/namespaces/kube-system/serviceaccounts', {
      metadata: { name: 'ccm' },
    });
    token = k.em.auth.issueServiceAccountToken('kube-system', 'ccm');
    for (const name of ['cloud-config', 'other']) {
      await k.req('POST', '/api/v1/namespaces/kube-system/secrets', {
        metadata: { name },
        stringData: { a: 'b' },
      });
    }
  });
  after(async () => {
    await k?.close();
  });

  it('a token nobody issued is 401; a ServiceAccount token without bindings is 403 with the real wording', async () => {
    assert.equal((await k.req('GET', '/api/v1/nodes', undefined, as('nope'))).status, 401);
    const denied = await k.req('GET', '/api/v1/namespaces/kube-system/secrets', undefined, as(token));
    assert.equal(denied.status, 403);
    assert.equal(denied.body.reason, 'Forbidden');
    assert.equal(
      denied.body.message,
      `secrets is forbidden: User "${SA}" cannot list resource "secrets" in API group "" in the namespace "kube-system"`,
    );
    const lease = await k.req(
      'PUT',
      '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x',
      {},
      as(token),
    );
    assert.equal(
      lease.body.message,
      `leases.coordination.k8s.io "x" is forbidden: User "${SA}" cannot update resource "leases" in API group "coordination.k8s.io" in the namespace "kube-system"`,
    );
    // Discovery and version are every authenticated user's (the bootstrap system:discovery role).
    for (const path of ['/api', '/apis', '/version', '/api/v1', '/apis/coordination.k8s.io/v1']) {
      assert.equal((await k.req('GET', path, undefined, as(token))).status, 200, path);
    }
    const entry = k.em.auth.audit.find((e) => e.resource === 'secrets');
    assert.deepEqual(entry && [entry.user, entry.verb, entry.namespace, entry.allowed], [
      SA,
      'list',
      'kube-system',
      false,
    ]);
  });

  it('a Role with resourceNames grants get, and list and watch pinned to the name by a field selector', async () => {
    await k.req('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/roles', {
      metadata: { name: 'secret-reader' },
      rules: [
        {
          apiGroups: [''],
          resources: ['secrets'],
          resourceNames: ['cloud-config'],
          verbs: ['get', 'list', 'watch'],
        },
      ],
    });
    await k.req('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings', {
      metadata: { name: 'secret-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secret-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'ccm', namespace: 'kube-system' }],
    });
    const base = '/api/v1/namespaces/kube-system/secrets';
    assert.equal((await k.req('GET', `${base}/cloud-config`, undefined, as(token))).status, 200);
    assert.equal((await k.req('GET', `${base}/other`, undefined, as(token))).status, 403);
    assert.equal((await k.req('GET', base, undefined, as(token))).status, 403);
    const pinned = await k.req(
      'GET',
      `${base}?fieldSelector=metadata.name%3Dcloud-config`,
      undefined,
      as(token),
    );
    assert.equal(pinned.status, 200);
    assert.deepEqual(
      pinned.body.items.map((s: { metadata: { name: string } }) => s.metadata.name),
      ['cloud-config'],
    );
    const watch = await k.req(
      'GET',
      `${base}?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dcloud-config`,
      undefined,
      as(token),
    );
    assert.equal(watch.status, 200);
    assert.equal(
      (await k.req('GET', `${base}?watch=true&timeoutSeconds=1`, undefined, as(token))).status,
      403,
    );
    // A Role grants in its namespace only.
    assert.equal(
      (await k.req('GET', '/api/v1/namespaces/default/secrets/cloud-config', undefined, as(token))).status,
      403,
    );
    const allowed = k.em.auth.audit.find((e) => e.allowed && e.name === 'cloud-config');
    assert.equal(
      allowed?.reason,
      'RBAC: allowed by RoleBinding "secret-reader/kube-system" of Role "secret-reader" to ServiceAccount "ccm/kube-system"',
    );
  });

  it('a ClusterRole grants resources and subresources separately, and a deleted ServiceAccount’s token stops working', async () => {
    await k.req('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: 'node-reader' },
      rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'patch'] }],
    });
    await k.req('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'node-reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'node-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'ccm', namespace: 'kube-system' }],
    });
    await k.req('POST', '/api/v1/nodes', { metadata: { name: 'n1' } });
    assert.equal((await k.req('GET', '/api/v1/nodes', undefined, as(token))).status, 200);
    const patch = { contentType: 'application/merge-patch+json', token };
    assert.equal(
      (await k.req('PATCH', '/api/v1/nodes/n1', { metadata: { labels: { a: 'b' } } }, patch)).status,
      200,
    );
    assert.equal((await k.req('PATCH', '/api/v1/nodes/n1/status', { status: {} }, patch)).status, 403);
    assert.equal((await k.req('DELETE', '/api/v1/nodes/n1', undefined, as(token))).status, 403);

    const other = await k.req('POST', '/api/v1/namespaces/default/serviceaccounts', {
      metadata: { name: 'gone' },
    });
    assert.equal(other.status, 201);
    const goneToken = k.em.auth.issueServiceAccountToken('default', 'gone');
    assert.equal((await k.req('GET', '/api', undefined, as(goneToken))).status, 200);
    await k.req('DELETE', '/api/v1/namespaces/default/serviceaccounts/gone');
    assert.equal((await k.req('GET', '/api', undefined, as(goneToken))).status, 401);
  });

  it('answers TokenReview and SubjectAccessReview, to those allowed to create them, without storing them', async () => {
    const review = (t: string) => ({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token: t },
    });
    const path = '/apis/authentication.k8s.io/v1/tokenreviews';
    assert.equal((await k.req('POST', path, review(token), as(token))).status, 403);
    await k.req('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'ccm-auth-delegator' },
      // A bootstrap ClusterRole every real cluster has; the emulator honours it without storing it.
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [{ kind: 'ServiceAccount', name: 'ccm', namespace: 'kube-system' }],
    });
    const self = await k.req('POST', path, review(token), as(token));
    assert.equal(self.status, 201);
    assert.equal(self.body.status.authenticated, true);
    assert.equal(self.body.status.user.username, SA);
    assert.deepEqual(self.body.status.user.groups, [
      'system:serviceaccounts',
      'system:serviceaccounts:kube-system',
      'system:authenticated',
    ]);
    const admin = await k.req('POST', path, review(k.sim.token), as(token));
    assert.equal(admin.body.status.user.username, 'kubernetes-admin');
    assert.ok(admin.body.status.user.groups.includes('system:masters'));
    const bad = await k.req('POST', path, review('nope'), as(token));
    assert.equal(bad.body.status.authenticated, undefined);
    assert.equal((await k.req('GET', path)).status, 405, 'a review cannot be read back');

    const sar = (spec: object) => ({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec,
    });
    const sarPath = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
    const metrics = { nonResourceAttributes: { path: '/metrics', verb: 'get' } };
    const no = await k.req(
      'POST',
      sarPath,
      sar({ user: 'prometheus', groups: ['system:authenticated'], ...metrics }),
      as(token),
    );
    assert.equal(no.status, 201);
    assert.equal(no.body.status.allowed, false);
    await k.req('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: 'metrics-reader' },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    });
    await k.req('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'prometheus' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'metrics-reader' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'prometheus' }],
    });
    const yes = await k.req('POST', sarPath, sar({ user: 'prometheus', ...metrics }), as(token));
    assert.equal(yes.body.status.allowed, true);
    assert.equal(
      yes.body.status.reason,
      'RBAC: allowed by ClusterRoleBinding "prometheus" of ClusterRole "metrics-reader" to User "prometheus"',
    );
    const resource = await k.req(
      'POST',
      sarPath,
      sar({
        user: SA,
        resourceAttributes: {
          verb: 'get',
          resource: 'secrets',
          namespace: 'kube-system',
          name: 'cloud-config',
        },
      }),
      as(token),
    );
    assert.equal(resource.body.status.allowed, true);
    const invalid = await k.req('POST', sarPath, sar(metrics), as(token));
    assert.equal(invalid.status, 422);
    assert.match(invalid.body.message, /at least one of user or group must be specified/);
  });
});
