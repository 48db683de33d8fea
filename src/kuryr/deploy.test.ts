/**
 * deploy/kuryr: the kustomization lists every manifest and Kuryr's CRDs, the API server accepts each
 * in order, the ConfigMap's kuryr.conf reads with no warning and asks for exactly the cloud's IDs,
 * and the Deployment and DaemonSet run commands and flags shiftstack has, on kuryr.conf's ports.
 * That the RBAC lets the controller do its job is src/cli/commands/kuryr.test.ts (the controller
 * runs as this ServiceAccount, every call authorized by the emulator).
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Command } from 'commander';
import type { V1ConfigMap, V1DaemonSet, V1Deployment } from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import { KURYR_SUBCOMMANDS } from '../cli/commands/kuryr.ts';
import type { KubeClient, KubernetesObject } from '../kube/index.ts';
import { testClient } from '../kube/testing/env.ts';
import { ConfigError } from '../lib/config.ts';
import { startTestKube, type TestKube } from '../sim/kube/testing/harness.ts';
import { KURYR_HEALTH_PATHS } from './cmd.ts';
import { parseOsloIni } from './config/ini.ts';
import { readKuryrConf } from './config/kuryr-conf.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const DEPLOY = join(ROOT, 'deploy', 'kuryr');

type Obj = KubernetesObject & Record<string, unknown>;

async function docs(file: string): Promise<Obj[]> {
  return parseAllDocuments(await readFile(join(DEPLOY, file), 'utf8')).map((d) => {
    assert.deepEqual(d.errors, [], file);
    return d.toJS() as Obj;
  });
}

async function resources(): Promise<string[]> {
  return (parse(await readFile(join(DEPLOY, 'kustomization.yaml'), 'utf8')) as { resources: string[] })
    .resources;
}

async function all(): Promise<Obj[]> {
  return (await Promise.all((await resources()).map(docs))).flat();
}

/** kuryr.conf of the ConfigMap. */
export async function deployedKuryrConf(): Promise<string> {
  const cm = (await all()).find((o) => o.kind === 'ConfigMap') as V1ConfigMap;
  return cm.data!['kuryr.conf']!;
}

/** `shiftstack kuryr <name>` as the CLI configures it. */
async function kuryrSubcommand(name: string): Promise<Command> {
  const def = KURYR_SUBCOMMANDS.find((s) => s.name === name)!;
  const cmd = new Command(name);
  (await def.load())(cmd, {
    out: () => {},
    err: () => {},
    log: () => {
      throw new Error('unused');
    },
    signal: new AbortController().signal,
  });
  return cmd;
}

