/**
 * `shiftstack ccm-operator render`: what it prints for every platform is accepted by a real API
 * server (the real kubectl's `apply --dry-run=server` against the Kubernetes emulator, which runs
 * defaulting, validation and admission but stores nothing); its input files reach the manifests;
 * and bad input is exit 2 with the fix.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KubernetesObject, V1Deployment } from '@kubernetes/client-node';
import { parseAllDocuments, stringify } from 'yaml';
import { kubectlMissing, startKubectlEnv, type KubectlEnv } from '../../../test/kubectl/kubectl.ts';
import { OPERAND_PLATFORMS } from '../../ccm-operator/operands/index.ts';
import { ccmOf, find } from '../../ccm-operator/operands/testing/input.ts';
import { main } from '../main.ts';
import { runCli } from './testing/spawn.ts';

async function render(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(
    ['node', 'shiftstack', '--log-level', 'silent', 'ccm-operator', 'render', ...args],
    {
      out: (t) => out.push(t),
      err: (t) => err.push(t),
      signal: new AbortController().signal,
    },
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The objects of a multi-document YAML stream, every document parsed without error. */
function documents(text: string): KubernetesObject[] {
  return parseAllDocuments(text).map((d, i) => {
    assert.deepEqual(d.errors, [], `document ${i}`);
    return d.toJS() as KubernetesObject;
  });
}

/** `kubectl -o name`'s spelling of an object: `deployment.apps/name`, `namespace/name`. */
function kubectlName(o: KubernetesObject): string {
  const group = o.apiVersion!.includes('/') ? `.${o.apiVersion!.split('/')[0]}` : '';
  return `${o.kind!.toLowerCase()}${group}/${o.metadata!.name}`;
}

const NAMESPACE = 'openshift-cloud-controller-manager';

describe(
  'shiftstack ccm-operator render | kubectl apply --dry-run=server -f -',
  { skip: kubectlMissing() },
  () => {
    let env: KubectlEnv;
    before(async () => {
      env = await startKubectlEnv();
      // As on any API server, objects in a namespace are refused while it does not exist, dry run or not.
      await env.kubectl('create', 'namespace', NAMESPACE);
    });
    after(async () => env?.close());

    /** Dry-runs `yaml` and asserts the server accepted every object of it and stored none. */
    async function dryRunAccepts(yaml: string): Promise<void> {
      const objects = documents(yaml);
      const r = await env.start(['apply', '--dry-run=server', '-f', '-', '-o', 'name'], yaml).done;
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.stdout.trim().split('\n').sort(), objects.map(kubectlName).sort());
      for (const o of objects.filter((x) => x.kind === 'Deployment' || x.kind === 'DaemonSet')) {
        const path = `/apis/apps/v1/namespaces/${o.metadata!.namespace}/${o.kind!.toLowerCase()}s/${o.metadata!.name}`;
        assert.equal((await env.k.req('GET', path)).status, 404, `${path} was not stored`);
      }
    }

    for (const platform of OPERAND_PLATFORMS) {
      it(`${platform}: every object is accepted, none stored`, async () => {
        const r = await render('--platform', platform);
        assert.equal(r.code, 0, r.err);
        await dryRunAccepts(r.out);
      });
    }

    it('OpenStack with upstream OCCM: accepted', async () => {
      const r = await render('--platform', 'OpenStack', '--openstack-ccm', 'upstream');
      assert.equal(r.code, 0, r.err);
      await dryRunAccepts(r.out);
    });

    it('in another namespace: the Namespace comes first in the stream, so a plain apply creates it', async () => {
      const r = await render('--platform', 'Azure', '--namespace', 'ccm');
      assert.equal(r.code, 0, r.err);
      const objects = documents(r.out);
      assert.equal(kubectlName(objects[0]!), 'namespace/ccm');
      for (const o of objects.slice(1)) {
        // kube-system holds only the binding that lets the CCMs read the API server's client CA.
        if (o.metadata?.namespace !== undefined && o.metadata.namespace !== 'kube-system')
          assert.equal(o.metadata.namespace, 'ccm', kubectlName(o));
      }
      await env.kubectl('create', 'namespace', 'ccm');
      await dryRunAccepts(r.out);
    });
  },
);

