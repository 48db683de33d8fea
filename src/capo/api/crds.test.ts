import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { kinds, resourcePath, type KubernetesObject, type ResourceType } from '../../kube/resource.ts';
import { eventually, startTestKube, type TestKube } from '../../sim/kube/testing/harness.ts';
import { assertCrdFilesCurrent, assertContains } from '../../kube/crd/testing/assert.ts';
import {
  ALL_KINDS,
  capoCrds,
  CRD_DIR,
  crdFiles,
  STORAGE_VERSION,
  specValidators,
  type OpenStackCluster,
  type OpenStackMachine,
  type OpenStackServer,
} from './index.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const EXAMPLES = join(ROOT, 'examples', 'capo');
const NS = 'capo-demo';

type Obj = KubernetesObject & Record<string, any>;

async function examples(): Promise<Obj[]> {
  const files = (await readdir(EXAMPLES)).filter((f) => f.endsWith('.yaml')).sort();
  assert.ok(files.includes('cluster.yaml'));
  const out: Obj[] = [];
  for (const f of files) {
    for (const doc of parseAllDocuments(await readFile(join(EXAMPLES, f), 'utf8'))) {
      assert.deepEqual(doc.errors, [], f);
      out.push(doc.toJS() as Obj);
    }
  }
  return out;
}

const TYPES: ResourceType[] = [kinds.Secret, ...ALL_KINDS.map((k) => k.resource)];

function typeOf(obj: Obj): ResourceType {
  const t = TYPES.find((r) => r.apiVersion === obj.apiVersion && r.kind === obj.kind);
  assert.ok(t, `no resource type for ${obj.apiVersion} ${obj.kind}`);
  return t;
}

function pathOf(obj: Obj, name?: string): string {
  return resourcePath(typeOf(obj), { namespace: NS, name });
}

