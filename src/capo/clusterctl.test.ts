/**
 * clusterctl's provider contract, tested as far as it can be without clusterctl (not installed
 * here, and it would fetch Cluster API's own releases): deploy/clusterctl is a clusterctl local
 * repository of shiftstack capo, and its files are what clusterctl reads.
 *
 * - The layout clusterctl's local repository reads, and metadata.yaml naming the contract of this
 *   release series: the newest the CRDs are labelled for (Cluster API core follows the label,
 *   clusterctl the file), with the kinds core reads holding that contract's fields.
 * - infrastructure-components.yaml is what `npm run gen:clusterctl` writes from deploy/capo; every
 *   variable in it has a default, rendered with none it is deploy/capo's objects, and every one of
 *   them is accepted by the Kubernetes emulator as sent.
 * - Each flavor lists the variables a user must set (as `clusterctl generate cluster
 *   --list-variables`), renders with a variable set leaving nothing unresolved, and applies to the
 *   emulator with our CRDs (and stand-ins for the other providers' kinds): nothing refused, pruned
 *   or warned about. The same flavors in CAPO v0.14's v1beta1 (test fixtures) apply beside them.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { assertContains } from '../kube/crd/testing/assert.ts';
import { eventually, startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import { serveConversionWebhook, type RunningWebhook } from '../kube/conversion/webhook.ts';
import { capoCustomResourceDefinitions } from './api/files.ts';
import { capoConversions } from './api/webhook.ts';
import {
  buildKustomization,
  COMPONENTS_FILE,
  infrastructureComponents,
  KUSTOMIZATION_DIR,
  METADATA_FILE,
  packageVersion,
  PROVIDER_LABEL,
  PROVIDER_LABEL_KEY,
  releaseDir,
  REPOSITORY_DIR,
  type Manifest,
} from './clusterctl/components.ts';
import { listVariables, MissingVariablesError, substituteVariables } from './clusterctl/variables.ts';
import { standInCrd, STAND_INS } from './testing/clusterctl/stand-ins.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const V1BETA1_FIXTURES = join(import.meta.dirname, 'testing', 'clusterctl', 'v1beta1');

type Obj = Manifest & { spec?: any; data?: Record<string, string> };

let RELEASE = '';
before(async () => {
  RELEASE = join(ROOT, releaseDir(await packageVersion(ROOT)));
});

const read = (path: string) => readFile(path, 'utf8');

function docs(text: string, what: string): Obj[] {
  return parseAllDocuments(text)
    .map((d) => {
      assert.deepEqual(d.errors, [], what);
      return d.toJS() as Obj | null;
    })
    .filter((o): o is Obj => o !== null);
}

/** Cluster API's contract versions in order (v1alpha3 < v1alpha4 < v1beta1 < v1beta2). */
function compareContracts(a: string, b: string): number {
  const key = (v: string) => {
    const m = /^v(\d+)(alpha|beta)?(\d+)?$/.exec(v);
    if (!m) throw new Error(`not a contract version: ${v}`);
    const stage = m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2;
    return [Number(m[1]), stage, Number(m[3] ?? 0)];
  };
  const [x, y] = [key(a), key(b)];
  return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
}

/** The flavors, as `--flavor` names them ('' is the default), and their files. */
const FLAVORS = ['', 'without-lb', 'flatcar', 'development'] as const;
const templateFile = (flavor: string) =>
  flavor ? `cluster-template-${flavor}.yaml` : 'cluster-template.yaml';

/**
 * A flavor's text as clusterctl processes it: the template, and for a Cluster drawn from a
 * ClusterClass, the class's file from the same repository (clusterctl adds it, same variables).
 */
async function flavorText(dir: string, flavor: string): Promise<string> {
  const template = await read(join(dir, templateFile(flavor)));
  const classes = docs(substituteVariables(template, VALUES), flavor)
    .map((o) => o.spec?.topology?.classRef?.name ?? o.spec?.topology?.class)
    .filter((c): c is string => typeof c === 'string');
  const classFiles = await Promise.all(classes.map((c) => read(join(dir, `clusterclass-${c}.yaml`))));
  // The class's objects before the Cluster that uses it.
  return [...classFiles, template].join('\n---\n');
}

