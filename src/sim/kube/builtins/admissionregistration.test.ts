import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestKube, type TestKube } from '../testing/harness.ts';

const POLICIES = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
const BINDINGS = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';

function policy(name: string, spec: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      matchConstraints: {
        resourceRules: [
          { apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['nodes'] },
        ],
      },
      validations: [{ expression: 'object.metadata.name == oldObject.metadata.name', reason: 'Forbidden' }],
      ...spec,
    },
  };
}

function binding(name: string, spec: Record<string, unknown> = {}): any {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName: 'node-names', validationActions: ['Deny'], ...spec },
  };
}

describe('kube emulator: ValidatingAdmissionPolicies and their bindings', () => {
  let k: TestKube;
  before(async () => (k = await startTestKube()));
  after(async () => k.close());

  it('are served, cluster-scoped, in admissionregistration.k8s.io/v1', async () => {
    const list = await k.req('GET', '/apis/admissionregistration.k8s.io/v1');
    assert.equal(list.status, 200, list.text);
    const byName = new Map(list.body.resources.map((r: any) => [r.name, r]));
    assert.equal((byName.get('validatingadmissionpolicies') as any)?.namespaced, false);
    assert.equal((byName.get('validatingadmissionpolicies') as any)?.kind, 'ValidatingAdmissionPolicy');
    assert.ok(byName.has('validatingadmissionpolicies/status'));
    assert.equal((byName.get('validatingadmissionpolicybindings') as any)?.namespaced, false);
  });

  it('a policy is stored with upstream’s defaults; a dry run stores nothing', async () => {
    const dry = await k.req('POST', `${POLICIES}?dryRun=All`, policy('dry-run'));
    assert.equal(dry.status, 201, dry.text);
    assert.equal((await k.req('GET', `${POLICIES}/dry-run`)).status, 404);

    const r = await k.req('POST', POLICIES, policy('node-names'));
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.spec.failurePolicy, 'Fail');
    assert.equal(r.body.spec.matchConstraints.matchPolicy, 'Equivalent');
    assert.deepEqual(r.body.spec.matchConstraints.namespaceSelector, {});
    assert.deepEqual(r.body.spec.matchConstraints.objectSelector, {});
    assert.equal(r.body.spec.matchConstraints.resourceRules[0].scope, '*');
    assert.equal(r.body.metadata.generation, 1);
  });

  it('a policy without rules, checks or a valid failure policy is refused with every field named', async () => {
    const r = await k.req(
      'POST',
      POLICIES,
      policy('broken', {
        failurePolicy: 'Sometimes',
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['nodes'] }] },
        validations: [],
      }),
    );
    assert.equal(r.status, 422, r.text);
    const fields = r.body.details.causes.map((c: any) => c.field).sort();
    assert.deepEqual(fields, [
      'spec.auditAnnotations',
      'spec.failurePolicy',
      'spec.matchConstraints.resourceRules[0].operations',
      'spec.validations',
    ]);
    const none = await k.req('POST', POLICIES, {
      ...policy('no-match'),
      spec: { validations: [{ expression: 'true' }] },
    });
    assert.equal(none.status, 422);
    assert.deepEqual(
      none.body.details.causes.map((c: any) => c.field),
      ['spec.matchConstraints'],
    );
  });

  it('a binding is defaulted and its validation actions checked as upstream does', async () => {
    const r = await k.req(
      'POST',
      BINDINGS,
      binding('node-names', { matchResources: {}, paramRef: { name: 'params', namespace: 'default' } }),
    );
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.spec.matchResources.matchPolicy, 'Equivalent');
    assert.equal(r.body.spec.paramRef.parameterNotFoundAction, 'Deny');

    const both = await k.req('POST', BINDINGS, binding('both', { validationActions: ['Deny', 'Warn'] }));
    assert.equal(both.status, 422);
    assert.match(both.body.message, /must not contain both Deny and Warn/);
    const none = await k.req('POST', BINDINGS, binding('none', { policyName: '', validationActions: [] }));
    assert.equal(none.status, 422);
    assert.deepEqual(none.body.details.causes.map((c: any) => c.field).sort(), [
      'spec.policyName',
      'spec.validationActions',
    ]);
  });

  it('kubectl get shows upstream’s columns', async () => {
    const r = await k.req('GET', BINDINGS, undefined, {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io',
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.body.columnDefinitions.map((c: any) => c.name),
      ['Name', 'PolicyName', 'ParamRef', 'Age'],
    );
    assert.deepEqual(r.body.rows[0].cells.slice(0, 3), ['node-names', 'node-names', 'default/params']);
  });
});