describe('deploy/kuryr manifests', () => {
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

  it("the kustomization lists every manifest and Kuryr's CRDs, the namespace first", async () => {
    const listed = await resources();
    const own = (await readdir(DEPLOY)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml');
    const crds = (await readdir(join(DEPLOY, 'crds'))).filter((f) => f.endsWith('.yaml'));
    assert.deepEqual([...listed].sort(), [...own, ...crds.map((f) => `crds/${f}`)].sort());
    assert.equal(crds.length, 4);
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
      'ConfigMap',
      'Deployment',
      'DaemonSet',
    ]) {
      assert.ok(kinds.has(k), k);
    }
  });

  it("the ConfigMap's kuryr.conf reads without a warning and asks for exactly the cloud's IDs", async () => {
    try {
      readKuryrConf(parseOsloIni(await deployedKuryrConf(), 'kuryr.conf'));
      assert.fail('no problem');
    } catch (err) {
      assert.ok(ConfigError.is(err), String(err));
      assert.deepEqual(err.warnings, []);
      assert.deepEqual(err.problems.map((p) => p.key).sort(), [
        '[namespace_subnet] pod_router',
        '[namespace_subnet] pod_subnet_pool',
        '[neutron_defaults] service_subnet',
      ]);
    }
  });

  it('the controller: kuryr-k8s-controller with flags it has, on the Lease, probed on [health_server] port', async () => {
    const objs = await all();
    const d = objs.find((o) => o.kind === 'Deployment') as V1Deployment;
    const pod = d.spec!.template.spec!;
    const c = pod.containers[0]!;
    assert.deepEqual(c.command, ['/usr/local/bin/kuryr-k8s-controller']);
    const wrapper = await readFile(join(ROOT, 'image/bin/kuryr-controller'), 'utf8');
    assert.match(wrapper, /shiftstack\.js" kuryr controller "\$@"/);
    const controller = await kuryrSubcommand('controller');
    for (const arg of c.args ?? []) {
      const flag = arg.split('=')[0]!;
      const option = controller.options.find((o) => o.long === flag);
      assert.ok(option && !option.hidden, `${flag} is a supported flag of shiftstack kuryr controller`);
    }
    const { options } = readKuryrConf(
      parseOsloIni(
        `${await deployedKuryrConf()}\n[namespace_subnet]\npod_subnet_pool = p\npod_router = r\n[neutron_defaults]\nservice_subnet = s\n`,
        'kuryr.conf',
      ),
    );
    assert.equal(options.kubernetes.controllerHa, true);
    assert.ok((d.spec?.replicas ?? 1) > 1, 'HA: more than one replica');
    assert.equal(c.ports?.find((p) => p.name === 'health')?.containerPort, options.healthServer.port);
    assert.equal(
      c.ports?.find((p) => p.name === 'metrics')?.containerPort,
      options.prometheusExporter.controllerExporterPort,
    );
    assert.equal(c.livenessProbe?.httpGet?.path, KURYR_HEALTH_PATHS.healthz[0]);
    assert.equal(c.readinessProbe?.httpGet?.path, KURYR_HEALTH_PATHS.readyz[0]);
    assert.equal(
      c.env?.find((e) => e.name === 'POD_NAMESPACE')?.valueFrom?.fieldRef?.fieldPath,
      'metadata.namespace',
    );
    assert.equal(pod.securityContext?.runAsNonRoot, true);
    assert.equal(c.securityContext?.readOnlyRootFilesystem, true);
    assert.deepEqual(c.securityContext?.capabilities?.drop, ['ALL']);
    assert.equal(pod.serviceAccountName, 'kuryr-controller');
    const role = objs.find((o) => o.kind === 'Role') as { metadata: { namespace: string } };
    assert.equal(role.metadata.namespace, d.metadata?.namespace, 'the Lease Role is in the pod namespace');
  });

  it('the daemon: one per node on the host network, privileged, with the CNI bin and conf dirs and kuryr.conf', async () => {
    const ds = (await all()).find((o) => o.kind === 'DaemonSet') as V1DaemonSet;
    const pod = ds.spec!.template.spec!;
    assert.equal(pod.hostNetwork, true);
    const c = pod.containers[0]!;
    assert.equal(c.securityContext?.privileged, true);
    assert.deepEqual(c.args?.slice(0, 2), ['kuryr', 'daemon']);
    assert.ok(c.args?.includes('--config-file=/etc/kuryr/kuryr.conf'));
    // The daemon installs the plugin, which enters the daemon's mount namespace by its host pid.
    assert.ok(c.args?.includes('--cni-bin-dir=/opt/cni/bin'));
    assert.ok(c.args?.includes('--cni-conf-dir=/etc/cni/net.d'));
    assert.equal(pod.hostPID, true);
    const mounts = new Map(c.volumeMounts?.map((m) => [m.mountPath, m.name]));
    const volumes = new Map(pod.volumes?.map((v) => [v.name, v]));
    assert.equal(volumes.get(mounts.get('/opt/cni/bin')!)?.hostPath?.path, '/opt/cni/bin');
    assert.equal(volumes.get(mounts.get('/etc/cni/net.d')!)?.hostPath?.path, '/etc/cni/net.d');
    assert.equal(volumes.get(mounts.get('/etc/kuryr')!)?.configMap?.name, 'kuryr-config');
    assert.equal(pod.serviceAccountName, 'kuryr-daemon');
  });
});