/** What a user has in the environment, as a test cloud's: every variable any flavor needs. */
const VALUES: Readonly<Record<string, string>> = {
  CLUSTER_NAME: 'capo-flavor',
  KUBERNETES_VERSION: 'v1.32.4',
  CONTROL_PLANE_MACHINE_COUNT: '3',
  WORKER_MACHINE_COUNT: '2',
  OPENSTACK_CLOUD: 'openstack',
  OPENSTACK_CLOUD_YAML_B64: Buffer.from(
    'clouds:\n  openstack:\n    auth:\n      auth_url: http://127.0.0.1:5000/v3\n',
  ).toString('base64'),
  OPENSTACK_CLOUD_CACERT_B64: 'Cg==',
  OPENSTACK_EXTERNAL_NETWORK_ID: '9c1d3f0e-6b2a-4c8d-9e7f-0a1b2c3d4e5f',
  OPENSTACK_DNS_NAMESERVERS: '8.8.8.8',
  OPENSTACK_FAILURE_DOMAIN: 'nova',
  OPENSTACK_IMAGE_NAME: 'ubuntu-22.04',
  OPENSTACK_FLATCAR_IMAGE_NAME: 'flatcar-stable',
  OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR: 'm1.medium',
  OPENSTACK_NODE_MACHINE_FLAVOR: 'm1.small',
  OPENSTACK_SSH_KEY_NAME: 'capo-demo',
};

/** The variables each flavor cannot render without, in both API versions. */
const DEFAULT_REQUIRED = [
  'CLUSTER_NAME',
  'CONTROL_PLANE_MACHINE_COUNT',
  'KUBERNETES_VERSION',
  'OPENSTACK_CLOUD',
  'OPENSTACK_CLOUD_CACERT_B64',
  'OPENSTACK_CLOUD_YAML_B64',
  'OPENSTACK_CONTROL_PLANE_MACHINE_FLAVOR',
  'OPENSTACK_DNS_NAMESERVERS',
  'OPENSTACK_EXTERNAL_NETWORK_ID',
  'OPENSTACK_FAILURE_DOMAIN',
  'OPENSTACK_IMAGE_NAME',
  'OPENSTACK_NODE_MACHINE_FLAVOR',
  'OPENSTACK_SSH_KEY_NAME',
  'WORKER_MACHINE_COUNT',
];
const REQUIRED: Record<(typeof FLAVORS)[number], string[]> = {
  '': DEFAULT_REQUIRED,
  'without-lb': DEFAULT_REQUIRED.filter((v) => v !== 'CONTROL_PLANE_MACHINE_COUNT'),
  flatcar: DEFAULT_REQUIRED.map((v) =>
    v === 'OPENSTACK_IMAGE_NAME' ? 'OPENSTACK_FLATCAR_IMAGE_NAME' : v,
  ).sort(),
  development: ['CLUSTER_NAME', 'CONTROL_PLANE_MACHINE_COUNT', 'KUBERNETES_VERSION', 'WORKER_MACHINE_COUNT'],
};

