/**
 * `shiftstack mapo` as a user runs it: MAPO's flags and defaults, bad input refused before
 * anything starts (exit 2, with the fix), and a run on both emulators with the flags the
 * machine-api-operator passes, as the ServiceAccount of deploy/mapo whose RBAC the Kubernetes
 * emulator enforces: it leads on MAPO's Lease, annotates a MachineSet with its flavor, takes a
 * Machine to Provisioned through capo's OpenStackServer controller in the same process, has no call
 * refused, and stops on SIGTERM handing the Lease over; and with deploy/mapo's own arguments (the
 * machine-api-operator's controllers) plus the migration gate, a MachineSet scaled up and down with a
 * Node drained and a refused switch, again with nothing refused by RBAC.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { isAlreadyExists, kinds, type KubernetesObject } from '../../kube/index.ts';
import { freePort } from '../../kube/testing/env.ts';
import { Annotations, Labels, MachineConditions, mapoKinds } from '../../mapo/api/index.ts';
import { getMachineCondition } from '../../mapo/conditions.ts';
import { MAPO_LEASE_NAME } from '../../mapo/cmd.ts';
import { MAPI_NAMESPACE, startMapoEnv, type MapoEnv } from '../../mapo/testing/env.ts';
import { kubeconfigText } from '../../sim/kube/kubeconfig.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { main } from '../main.ts';
import { VERSION } from '../version.ts';
import { envWithoutCluster, runCli } from './testing/spawn.ts';

const ROOT = join(import.meta.dirname, '../../..');
const bin = join(ROOT, 'bin/shiftstack.js');
const DEPLOY = join(ROOT, 'deploy/mapo');
const SA = 'machine-api-provider-openstack';
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

describe('shiftstack mapo: flags', () => {
  it("--help lists MAPO's flags with their defaults, and ours", async () => {
    const { code, out } = await run('mapo', '--help');
    assert.equal(code, 0);
    const help = out.replace(/\s+/g, ' ');
    assert.match(help, /--namespace <namespace>/);
    assert.match(help, /--leader-elect \[bool\] .*\(default: false\)/);
    assert.match(help, /--leader-elect-lease-duration <duration> .*\(default: "120s"\)/);
    assert.match(help, /--leader-elect-renew-deadline <duration> .*\(default: "110s"\)/);
    assert.match(help, /--leader-elect-retry-period <duration> .*\(default: "20s"\)/);
    assert.match(help, /--leader-elect-resource-namespace <namespace>/);
    assert.match(help, /--max-concurrent-reconciles <n> .*\(default: 1\)/);
    assert.match(help, /--health-addr <address> .*\(default: ":9440"\)/);
    assert.match(help, /--metrics-bind-address <address> .*\(default: ":8081"\)/);
    assert.match(help, /--feature-gates <gates> .*MachineAPIMigration=true/);
    assert.match(help, /--openstackserver-controller \[bool\] .*\(default: true\)/);
    assert.match(help, /--act-as-machine-api-operator \[bool\] .*\(default: false\)/);
  });

  it('--version prints the version, as MAPO does', async () => {
    const { code, out } = await run('mapo', '--version');
    assert.equal(code, 0);
    assert.equal(out, VERSION);
  });

  it('checks every input before it starts: all problems in one report with the fix, exit 2', async () => {
    const none = await runCli(['mapo'], { env: envWithoutCluster(join(ROOT, '.no-such-home')) });
    assert.equal(none.code, 2, none.err);
    assert.match(none.err, /^shiftstack mapo: not started; fix these inputs:\n/);
    assert.match(none.err, /kubeconfig: none found: .* Fix: pass --kubeconfig <file> or set KUBECONFIG/);

    const many = await runCli([
      'mapo',
      '--kubeconfig=/nonexistent',
      '--feature-gates=MachineAPIMigration=yes',
      '--leader-elect-lease-duration=120',
      '--metrics-bind-address=localhost',
      '--max-concurrent-reconciles=0',
      '--act-as-machine-api-operater',
    ]);
    assert.equal(many.code, 2, many.err);
    assert.doesNotMatch(many.err, /^\s+at /m, 'a stack trace');
    assert.match(
      many.err,
      /--act-as-machine-api-operater: unknown flag \(did you mean --act-as-machine-api-operator\?\)/,
    );
    assert.match(many.err, /--feature-gates: "MachineAPIMigration=yes" is not Name=true or Name=false/);
    assert.match(
      many.err,
      /--leader-elect-lease-duration: "120" is not a duration\. Fix: write it as Go does/,
    );
    assert.match(many.err, /--metrics-bind-address: "localhost" is not an address; write host:port/);
    assert.match(many.err, /--max-concurrent-reconciles.*write a whole number ≥ 1/);
    assert.match(many.err, /\/nonexistent/);
  });
});

describe('shiftstack mapo: a run on the emulators as the ServiceAccount of deploy/mapo', () => {
  let env: MapoEnv;
  let kubeconfig: string;
  before(async () => {
    env = await startMapoEnv();
    // deploy/mapo's ServiceAccount and RBAC, as `kubectl apply -k` sends them (the CRDs and the
    // namespace are the bed's).
    const k = parse(await readFile(join(DEPLOY, 'kustomization.yaml'), 'utf8')) as { resources: string[] };
    for (const file of k.resources.filter((f) => !f.startsWith('crds/'))) {
      for (const doc of parseAllDocuments(await readFile(join(DEPLOY, file), 'utf8'))) {
        const obj = doc.toJS() as KubernetesObject;
        if (obj.kind === 'Deployment') continue;
        try {
          await env.api.create(await env.api.discover(obj.apiVersion!, obj.kind!), obj);
        } catch (err) {
          if (!isAlreadyExists(err)) throw err;
        }
      }
    }
    const token = env.kube.emulator.auth.issueServiceAccountToken(MAPI_NAMESPACE, SA);
    kubeconfig = join(env.dir, 'mapo-sa.kubeconfig');
    await writeFile(
      kubeconfig,
      kubeconfigText({ server: env.kube.url, token, ...(env.kube.caPem ? { caPem: env.kube.caPem } : {}) }),
    );
  });
  after(async () => {
    await env?.close();
  });

  it("with the machine-api-operator's arguments: leads, annotates, provisions a Machine, nothing refused, SIGTERM → 0 and the Lease released", async () => {
    const health = await freePort();
    const metrics = await freePort();
    const child = spawn(
      process.execPath,
      [
        bin,
        '--log-format',
        'json',
        'mapo',
        '--logtostderr=true',
        '--v=3',
        `--namespace=${MAPI_NAMESPACE}`,
        '--leader-elect=true',
        '--leader-elect-lease-duration=120s',
        `--health-addr=127.0.0.1:${health}`,
        `--metrics-bind-address=127.0.0.1:${metrics}`,
        '--max-concurrent-reconciles=4',
        `--kubeconfig=${kubeconfig}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, POD_NAMESPACE: MAPI_NAMESPACE } },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const name = 'ostest-7xk2p-worker-0-cli01';
    try {
      const lease = await eventually(
        async () => {
          const l = await env.api
            .get(kinds.Lease, { namespace: MAPI_NAMESPACE, name: MAPO_LEASE_NAME })
            .catch(() => undefined);
          return l?.spec?.holderIdentity ? l : undefined;
        },
        { ...WAIT, what: `Lease ${MAPI_NAMESPACE}/${MAPO_LEASE_NAME} held` },
      );
      assert.equal(lease!.spec?.leaseDurationSeconds, 120);

      await env.api.create(mapoKinds.MachineSet, env.machineSet);
      await env.api.create(mapoKinds.Machine, env.machineFrom(name));
      await eventually(
        async () => {
          const s = await env.api.get(mapoKinds.MachineSet, {
            namespace: MAPI_NAMESPACE,
            name: env.machineSet.metadata!.name!,
          });
          return s.metadata?.annotations?.[Annotations.VCPU] === '8';
        },
        { ...WAIT, what: 'the MachineSet annotated with its flavor' },
      );
      const m = await eventually(
        async () => {
          const x = await env.api.get(mapoKinds.Machine, { namespace: MAPI_NAMESPACE, name });
          return x.status?.phase === 'Provisioned' ? x : undefined;
        },
        { ...WAIT, what: `Machine ${name} Provisioned` },
      );
      assert.match(m!.spec?.providerID ?? '', /^openstack:\/\/\/[0-9a-f-]{36}$/);

      const ready = await fetch(`http://127.0.0.1:${health}/readyz`);
      assert.equal(ready.status, 200);
      const scraped = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text();
      for (const c of ['machine', 'machineset-flavor', 'openstackserver']) {
        assert.match(
          scraped,
          new RegExp(`controller_runtime_max_concurrent_reconciles\\{controller="${c}"\\} 4`),
        );
      }
      // Not registered without their flag and gate.
      assert.doesNotMatch(scraped, /controller="(machineset|nodelink|machine-drain|migration)"/);

      const user = `system:serviceaccount:${MAPI_NAMESPACE}:${SA}`;
      const refused = env.kube.emulator.auth.audit.filter((e) => !e.allowed && e.user === user);
      assert.deepEqual(
        refused.map(
          (e) =>
            `${e.verb} ${e.apiGroup || 'core'}/${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.namespace ?? ''}`,
        ),
        [],
      );
      const warned = stderr
        .split('\n')
        .filter((l) => l.includes('"level":"warn"') && l.includes('not supported yet'));
      assert.equal(warned.length, 1, warned.join('\n'));
      assert.match(warned[0]!, /--v=3 is not supported yet by shiftstack mapo/);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- mapo's log:\n${stderr}`, { cause: err });
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, stderr);
    const released = await env.api.get(kinds.Lease, { namespace: MAPI_NAMESPACE, name: MAPO_LEASE_NAME });
    assert.ok(!released.spec?.holderIdentity, JSON.stringify(released.spec));
  });

  it("with deploy/mapo's own arguments and the migration gate: the MachineSet, nodelink, drain and migration controllers work as its ServiceAccount, nothing refused", async () => {
    const deployment = parseAllDocuments(await readFile(join(DEPLOY, 'deployment.yaml'), 'utf8'))
      .map(
        (d) =>
          d.toJS() as KubernetesObject & {
            spec?: { template?: { spec?: { containers?: { args?: string[] }[] } } };
          },
      )
      .find((o) => o.kind === 'Deployment');
    const args = (deployment?.spec?.template?.spec?.containers?.[0]?.args ?? []).filter(
      (a) => !a.startsWith('--health-addr') && !a.startsWith('--metrics-bind-address'),
    );
    assert.ok(args.includes('--act-as-machine-api-operator'), args.join(' '));
    const child = spawn(
      process.execPath,
      [
        bin,
        '--log-format',
        'json',
        ...args,
        `--health-addr=127.0.0.1:${await freePort()}`,
        `--metrics-bind-address=127.0.0.1:${await freePort()}`,
        '--feature-gates=MachineAPIMigration=true',
        `--kubeconfig=${kubeconfig}`,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, POD_NAMESPACE: MAPI_NAMESPACE } },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const set = { namespace: MAPI_NAMESPACE, name: 'ostest-7xk2p-worker-rbac' };
    const machineOf = async () =>
      (await env.api.list(mapoKinds.Machine, { namespace: MAPI_NAMESPACE })).items.filter(
        (m) => m.metadata?.labels?.[Labels.MachineSet] === set.name,
      );
    try {
      const ms = structuredClone(env.machineSet);
      ms.metadata = { ...ms.metadata, name: set.name, namespace: MAPI_NAMESPACE };
      ms.spec!.replicas = 1;
      ms.spec!.selector.matchLabels = { ...ms.spec!.selector.matchLabels, [Labels.MachineSet]: set.name };
      ms.spec!.template!.metadata!.labels = {
        ...ms.spec!.template!.metadata!.labels,
        [Labels.MachineSet]: set.name,
      };
      await env.api.create(mapoKinds.MachineSet, ms);
      const found = await eventually(
        async () => {
          const list = await machineOf();
          return list.length === 1 && list[0]!.spec?.providerID ? list : undefined;
        },
        { ...WAIT, what: `a Machine of ${set.name} with a providerID` },
      );
      const provisioned = found?.[0];
      const name = provisioned!.metadata!.name!;
      // The kubelet's part: its Node, and a pod on it for the drain to evict.
      await env.api.create(kinds.Node, {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name },
        spec: { providerID: provisioned!.spec!.providerID! },
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      });
      await env.api.create(kinds.Pod, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { namespace: MAPI_NAMESPACE, name: 'rbac-web' },
        spec: { nodeName: name, containers: [{ name: 'web', image: 'nginx' }] },
      });
      await eventually(
        async () =>
          (await env.api.get(mapoKinds.Machine, { namespace: MAPI_NAMESPACE, name })).status?.nodeRef
            ?.name === name,
        { ...WAIT, what: `nodelink: Machine ${name} linked to its Node` },
      );
      // A switch the migration controller refuses (no Cluster API Cluster here), then cancelled.
      await env.api.patch(mapoKinds.Machine, { namespace: MAPI_NAMESPACE, name }, 'merge', {
        spec: { authoritativeAPI: 'ClusterAPI' },
      });
      await eventually(
        async () => {
          const m = await env.api.get(mapoKinds.Machine, { namespace: MAPI_NAMESPACE, name });
          return (
            getMachineCondition(m.status?.conditions, MachineConditions.MigrationRefused)?.status === 'True'
          );
        },
        { ...WAIT, what: `the switch of ${name} refused` },
      );
      await env.api.patch(mapoKinds.Machine, { namespace: MAPI_NAMESPACE, name }, 'merge', {
        spec: { authoritativeAPI: 'MachineAPI' },
      });
      // Scale to 0: drained (the pod evicted), the server deleted, the Node deleted.
      await env.api.patch(
        mapoKinds.MachineSet,
        set,
        'merge',
        { spec: { replicas: 0 } },
        { subresource: 'scale' },
      );
      await eventually(
        async () => {
          const nodes = (await env.api.list(kinds.Node)).items.filter((n) => n.metadata?.name === name);
          const pods = (await env.api.list(kinds.Pod, { namespace: MAPI_NAMESPACE })).items;
          return (await machineOf()).length === 0 && nodes.length === 0 && pods.length === 0;
        },
        { ...WAIT, what: `Machine ${name}, its Node and its pod gone` },
      );

      const user = `system:serviceaccount:${MAPI_NAMESPACE}:${SA}`;
      const refused = env.kube.emulator.auth.audit.filter((e) => !e.allowed && e.user === user);
      assert.deepEqual(
        refused.map(
          (e) =>
            `${e.verb} ${e.apiGroup || 'core'}/${e.resource}${e.subresource ? `/${e.subresource}` : ''} ${e.namespace ?? ''}`,
        ),
        [],
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- mapo's log:\n${stderr}`, { cause: err });
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0, stderr);
  });
});
