/**
 * Upstream manifests work with only the image swapped. Each container of OCCM's DaemonSet, static
 * pod and Helm chart and of CAPO's Deployment (fixtures/, recreated from upstream) is started as a
 * kubelet would start it in our image — ENTRYPOINT or `command`, `args` or CMD, `$(VAR)` expanded
 * from its env — with the image's paths mapped back to the repository files the Dockerfile copies
 * there, each volume mount to a directory, and the in-cluster identity of its ServiceAccount
 * (deploy/ccm, deploy/capo applied; RBAC enforced by the Kubernetes emulator).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Container } from '@kubernetes/client-node';
import { Agent, fetch } from 'undici';
import { parse, parseAllDocuments } from 'yaml';
import { CAPO_LEASE_NAME } from '../../src/capo/cmd.ts';
import { certManagerCrds } from '../../src/capo/testing/cert-manager.ts';
import { TAINT_UNINITIALIZED } from '../../src/ccm/node-spec.ts';
import { startCcmEnv, type CcmEnv } from '../../src/ccm/testing/env.ts';
import { kinds, type KubeClient, type KubernetesObject } from '../../src/kube/index.ts';
import { testClient } from '../../src/kube/testing/env.ts';
import { kubeconfigText } from '../../src/sim/kube/kubeconfig.ts';
import type { RunningKubeSim } from '../../src/sim/kube/start.ts';
import { eventually } from '../../src/sim/openstack/testing/harness.ts';
import { imagePaths, ROOT, shipped } from './image.ts';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const wait = { timeoutMs: 30_000, intervalMs: 50 };

async function containers(file: string): Promise<{ kind: string; container: V1Container }[]> {
  return parseAllDocuments(await readFile(join(FIXTURES, file), 'utf8')).map((d) => {
    const o = d.toJS() as {
      kind: string;
      spec: { containers?: V1Container[]; template?: { spec: { containers: V1Container[] } } };
    };
    const pod = o.spec.template?.spec ?? o.spec;
    return { kind: o.kind, container: pod.containers![0]! };
  });
}

/** Kubernetes' `$(VAR)` expansion of command and args from the container's env (`$$` escapes). */
function expand(text: string, env: Record<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name?: string) =>
    m === '$$' ? '$' : name !== undefined && name in env ? env[name]! : m,
  );
}

interface Started {
  child: ChildProcess;
  argv: string[];
  stderr(): string;
  exited: Promise<number | null>;
}

/** Starts `container` as a kubelet would in our image; `mounts` maps a mountPath to a directory. */
async function start(
  container: V1Container,
  mounts: Record<string, string>,
  env: Record<string, string>,
): Promise<Started> {
  const image = await shipped();
  const paths = await imagePaths();
  const containerEnv = Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value ?? '']));
  const argv = [
    ...(container.command ?? image.entrypoint),
    ...(container.args ?? (container.command ? [] : image.cmd)),
  ]
    .map((a) => expand(a, containerEnv))
    .map((a) => paths.get(a) ?? a)
    .map((a) => Object.entries(mounts).reduce((s, [from, to]) => s.replaceAll(from, to), a));
  const child = spawn(argv[0]!, argv.slice(1), {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      // The image's node is Node 24; so is the one running this test.
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      SHIFTSTACK_HOME: ROOT,
      ...env,
      ...containerEnv,
    },
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, argv, stderr: () => stderr, exited };
}

async function stop(p: Started): Promise<number | null> {
  if (p.child.exitCode === null) p.child.kill('SIGTERM');
  return p.exited;
}

/** A kubeconfig holding a ServiceAccount token, as a pod of that ServiceAccount is in-cluster. */
async function serviceAccountKubeconfig(kube: RunningKubeSim, path: string, namespace: string, name: string) {
  const token = kube.emulator.auth.issueServiceAccountToken(namespace, name);
  await writeFile(
    path,
    kubeconfigText({ server: kube.url, token, namespace, ...(kube.caPem ? { caPem: kube.caPem } : {}) }),
  );
  return path;
}

