/**
 * deploy/ccm: applied by the real kubectl (`kubectl apply -k`) to the Kubernetes emulator, and a
 * DaemonSet that starts where a new cluster needs it; deploy/ccm/deployment, the same pod as a
 * Deployment (see also rbac.test.ts for the rules, image.test.ts for the image's upstream paths and
 * src/demo/workloads/daemonset.test.ts for the DaemonSet run).
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1DaemonSet, V1Deployment, V1Role } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { buildProgram } from '../cli/main.ts';
import {
  defaultLeaderMigrationConfiguration,
  kinds,
  type KubeClient,
  type KubernetesObject,
} from '../kube/index.ts';
import { testClient } from '../kube/testing/env.ts';
import { kubectl, noKubectl } from '../kube/testing/kubectl.ts';
import { kustomizationObjects } from '../kube/testing/kustomization.ts';
import { startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import { CCM_DEFAULTS } from './cmd.ts';
import { TAINT_UNINITIALIZED } from './node-spec.ts';

const DEPLOY = join(import.meta.dirname, '..', '..', 'deploy', 'ccm');
const noKubectlHere = noKubectl();

function all(dir = DEPLOY): Promise<(KubernetesObject & Record<string, unknown>)[]> {
  return kustomizationObjects(dir);
}

describe('deploy/ccm manifests', () => {
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

  it('each kustomization lists every manifest of its folder, the base (ServiceAccount) before the workload', async () => {
    for (const dir of [DEPLOY, join(DEPLOY, 'base'), join(DEPLOY, 'deployment')]) {
      const k = parse(await readFile(join(dir, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
      const own = (await readdir(dir)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
      assert.deepEqual(k.resources.filter((r) => r.endsWith('.yaml')).sort(), own.sort(), dir);
    }
    for (const dir of [DEPLOY, join(DEPLOY, 'deployment')]) {
      const kindsInOrder = (await all(dir)).map((o) => o.kind);
      assert.equal(kindsInOrder[0], 'ServiceAccount');
      assert.equal(kindsInOrder.filter((k) => k === 'DaemonSet' || k === 'Deployment').length, 1, dir);
    }
  });

  it('the Deployment runs the DaemonSet’s pod, two replicas kept on two control-plane nodes', async () => {
    const ds = (await all()).find((o) => o.kind === 'DaemonSet') as V1DaemonSet;
    const d = (await all(join(DEPLOY, 'deployment'))).find((o) => o.kind === 'Deployment') as V1Deployment;
    assert.equal(d.metadata?.name, ds.metadata?.name);
    assert.equal(d.spec?.replicas, 2);
    assert.equal(d.spec?.strategy?.rollingUpdate?.maxSurge, 0);
    const { affinity, ...pod } = d.spec.template.spec!;
    assert.deepEqual(pod, ds.spec!.template.spec, 'the same pod spec but for its anti-affinity');
    assert.deepEqual(d.spec?.template.metadata, ds.spec?.template.metadata);
    const anti = affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.[0];
    assert.equal(anti?.topologyKey, 'kubernetes.io/hostname');
    assert.deepEqual(anti?.labelSelector?.matchLabels, d.spec?.selector.matchLabels);
  });

  it('`kubectl apply -k deploy/ccm` applies it', { skip: noKubectlHere }, async () => {
    const applied = await kubectl(['apply', '-k', DEPLOY], kube.kubeconfigPath, kube.dir);
    assert.equal(applied.code, 0, applied.err);
    for (const line of [
      'serviceaccount/cloud-controller-manager created',
      'clusterrole.rbac.authorization.k8s.io/system:cloud-controller-manager created',
      'clusterrolebinding.rbac.authorization.k8s.io/system:cloud-controller-manager created',
      'role.rbac.authorization.k8s.io/system:cloud-controller-manager created',
      'secret/cloud-config created',
      'daemonset.apps/shiftstack-ccm created',
    ]) {
      assert.ok(applied.out.includes(line), `${line}\n${applied.out}`);
    }
    const ds = await api.get(kinds.DaemonSet, { namespace: 'kube-system', name: 'shiftstack-ccm' });
    assert.equal(ds.spec?.template.spec?.serviceAccountName, 'cloud-controller-manager');
    // Applying again changes nothing.
    const again = await kubectl(['apply', '-k', DEPLOY], kube.kubeconfigPath, kube.dir);
    assert.equal(again.code, 0, again.err);
    assert.match(again.out, /daemonset.apps\/shiftstack-ccm unchanged/);
  });

  it(
    '`kubectl apply -k deploy/ccm/deployment` applies it beside (the base unchanged)',
    { skip: noKubectlHere },
    async () => {
      const applied = await kubectl(
        ['apply', '-k', join(DEPLOY, 'deployment')],
        kube.kubeconfigPath,
        kube.dir,
      );
      assert.equal(applied.code, 0, applied.err);
      assert.match(applied.out, /deployment.apps\/shiftstack-ccm created/);
      assert.doesNotMatch(applied.out, /daemonset/);
      assert.match(applied.out, /serviceaccount\/cloud-controller-manager unchanged/);
    },
  );

  it('the DaemonSet starts on a new cluster: control plane, host network, the taints of uninitialized and not-ready Nodes', async () => {
    const ds = (await all()).find((o) => o.kind === 'DaemonSet') as V1DaemonSet;
    const pod = ds.spec!.template.spec!;
    assert.equal(pod.hostNetwork, true);
    assert.equal(pod.priorityClassName, 'system-cluster-critical');
    assert.deepEqual(pod.nodeSelector, { 'node-role.kubernetes.io/control-plane': '' });
    const tolerates = (key: string, effect?: string) =>
      (pod.tolerations ?? []).some(
        (t) => t.key === key && (t.effect === undefined || effect === undefined || t.effect === effect),
      );
    assert.ok(tolerates(TAINT_UNINITIALIZED, 'NoSchedule'));
    assert.ok(tolerates('node-role.kubernetes.io/control-plane', 'NoSchedule'));
    assert.ok(tolerates('node.kubernetes.io/not-ready', 'NoSchedule'));
    assert.ok((pod.tolerations ?? []).some((t) => t.key === 'CriticalAddonsOnly' && t.operator === 'Exists'));
  });

  it('the DaemonSet is hardened: non-root, no privilege escalation, read-only root, RuntimeDefault seccomp, no capabilities', async () => {
    const ds = (await all()).find((o) => o.kind === 'DaemonSet') as V1DaemonSet;
    const pod = ds.spec!.template.spec!;
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    assert.ok((pod.securityContext?.runAsUser ?? 0) > 0);
    assert.equal(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault');
    for (const c of pod.containers) {
      assert.equal(c.securityContext?.allowPrivilegeEscalation, false, c.name);
      assert.equal(c.securityContext?.readOnlyRootFilesystem, true, c.name);
      assert.deepEqual(c.securityContext?.capabilities?.drop, ['ALL'], c.name);
    }
  });

  it('runs `shiftstack ccm` with flags it supports; probes, Lease and Secret agree with the flags and the Role', async () => {
    const objs = await all();
    const ds = objs.find((o) => o.kind === 'DaemonSet') as V1DaemonSet;
    const c = ds.spec!.template.spec!.containers[0]!;
    assert.equal(c.image, 'shiftstack:latest');
    const args = c.args ?? [];
    assert.equal(args[0], 'ccm');
    const program = await buildProgram(
      {
        out: () => {},
        err: () => {},
        log: () => {
          throw new Error('unused');
        },
        signal: new AbortController().signal,
      },
      ['node', 'shiftstack', 'ccm'],
    );
    const ccm = program.commands.find((cmd) => cmd.name() === 'ccm')!;
    const flag = (name: string) => args.find((a) => a.startsWith(`${name}=`))?.split('=')[1];
    for (const arg of args.slice(1)) {
      const option = ccm.options.find((o) => o.long === arg.split('=')[0]);
      assert.ok(option && !option.hidden, `${arg} is a supported flag of shiftstack ccm`);
    }
    assert.equal(flag('--leader-elect'), 'true');
    // The probes reach the secure port where it listens, over HTTPS, without a token.
    const port = Number(flag('--secure-port'));
    for (const probe of [c.livenessProbe, c.readinessProbe]) {
      assert.equal(probe?.httpGet?.scheme, 'HTTPS');
      assert.equal(probe?.httpGet?.port, port);
      assert.equal(probe?.httpGet?.host, flag('--bind-address'));
      assert.ok(CCM_DEFAULTS.authorizationAlwaysAllowPaths!.includes(probe.httpGet.path!));
    }
    // The Role names the Lease, the migration Lease of --enable-leader-migration, and the Secret the pod uses.
    const role = objs.find((o) => o.kind === 'Role') as V1Role;
    const names = (resource: string) =>
      (role.rules ?? []).filter((r) => r.resources?.includes(resource)).flatMap((r) => r.resourceNames ?? []);
    assert.equal(role.metadata?.namespace, CCM_DEFAULTS.leaseNamespace);
    assert.deepEqual(names('leases'), [
      CCM_DEFAULTS.leaseName,
      defaultLeaderMigrationConfiguration().leaderName,
    ]);
    const secretVolume = ds.spec!.template.spec!.volumes!.find((v) => v.secret)!.secret!.secretName!;
    assert.deepEqual(names('secrets'), [secretVolume]);
    // Every binding names the pod's ServiceAccount.
    for (const b of objs.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding')) {
      assert.deepEqual(b.subjects, [
        {
          kind: 'ServiceAccount',
          name: ds.spec!.template.spec!.serviceAccountName,
          namespace: 'kube-system',
        },
      ]);
    }
  });
});
