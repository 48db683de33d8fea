import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1ClusterRole, V1Deployment, V1PolicyRule, V1Role } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import type { KubeClient, KubernetesObject } from '../kube/index.ts';
import { testClient } from '../kube/testing/env.ts';
import { startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import { buildProgram } from '../cli/main.ts';
import { capoKinds, INFRASTRUCTURE_GROUP } from './api/index.ts';
import { CAPO_LEASE_NAME } from './cmd.ts';

const DEPLOY = join(import.meta.dirname, '..', '..', 'deploy', 'capo');

interface Kustomization {
  resources: string[];
}

async function docs(file: string): Promise<(KubernetesObject & Record<string, unknown>)[]> {
  return parseAllDocuments(await readFile(join(DEPLOY, file), 'utf8')).map((d) => {
    assert.deepEqual(d.errors, [], file);
    return d.toJS() as KubernetesObject & Record<string, unknown>;
  });
}

async function all(): Promise<(KubernetesObject & Record<string, unknown>)[]> {
  const k = parse(await readFile(join(DEPLOY, 'kustomization.yaml'), 'utf8')) as Kustomization;
  return (await Promise.all(k.resources.map(docs))).flat();
}

function allows(rules: readonly V1PolicyRule[], group: string, resource: string, verb: string): boolean {
  return rules.some(
    (r) =>
      (r.apiGroups ?? []).some((g) => g === group || g === '*') &&
      (r.resources ?? []).some((x) => x === resource || x === '*') &&
      r.verbs.some((v) => v === verb || v === '*'),
  );
}

describe('deploy/capo manifests', () => {
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

  it("the kustomization lists every manifest and CAPO's CRDs, never the Cluster API stand-ins", async () => {
    const k = parse(await readFile(join(DEPLOY, 'kustomization.yaml'), 'utf8')) as Kustomization;
    const own = (await readdir(DEPLOY)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    const crds = (await readdir(join(DEPLOY, 'crds'))).filter((f) => f.endsWith('.yaml'));
    const infra = crds.filter((f) => f.startsWith(`${INFRASTRUCTURE_GROUP}_`));
    assert.equal(infra.length, 7);
    assert.deepEqual([...k.resources].sort(), [...own, ...infra.map((f) => `crds/${f}`)].sort());
    assert.ok(k.resources.every((r) => !r.includes('cluster.x-k8s.io_') || r.includes(INFRASTRUCTURE_GROUP)));
    // The namespace comes before what lives in it.
    assert.ok(k.resources.indexOf('namespace.yaml') < k.resources.indexOf('deployment.yaml'));
  });

  it('every resource is accepted by the API server, in the kustomization order', async () => {
    const kinds = new Set<string>();
    for (const obj of await all()) {
      const type = await api.discover(obj.apiVersion!, obj.kind!);
      const created = await api.create(type, obj);
      assert.ok(created.metadata?.uid, `${obj.kind} ${obj.metadata?.name}`);
      kinds.add(obj.kind!);
    }
    for (const k of [
      'CustomResourceDefinition',
      'Namespace',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Role',
      'RoleBinding',
      'Deployment',
    ]) {
      assert.ok(kinds.has(k), k);
    }
  });

  it('the RBAC grants what the controllers do, to the Deployment’s ServiceAccount', async () => {
    const objs = await all();
    const clusterRole = objs.find((o) => o.kind === 'ClusterRole') as V1ClusterRole;
    const role = objs.find((o) => o.kind === 'Role') as V1Role;
    const deployment = objs.find((o) => o.kind === 'Deployment') as V1Deployment;
    const rules = clusterRole.rules ?? [];
    const infra = [
      capoKinds.OpenStackCluster,
      capoKinds.OpenStackMachine,
      capoKinds.OpenStackServer,
      capoKinds.OpenStackMachineTemplate,
    ];
    for (const k of infra) {
      for (const verb of ['get', 'list', 'watch', 'create', 'patch', 'delete']) {
        assert.ok(allows(rules, INFRASTRUCTURE_GROUP, k.plural, verb), `${k.plural} ${verb}`);
      }
      assert.ok(allows(rules, INFRASTRUCTURE_GROUP, `${k.plural}/status`, 'patch'), `${k.plural}/status`);
    }
    for (const k of [capoKinds.OpenStackClusterIdentity, capoKinds.Cluster, capoKinds.Machine]) {
      const group = k.apiVersion.split('/')[0]!;
      for (const verb of ['get', 'list', 'watch']) assert.ok(allows(rules, group, k.plural, verb), k.plural);
    }
    for (const r of ['openstackmachines/finalizers', 'openstackclusters/finalizers']) {
      assert.ok(allows(rules, INFRASTRUCTURE_GROUP, r, 'update'), r);
    }
    for (const r of ['machines', 'clusters', 'machines/status', 'clusters/status']) {
      assert.ok(allows(rules, 'cluster.x-k8s.io', r, 'patch'), r);
    }
    for (const verb of ['get', 'list', 'watch']) {
      assert.ok(allows(rules, '', 'secrets', verb));
      assert.ok(allows(rules, '', 'namespaces', verb));
    }
    assert.ok(allows(rules, '', 'events', 'create') && allows(rules, 'events.k8s.io', 'events', 'patch'));
    // The diagnostics port's reviews; a role for whoever scrapes it.
    assert.ok(allows(rules, 'authentication.k8s.io', 'tokenreviews', 'create'));
    assert.ok(allows(rules, 'authorization.k8s.io', 'subjectaccessreviews', 'create'));
    const reader = objs.find(
      (o) => o.kind === 'ClusterRole' && o.metadata?.name === 'capo-metrics-reader',
    ) as V1ClusterRole;
    assert.deepEqual(reader.rules, [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    for (const verb of ['get', 'create', 'update']) {
      assert.ok(allows(role.rules ?? [], 'coordination.k8s.io', 'leases', verb), `leases ${verb}`);
    }
    const sa = deployment.spec?.template.spec?.serviceAccountName;
    const ns = deployment.metadata?.namespace;
    for (const binding of objs.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding')) {
      const subjects = binding.subjects as { kind: string; name: string; namespace: string }[];
      assert.deepEqual(subjects, [{ kind: 'ServiceAccount', name: sa, namespace: ns }]);
    }
    assert.equal(role.metadata?.namespace, ns, 'the Lease Role is in the pod namespace');
  });

  it('the Deployment runs `shiftstack capo --leader-elect` twice, with flags the command knows', async () => {
    const d = (await docs('deployment.yaml'))[0] as V1Deployment;
    assert.equal(d.spec?.replicas, 2);
    const c = d.spec.template.spec!.containers[0]!;
    assert.equal(c.image, 'shiftstack:latest');
    const args = c.args ?? [];
    assert.equal(args[0], 'capo');
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
      ['node', 'shiftstack', 'capo'],
    );
    const capo = program.commands.find((cmd) => cmd.name() === 'capo')!;
    const known = new Set(capo.options.map((o) => o.long));
    for (const arg of args.slice(1)) {
      const flag = arg.split('=')[0]!;
      assert.ok(known.has(flag), `${flag} is a flag of shiftstack capo`);
      assert.ok(
        !capo.options.find((o) => o.long === flag)!.hidden,
        `${flag} is supported, not only accepted`,
      );
    }
    // The Lease's namespace is the pod's; health on the port the probes use.
    const podNamespace = c.env?.find((e) => e.name === 'POD_NAMESPACE');
    assert.equal(podNamespace?.valueFrom?.fieldRef?.fieldPath, 'metadata.namespace');
    const health = args
      .find((a) => a.startsWith('--health-addr='))!
      .split(':')
      .pop();
    assert.equal(String(c.ports?.find((p) => p.name === 'healthz')?.containerPort), health);
    // Metrics on the diagnostics address, over HTTPS with authorization.
    const diagnostics = args
      .find((a) => a.startsWith('--diagnostics-address='))!
      .split(':')
      .pop();
    assert.equal(String(c.ports?.find((p) => p.name === 'metrics')?.containerPort), diagnostics);
    assert.ok(args.includes('--insecure-diagnostics=false'));
    assert.equal(c.livenessProbe?.httpGet?.path, '/healthz');
    assert.equal(c.readinessProbe?.httpGet?.path, '/readyz');
    assert.equal(CAPO_LEASE_NAME, 'controller-leader-election-capo');
  });
});