describe('clusterctl: the local repository deploy/clusterctl', () => {
  it('has the layout clusterctl reads: {basepath}/infrastructure-openstack/v<package.json version>/, every flavor and class', async () => {
    const version = await packageVersion(ROOT);
    assert.match(version, /^\d+\.\d+\.\d+$/);
    assert.deepEqual(await readdir(join(ROOT, REPOSITORY_DIR)), [`v${version}`]);
    const files = (await readdir(RELEASE)).sort();
    assert.deepEqual(files, [
      'cluster-template-development.yaml',
      'cluster-template-flatcar.yaml',
      'cluster-template-without-lb.yaml',
      'cluster-template.yaml',
      'clusterclass-dev-test.yaml',
      COMPONENTS_FILE,
      METADATA_FILE,
    ]);
    // The v1beta1 fixtures hold the same flavors.
    assert.deepEqual(
      (await readdir(V1BETA1_FIXTURES)).sort(),
      files.filter((f) => f.startsWith('cluster')),
    );
  });

  it('metadata.yaml maps this release series to the newest contract the CRDs implement: v1beta2', async () => {
    const metadata = parse(await read(join(RELEASE, METADATA_FILE))) as {
      apiVersion: string;
      kind: string;
      releaseSeries: { major: number; minor: number; contract: string }[];
    };
    assert.equal(metadata.apiVersion, 'clusterctl.cluster.x-k8s.io/v1alpha3');
    assert.equal(metadata.kind, 'Metadata');
    const [major, minor] = (await packageVersion(ROOT)).split('.').map(Number);
    const series = metadata.releaseSeries.filter((s) => s.major === major && s.minor === minor);
    assert.equal(series.length, 1, `one release series for ${major}.${minor}`);
    const contract = series[0]!.contract;
    const crds = docs(await read(join(RELEASE, COMPONENTS_FILE)), COMPONENTS_FILE).filter(
      (o) => o.kind === 'CustomResourceDefinition',
    );
    assert.ok(crds.length >= 7);
    // Cluster API core resolves a reference through the CRD's label for its contract
    // (`cluster.x-k8s.io/<contract>`); clusterctl takes the contract from metadata.yaml. The two
    // must agree: the series claims the newest contract the CRDs are labelled for.
    const labelled = new Set(
      crds.flatMap((crd) =>
        Object.keys(crd.metadata.labels ?? {}).flatMap(
          (k) => /^cluster\.x-k8s\.io\/(v\w+)$/.exec(k)?.[1] ?? [],
        ),
      ),
    );
    const newest = [...labelled].sort(compareContracts).at(-1);
    assert.equal(contract, newest, `the CRDs are labelled for ${[...labelled].join(', ')}`);
    assert.equal(contract, 'v1beta2');
    const served = (crd: Obj) =>
      (crd.spec.versions as { name: string; served: boolean }[]).filter((v) => v.served).map((v) => v.name);
    for (const crd of crds) {
      for (const [key, value] of Object.entries(crd.metadata.labels ?? {})) {
        if (!/^cluster\.x-k8s\.io\/v\w+$/.test(key)) continue;
        for (const v of value.split('_'))
          assert.ok(served(crd).includes(v), `${crd.metadata.name} serves ${v}`);
      }
    }
    // The kinds Cluster API core reads (InfraCluster, InfraMachine and their templates) are
    // labelled for it, and the version the label names holds what the v1beta2 contract reads:
    // status.initialization.provisioned, and conditions as metav1.Conditions.
    const crd = (plural: string) =>
      crds.find((c) => c.metadata.name === `${plural}.infrastructure.cluster.x-k8s.io`);
    for (const plural of [
      'openstackclusters',
      'openstackclustertemplates',
      'openstackmachines',
      'openstackmachinetemplates',
    ]) {
      assert.ok(
        crd(plural)?.metadata.labels?.[`cluster.x-k8s.io/${contract}`],
        `${plural} is labelled for ${contract}`,
      );
    }
    for (const plural of ['openstackclusters', 'openstackmachines']) {
      const c: Obj = crd(plural)!;
      const version: string | undefined = c.metadata
        .labels![`cluster.x-k8s.io/${contract}`]!.split('_')
        .at(-1);
      const schema: any = (c.spec.versions as { name: string; schema: { openAPIV3Schema: any } }[]).find(
        (v) => v.name === version,
      )!.schema.openAPIV3Schema;
      const status: any = schema.properties.status.properties;
      assert.equal(status.initialization?.properties?.provisioned?.type, 'boolean', `${plural} ${version}`);
      const condition = status.conditions?.items;
      assert.deepEqual(
        Object.keys(condition?.properties ?? {}).sort(),
        ['lastTransitionTime', 'message', 'observedGeneration', 'reason', 'status', 'type'],
        `${plural} ${version}: conditions are metav1.Conditions`,
      );
      for (const field of ['type', 'status', 'lastTransitionTime'])
        assert.ok(condition.required.includes(field));
    }
  });
});

