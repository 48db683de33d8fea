/**
 * deploy/ccm-operator/crds: fresh (generated from src/ccm-operator/api), and served by the
 * Kubernetes emulator so that real OpenShift objects go in unchanged, status through its
 * subresource as on OpenShift.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { resourcePath, type KubernetesObject } from '../../kube/resource.ts';
import { eventually, startTestKube, type TestKube } from '../../sim/kube/testing/harness.ts';
import { assertCrdFilesCurrent } from '../../kube/crd/testing/assert.ts';
import { ALL_KINDS, CRD_DIR, crdFiles } from './index.ts';

type Obj = KubernetesObject & Record<string, any>;

async function fixtures(): Promise<Obj[]> {
  const text = await readFile(
    join(import.meta.dirname, '..', 'testing', 'fixtures', 'openshift-objects.yaml'),
    'utf8',
  );
  return parseAllDocuments(text).map((d) => d.toJS() as Obj);
}

function pathOf(obj: Obj, withName = false): string {
  const kind = ALL_KINDS.find(
    (k) => k.resource.apiVersion === obj.apiVersion && k.resource.kind === obj.kind,
  );
  assert.ok(kind, `${obj.apiVersion} ${obj.kind} is declared`);
  return resourcePath(kind.resource, withName ? { name: obj.metadata!.name! } : {});
}

describe('ccm-operator CRDs', () => {
  it('deploy/ccm-operator/crds holds exactly what src/ccm-operator/api generates (run `npm run gen:crds` after changing the API)', async () => {
    await assertCrdFilesCurrent(crdFiles(), CRD_DIR);
  });

  it('have the names, scopes and subresources of OpenShift’s', () => {
    const crds = new Map(crdFiles().map((f) => [parse(f.text).metadata.name, parse(f.text)]));
    assert.deepEqual([...crds.keys()].sort(), [
      'clusteroperators.config.openshift.io',
      'featuregates.config.openshift.io',
      'infrastructures.config.openshift.io',
      'kubecontrollermanagers.operator.openshift.io',
      'proxies.config.openshift.io',
    ]);
    for (const crd of crds.values()) {
      assert.equal(crd.spec.scope, 'Cluster', crd.metadata.name);
      assert.deepEqual(crd.spec.versions[0].subresources, { status: {} }, crd.metadata.name);
      assert.equal(crd.spec.versions[0].name, 'v1');
    }
    const co = crds.get('clusteroperators.config.openshift.io');
    assert.deepEqual(co.spec.names.shortNames, ['co']);
    assert.deepEqual(
      co.spec.versions[0].additionalPrinterColumns.map((c: { name: string }) => c.name),
      ['Version', 'Available', 'Progressing', 'Degraded', 'Since'],
    );
    const conditions = co.spec.versions[0].schema.openAPIV3Schema.properties.status.properties.conditions;
    assert.equal(conditions['x-kubernetes-list-type'], 'map');
    assert.deepEqual(conditions['x-kubernetes-list-map-keys'], ['type']);
  });

  describe('served by the Kubernetes emulator', () => {
    let kube: TestKube;
    before(async () => {
      kube = await startTestKube();
      for (const f of crdFiles()) {
        const res = await kube.req(
          'POST',
          '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
          parse(f.text),
        );
        assert.equal(res.status, 201, `${f.name}: ${res.text}`);
      }
      for (const k of ALL_KINDS) {
        await eventually(async () => (await kube.req('GET', resourcePath(k.resource))).status === 200, {
          timeoutMs: 20_000,
          what: `${k.crdName} served`,
        });
      }
    });
    after(async () => {
      await kube?.close();
    });

    it('accepts OpenShift’s objects unchanged, spec and status (through /status), with no field pruned or unknown', async () => {
      for (const obj of await fixtures()) {
        const { status, ...rest } = obj;
        const created = await kube.req('POST', `${pathOf(obj)}?fieldValidation=Strict`, rest);
        assert.equal(created.status, 201, `${obj.kind}: ${created.text}`);
        assert.equal(created.headers.get('warning'), null, `${obj.kind} warnings`);
        const put = await kube.req('PUT', `${pathOf(obj, true)}/status?fieldValidation=Strict`, {
          ...created.body,
          status,
        });
        assert.equal(put.status, 200, `${obj.kind} status: ${put.text}`);
        assert.equal(put.headers.get('warning'), null, `${obj.kind} status warnings`);
        const read = (await kube.req('GET', pathOf(obj, true))).body as Obj;
        assert.deepEqual(read.spec, obj.spec, `${obj.kind} spec`);
        assert.deepEqual(read.status, status, `${obj.kind} status`);
        assert.deepEqual(read.metadata?.annotations, obj.metadata?.annotations, `${obj.kind} annotations`);
      }
    });

    it('keeps status out of a write of the object itself, as OpenShift does', async () => {
      const path = '/apis/config.openshift.io/v1/clusteroperators/cloud-controller-manager';
      const cur = (await kube.req('GET', path)).body as Obj;
      const upd = await kube.req('PUT', path, { ...cur, status: { conditions: [] } });
      assert.equal(upd.status, 200, upd.text);
      assert.equal((await kube.req('GET', path)).body.status.conditions.length, 5);
    });

    it('refuses a condition without its required fields', async () => {
      const path = '/apis/config.openshift.io/v1/clusteroperators/cloud-controller-manager/status';
      const cur = (await kube.req('GET', path.replace(/\/status$/, ''))).body as Obj;
      const res = await kube.req('PUT', path, { ...cur, status: { conditions: [{ type: 'Available' }] } });
      assert.equal(res.status, 422, res.text);
      assert.match(res.text, /status\.conditions\[0\]\.(status|lastTransitionTime)/);
    });
  });
});
