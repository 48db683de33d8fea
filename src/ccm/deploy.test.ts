import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { KubeClient, KubernetesObject } from '../kube/index.ts';
import { testClient } from '../kube/testing/env.ts';
import { startKubeSim, type RunningKubeSim } from '../sim/kube/start.ts';
import { tmpdir } from 'node:os';

function checkRbac(obj: Record<string, unknown>): void {
  const meta = obj.metadata as { name?: string } | undefined;
  assert.ok(meta?.name, 'metadata.name');
  if (obj.kind === 'ClusterRole') {
    const rules = obj.rules as { apiGroups?: string[]; resources?: string[]; verbs?: string[] }[];
    assert.ok(Array.isArray(rules) && rules.length > 0, `${meta.name}: rules`);
    for (const r of rules) {
      assert.ok(
        Array.isArray(r.apiGroups) && Array.isArray(r.resources) && Array.isArray(r.verbs),
        meta.name,
      );
      assert.ok(r.verbs.length > 0 && r.resources.length > 0, meta.name);
    }
  } else {
    assert.equal(obj.kind, 'ClusterRoleBinding');
    const ref = obj.roleRef as { apiGroup?: string; kind?: string; name?: string };
    assert.deepEqual([ref.apiGroup, ref.kind], ['rbac.authorization.k8s.io', 'ClusterRole']);
    const subjects = obj.subjects as { kind?: string; name?: string; namespace?: string }[];
    assert.ok(subjects.every((x) => x.kind === 'ServiceAccount' && x.name && x.namespace));
  }
}

const DEPLOY = join(import.meta.dirname, '..', '..', 'deploy', 'ccm');

describe('deploy/ccm manifests', () => {
  let dir: string;
  let kube: RunningKubeSim;
  let api: KubeClient;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-deploy-'));
    kube = await startKubeSim({ kubeconfigPath: join(dir, 'kubeconfig') });
    api = testClient(kube.kubeconfigPath);
  });
  after(async () => {
    await api?.close();
    await kube?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('every manifest parses and is accepted by the API server', async () => {
    const files = (await readdir(DEPLOY)).filter((f) => f.endsWith('.yaml')).sort();
    assert.ok(files.length >= 4);
    const kinds = new Set<string>();
    for (const file of files) {
      for (const doc of parseAllDocuments(await readFile(join(DEPLOY, file), 'utf8'))) {
        assert.deepEqual(doc.errors, [], file);
        const obj = doc.toJS() as KubernetesObject & Record<string, unknown>;
        kinds.add(obj.kind!);
        // The API server validates RBAC objects only loosely: check what the CCM relies on too.
        if (obj.apiVersion === 'rbac.authorization.k8s.io/v1') checkRbac(obj);
        const type = await api.discover(obj.apiVersion!, obj.kind!);
        const created = await api.create(type, obj);
        assert.ok(created.metadata?.uid, `${file}: ${obj.kind} ${obj.metadata?.name}`);
      }
    }
    for (const k of ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Secret', 'Deployment']) {
      assert.ok(kinds.has(k), k);
    }
  });

  it('the Deployment runs 2 replicas with leader election and our image placeholder', async () => {
    const docs = parseAllDocuments(await readFile(join(DEPLOY, 'deployment.yaml'), 'utf8'));
    const d = docs[0]!.toJS() as {
      spec: { replicas: number; template: { spec: { containers: { image: string; args: string[] }[] } } };
    };
    assert.equal(d.spec.replicas, 2);
    const c = d.spec.template.spec.containers[0]!;
    assert.equal(c.image, 'shiftstack:latest');
    assert.ok(c.args.includes('--leader-elect=true'));
    assert.ok(c.args.includes('--cloud-config=/etc/config/cloud.conf'));
  });
});