describe('CAPO CRDs', () => {
  it('deploy/capo/crds holds exactly what src/capo/api generates (run `npm run gen:crds` after changing the API)', async () => {
    await assertCrdFilesCurrent(crdFiles(), CRD_DIR);
  });

  it('carry the kinds, scopes, short names, labels and CEL rules of CAPO', () => {
    const crds = crdFiles().map((f) => parse(f.text));
    const byName = new Map(crds.map((c) => [c.metadata.name, c]));
    const osc = byName.get('openstackclusters.infrastructure.cluster.x-k8s.io');
    assert.deepEqual(osc.spec.names.shortNames, ['osc']);
    assert.deepEqual(osc.spec.names.categories, ['cluster-api']);
    assert.deepEqual(osc.metadata.labels, {
      'cluster.x-k8s.io/provider': 'infrastructure-openstack',
      'cluster.x-k8s.io/v1beta1': 'v1beta1',
    });
    const v = osc.spec.versions[0];
    assert.equal(v.name, 'v1beta1');
    assert.deepEqual(v.subresources, { status: {} });
    assert.deepEqual(
      v.additionalPrinterColumns.map((c: { name: string }) => c.name),
      ['Cluster', 'Ready', 'Network', 'Endpoint', 'Bastion IP', 'Age'],
    );
    const spec = v.schema.openAPIV3Schema.properties.spec;
    assert.deepEqual(
      spec['x-kubernetes-validations'].map((r: { message: string }) => r.message),
      [
        'bastion floating IP cannot be set when disableExternalNetwork is true',
        'disableAPIServerFloatingIP cannot be false when disableExternalNetwork is true',
      ],
    );
    assert.equal(spec.properties.managedSubnets.maxItems, 1);
    assert.equal(
      spec.properties.bastion['x-kubernetes-validations'][0].rule,
      '!self.enabled || has(self.spec)',
    );
    assert.deepEqual(spec.properties.network.minProperties, 1);
    assert.deepEqual(spec.properties.network.maxProperties, 1);
    const identity = byName.get('openstackclusteridentities.infrastructure.cluster.x-k8s.io');
    assert.equal(identity.spec.scope, 'Cluster');
    const oss = byName.get('openstackservers.infrastructure.cluster.x-k8s.io');
    assert.equal(oss.spec.versions[0].name, 'v1alpha1');
    assert.deepEqual(oss.spec.names.shortNames, ['oss']);
    for (const name of ['clusters.cluster.x-k8s.io', 'machines.cluster.x-k8s.io']) {
      const s = byName.get(name).spec.versions[0].schema.openAPIV3Schema.properties;
      assert.equal(s.spec['x-kubernetes-preserve-unknown-fields'], true, name);
      assert.equal(s.status['x-kubernetes-preserve-unknown-fields'], true, name);
    }
  });

  it('with a conversion webhook, serve CAPO v1beta2 beside v1beta1 (stored) for the four kinds, and v1beta1 only without', () => {
    const conversion = {
      strategy: 'Webhook' as const,
      webhook: {
        conversionReviewVersions: ['v1', 'v1beta1'],
        clientConfig: { url: 'https://127.0.0.1:9443/convert', caBundle: 'Q0E=' },
      },
    };
    const byName = new Map(capoCrds({ conversion }).map((c) => [c.metadata.name, c]));
    const multi = [
      'openstackclusters',
      'openstackclustertemplates',
      'openstackmachines',
      'openstackmachinetemplates',
    ];
    for (const plural of multi) {
      const crd = byName.get(`${plural}.infrastructure.cluster.x-k8s.io`);
      assert.ok(crd, plural);
      assert.deepEqual(
        crd.spec.versions.map((v) => [v.name, v.served, v.storage]),
        [
          ['v1beta1', true, true],
          ['v1beta2', true, false],
        ],
        plural,
      );
      assert.equal(STORAGE_VERSION, 'v1beta1');
      assert.deepEqual(crd.spec.conversion, conversion, plural);
      assert.equal(crd.metadata.labels?.['cluster.x-k8s.io/v1beta2'], 'v1beta2', plural);
      assert.equal(crd.metadata.labels?.['cluster.x-k8s.io/v1beta1'], 'v1beta1', plural);
    }
    const osc = byName.get('openstackclusters.infrastructure.cluster.x-k8s.io');
    const v1beta2 = osc?.spec.versions[1];
    assert.deepEqual(
      v1beta2?.additionalPrinterColumns?.map((c) => c.name),
      ['Cluster', 'Network', 'Endpoint', 'Bastion IP', 'Age'],
    );
    const spec = v1beta2?.schema.openAPIV3Schema.properties?.spec?.properties ?? {};
    for (const field of [
      'apiServer',
      'managedNetwork',
      'managedRouter',
      'enableExternalNetwork',
      'primarySubnet',
    ]) {
      assert.ok(spec[field], `v1beta2 OpenStackCluster has ${field}`);
    }
    for (const field of [
      'apiServerLoadBalancer',
      'networkMTU',
      'externalRouterIPs',
      'disableExternalNetwork',
    ]) {
      assert.equal(spec[field], undefined, `v1beta2 OpenStackCluster has no ${field}`);
    }
    // The others keep their one version, and without a webhook nothing serves v1beta2.
    for (const crd of byName.values()) {
      if (multi.some((p) => crd.metadata.name.startsWith(`${p}.`))) continue;
      assert.equal(crd.spec.versions.length, 1, crd.metadata.name);
      assert.equal(crd.spec.conversion, undefined, crd.metadata.name);
    }
    for (const crd of capoCrds()) {
      assert.deepEqual(
        crd.spec.versions.map((v) => v.name).filter((n) => n === 'v1beta2'),
        [],
        crd.metadata.name,
      );
      assert.equal(crd.spec.conversion, undefined);
    }
  });

  describe('served by the Kubernetes emulator', () => {
    let kube: TestKube;
    let objects: Obj[];

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
        metadata: { name: NS },
      });
      assert.equal(ns.status, 201, ns.text);
      objects = await examples();
    });
    after(async () => {
      await kube?.close();
    });

    it('accepts the example manifests unchanged: no field pruned or unknown, defaults applied', async () => {
      assert.ok(objects.length >= 20);
      for (const obj of objects) {
        const name = obj.metadata?.name ?? '';
        const created = await kube.req('POST', `${pathOf(obj)}?fieldValidation=Strict`, obj);
        assert.equal(created.status, 201, `${obj.kind} ${name}: ${created.text}`);
        const read = await kube.req('GET', pathOf(obj, name));
        assert.equal(read.status, 200);
        // Secrets turn stringData into data; the CAPO objects must come back as they were sent.
        if (obj.kind === 'Secret') continue;
        const { metadata, ...body } = obj;
        assertContains(read.body, body, `${obj.kind} ${name}`);
        assertContains(
          read.body.metadata,
          { labels: metadata?.labels, annotations: metadata?.annotations },
          name,
        );
        assert.equal(read.headers.get('warning'), null, `${obj.kind} ${name} warnings`);
      }
      const get = async (o: Obj) => (await kube.req('GET', pathOf(o, o.metadata?.name))).body;
      const byName = (n: string) => objects.find((o) => o.metadata?.name === n) as Obj;

      const demo = (await get(byName('capo-demo'))) as OpenStackCluster;
      assert.equal(demo.kind, 'Cluster');
      const osc = (await get(
        objects.find((o) => o.kind === 'OpenStackCluster' && o.metadata?.name === 'capo-demo')!,
      )) as OpenStackCluster;
      assert.equal(osc.spec.identityRef.type, 'Secret');
      assert.equal(osc.spec.managedSecurityGroups?.allowAllInClusterTraffic, false);
      assert.equal(osc.spec.bastion?.enabled, true);

      const priv = (await get(byName('capo-private'))) as OpenStackCluster;
      assert.deepEqual(priv.spec.apiServerLoadBalancer?.monitor, {
        delay: 10,
        timeout: 5,
        maxRetries: 5,
        maxRetriesDown: 3,
      });
      const server = (await get(byName('capo-private-tools'))) as OpenStackServer;
      assert.equal(server.spec.rootVolume?.availabilityZone?.from, 'Name');
      assert.equal(server.spec.identityRef.type, 'Secret');
      assert.equal(server.status, undefined);
    });

    it('every example passes the CEL and webhook rules as validation.ts states them', () => {
      for (const obj of objects) {
        const check = specValidators[obj.kind as keyof typeof specValidators] as
          ((o: Obj) => unknown[]) | undefined;
        if (!check) continue;
        assert.deepEqual(check(obj), [], `${obj.kind} ${obj.metadata?.name}`);
      }
    });

    it('accepts what CAPO accepts: a controlPlaneEndpoint with only a host, a primary subnet among several', async () => {
      const osc: Obj = {
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'OpenStackCluster',
        metadata: { name: 'host-only' },
        spec: {
          identityRef: { name: 'cloud-config', cloudName: 'openstack' },
          network: { filter: { name: 'user-net' } },
          subnets: [{ filter: { name: 'a' } }, { filter: { name: 'b' } }, { filter: { name: 'c' } }],
          primarySubnet: { filter: { name: 'b' } },
          controlPlaneEndpoint: { host: 'api.example.com' },
        },
      };
      const created = await kube.req('POST', `${pathOf(osc)}?fieldValidation=Strict`, osc);
      assert.equal(created.status, 201, created.text);
      const read = (await kube.req('GET', pathOf(osc, 'host-only'))).body as OpenStackCluster;
      assert.deepEqual(read.spec.controlPlaneEndpoint, { host: 'api.example.com' });
      assert.deepEqual(read.spec.primarySubnet, { filter: { name: 'b' } });
      assert.deepEqual(specValidators.OpenStackCluster(read), []);
    });

    it('refuses what the structural schema forbids', async () => {
      const machine = (spec: Record<string, unknown>, name: string): Obj => ({
        apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
        kind: 'OpenStackMachine',
        metadata: { name },
        spec,
      });
      const cases: [Obj, number, RegExp][] = [
        [
          machine(
            {
              flavor: 'm1.small',
              image: { id: '5d8a1c9e-2b7f-4e3a-9c6d-1f0e8b7a4d22', filter: { name: 'x' } },
            },
            'two-ways',
          ),
          422,
          /spec\.image/,
        ],
        [machine({ flavor: 'm1.small', image: {} }, 'no-image-way'), 422, /spec\.image/],
        [machine({ flavor: 'm1.small', image: { id: 'not-a-uuid' } }, 'bad-uuid'), 422, /spec\.image\.id/],
        [machine({ flavor: '', image: { filter: { name: 'x' } } }, 'empty-flavor'), 422, /spec\.flavor/],
        [machine({ flavor: 'm1.small' }, 'no-image'), 422, /spec\.image/],
        [
          machine({ flavor: 'm1.small', image: { filter: { name: 'x' } }, flavour: 'typo' }, 'typo'),
          400,
          /flavour/,
        ],
        [
          machine(
            {
              flavor: 'm1.small',
              image: { filter: { name: 'x' } },
              serverMetadata: [
                { key: 'a', value: '1' },
                { key: 'a', value: '2' },
              ],
            },
            'dup-metadata',
          ),
          422,
          /serverMetadata/,
        ],
        [
          {
            apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
            kind: 'OpenStackCluster',
            metadata: { name: 'two-subnets' },
            spec: {
              identityRef: { name: 's', cloudName: 'c' },
              managedSubnets: [{ cidr: '10.0.0.0/24' }, { cidr: '10.0.1.0/24' }],
            },
          },
          422,
          /spec\.managedSubnets/,
        ],
        [
          {
            apiVersion: 'infrastructure.cluster.x-k8s.io/v1beta1',
            kind: 'OpenStackCluster',
            metadata: { name: 'bad-identity-type' },
            spec: { identityRef: { type: 'Token', name: 's', cloudName: 'c' } },
          },
          422,
          /spec\.identityRef\.type/,
        ],
      ];
      for (const [obj, status, message] of cases) {
        const res = await kube.req('POST', `${pathOf(obj)}?fieldValidation=Strict`, obj);
        assert.equal(res.status, status, `${obj.metadata?.name}: ${res.text}`);
        assert.match(res.body.message, message, obj.metadata?.name);
      }
    });

    it('keeps the accepted spec the controllers record in status', async () => {
      const name = 'capo-demo-control-plane-7xk2p';
      const path = resourcePath(ALL_KINDS.find((k) => k.definition.kind === 'OpenStackMachine')!.resource, {
        namespace: NS,
        name,
      });
      const cur = (await kube.req('GET', path)).body as OpenStackMachine;
      const status = {
        ready: false,
        acceptedSpec: cur.spec,
        acceptedGeneration: cur.metadata?.generation,
        conditions: [
          {
            type: 'SpecAccepted',
            status: 'True',
            reason: 'SpecAccepted',
            lastTransitionTime: '2026-01-01T00:00:00Z',
            observedGeneration: 1,
          },
        ],
      };
      const put = await kube.req('PUT', `${path}/status`, { ...cur, status });
      assert.equal(put.status, 200, put.text);
      // A later write of the object itself changes its spec but cannot touch the record.
      const edited = {
        ...put.body,
        spec: { ...put.body.spec, flavor: 'm1.large' },
        status: { acceptedSpec: { flavor: 'forged' } },
      };
      const upd = await kube.req('PUT', path, edited);
      assert.equal(upd.status, 200, upd.text);
      const after = (await kube.req('GET', path)).body as OpenStackMachine;
      assert.equal(after.spec.flavor, 'm1.large');
      assert.deepEqual(after.status?.acceptedSpec, cur.spec);
      assert.equal(after.status?.acceptedGeneration, cur.metadata?.generation);
      assert.deepEqual(after.status?.conditions, status.conditions);
    });
  });
});
