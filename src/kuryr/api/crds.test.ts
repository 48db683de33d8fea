/**
 * deploy/kuryr/crds: fresh (generated from src/kuryr/api), with upstream's names, short names and
 * printer columns, and served by the Kubernetes emulator so that the objects upstream's controller
 * writes — a KuryrPort created with its status, as upstream posts it — go in unchanged.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { assertCrdFilesCurrent } from '../../kube/crd/testing/assert.ts';
import { customResourceDefinition } from '../../kube/crd/kind.ts';
import { kinds } from '../../kube/index.ts';
import { testClient } from '../../kube/testing/env.ts';
import { startTestKube, eventually, type TestKube } from '../../sim/kube/testing/harness.ts';
import { ALL_KINDS, CRD_DIR, crdFiles, Finalizers, kuryrKinds, Labels, type KuryrPort } from './index.ts';

describe('kuryr CRDs', () => {
  let kube: TestKube;
  before(async () => {
    kube = await startTestKube();
  });
  after(async () => {
    await kube?.close();
  });

  it('deploy/kuryr/crds holds exactly what src/kuryr/api generates (run `npm run gen:crds` after changing the API)', async () => {
    await assertCrdFilesCurrent(crdFiles(), CRD_DIR);
  });

  it("have upstream's names, short names and no status subresource", () => {
    const byKind = new Map(ALL_KINDS.map((k) => [k.definition.kind, customResourceDefinition(k)]));
    const expect = {
      KuryrPort: ['kuryrports.openstack.org', 'kp'],
      KuryrNetwork: ['kuryrnetworks.openstack.org', 'kns'],
      KuryrLoadBalancer: ['kuryrloadbalancers.openstack.org', 'klb'],
      KuryrNetworkPolicy: ['kuryrnetworkpolicies.openstack.org', 'knp'],
    };
    for (const [kind, [name, short]] of Object.entries(expect)) {
      const crd = byKind.get(kind);
      assert.ok(crd, kind);
      assert.equal(crd.metadata.name, name);
      assert.deepEqual(crd.spec.names.shortNames, [short]);
      assert.equal(crd.spec.scope, 'Namespaced');
      const v1 = crd.spec.versions[0]!;
      assert.equal(v1.name, 'v1');
      assert.equal(
        (v1 as { subresources?: unknown }).subresources,
        undefined,
        `${kind}: status is written with the object`,
      );
    }
  });

  it('are served, and take a KuryrPort as upstream posts it (status with the object, vifs kept whole)', async () => {
    const api = testClient(kube.kubeconfigPath);
    try {
      for (const f of crdFiles()) await api.create(kinds.CustomResourceDefinition, parse(f.text) as never);
      await api.create(kinds.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns1' } });
      await eventually(async () => (await api.list(kuryrKinds.KuryrPort, { namespace: 'ns1' }), true), {
        timeoutMs: 10_000,
        what: 'kuryrports served',
      });
      const vif = {
        'versioned_object.name': 'VIFVlanNested',
        'versioned_object.data': { id: 'p1', vlan_id: 5, extra: { deep: [1] } },
      };
      const created = await api.create<KuryrPort>(kuryrKinds.KuryrPort, {
        apiVersion: 'openstack.org/v1',
        kind: 'KuryrPort',
        metadata: {
          name: 'pod-a',
          namespace: 'ns1',
          finalizers: [Finalizers.KuryrPort],
          labels: { [Labels.KuryrPortNode]: 'worker-0' },
        },
        spec: { podUid: 'u1', podNodeName: 'worker-0' },
        status: { vifs: { eth0: { default: true, vif } } },
      });
      assert.deepEqual(created.status?.vifs.eth0?.vif, vif);
      await assert.rejects(
        api.create(kuryrKinds.KuryrPort, {
          apiVersion: 'openstack.org/v1',
          kind: 'KuryrPort',
          metadata: { name: 'pod-b', namespace: 'ns1' },
          spec: { podUid: 'u2' } as never,
        }),
        /podNodeName/,
      );
    } finally {
      await api.close();
    }
  });
});