describe('clusterctl: infrastructure-components.yaml', () => {
  let text: string;
  before(async () => {
    text = await read(join(RELEASE, COMPONENTS_FILE));
  });

  it('is what `npm run gen:clusterctl` writes from deploy/capo (run it after changing deploy/capo)', async () => {
    assert.equal(text, await infrastructureComponents(ROOT), `${COMPONENTS_FILE} is stale`);
  });

  it("has a default for every variable, and rendered with none it is deploy/capo's objects", async () => {
    const variables = listVariables(text);
    assert.deepEqual(
      variables.map((v) => [v.name, v.required]),
      [
        ['CAPO_DIAGNOSTICS_ADDRESS', false],
        ['CAPO_INSECURE_DIAGNOSTICS', false],
      ],
    );
    assert.deepEqual(
      docs(substituteVariables(text, {}), COMPONENTS_FILE),
      await buildKustomization(join(ROOT, KUSTOMIZATION_DIR)),
    );
    // A value set by the user reaches the manager's flags.
    const set = docs(substituteVariables(text, { CAPO_DIAGNOSTICS_ADDRESS: ':9443' }), COMPONENTS_FILE);
    const deployment = set.find((o) => o.kind === 'Deployment')!;
    assert.ok(deployment.spec.template.spec.containers[0].args.includes('--diagnostics-address=:9443'));
  });

  it('follows the contract: one Namespace, every object labelled as the provider, no Cluster API stand-in', () => {
    const objects = docs(substituteVariables(text, {}), COMPONENTS_FILE);
    assert.deepEqual(
      objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name),
      ['capo-system'],
    );
    for (const o of objects) {
      assert.equal(o.metadata.labels?.[PROVIDER_LABEL_KEY], PROVIDER_LABEL, `${o.kind} ${o.metadata.name}`);
      const ns = o.metadata.namespace;
      assert.ok(ns === undefined || ns === 'capo-system', `${o.kind} ${o.metadata.name} in ${ns}`);
    }
    const crdGroups = objects
      .filter((o) => o.kind === 'CustomResourceDefinition')
      .map((o) => o.spec.group as string);
    assert.ok(crdGroups.every((g) => g === 'infrastructure.cluster.x-k8s.io'));
    for (const kind of [
      'Deployment',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
    ]) {
      assert.ok(
        objects.some((o) => o.kind === kind),
        kind,
      );
    }
  });

  it('is accepted by the Kubernetes emulator object by object, nothing pruned', async () => {
    const kube = await startTestKube();
    try {
      // What clusterctl init puts there first: cert-manager.
      await applyCrds(
        kube,
        STAND_INS.filter((s) => s.group === 'cert-manager.io').map((s) => standInCrd(s) as unknown as Obj),
      );
      for (const obj of docs(substituteVariables(text, {}), COMPONENTS_FILE)) {
        const path = await pathOf(kube, obj, obj.metadata.namespace);
        const res = await kube.req('POST', `${path}?fieldValidation=Strict`, obj);
        assert.equal(res.status, 201, `${obj.kind} ${obj.metadata.name}: ${res.text}`);
        assert.equal(res.headers.get('warning'), null, `${obj.kind} ${obj.metadata.name} warnings`);
        const stored = await kube.req('GET', `${path}/${obj.metadata.name}`);
        assertContains(stored.body, obj, `${obj.kind} ${obj.metadata.name}`);
      }
    } finally {
      await kube.close();
    }
  });
});

/** An object's path in another version of its group, when the API server serves its kind there. */
async function otherVersionPath(
  kube: TestKube,
  obj: Obj,
  namespace: string,
  version: string,
): Promise<{ apiVersion: string; path: string } | undefined> {
  const group = obj.apiVersion.split('/')[0]!;
  if (!obj.apiVersion.includes('/')) return undefined;
  const list = await kube.req('GET', `/apis/${group}/${version}`);
  const served =
    list.status === 200 && (list.body.resources as { kind: string }[]).some((r) => r.kind === obj.kind);
  if (!served) return undefined;
  const apiVersion = `${group}/${version}`;
  return { apiVersion, path: await pathOf(kube, { ...obj, apiVersion }, namespace) };
}

/** Creates the CRDs and waits until every version of each is served. */
async function applyCrds(kube: TestKube, crds: readonly Obj[]): Promise<void> {
  for (const crd of crds) {
    const res = await kube.req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
    assert.equal(res.status, 201, `${crd.metadata.name}: ${res.text}`);
  }
  for (const crd of crds) {
    const group = crd.spec.group as string;
    for (const v of crd.spec.versions as { name: string }[]) {
      await eventually(
        async () =>
          (await kube.req('GET', `/apis/${group}/${v.name}/${crd.spec.names.plural}`)).status === 200,
        { timeoutMs: 20_000, what: `${crd.metadata.name} ${v.name} served` },
      );
    }
  }
}

/** The collection path of an object's kind, from the API server's discovery. */
async function pathOf(kube: TestKube, obj: Obj, namespace?: string): Promise<string> {
  const base = obj.apiVersion.includes('/') ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
  const list = await kube.req('GET', base);
  assert.equal(list.status, 200, `${obj.apiVersion} is served: ${list.text}`);
  const resource = (list.body.resources as { name: string; kind: string; namespaced: boolean }[]).find(
    (r) => r.kind === obj.kind && !r.name.includes('/'),
  );
  assert.ok(resource, `${obj.apiVersion} ${obj.kind} is served`);
  return resource.namespaced && namespace
    ? `${base}/namespaces/${namespace}/${resource.name}`
    : `${base}/${resource.name}`;
}

