/**
 * `shiftstack kuryr` as a user runs it: the subcommands, bad input refused before anything starts
 * (exit 2, every problem with its fix), and `kuryr controller` on both emulators with deploy/kuryr's
 * kuryr.conf (plus a second --config-file with the cloud's IDs and `[neutron]` credentials as
 * OpenShift's operator renders them), as deploy/kuryr's ServiceAccount under the RBAC the
 * Kubernetes emulator enforces: it leads on the Lease kuryr-controller, answers upstream's probe
 * paths and its exporter port, runs the controllers of its handlers with nothing refused, and on
 * SIGTERM exits 0 handing the Lease over.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { isAlreadyExists, kinds, type KubernetesObject } from '../../kube/index.ts';
import { freePort } from '../../kube/testing/env.ts';
import { KURYR_LEASE_NAME } from '../../kuryr/cmd.ts';
import { CONTROLLER_LOADERS, controllersFor } from '../../kuryr/registry.ts';
import { HANDLERS, type Handler } from '../../kuryr/options.ts';
import { startKuryrEnv, type KuryrEnv } from '../../kuryr/testing/env.ts';
import { kubeconfigText } from '../../sim/kube/kubeconfig.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { main } from '../main.ts';
import { runCli } from './testing/spawn.ts';

const ROOT = join(import.meta.dirname, '../../..');
const bin = join(ROOT, 'bin/shiftstack.js');
const DEPLOY = join(ROOT, 'deploy/kuryr');
const NAMESPACE = 'openshift-kuryr';
const SA = 'kuryr-controller';
const WAIT = { timeoutMs: 60_000, intervalMs: 100 };

async function run(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['node', 'shiftstack', '--log-level', 'silent', ...args], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    signal: new AbortController().signal,
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The handlers whose controllers this build holds (each area's land in src/kuryr/registry.ts). */
function builtHandlers(): Handler[] {
  return HANDLERS.filter((h) => controllersFor([h]).every((c) => CONTROLLER_LOADERS[c]));
}

describe('shiftstack kuryr: commands and flags', () => {
  it('names its subcommands; controller --help lists oslo’s flags and the Lease', async () => {
    const top = await run('kuryr', '--help');
    assert.equal(top.code, 0);
    for (const sub of ['controller', 'daemon', 'cni', 'gc'])
      assert.match(top.out, new RegExp(`^  ${sub} `, 'm'));
    const { code, out } = await run('kuryr', 'controller', '--help');
    assert.equal(code, 0);
    const help = out.replace(/\s+/g, ' ');
    assert.match(help, /--config-file <file>/);
    assert.match(help, /--config-dir <dir>/);
    assert.match(help, /--kubeconfig <file>/);
    assert.match(help, /Lease kuryr-controller/);
  });

  it('checks every input before it starts: all problems in one report with the fix, exit 2', async () => {
    const none = await runCli(['kuryr', 'controller', '--kubeconfig=/nonexistent', '--debug']);
    assert.equal(none.code, 2, none.err);
    assert.match(none.err, /^shiftstack kuryr controller: not started; fix these inputs:\n/);
    assert.match(none.err, /no kuryr\.conf given\. Fix: pass --config-file \/etc\/kuryr\/kuryr\.conf/);
    assert.match(none.err, /\/nonexistent/);
    assert.match(none.err, /warning: --debug is not supported by shiftstack kuryr controller/);

    const bad = await runCli([
      'kuryr',
      'controller',
      '--config-file=/no/such/kuryr.conf',
      `--config-file=${join(DEPLOY, 'kustomization.yaml')}`,
      '--config-dri=/etc/kuryr',
    ]);
    assert.equal(bad.code, 2, bad.err);
    assert.doesNotMatch(bad.err, /^\s+at /m, 'a stack trace');
    assert.match(bad.err, /--config-dri: unknown flag \(did you mean --config-dir\?\)/);
    assert.match(bad.err, /\/no\/such\/kuryr\.conf: no such file\. Fix: pass the path of kuryr\.conf/);
    assert.match(bad.err, /kustomization\.yaml:\d+: .* comes before any section header/);
  });
});