describe('shiftstack ccm-operator render: its inputs', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-render-'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  async function file(name: string, content: unknown): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, typeof content === 'string' ? content : stringify(content));
    return path;
  }

  it('an unknown platform is exit 2 from the process, naming the valid types; nothing on stdout', async () => {
    const r = await runCli(['ccm-operator', 'render', '--platform', 'Openstack']);
    assert.equal(r.code, 2, r.err);
    assert.equal(r.out, '');
    assert.match(r.err, /--platform: "Openstack" is not a platform/);
    assert.match(r.err, /write OpenStack/);
    assert.match(r.err, /OpenStack, AWS, Azure, GCP, VSphere, IBMCloud, PowerVS, Nutanix/);
  });

  it('no platform and no Infrastructure is exit 2 saying how to name one', async () => {
    const r = await render();
    assert.equal(r.code, 2);
    assert.equal(r.out, '');
    assert.match(r.err, /--platform: missing/);
  });

  it('None and External: nothing to deploy, nothing printed, exit 0', async () => {
    for (const platform of ['None', 'External']) {
      const r = await render('--platform', platform);
      assert.equal(r.code, 0, r.err);
      assert.equal(r.out, '');
      assert.match(r.err, /no cloud controller manager to deploy/);
    }
  });

  it('--infrastructure: the platform, the infrastructure name and the single-replica topology from its status', async () => {
    const infra = await file('infrastructure.yaml', {
      apiVersion: 'config.openshift.io/v1',
      kind: 'Infrastructure',
      metadata: { name: 'cluster' },
      spec: { cloudConfig: { name: 'cloud-provider-config', key: 'config' } },
      status: {
        infrastructureName: 'mycl-abc12',
        controlPlaneTopology: 'SingleReplica',
        platformStatus: { type: 'OpenStack', openstack: { cloudName: 'openstack' } },
      },
    });
    const r = await render('--infrastructure', infra);
    assert.equal(r.code, 0, r.err);
    const objects = documents(r.out);
    const d = find<V1Deployment>(objects, 'Deployment', 'openstack-cloud-controller-manager');
    assert.equal(d.spec?.replicas, 1);
    assert.ok(!objects.some((o) => o.kind === 'PodDisruptionBudget'), 'no budget for one replica');
    const env = ccmOf(d).env ?? [];
    assert.equal(env.find((e) => e.name === 'OCP_INFRASTRUCTURE_NAME')?.value, 'mycl-abc12');
  });

  it('--platform contradicting --infrastructure, a missing file and an unknown flag: all reported, exit 2', async () => {
    const infra = await file('aws.json', JSON.stringify({ status: { platformStatus: { type: 'AWS' } } }));
    const r = await render(
      '--infrastructure',
      infra,
      '--platform',
      'GCP',
      '--images',
      join(dir, 'none.json'),
      '--bogus',
    );
    assert.equal(r.code, 2);
    assert.equal(r.out, '');
    assert.match(r.err, /--bogus: unknown flag/);
    assert.match(r.err, /--platform GCP contradicts .*aws\.json, whose status\.platformStatus\.type is AWS/);
    assert.match(r.err, /none\.json: the file does not exist/);
  });

  it('--images: the images ConfigMap replaces the keys it has; a key no operand uses is a warning', async () => {
    const images = await file('images.yaml', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cloud-controller-manager-images',
        namespace: 'openshift-cloud-controller-manager-operator',
      },
      data: {
        'images.json': JSON.stringify({
          cloudControllerManagerAzure: 'registry.example/azure-ccm:v1',
          cloudNodeManagerAzure: 'registry.example/azure-cnm:v1',
          kubeRbacProxy: 'registry.example/kube-rbac-proxy:v1',
        }),
      },
    });
    const r = await render('--platform', 'Azure', '--images', images);
    assert.equal(r.code, 0, r.err);
    const objects = documents(r.out);
    const images_ = objects
      .filter((o) => o.kind === 'Deployment' || o.kind === 'DaemonSet')
      .flatMap((w) => (w as V1Deployment).spec!.template.spec!.containers.map((c) => c.image));
    assert.ok(images_.includes('registry.example/azure-ccm:v1'), images_.join(', '));
    assert.ok(images_.includes('registry.example/azure-cnm:v1'), images_.join(', '));
    assert.match(r.err, /key "kubeRbacProxy" is not an image any operand uses/);
  });

  it('--images: images.json that is not JSON is exit 2 naming the key', async () => {
    const images = await file('bad-images.yaml', { kind: 'ConfigMap', data: { 'images.json': '{oops' } });
    const r = await render('--platform', 'AWS', '--images', images);
    assert.equal(r.code, 2);
    assert.match(r.err, /images\.json.*not JSON/);
  });

  it('--proxy: the Proxy status reaches every CCM container', async () => {
    const proxy = await file('proxy.yaml', {
      apiVersion: 'config.openshift.io/v1',
      kind: 'Proxy',
      metadata: { name: 'cluster' },
      status: { httpProxy: 'http://proxy.example:3128', noProxy: '.cluster.local' },
    });
    const r = await render('--platform', 'GCP', '--proxy', proxy);
    assert.equal(r.code, 0, r.err);
    const d = find<V1Deployment>(documents(r.out), 'Deployment', 'gcp-cloud-controller-manager');
    for (const c of d.spec!.template.spec!.containers) {
      assert.equal(c.env?.find((e) => e.name === 'HTTP_PROXY')?.value, 'http://proxy.example:3128', c.name);
      assert.equal(c.env?.find((e) => e.name === 'NO_PROXY')?.value, '.cluster.local', c.name);
      assert.equal(
        c.env?.find((e) => e.name === 'HTTPS_PROXY'),
        undefined,
        c.name,
      );
    }
  });
});