/** Applies a deploy/ kustomization the way `kubectl apply -k` sends it (deploy.test.ts runs kubectl itself). */
async function applyKustomization(api: KubeClient, dir: string, extra: string[] = []): Promise<void> {
  const k = parse(await readFile(join(dir, 'kustomization.yaml'), 'utf8')) as {
    resources: string[];
    labels?: { pairs: Record<string, string> }[];
  };
  for (const file of [...extra, ...k.resources]) {
    if ((await stat(join(dir, file))).isDirectory()) {
      await applyKustomization(api, join(dir, file));
      continue;
    }
    for (const doc of parseAllDocuments(await readFile(join(dir, file), 'utf8'))) {
      const obj = doc.toJS() as KubernetesObject;
      await api.create(await api.discover(obj.apiVersion!, obj.kind!), obj);
    }
  }
}

const insecure = new Agent({ connect: { rejectUnauthorized: false } });
after(() => insecure.close());

describe("OCCM's manifests, only the image swapped", () => {
  let env: CcmEnv;
  let etc: string;
  let kubeconfig: string;
  const running: Started[] = [];

  before(async () => {
    env = await startCcmEnv();
    await applyKustomization(env.api, join(ROOT, 'deploy', 'ccm'));
    kubeconfig = await serviceAccountKubeconfig(
      env.kube,
      join(env.dir, 'in-cluster'),
      'kube-system',
      'cloud-controller-manager',
    );
    etc = join(env.dir, 'etc-config');
    await mkdir(etc, { recursive: true });
  });
  after(async () => {
    for (const p of running) await stop(p);
    await env?.close();
  });

  it('the DaemonSet: /bin/openstack-cloud-controller-manager starts from the mounted cloud.conf and initializes a Node', async () => {
    const network = await env.os.network.networks.create({ name: 'occm-nodes' });
    await env.os.network.subnets.create({ network_id: network.id, cidr: '10.40.0.0/24', ip_version: 4 });
    const server = await env.os.compute.servers.create({
      name: 'worker-0',
      flavorRef: env.boot.flavorId,
      imageRef: env.boot.imageId,
      networks: [{ uuid: network.id }],
    });
    await env.os.compute.servers.waitForActive(server.id, { intervalMs: 20, timeoutMs: 10_000 });
    await env.createNode('worker-0');
    await writeFile(join(etc, 'cloud.conf'), await readFile(await env.cloudConf(), 'utf8'));

    const [ds] = await containers('occm.yaml');
    const occm = await start(
      ds!.container,
      { '/etc/config': etc },
      { KUBECONFIG: kubeconfig, HOME: env.dir },
    );
    running.push(occm);
    // The image's ENTRYPOINT ran the path from args: the repository's wrapper of `shiftstack ccm`.
    assert.deepEqual(occm.argv.slice(0, 2), [
      join(ROOT, 'image/bin/entrypoint'),
      join(ROOT, 'image/bin/openstack-cloud-controller-manager'),
    ]);
    assert.ok(
      occm.argv.includes(`--cloud-config=${etc}/cloud.conf`) &&
        occm.argv.includes('--cluster-name=kubernetes'),
    );
    try {
      const node = await eventually(
        async () => {
          const n = await env.api.get(kinds.Node, { name: 'worker-0' });
          return n.spec?.providerID && !(n.spec.taints ?? []).some((t) => t.key === TAINT_UNINITIALIZED)
            ? n
            : undefined;
        },
        { ...wait, what: 'worker-0 initialized' },
      );
      assert.equal(node!.spec?.providerID, `openstack:///${server.id}`);
      // Its secure port where upstream's is: HTTPS on 127.0.0.1:10258.
      const healthz = await eventually(
        () =>
          fetch('https://127.0.0.1:10258/healthz', { dispatcher: insecure }).then((r) => r.status === 200),
        { ...wait, what: 'the secure port' },
      );
      assert.ok(healthz);
      // It led on upstream's Lease, as its ServiceAccount, with no call refused.
      const lease = await env.api.get(kinds.Lease, {
        namespace: 'kube-system',
        name: 'cloud-controller-manager',
      });
      assert.ok(lease.spec?.holderIdentity);
      const refused = env.kube.emulator.auth.audit.filter((e) => !e.allowed);
      assert.deepEqual(
        refused.map((e) => `${e.user} ${e.verb} ${e.resource} ${e.name}`),
        [],
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- the CCM's log:\n${occm.stderr()}`, { cause: err });
    }
    assert.equal(await stop(occm), 0, occm.stderr());
  });

  it("the static pod's and the Helm chart's command lines are accepted too", async () => {
    const [, pod, chart] = await containers('occm.yaml');
    for (const { kind, container } of [pod!, chart!]) {
      // No cloud.conf mounted: every flag is read, and the run stops at the missing file, exit 2.
      const p = await start(
        container,
        { '/etc/config': join(env.dir, 'empty') },
        { KUBECONFIG: kubeconfig, HOME: env.dir },
      );
      const code = await p.exited;
      assert.equal(code, 2, `${kind}: ${p.stderr()}`);
      assert.match(p.stderr(), /cloud\.conf: the file does not exist/, kind);
      assert.doesNotMatch(p.stderr(), /unknown option|error: option/, kind);
    }
  });
});

describe("CAPO's manager, only the image swapped", () => {
  let env: CcmEnv;
  let api: KubeClient;
  let kubeconfig: string;
  let started: Started | undefined;

  before(async () => {
    env = await startCcmEnv();
    api = testClient(env.kube.kubeconfigPath);
    // A management cluster: cert-manager's and Cluster API's CRDs (the stand-ins), and deploy/capo.
    for (const crd of certManagerCrds()) await api.create(kinds.CustomResourceDefinition, crd);
    const crds = (await readdir(join(ROOT, 'deploy/capo/crds'))).filter((f) =>
      f.startsWith('cluster.x-k8s.io_'),
    );
    await applyKustomization(
      api,
      join(ROOT, 'deploy', 'capo'),
      crds.map((f) => `crds/${f}`),
    );
    kubeconfig = await serviceAccountKubeconfig(
      env.kube,
      join(env.dir, 'in-cluster'),
      'capo-system',
      'capo-manager',
    );
  });
  after(async () => {
    if (started) await stop(started);
    await api?.close();
    await env?.close();
  });

  it('`/manager --leader-elect --v=2 --diagnostics-address=:8443 --insecure-diagnostics=false` leads, probes on :9440, serves /metrics to authorized tokens on :8443', async () => {
    const [deployment] = await containers('capo.yaml');
    const capo = await start(deployment!.container, {}, { KUBECONFIG: kubeconfig, HOME: env.dir });
    started = capo;
    assert.equal(capo.argv[0], join(ROOT, 'image/bin/manager'));
    try {
      await eventually(
        async () => {
          const l = await api.get(kinds.Lease, { namespace: 'capo-system', name: CAPO_LEASE_NAME });
          return l.spec?.holderIdentity;
        },
        { ...wait, what: `Lease capo-system/${CAPO_LEASE_NAME}` },
      );
      // The kubelet probes the pod's IP, not loopback: :9440 is every address.
      const podIp =
        Object.values(networkInterfaces())
          .flat()
          .find((a) => a && !a.internal && a.family === 'IPv4')?.address ?? '127.0.0.1';
      await eventually(() => globalThis.fetch(`http://${podIp}:9440/readyz`).then((r) => r.status === 200), {
        ...wait,
        what: `readyz on ${podIp}:9440`,
      });
      const metrics = 'https://127.0.0.1:8443/metrics';
      assert.equal((await fetch(metrics, { dispatcher: insecure })).status, 401);
      const kube = env.kube.emulator;
      kube.create({
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'prometheus', namespace: 'default' },
      });
      const prometheus = kube.auth.issueServiceAccountToken('default', 'prometheus');
      const scrape = (token: string) =>
        fetch(metrics, { dispatcher: insecure, headers: { authorization: `Bearer ${token}` } });
      assert.equal((await scrape(prometheus)).status, 403);
      kube.create({
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'scraper', namespace: 'default' },
      });
      kube.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'scraper-capo-metrics' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'capo-metrics-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'scraper', namespace: 'default' }],
      });
      const scraped = await scrape(kube.auth.issueServiceAccountToken('default', 'scraper'));
      assert.equal(scraped.status, 200);
      assert.match(await scraped.text(), /controller_runtime_max_concurrent_reconciles/);
      const refused = kube.auth.audit.filter((e) => !e.allowed && e.user.endsWith(':capo-manager'));
      assert.deepEqual(
        refused.map((e) => `${e.verb} ${e.apiGroup}/${e.resource} ${e.namespace}/${e.name}`),
        [],
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- capo's log:\n${capo.stderr()}`, { cause: err });
    }
    assert.equal(await stop(capo), 0, capo.stderr());
    started = undefined;
  });
});
