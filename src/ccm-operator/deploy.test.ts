/**
 * deploy/ccm-operator: applied by the real kubectl (`kubectl apply -k`) to the Kubernetes
 * emulator; a hardened Deployment whose command line `shiftstack ccm-operator run` accepts (see
 * rbac.test.ts for the rules).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import { main } from '../cli/main.ts';
import { kinds, type KubeClient, type KubernetesObject } from '../kube/index.ts';
import { testClient } from '../kube/testing/env.ts';
import { startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import { CRD_DIR } from './api/index.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const DEPLOY = join(ROOT, 'deploy', 'ccm-operator');
const KUBECTL = process.env.KUBECTL ?? '/usr/bin/kubectl';
const noKubectl = existsSync(KUBECTL) ? undefined : `no kubectl at ${KUBECTL} (set KUBECTL to its path)`;
if (noKubectl && process.env.CI) throw new Error(`KUBECTL TEST CANNOT RUN: ${noKubectl}`);

async function all(): Promise<(KubernetesObject & Record<string, unknown>)[]> {
  const k = parse(await readFile(join(DEPLOY, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
  const out: (KubernetesObject & Record<string, unknown>)[] = [];
  for (const file of k.resources) {
    for (const doc of parseAllDocuments(await readFile(join(DEPLOY, file), 'utf8'))) {
      assert.deepEqual(doc.errors, [], file);
      out.push(doc.toJS() as KubernetesObject & Record<string, unknown>);
    }
  }
  return out;
}

function kubectl(args: string[], kubeconfig: string, home: string) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(KUBECTL, ['--cache-dir', join(home, 'cache'), ...args], {
      env: { ...process.env, KUBECONFIG: kubeconfig, HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => resolve({ code, out, err }));
  });
}

describe('deploy/ccm-operator manifests', () => {
  let kube: TestKube;
  let api: KubeClient;
  before(async () => {
    kube = await startTestKube();
    api = testClient(kube.kubeconfigPath);
  });
  after(async () => {
    await api?.close();
    await kube?.close();
  });

  it('the kustomization lists every manifest and every CRD, namespaces before what lives in them', async () => {
    const k = parse(await readFile(join(DEPLOY, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    const own = (await readdir(DEPLOY)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    const crds = (await readdir(join(ROOT, CRD_DIR))).filter((f) => f.endsWith('.yaml'));
    assert.deepEqual([...k.resources].sort(), [...own, ...crds.map((f) => `crds/${f}`)].sort());
    assert.ok(k.resources.indexOf('namespace.yaml') < k.resources.indexOf('rbac.yaml'));
  });

  it(
    '`kubectl apply -k deploy/ccm-operator` applies it, and again changes nothing',
    { skip: noKubectl },
    async () => {
      const applied = await kubectl(['apply', '-k', DEPLOY], kube.kubeconfigPath, kube.dir);
      assert.equal(applied.code, 0, applied.err);
      for (const line of [
        'customresourcedefinition.apiextensions.k8s.io/clusteroperators.config.openshift.io created',
        'namespace/openshift-cloud-controller-manager created',
        'serviceaccount/cluster-cloud-controller-manager created',
        'clusterrole.rbac.authorization.k8s.io/shiftstack:ccm-operator created',
        'rolebinding.rbac.authorization.k8s.io/shiftstack:ccm-operator:operands created',
        'deployment.apps/cluster-cloud-controller-manager-operator created',
      ]) {
        assert.ok(applied.out.includes(line), `${line}\n${applied.out}`);
      }
      const d = await api.get(kinds.Deployment, {
        namespace: 'openshift-cloud-controller-manager-operator',
        name: 'cluster-cloud-controller-manager-operator',
      });
      assert.equal(d.spec?.template.spec?.serviceAccountName, 'cluster-cloud-controller-manager');
      const again = await kubectl(['apply', '-k', DEPLOY], kube.kubeconfigPath, kube.dir);
      assert.equal(again.code, 0, again.err);
      assert.match(again.out, /deployment.apps\/cluster-cloud-controller-manager-operator unchanged/);
    },
  );

  it('the Deployment is hardened, and `shiftstack ccm-operator run` accepts its command line', async () => {
    const d = (await all()).find((o) => o.kind === 'Deployment') as V1Deployment;
    const pod = d.spec!.template.spec!;
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    assert.equal(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault');
    const c = pod.containers[0]!;
    assert.equal(c.securityContext?.allowPrivilegeEscalation, false);
    assert.equal(c.securityContext?.readOnlyRootFilesystem, true);
    assert.deepEqual(c.securityContext?.capabilities?.drop, ['ALL']);
    assert.equal(c.livenessProbe?.httpGet?.path, '/healthz');
    assert.equal(c.readinessProbe?.httpGet?.path, '/readyz');
    assert.ok(pod.tolerations?.some((t) => t.key === 'node.cloudprovider.kubernetes.io/uninitialized'));
    // Its flags pass every check; only the kubeconfig, which a pod has and this test has not, is missing.
    const err: string[] = [];
    const code = await main(
      ['node', 'shiftstack', '--log-level', 'silent', ...c.args!, '--kubeconfig', join(kube.dir, 'none')],
      { out: () => undefined, err: (t) => err.push(t), signal: AbortSignal.abort() },
    );
    assert.equal(code, 2);
    const [, ...problems] = err;
    assert.equal(problems.length, 1, err.join('\n'));
    assert.match(problems[0]!, /the kubeconfig given with --kubeconfig does not exist/);
  });
});
