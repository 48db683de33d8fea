/**
 * deploy/mapo/crds: fresh (generated from src/mapo/api), with OpenShift's names, subresources and
 * printer columns, and served by the Kubernetes emulator so that the installer's MachineSet and
 * Machine (examples/mapo/machineset.yaml) go in unchanged, status through /status and replicas
 * through /scale as on OpenShift.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { resourcePath, type KubernetesObject } from '../../kube/resource.ts';
import { eventually, startTestKube, type TestKube } from '../../sim/kube/testing/harness.ts';
import { assertCrdFilesCurrent, assertContains } from '../../kube/crd/testing/assert.ts';
import { ALL_KINDS, CRD_DIR, crdFiles, MACHINE_API_NAMESPACE, mapoKinds } from './index.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const EXAMPLE = join(ROOT, 'examples', 'mapo', 'machineset.yaml');
type Obj = KubernetesObject & Record<string, any>;

async function exampleObjects(): Promise<Obj[]> {
  const docs = parseAllDocuments(await readFile(EXAMPLE, 'utf8'));
  for (const d of docs) assert.deepEqual(d.errors, []);
  return docs.map((d) => d.toJS() as Obj);
}

function pathOf(obj: Obj, name?: string): string {
  const kind = ALL_KINDS.find(
    (k) => k.resource.apiVersion === obj.apiVersion && k.resource.kind === obj.kind,
  );
  assert.ok(kind, `${obj.apiVersion} ${obj.kind} is declared`);
  return resourcePath(kind.resource, { namespace: MACHINE_API_NAMESPACE, ...(name ? { name } : {}) });
}

describe('mapo CRDs', () => {
  it('deploy/mapo/crds holds exactly what src/mapo/api generates (run `npm run gen:crds` after changing the API)', async () => {
    await assertCrdFilesCurrent(crdFiles(), CRD_DIR);
  });

  it('have the names, subresources and printer columns of OpenShift’s', () => {
    const crds = new Map(crdFiles().map((f) => [parse(f.text).metadata.name, parse(f.text)]));
    assert.deepEqual([...crds.keys()].sort(), [
      'machines.machine.openshift.io',
      'machinesets.machine.openshift.io',
    ]);
    const machines = crds.get('machines.machine.openshift.io').spec;
    const sets = crds.get('machinesets.machine.openshift.io').spec;
    for (const crd of [machines, sets]) {
      assert.equal(crd.scope, 'Namespaced');
      assert.equal(crd.versions[0].name, 'v1beta1');
    }
    assert.deepEqual(machines.versions[0].subresources, { status: {} });
    assert.deepEqual(sets.versions[0].subresources, {
      scale: {
        specReplicasPath: '.spec.replicas',
        statusReplicasPath: '.status.replicas',
        labelSelectorPath: '.status.labelSelector',
      },
      status: {},
    });
    const columns = (crd: typeof machines) =>
      crd.versions[0].additionalPrinterColumns.map((c: { name: string; priority?: number }) =>
        c.priority ? `${c.name}*` : c.name,
      );
    assert.deepEqual(columns(machines), [
      'Phase',
      'Type',
      'Region',
      'Zone',
      'Age',
      'Node*',
      'ProviderID*',
      'State*',
    ]);
    assert.equal(
      machines.versions[0].additionalPrinterColumns[1].jsonPath,
      ".metadata.labels['machine\\.openshift\\.io/instance-type']",
    );
    assert.deepEqual(columns(sets), ['Desired', 'Current', 'Ready', 'Available', 'Age']);
    // Only the provider's raw parts keep undeclared fields, as in OpenShift's CRD.
    const schema = machines.versions[0].schema.openAPIV3Schema.properties;
    assert.equal(schema.spec['x-kubernetes-preserve-unknown-fields'], undefined);
    assert.equal(
      schema.spec.properties.providerSpec.properties.value['x-kubernetes-preserve-unknown-fields'],
      true,
    );
    assert.equal(schema.status.properties.providerStatus['x-kubernetes-preserve-unknown-fields'], true);
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
      const ns = await kube.req('POST', '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: MACHINE_API_NAMESPACE },
      });
      assert.equal(ns.status, 201, ns.text);
    });
    after(async () => {
      await kube?.close();
    });

    it('accepts the installer’s MachineSet and Machine unchanged: no field pruned or unknown', async () => {
      const objects = await exampleObjects();
      assert.deepEqual(
        objects.map((o) => o.kind),
        ['MachineSet', 'Machine'],
      );
      for (const obj of objects) {
        const name = obj.metadata!.name!;
        const created = await kube.req('POST', `${pathOf(obj)}?fieldValidation=Strict`, obj);
        assert.equal(created.status, 201, `${obj.kind} ${name}: ${created.text}`);
        assert.equal(created.headers.get('warning'), null, `${obj.kind} ${name} warnings`);
        const read = await kube.req('GET', pathOf(obj, name));
        const { metadata, ...body } = obj;
        assertContains(read.body, body, `${obj.kind} ${name}`);
        assertContains(read.body.metadata, { labels: metadata?.labels }, name);
        // The provider spec is kept whole, Go's `creationTimestamp: null` included.
        const value =
          obj.kind === 'Machine'
            ? read.body.spec.providerSpec.value
            : read.body.spec.template.spec.providerSpec.value;
        const sent =
          obj.kind === 'Machine' ? obj.spec.providerSpec.value : obj.spec.template.spec.providerSpec.value;
        assert.deepEqual(value, sent, `${obj.kind} ${name} providerSpec.value`);
      }
    });

    it('takes the status the Machine API controllers write, through /status only', async () => {
      const path = pathOf(
        { apiVersion: mapoKinds.Machine.apiVersion, kind: 'Machine' },
        'ostest-7xk2p-master-0',
      );
      const cur = (await kube.req('GET', path)).body as Obj;
      const status = {
        phase: 'Running',
        nodeRef: { kind: 'Node', name: 'ostest-7xk2p-master-0', uid: '6b1f6d2c-0a4e-4d55-9a8f-3c2b1e0d9f87' },
        lastUpdated: '2026-01-01T00:00:00Z',
        addresses: [
          { type: 'InternalIP', address: '10.0.0.12' },
          { type: 'Hostname', address: 'ostest-7xk2p-master-0' },
          { type: 'InternalDNS', address: 'ostest-7xk2p-master-0' },
        ],
        providerStatus: {
          apiVersion: 'machine.openshift.io/v1alpha1',
          kind: 'OpenstackProviderStatus',
          instanceId: '0d8c5c6e-2f1b-4c8a-9e7d-5b4a3c2d1e0f',
          instanceState: 'ACTIVE',
        },
        lastOperation: {
          type: 'Create',
          state: 'Successful',
          description: 'created',
          lastUpdated: '2026-01-01T00:00:00Z',
        },
        conditions: [
          {
            type: 'InstanceExists',
            status: 'True',
            reason: 'InstanceExists',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
        authoritativeAPI: 'MachineAPI',
        synchronizedGeneration: 1,
      };
      const put = await kube.req('PUT', `${path}/status?fieldValidation=Strict`, { ...cur, status });
      assert.equal(put.status, 200, put.text);
      assert.equal(put.headers.get('warning'), null, put.headers.get('warning') ?? '');
      const forged = await kube.req('PUT', path, { ...put.body, status: { phase: 'Failed' } });
      assert.equal(forged.status, 200, forged.text);
      const read = (await kube.req('GET', path)).body as Obj;
      assert.deepEqual(read.status, status);
      assert.equal(read.spec.authoritativeAPI, 'MachineAPI', 'defaulted as OpenShift’s CRD does');
    });

    it('scales a MachineSet through /scale, its selector from status.labelSelector', async () => {
      const path = pathOf(
        { apiVersion: mapoKinds.MachineSet.apiVersion, kind: 'MachineSet' },
        'ostest-7xk2p-worker-0',
      );
      const cur = (await kube.req('GET', path)).body as Obj;
      const selector =
        'machine.openshift.io/cluster-api-cluster=ostest-7xk2p,machine.openshift.io/cluster-api-machineset=ostest-7xk2p-worker-0';
      const st = await kube.req('PUT', `${path}/status`, {
        ...cur,
        status: {
          replicas: 3,
          readyReplicas: 2,
          availableReplicas: 2,
          labelSelector: selector,
          observedGeneration: 1,
        },
      });
      assert.equal(st.status, 200, st.text);
      const scale = await kube.req('GET', `${path}/scale`);
      assert.equal(scale.status, 200, scale.text);
      assert.equal(scale.body.spec.replicas, 3);
      assert.equal(scale.body.status.replicas, 3);
      assert.equal(scale.body.status.selector, selector);
      const put = await kube.req('PUT', `${path}/scale`, { ...scale.body, spec: { replicas: 5 } });
      assert.equal(put.status, 200, put.text);
      assert.equal(((await kube.req('GET', path)).body as Obj).spec.replicas, 5);
    });

    it('refuses what OpenShift’s schema forbids', async () => {
      const machine = (spec: Record<string, unknown>, name: string): Obj => ({
        apiVersion: 'machine.openshift.io/v1beta1',
        kind: 'Machine',
        metadata: { name },
        spec,
      });
      const cases: [Obj, number, RegExp][] = [
        [
          machine({ lifecycleHooks: { preDrain: [{ name: 'x', owner: 'someone' }] } }, 'short-hook'),
          422,
          /spec\.lifecycleHooks\.preDrain\[0\]\.name/,
        ],
        [machine({ taints: [{ key: 'a' }] }, 'taint-no-effect'), 422, /spec\.taints\[0\]\.effect/],
        [machine({ authoritativeAPI: 'Migrating' }, 'spec-migrating'), 422, /spec\.authoritativeAPI/],
        [machine({ providerSpec: { value: {} }, providerId: 'typo' }, 'typo'), 400, /providerId/],
      ];
      for (const [obj, status, message] of cases) {
        const res = await kube.req('POST', `${pathOf(obj)}?fieldValidation=Strict`, obj);
        assert.equal(res.status, status, `${obj.metadata?.name}: ${res.text}`);
        assert.match(res.body.message, message, obj.metadata?.name);
      }
      const set = {
        apiVersion: 'machine.openshift.io/v1beta1',
        kind: 'MachineSet',
        metadata: { name: 'bad-policy' },
        spec: { selector: {}, deletePolicy: 'Cheapest' },
      };
      const res = await kube.req('POST', pathOf(set), set);
      assert.equal(res.status, 422, res.text);
      assert.match(res.body.message, /spec\.deletePolicy/);
    });
  });
});
