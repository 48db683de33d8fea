import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import { KubeClient } from './client.ts';
import { delegatedAuth } from './delegated-auth.ts';
import { kubeConfigWithToken } from './testing/env.ts';
import { FakeClock } from '../lib/testing/fake-clock.ts';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

describe('delegated authentication and authorization (TokenReview, SubjectAccessReview)', () => {
  let k: TestKube;
  const tokens: Record<string, string> = {};
  const clients: KubeClient[] = [];
  const clientAs = (name: string) => {
    const c = new KubeClient(kubeConfigWithToken(k.kubeconfigPath, tokens[name]!), { qps: 0 });
    clients.push(c);
    return c;
  };
  const bind = async (sa: string, role: string) => {
    await k.req('POST', `${RBAC}/clusterrolebindings`, {
      metadata: { name: `${sa}-${role}`.replace(/:/g, '-') },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'ServiceAccount', name: sa, namespace: 'default' }],
    });
  };
  const reviews = (resource: string) =>
    k.em.auth.audit.filter((e) => e.resource === resource && e.user.endsWith(':reviewer')).length;
  const get = (path: string, token?: string) => ({
    method: 'GET',
    path,
    authorization: token === undefined ? undefined : `Bearer ${token}`,
  });

  before(async () => {
    k = await startTestKube();
    for (const name of ['reviewer', 'prometheus', 'nobody', 'outsider']) {
      await k.req('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name } });
      tokens[name] = k.em.auth.issueServiceAccountToken('default', name);
    }
    await k.req('POST', `${RBAC}/clusterroles`, {
      metadata: { name: 'metrics-reader' },
      rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
    });
    await bind('reviewer', 'system:auth-delegator');
    await bind('prometheus', 'metrics-reader');
  });
  after(async () => {
    for (const c of clients) await c.close();
    await k?.close();
  });

  it('component-base style: probes open, anonymous and unbound users 403, a bad token 401, a bound reader in', async () => {
    const guard = delegatedAuth({
      authentication: clientAs('reviewer'),
      anonymous: true,
      alwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
    });
    assert.deepEqual(await guard(get('/healthz')), { allowed: true });
    assert.equal(reviews('tokenreviews') + reviews('subjectaccessreviews'), 0, 'a probe costs no API call');
    assert.deepEqual(await guard(get('/metrics')), {
      allowed: false,
      status: 403,
      message: 'forbidden: User "system:anonymous" cannot get path "/metrics"',
    });
    assert.deepEqual(await guard(get('/metrics', 'not-a-token')), {
      allowed: false,
      status: 401,
      message: 'Unauthorized',
    });
    assert.deepEqual(await guard(get('/healthz', 'not-a-token')), {
      allowed: false,
      status: 401,
      message: 'Unauthorized',
    });
    assert.deepEqual(await guard(get('/metrics', tokens.nobody)), {
      allowed: false,
      status: 403,
      message: 'forbidden: User "system:serviceaccount:default:nobody" cannot get path "/metrics"',
    });
    assert.deepEqual(await guard(get('/metrics', tokens.prometheus)), { allowed: true });
    assert.deepEqual((await guard({ ...get('/metrics', tokens.prometheus), method: 'POST' })).allowed, false);
  });

  it('controller-runtime style: no token is 401', async () => {
    const guard = delegatedAuth({ authentication: clientAs('reviewer'), anonymous: false });
    assert.deepEqual(await guard(get('/metrics')), { allowed: false, status: 401, message: 'Unauthorized' });
    assert.deepEqual(await guard(get('/metrics', tokens.prometheus)), { allowed: true });
  });

  it('caches answers for their TTL, and a reviewer without the right is a 500, not an open door', async () => {
    const clock = new FakeClock();
    const guard = delegatedAuth({ authentication: clientAs('reviewer'), anonymous: false, clock });
    const before = [reviews('tokenreviews'), reviews('subjectaccessreviews')];
    for (let i = 0; i < 3; i++) assert.equal((await guard(get('/metrics', tokens.prometheus))).allowed, true);
    assert.deepEqual(
      [reviews('tokenreviews'), reviews('subjectaccessreviews')],
      [before[0]! + 1, before[1]! + 1],
    );
    await clock.advance(10_001);
    assert.equal((await guard(get('/metrics', tokens.prometheus))).allowed, true);
    assert.deepEqual(
      [reviews('tokenreviews'), reviews('subjectaccessreviews')],
      [before[0]! + 2, before[1]! + 2],
    );

    const unprivileged = delegatedAuth({ authentication: clientAs('outsider'), anonymous: false });
    const decision = await unprivileged(get('/metrics', tokens.prometheus));
    assert.equal(decision.allowed, false);
    assert.equal(decision.allowed === false && decision.status, 500);
  });
});