for (const [version, dir] of [
  ['v1beta2', () => RELEASE],
  ['v1beta1', () => V1BETA1_FIXTURES],
] as const) {
  describe(`clusterctl: the flavors in ${version}`, () => {
    it('list the variables a user must set, as `clusterctl generate cluster --list-variables` does', async () => {
      for (const flavor of FLAVORS) {
        const text = await flavorText(dir(), flavor);
        const required = listVariables(text)
          .filter((v) => v.required)
          .map((v) => v.name);
        assert.deepEqual(required, REQUIRED[flavor], `${flavor || 'default'}`);
        // Without one of them, clusterctl refuses, naming it.
        const without = Object.fromEntries(Object.entries(VALUES).filter(([k]) => k !== required[0]));
        assert.throws(
          () => substituteVariables(text, without),
          (e: unknown) => e instanceof MissingVariablesError && e.missing.join() === required[0],
        );
      }
    });

    it('render with a variable set: nothing unresolved but what $$ kept for the machine', async () => {
      for (const flavor of FLAVORS) {
        const text = await flavorText(dir(), flavor);
        const rendered = substituteVariables(text, VALUES);
        const kept = text.split('$${').length - 1;
        assert.equal(rendered.split('${').length - 1, kept, `${flavor || 'default'}: \${ left`);
        for (const [k, v] of Object.entries(VALUES)) {
          if (text.includes(`\${${k}}`)) assert.ok(rendered.includes(v), `${flavor}: ${k}`);
        }
        // clusterctl puts every object in the target namespace: a template names none.
        for (const o of docs(rendered, flavor)) {
          assert.equal(o.metadata.namespace, undefined, `${flavor}: ${o.kind} ${o.metadata.name}`);
        }
      }
    });

    describe('applied to the Kubernetes emulator with our CRDs', () => {
      let kube: TestKube;
      let webhook: RunningWebhook;
      before(async () => {
        kube = await startTestKube();
        // What `shiftstack capo --act-as-cluster-api-core` serves: CAPO's and Cluster API's conversions.
        webhook = await serveConversionWebhook({
          conversions: capoConversions({ clusterAPI: true }),
          port: 0,
        });
        await applyCrds(kube, [
          ...(capoCustomResourceDefinitions({
            url: webhook.url,
            caBundle: webhook.caBundle,
          }) as unknown as Obj[]),
          ...STAND_INS.map((s) => standInCrd(s) as unknown as Obj),
        ]);
      });
      after(async () => {
        await kube?.close();
        await webhook?.close();
      });

      for (const flavor of FLAVORS) {
        it(`${flavor || 'default'}: every object is created as sent, nothing pruned or warned about`, async () => {
          const ns = `${version}-${flavor || 'default'}`;
          const created = await kube.req('POST', '/api/v1/namespaces', {
            apiVersion: 'v1',
            kind: 'Namespace',
            metadata: { name: ns },
          });
          assert.equal(created.status, 201, created.text);
          const objects = docs(substituteVariables(await flavorText(dir(), flavor), VALUES), flavor);
          for (const obj of objects) {
            const what = `${obj.apiVersion} ${obj.kind} ${obj.metadata.name}`;
            const path = await pathOf(kube, obj, ns);
            const res = await kube.req('POST', `${path}?fieldValidation=Strict`, obj);
            assert.equal(res.status, 201, `${what}: ${res.text}`);
            assert.equal(res.headers.get('warning'), null, `${what} warnings`);
            const stored = await kube.req('GET', `${path}/${obj.metadata.name}`);
            assert.equal(stored.body.apiVersion, obj.apiVersion, what);
            assertContains(
              stored.body,
              { ...obj, metadata: { name: obj.metadata.name, labels: obj.metadata.labels } },
              what,
            );
            // Readable in the other Cluster API version where its kind is served in both.
            const other = await otherVersionPath(
              kube,
              obj,
              ns,
              version === 'v1beta2' ? 'v1beta1' : 'v1beta2',
            );
            if (other) {
              const read = await kube.req('GET', `${other.path}/${obj.metadata.name}`);
              assert.equal(read.status, 200, `${what} in ${other.apiVersion}: ${read.text}`);
              assert.equal(read.body.apiVersion, other.apiVersion, what);
              assert.equal(read.body.metadata.uid, stored.body.metadata.uid, what);
            }
          }
        });
      }
    });
  });
}
