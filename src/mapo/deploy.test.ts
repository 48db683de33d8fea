/**
 * deploy/mapo: the kustomization lists every manifest and the Machine API CRDs, the API server
 * accepts each in order, and the Deployment runs `shiftstack mapo` with flags it supports, its
 * probes on the health port, the Lease in the pod's namespace. That its RBAC lets mapo do its job
 * is src/cli/commands/mapo.test.ts (mapo runs as this ServiceAccount, every call authorized by
 * the emulator).
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Deployment, V1Role } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import { buildProgram } from '../cli/main.ts';
import type { KubeClient, KubernetesObject } from '../kube/index.ts';
import { testClient } from '../kube/testing/env.ts';
import { startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import { MACHINE_API_NAMESPACE } from './api/index.ts';

const DEPLOY = join(import.meta.dirname, '..', '..', 'deploy', 'mapo');

async function docs(file: string): Promise<(KubernetesObject & Record<string, unknown>)[]> {
  return parseAllDocuments(await readFile(join(DEPLOY, file), 'utf8')).map((d) => {
    assert.deepEqual(d.errors, [], file);
    return d.toJS() as KubernetesObject & Record<string, unknown>;
  });
}

async function resources(): Promise<string[]> {
  return (parse(await readFile(join(DEPLOY, 'kustomization.yaml'), 'utf8')) as { resources: string[] })
    .resources;
}

describe('deploy/mapo manifests', () => {
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

  it('the kustomization lists every manifest and the Machine API CRDs, the namespace first', async () => {
    const listed = await resources();
    const own = (await readdir(DEPLOY)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    const crds = (await readdir(join(DEPLOY, 'crds'))).filter((f) => f.endsWith('.yaml'));
    assert.deepEqual([...listed].sort(), [...own, ...crds.map((f) => `crds/${f}`)].sort());
    assert.ok(listed.indexOf('namespace.yaml') < listed.indexOf('serviceaccount.yaml'));
  });

  it('every resource is accepted by the API server, in the kustomization order', async () => {
    const kinds = new Set<string>();
    for (const file of await resources()) {
      for (const obj of await docs(file)) {
        const created = await api.create(await api.discover(obj.apiVersion!, obj.kind!), obj);
        assert.ok(created.metadata?.uid, `${obj.kind} ${obj.metadata?.name}`);
        kinds.add(obj.kind!);
      }
    }
    for (const k of [
      'CustomResourceDefinition',
      'Namespace',
      'ServiceAccount',
      'ClusterRole',
      'Role',
      'Deployment',
    ]) {
      assert.ok(kinds.has(k), k);
    }
  });

  it('the Deployment runs `shiftstack mapo --leader-elect` twice, hardened, with flags the command supports', async () => {
    const objs = (await Promise.all((await resources()).map(docs))).flat();
    const d = objs.find((o) => o.kind === 'Deployment') as V1Deployment;
    assert.equal(d.metadata?.namespace, MACHINE_API_NAMESPACE);
    assert.equal(d.spec?.replicas, 2);
    const pod = d.spec.template.spec!;
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    const c = pod.containers[0]!;
    assert.equal(c.securityContext?.readOnlyRootFilesystem, true);
    assert.equal(c.securityContext?.allowPrivilegeEscalation, false);
    assert.deepEqual(c.securityContext?.capabilities?.drop, ['ALL']);
    const args = c.args ?? [];
    assert.equal(args[0], 'mapo');
    assert.ok(args.includes('--leader-elect'));
    const program = await buildProgram(
      {
        out: () => {},
        err: () => {},
        log: () => {
          throw new Error('unused');
        },
        signal: new AbortController().signal,
      },
      ['node', 'shiftstack', 'mapo'],
    );
    const mapo = program.commands.find((cmd) => cmd.name() === 'mapo')!;
    for (const arg of args.slice(1)) {
      const flag = arg.split('=')[0]!;
      const option = mapo.options.find((o) => o.long === flag);
      assert.ok(option && !option.hidden, `${flag} is a supported flag of shiftstack mapo`);
    }
    const port = (flag: string) =>
      args
        .find((a) => a.startsWith(`${flag}=`))!
        .split(':')
        .pop();
    assert.equal(String(c.ports?.find((p) => p.name === 'healthz')?.containerPort), port('--health-addr'));
    assert.equal(
      String(c.ports?.find((p) => p.name === 'metrics')?.containerPort),
      port('--metrics-bind-address'),
    );
    assert.equal(c.livenessProbe?.httpGet?.path, '/healthz');
    assert.equal(c.readinessProbe?.httpGet?.path, '/readyz');
    assert.equal(
      c.env?.find((e) => e.name === 'POD_NAMESPACE')?.valueFrom?.fieldRef?.fieldPath,
      'metadata.namespace',
    );
    const role = objs.find((o) => o.kind === 'Role') as V1Role;
    assert.equal(role.metadata?.namespace, d.metadata?.namespace, 'the Lease Role is in the pod namespace');
    for (const binding of objs.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding')) {
      assert.deepEqual(binding.subjects, [
        { kind: 'ServiceAccount', name: pod.serviceAccountName, namespace: d.metadata?.namespace },
      ]);
    }
  });
});
