/** Which groups a pod's port gets under network policies. No cloud. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { podSecurityGroups, sameGroups, type PolicyGroupView } from './pod-groups.ts';

const knp = (
  name: string,
  podSelector: object,
  securityGroupId?: string,
  namespace = 'a',
): PolicyGroupView => ({
  metadata: { name, namespace },
  spec: { podSelector },
  status: securityGroupId ? { securityGroupId, podSelector } : {},
});

const web = { namespace: 'a', labels: { app: 'web' } };
const DEFAULTS = ['default-sg'];

describe('policy security groups of a pod', () => {
  it('gives the groups of every policy of its namespace that selects it, in policy-name order', () => {
    const policies = [
      knp('z-all', {}, 'sg-all'),
      knp('a-web', { matchLabels: { app: 'web' } }, 'sg-web'),
      knp('db', { matchLabels: { app: 'db' } }, 'sg-db'),
      knp('elsewhere', {}, 'sg-b', 'b'),
    ];
    assert.deepEqual(podSecurityGroups(web, policies, DEFAULTS), {
      ready: true,
      groups: ['sg-web', 'sg-all'],
    });
  });

  it('gives the default pod groups when no policy selects it', () => {
    const policies = [knp('db', { matchLabels: { app: 'db' } }, 'sg-db')];
    assert.deepEqual(podSecurityGroups(web, policies, DEFAULTS), { ready: true, groups: DEFAULTS });
  });

  it('waits for a selecting policy whose group is not made yet, or holds no rules yet', () => {
    const policies = [knp('web', { matchLabels: { app: 'web' } }), knp('all', {}, 'sg-all')];
    assert.deepEqual(podSecurityGroups(web, policies, DEFAULTS), { ready: false, waitingFor: ['web'] });
    const ruleless = { ...knp('web', {}), status: { securityGroupId: 'sg-web' } };
    assert.deepEqual(podSecurityGroups(web, [ruleless], DEFAULTS), { ready: false, waitingFor: ['web'] });
  });

  it('leaves out a policy being deleted', () => {
    const deleting = {
      ...knp('web', {}, 'sg-web'),
      metadata: { name: 'web', namespace: 'a', deletionTimestamp: 'now' },
    };
    assert.deepEqual(podSecurityGroups(web, [deleting], DEFAULTS), { ready: true, groups: DEFAULTS });
  });

  it('compares groups as a set', () => {
    assert.ok(sameGroups(['a', 'b'], ['b', 'a']));
    assert.ok(!sameGroups(['a'], ['a', 'b']));
  });
});