describe('shiftstack kuryr controller: a run on the emulators as the ServiceAccount of deploy/kuryr', () => {
  let env: KuryrEnv;
  let kubeconfig: string;
  before(async () => {
    env = await startKuryrEnv({ nodes: 1 });
    // deploy/kuryr's namespace, ServiceAccounts and RBAC, as `kubectl apply -k` sends them (the
    // CRDs are the bed's; the workloads and the ConfigMap are what this test runs by hand).
    const k = parse(await readFile(join(DEPLOY, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    for (const file of k.resources.filter((f) => !f.startsWith('crds/'))) {
      for (const doc of parseAllDocuments(await readFile(join(DEPLOY, file), 'utf8'))) {
        const obj = doc.toJS() as KubernetesObject;
        if (['Deployment', 'DaemonSet', 'ConfigMap'].includes(obj.kind!)) continue;
        try {
          await env.api.create(await env.api.discover(obj.apiVersion!, obj.kind!), obj);
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
        }
      }
    }
    const token = env.kube.emulator.auth.issueServiceAccountToken(NAMESPACE, SA);
    kubeconfig = join(env.dir, 'kuryr-sa.kubeconfig');
    await writeFile(
      kubeconfig,
      kubeconfigText({ server: env.kube.url, token, ...(env.kube.caPem ? { caPem: env.kube.caPem } : {}) }),
    );
  });
  after(async () => {
    await env?.close();
  });

  it("with deploy/kuryr's kuryr.conf: leads, probes and metrics on its ports, its handlers' controllers run, nothing refused, SIGTERM → 0 and the Lease released", async () => {
    const configMap = parseAllDocuments(await readFile(join(DEPLOY, 'config.yaml'), 'utf8'))[0]!.toJS() as {
      data: Record<string, string>;
    };
    const deployed = join(env.dir, 'kuryr.conf');
    await writeFile(deployed, configMap.data['kuryr.conf']!);
    const health = await freePort();
    const metrics = await freePort();
    const demo = env.target.demo;
    const handlers = builtHandlers();
    // The site's part, as a second --config-file: the cloud's IDs, the handlers this build holds
    // (with the default drivers where an area's driver has not landed), ports free on this machine,
    // and [neutron] as OpenShift's network operator renders it.
    const site = join(env.dir, 'site.conf');
    await writeFile(
      site,
      [
        '[kubernetes]',
        `enabled_handlers = ${handlers.join(',')}`,
        'pod_subnets_driver = default',
        'pod_security_groups_driver = default',
        '[neutron_defaults]',
        `pod_subnet = ${env.net.pods.subnetId}`,
        `pod_security_groups = ${env.net.podSecurityGroupId}`,
        `service_subnet = ${env.net.services.subnetId}`,
        'resource_tags = kuryr-cli-test',
        '[namespace_subnet]',
        `pod_router = ${env.net.routerId}`,
        'pod_subnet_pool = unused',
        '[health_server]',
        `port = ${health}`,
        '[prometheus_exporter]',
        `controller_exporter_port = ${metrics}`,
        '[neutron]',
        'auth_type = password',
        `auth_url = ${demo.authUrl}`,
        `username = ${demo.username}`,
        `password = ${demo.password!.replace(/\$/g, '$$$$')}`,
        `project_name = ${demo.projectName}`,
        `user_domain_name = ${demo.userDomainName ?? 'Default'}`,
        `project_domain_name = ${demo.projectDomainName ?? 'Default'}`,
        'token = ""',
        `insecure = ${demo.tls.insecure}`,
        ...(demo.tls.caFile ? [`cafile = ${demo.tls.caFile}`] : []),
        '',
      ].join('\n'),
    );
    const child = spawn(
      process.execPath,
      [
        bin,
        '--log-format',
        'json',
        'kuryr',
        'controller',
        `--config-file=${deployed}`,
        `--config-file=${site}`,
        `--kubeconfig=${kubeconfig}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, POD_NAMESPACE: NAMESPACE } },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await eventually(
        async () => {
          const l = await env.api
            .get(kinds.Lease, { namespace: NAMESPACE, name: KURYR_LEASE_NAME })
            .catch(() => undefined);
          return l?.spec?.holderIdentity ? l : undefined;
        },
        { ...WAIT, what: `Lease ${NAMESPACE}/${KURYR_LEASE_NAME} held` },
      );
      await eventually(async () => (await fetch(`http://127.0.0.1:${health}/ready`)).status === 200, {
        ...WAIT,
        what: '/ready',
      });
      assert.equal((await fetch(`http://127.0.0.1:${health}/alive`)).status, 200);
      const scraped = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
      for (const c of controllersFor(handlers)) {
        assert.match(
          scraped,
          new RegExp(`controller_runtime_max_concurrent_reconciles\\{controller="${c}"\\}`),
        );
      }
      const user = `system:serviceaccount:${NAMESPACE}:${SA}`;
      const refused = env.kube.emulator.auth.audit.filter((e) => !e.allowed && e.user === user);
      assert.deepEqual(
        refused.map(
          (e) =>
            `${e.verb} ${e.apiGroup || 'core'}/${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.namespace ?? ''}`,
        ),
        [],
      );
      // The operator's in-cluster [kubernetes] settings are not warned about; what the site file
      // leaves unused is.
      const warned = stderr.split('\n').filter((l) => l.includes('"level":"warn"'));
      assert.deepEqual(warned, [], warned.join('\n'));
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- kuryr controller's log:\n${stderr}`, { cause: err });
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, stderr);
    const released = await env.api.get(kinds.Lease, { namespace: NAMESPACE, name: KURYR_LEASE_NAME });
    assert.ok(!released.spec?.holderIdentity, JSON.stringify(released.spec));
  });
});
