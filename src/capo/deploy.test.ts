import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1ClusterRole, V1Deployment, V1PolicyRule, V1Role, V1Service } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import { kinds, type KubeClient, type KubernetesObject } from '../kube/index.ts';
import type { CustomResourceDefinition } from '../kube/crd/kind.ts';
import { DEFAULT_WEBHOOK_CERT_DIR } from '../kube/conversion/webhook.ts';
import { testClient } from '../kube/testing/env.ts';
import { startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import { buildProgram } from '../cli/main.ts';
import { capoKinds, crdFiles, INFRASTRUCTURE_GROUP } from './api/index.ts';
import { SERVING_CERT_SECRET } from './api/webhook.ts';
import { certManagerCrds } from './testing/cert-manager.ts';
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
    // cert-manager is a prerequisite of deploy/capo, as of CAPO.
    for (const crd of certManagerCrds()) await api.create(kinds.CustomResourceDefinition, crd);
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
      'Issuer',
      'Certificate',
      'Service',
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
    // The conversion webhook on the port the Service targets, cert-manager's Secret where
    // controller-runtime (and shiftstack capo) read tls.crt and tls.key by default.
    const webhookPort = args.find((a) => a.startsWith('--webhook-port='))!.split('=')[1];
    assert.equal(String(c.ports?.find((p) => p.name === 'webhook-server')?.containerPort), webhookPort);
    assert.ok(!args.some((a) => a.startsWith('--webhook-cert-dir')));
    const mount = c.volumeMounts?.find((m) => m.mountPath === DEFAULT_WEBHOOK_CERT_DIR);
    const volume = d.spec.template.spec!.volumes?.find((v) => v.name === mount?.name);
    assert.equal(volume?.secret?.secretName, SERVING_CERT_SECRET);
    assert.equal(c.livenessProbe?.httpGet?.path, '/healthz');
    assert.equal(c.readinessProbe?.httpGet?.path, '/readyz');
    assert.equal(CAPO_LEASE_NAME, 'controller-leader-election-capo');
  });

  it('the CRDs with two versions name the webhook Service, which reaches the pods, with the certificate for its name', async () => {
    const objs = await all();
    const service = objs.find((o) => o.kind === 'Service') as V1Service;
    const certificate = objs.find((o) => o.kind === 'Certificate') as unknown as KubernetesObject & {
      spec: { dnsNames: string[]; secretName: string; issuerRef: { name: string } };
    };
    const issuer = objs.find((o) => o.kind === 'Issuer')!;
    const d = (await docs('deployment.yaml'))[0] as V1Deployment;
    const c = d.spec!.template.spec!.containers[0]!;
    for (const f of crdFiles().filter((f) => f.text.includes('strategy: Webhook'))) {
      const crd = parse(f.text) as CustomResourceDefinition;
      assert.ok(crd.spec.versions.length > 1, f.name);
      assert.equal(crd.spec.versions.filter((v) => v.storage)[0]?.name, 'v1beta1', f.name);
      const conversion = crd.spec.conversion;
      assert.equal(conversion?.strategy, 'Webhook');
      if (conversion?.strategy !== 'Webhook') continue;
      assert.deepEqual(conversion.webhook.conversionReviewVersions, ['v1', 'v1beta1']);
      const svc = conversion.webhook.clientConfig.service!;
      assert.deepEqual(
        [svc.namespace, svc.name, svc.port, svc.path],
        [service.metadata!.namespace, service.metadata!.name, 443, '/convert'],
      );
      assert.equal(
        crd.metadata.annotations?.['cert-manager.io/inject-ca-from'],
        `${certificate.metadata!.namespace}/${certificate.metadata!.name}`,
      );
    }
    assert.equal(service.spec!.ports![0]!.port, 443);
    assert.equal(service.spec!.ports![0]!.targetPort, 'webhook-server');
    assert.ok(c.ports?.some((p) => p.name === 'webhook-server'));
    for (const [k, v] of Object.entries(service.spec!.selector!)) {
      assert.equal(d.spec!.template.metadata!.labels![k], v, k);
    }
    assert.ok(certificate.spec.dnsNames.includes('capo-webhook-service.capo-system.svc'));
    assert.equal(certificate.spec.secretName, SERVING_CERT_SECRET);
    assert.equal(certificate.spec.issuerRef.name, issuer.metadata!.name);
  });
});
