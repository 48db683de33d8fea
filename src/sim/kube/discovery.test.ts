import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestKube, widgetCRD, type TestKube } from './testing/harness.ts';

const AGGREGATED =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

describe('kube emulator: discovery and OpenAPI', () => {
  let k: TestKube;
  before(async () => (k = await startTestKube()));
  after(async () => k.close());

  it('serves /version, /api and /apis (legacy discovery)', async () => {
    const v = await k.req('GET', '/version');
    assert.equal(v.body.minor, '32');
    assert.match(v.body.gitVersion, /^v1\.32\./);
    const api = await k.req('GET', '/api');
    assert.equal(api.body.kind, 'APIVersions');
    assert.deepEqual(api.body.versions, ['v1']);
    const apis = await k.req('GET', '/apis');
    assert.equal(apis.body.kind, 'APIGroupList');
    assert.deepEqual(
      apis.body.groups.map((g: any) => g.name),
      [
        'apps',
        'events.k8s.io',
        'authentication.k8s.io',
        'authorization.k8s.io',
        'batch',
        'networking.k8s.io',
        'policy',
        'rbac.authorization.k8s.io',
        'admissionregistration.k8s.io',
        'apiextensions.k8s.io',
        'scheduling.k8s.io',
        'coordination.k8s.io',
        'discovery.k8s.io',
      ],
    );
    assert.deepEqual(apis.body.groups[0].preferredVersion, { groupVersion: 'apps/v1', version: 'v1' });
  });

  it('lists resources with verbs, scope, kind, short names and subresources', async () => {
    const core = await k.req('GET', '/api/v1');
    assert.equal(core.body.kind, 'APIResourceList');
    assert.equal(core.body.groupVersion, 'v1');
    const svc = core.body.resources.find((r: any) => r.name === 'services');
    assert.deepEqual(
      { ...svc, storageVersionHash: undefined },
      {
        name: 'services',
        singularName: 'service',
        namespaced: true,
        kind: 'Service',
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        shortNames: ['svc'],
        categories: ['all'],
        storageVersionHash: undefined,
      },
    );
    const status = core.body.resources.find((r: any) => r.name === 'services/status');
    assert.deepEqual(status, {
      name: 'services/status',
      singularName: '',
      namespaced: true,
      kind: 'Service',
      verbs: ['get', 'patch', 'update'],
    });
    const finalize = core.body.resources.find((r: any) => r.name === 'namespaces/finalize');
    assert.deepEqual(finalize.verbs, ['update']);
    const apps = await k.req('GET', '/apis/apps/v1');
    const scale = apps.body.resources.find((r: any) => r.name === 'deployments/scale');
    assert.deepEqual([scale.group, scale.version, scale.kind], ['autoscaling', 'v1', 'Scale']);
    const leases = await k.req('GET', '/apis/coordination.k8s.io/v1');
    assert.deepEqual(
      leases.body.resources.map((r: any) => r.name),
      ['leases'],
    );
  });

  it('serves aggregated discovery (apidiscovery.k8s.io/v2) when asked for it', async () => {
    const r = await k.req('GET', '/apis', undefined, { accept: AGGREGATED });
    assert.equal(
      r.headers.get('content-type'),
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    );
    assert.equal(r.body.kind, 'APIGroupDiscoveryList');
    const apps = r.body.items.find((g: any) => g.metadata.name === 'apps');
    const deploy = apps.versions[0].resources.find((x: any) => x.resource === 'deployments');
    assert.equal(deploy.scope, 'Namespaced');
    assert.deepEqual(deploy.responseKind, { group: 'apps', version: 'v1', kind: 'Deployment' });
    assert.deepEqual(
      deploy.subresources.map((s: any) => s.subresource),
      ['scale', 'status'],
    );
    const core = await k.req('GET', '/api', undefined, { accept: AGGREGATED });
    assert.equal(core.body.items.length, 1);
    assert.ok(core.body.items[0].versions[0].resources.some((x: any) => x.resource === 'pods'));
  });

  it('adds CRD groups to discovery and OpenAPI, with the fieldValidation parameter kubectl looks for', async () => {
    await k.req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCRD());
    const index = await k.req('GET', '/openapi/v3');
    const url = index.body.paths['apis/example.com/v1'].serverRelativeURL;
    assert.match(url, /^\/openapi\/v3\/apis\/example.com\/v1\?hash=[0-9A-F]+$/);
    const doc = await k.req('GET', url);
    assert.equal(doc.body.openapi, '3.0.0');
    const patch = doc.body.paths['/apis/example.com/v1/namespaces/{namespace}/widgets/{name}'].patch;
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], {
      group: 'example.com',
      version: 'v1',
      kind: 'Widget',
    });
    assert.ok(patch.parameters.some((p: any) => p.name === 'fieldValidation' && p.in === 'query'));
    const schema = doc.body.components.schemas['com.example.v1.Widget'];
    assert.equal(schema.properties.spec.properties.size.type, 'integer');
    const v2 = await k.req('GET', '/openapi/v2', undefined, {
      accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
    });
    assert.equal(v2.status, 200);
    // Answered under the dotted name: Go's MIME parser refuses the `@` of the one asked for.
    assert.equal(
      v2.headers.get('content-type'),
      'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
    );
  });
});
