/**
 * deploy/ccm: applied by the real kubectl (`kubectl apply -k`) to the Kubernetes emulator, and a
 * DaemonSet that starts where a new cluster needs it (see also rbac.test.ts for the rules and
 * image.test.ts for the image's upstream paths).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1DaemonSet, V1Role } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import { buildProgram } from '../cli/main.ts';
import {
  defaultLeaderMigrationConfiguration,
  kinds,
  type KubeClient,
  type KubernetesObject,
} from '../kube/index.ts';
import { testClient } from '../kube/testing/env.ts';
import { startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import { CCM_DEFAULTS } from './cmd.ts';
import { TAINT_UNINITIALIZED } from './node-spec.ts';

const DEPLOY = join(import.meta.dirname, '..', '..', 'deploy', 'ccm');
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

function kubectl(
  args: string[],
  kubeconfig: string,
  home: string,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
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

  it('the kustomization lists every manifest, the ServiceAccount before what uses it', async () => {
    const k = parse(await readFile(join(DEPLOY, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    const own = (await readdir(DEPLOY)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    assert.deepEqual([...k.resources].sort(), own.sort());
    assert.ok(k.resources.indexOf('serviceaccount.yaml') < k.resources.indexOf('daemonset.yaml'));
  });

  it('`kubectl apply -k deploy/ccm` applies it', { skip: noKubectl }, async () => {
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
