/**
 * `shiftstack up` as a user runs it: a process, its output and its exit code. The `--once` run is
 * the whole demo on a faster time scale; what it prints is checked line by line against what the
 * issue asks the demo to show.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { capoKinds, crdFiles } from '../../capo/api/index.ts';
import { startCcmEnv, type CcmEnv } from '../../ccm/testing/env.ts';
import { kuryrDemoBuilt } from '../../demo/kuryr.ts';
import { mapoKinds } from '../../mapo/api/index.ts';
import { isAlreadyExists, kinds, type KubernetesObject } from '../../kube/index.ts';
import { testClient } from '../../kube/testing/env.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { startCli } from './testing/spawn.ts';
import { Agent, fetch as undiciFetch } from 'undici';

/** Realistic delays × 0.03: an amphora load balancer in about a second. */
const TEST_TIME_SCALE = '0.03';

/**
 * `metric` as a line of a scrape with a sample, once its part's doc lists it (the table
 * test/docs/metrics.test.ts keeps current, between `<!-- metrics:<table> -->` markers).
 */
async function documentedMetric(doc: string, table: string, metric: string): Promise<RegExp> {
  const text = await readFile(join(import.meta.dirname, '..', '..', '..', 'docs', doc), 'utf8');
  const from = text.indexOf(`<!-- metrics:${table} `);
  const to = text.indexOf(`<!-- /metrics:${table} -->`);
  assert.ok(from >= 0 && to > from, `docs/${doc} has the ${table} metrics table`);
  assert.ok(text.slice(from, to).includes(`| \`${metric}\` |`), `docs/${doc} lists ${metric}`);
  return new RegExp(`^${metric}(?:_count|_bucket)?(?:\\{[^}]*\\})? [1-9]`, 'm');
}

describe('shiftstack up', () => {
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'shiftstack-up-'))));
  after(async () => rm(dir, { recursive: true, force: true }));

  it('--once creates the cluster on the in-tree provider, migrates it to the ccm the operator deploys, scales, tears down, finds no leak and exits 0', async () => {
    // From a directory without examples/: the cluster comes from the package's examples/capo/cluster.yaml.
    assert.equal(existsSync(join(dir, 'examples')), false);
    const run = startCli(
      ['--log-level', 'error', 'up', '--once', '--time-scale', TEST_TIME_SCALE],
      /shiftstack up --once: (every step held|FAILED)/,
      { cwd: dir, timeoutMs: 150_000 },
    );
    const out = await run.ready.catch((err: unknown) =>
      assert.fail(`${(err as Error).message}\n${run.errors()}`),
    );
    const code = await run.exited;
    assert.equal(code, 0, `${out}\n${run.errors()}`);
    // Absolute, so the commands printed work from any directory.
    const files = join(await realpath(dir), '.shiftstack');
    assert.ok(out.includes(`clouds.yaml ${join(files, 'openstack', 'clouds.yaml')} `), out);
    assert.ok(out.includes(`kubeconfig ${join(files, 'kube', 'kubeconfig')}\n`), out);
    assert.match(
      out,
      /cluster capo-demo ready: network \S+ \(10\.6\.0\.0\/24\), router \S+, API endpoint [\d.]+:6443/,
    );
    assert.match(out, /bastion \S+ at [\d.]+/);
    assert.match(
      out,
      /5 machines running \(3 control plane, 2 workers\), 5 nodes initialized by their kubelets \(in-tree provider\)/,
    );
    const nodes = out.match(/node \S+ initialized: openstack:\/\/\/[0-9a-f-]{36}/g) ?? [];
    assert.equal(nodes.length, 5, out);
    // The in-tree provider's load balancer, then the migration: the ccm deployed by the operator
    // adopts it with no Octavia write, the address stays, and UDP works.
    const web =
      /Service demo-web: external IP (\d+\.\d+\.\d+\.\d+) \(load balancer (a[0-9a-f]{31}) in \d+ Octavia writes/.exec(
        out,
      );
    assert.ok(web, out);
    assert.match(out, /ClusterOperator cloud-controller-manager Available with CloudControllerOwner=False/);
    assert.ok(
      out.includes(
        `openstack-cloud-controller-manager Available; demo-web keeps ${web[1]} on load balancer ${web[2]}; Octavia writes by the handover: 0;`,
      ),
      out,
    );
    assert.match(
      out,
      /Service demo-dns: external IP \d+\.\d+\.\d+\.\d+ \(load balancer kube_service_capo-demo_default_demo-dns\)/,
    );
    assert.match(
      out,
      /initialized by the ccm; the 2 Services' load balancers got 2 batch member PUTs for 2 pools \(one per pool\), 6 members now/,
    );
    // OpenShift's Machine API beside the cluster: the installer's MachineSet, scaled, one Machine to
    // Cluster API and back without an OpenStack write, and its teardown.
    assert.match(
      out,
      /MachineSet capo-demo-worker-0: capo-demo-worker-0-\w{5} \(openstack:\/\/\/[0-9a-f-]{36}\), capo-demo-worker-0-\w{5} \(openstack:\/\/\/[0-9a-f-]{36}\) Running; server group capo-demo-worker, API VIP [\d.]+ an allowed address pair on 2 ports/,
    );
    assert.match(
      out,
      /Machine capo-demo-worker-0-\w{5} \(server [0-9a-f-]{36}\) gone with its ports and Node; /,
    );
    assert.match(
      out,
      /Machine capo-demo-worker-0-\w{5}: Machine API → Cluster API \(0 Nova, Neutron or Cinder writes\) → Machine API \(0\); server [0-9a-f-]{36} and its 1 port unchanged/,
    );
    assert.match(
      out,
      /MachineSet capo-demo-worker-0 deleted with its Machines; server group capo-demo-worker deleted/,
    );
    // The cluster's pods on Kuryr: pods on their workers' trunks, two Services on Octavia, a policy's group.
    assert.ok(kuryrDemoBuilt(), 'this build holds every controller of the demo’s Kuryr handlers');
    assert.match(
      out,
      /5 pods Running: demo-frontend\/web-0 10\.\d+\.\d+\.\d+ on capo-demo-md-0-\S+ VLAN \d+, /,
    );
    assert.match(
      out,
      /web: load balancer \S+ at 10\.\d+\.\d+\.\d+, 3 members; web-public: load balancer \S+ at [\d.]+, 3 members; external IP [\d.]+/,
    );
    assert.match(out, /security group \S+ with [1-9]\d* rules/);
    assert.match(
      out,
      /namespaces deleted, the kuryr controller stopped, its subnets, subnet pool and security group removed/,
    );
    assert.match(out, /✓ no leaked resources/);
    assert.match(out, /API calls: OpenStack \d+ \(/);
    assert.match(out, /shiftstack up --once: every step held/);
    assert.doesNotMatch(out, /✗|not built yet/);
  });

  it('without --once keeps serving: the printed kubeconfig and clouds.yaml reach the cluster and the cloud; Ctrl-C stops it', async () => {
    const cwd = await mkdtemp(join(dir, 'serve-'));
    const run = startCli(
      ['--log-level', 'error', 'up', '--time-scale', TEST_TIME_SCALE],
      /serving until Ctrl-C/,
      { cwd, timeoutMs: 150_000 },
    );
    const out = await run.ready.catch((err: unknown) =>
      assert.fail(`${(err as Error).message}\n${run.errors()}`),
    );
    assert.match(out, /the demo is up/);
    const kubeconfig = /kubectl --kubeconfig (\S+) get clusters/.exec(out)?.[1];
    const clouds = /OS_CLIENT_CONFIG_FILE=(\S+) openstack --os-cloud shiftstack-demo server list/.exec(
      out,
    )?.[1];
    assert.ok(kubeconfig && clouds, out);
    assert.ok(isAbsolute(kubeconfig) && isAbsolute(clouds), out);
    const api = testClient(kubeconfig);
    try {
      // 6 Cluster API machines and the Machine API MachineSet's 2.
      const nodes = (await api.list(kinds.Node)).items;
      assert.equal(nodes.length, 8);
      assert.ok(nodes.every((n) => n.spec?.providerID?.startsWith('openstack:///')));
      const mapi = (await api.list(mapoKinds.Machine)).items;
      assert.equal(mapi.length, 2);
      for (const m of mapi) {
        assert.equal(m.status?.phase, 'Running', m.metadata?.name);
        assert.equal(m.status?.authoritativeAPI, 'MachineAPI', m.metadata?.name);
      }
      // capo acting as Cluster API core: every Machine Running, its nodeRef the Node of its providerID
      // (one is the paused Cluster API side of the Machine API Machine moved there and back).
      const machines = (await api.list(capoKinds.Machine)).items;
      assert.equal(machines.length, 7);
      for (const m of machines) {
        const node = nodes.find((n) => n.spec?.providerID === m.spec.providerID);
        assert.equal(m.status?.phase, 'Running', m.metadata?.name);
        assert.deepEqual(m.status?.nodeRef, {
          apiVersion: 'v1',
          kind: 'Node',
          name: node?.metadata?.name,
          uid: node?.metadata?.uid,
        });
      }
      const [cluster] = (await api.list(capoKinds.Cluster)).items;
      assert.equal(cluster?.status?.phase, 'Provisioned');
      assert.equal(cluster.status.controlPlaneReady, true);
      const svc = await api.get(kinds.Service, { namespace: 'default', name: 'demo-web' });
      assert.ok(svc.status?.loadBalancer?.ingress?.[0]?.ip);
    } finally {
      await api.close();
    }
    // Every controller's /metrics, printed at start and again in the summary with what started
    // since (the kuryr controller, the ccm the operator deployed), serves its own metrics.
    const listed = (text: string) =>
      [...text.matchAll(/^ {2}(?:metrics: {5}| {13})(.+?) → (https?:\/\/\S+)$/gm)].map((m) => ({
        name: m[1]!,
        url: m[2]!,
      }));
    const summaryAt = out.indexOf('API calls:');
    assert.ok(summaryAt > 0, out);
    const atStart = listed(out.slice(0, summaryAt));
    const summary = listed(out.slice(summaryAt));
    const inProcess = [
      'capo',
      'mapo',
      "kube-controller-manager (the in-tree provider's stand-in)",
      'ccm-operator',
      'demo (kubelets, workload runner)',
    ];
    assert.deepEqual(
      atStart.map((p) => p.name),
      inProcess,
      out,
    );
    const ccmPods = summary.filter((p) =>
      /^ccm \(deployed by ccm-operator\) \(pod openstack-cloud-controller-manager-\S+\)$/.test(p.name),
    );
    assert.ok(ccmPods.length >= 1, out);
    assert.deepEqual(
      summary.map((p) => p.name),
      [...inProcess, 'kuryr-controller', ...ccmPods.map((p) => p.name)],
      out,
    );
    // The ccm's secure port asks for a token the API server authorizes: the kubeconfig's, as printed.
    assert.match(
      out,
      /the ccm's secure port asks for a token, as upstream's: curl -sk -H "Authorization: Bearer \$\(kubectl --kubeconfig \S+ config view --raw -o jsonpath='\{\.users\[0\]\.user\.token\}'\)" <URL>/,
    );
    const token = (parseYaml(await readFile(kubeconfig, 'utf8')) as { users: { user: { token: string } }[] })
      .users[0]!.user.token;
    const insecure = new Agent({ connect: { rejectUnauthorized: false } });
    try {
      // Each one's own: a controller's reconciles, or a metric its part's doc lists, with samples.
      const own: Record<string, RegExp> = {
        capo: /^controller_runtime_reconcile_total\{[^}]*controller="openstackserver"/m,
        mapo: /^controller_runtime_reconcile_total\{[^}]*controller="machine"/m,
        "kube-controller-manager (the in-tree provider's stand-in)":
          /^controller_runtime_reconcile_total\{[^}]*controller="service"/m,
        'ccm-operator': /^controller_runtime_reconcile_total\{[^}]*controller="cloud-operator"/m,
        'demo (kubelets, workload runner)':
          /^controller_runtime_reconcile_total\{[^}]*controller="demo-workload-runner"/m,
        'kuryr-controller': await documentedMetric(
          'kuryr.md',
          'kuryr-controller',
          'kuryr_pod_creation_latency',
        ),
      };
      const ccmMetric = await documentedMetric('ccm.md', 'ccm', 'openstack_api_requests_total');
      for (const { name, url } of summary) {
        const https = url.startsWith('https:');
        const res = await undiciFetch(url, {
          ...(https ? { dispatcher: insecure, headers: { authorization: `Bearer ${token}` } } : {}),
        });
        assert.equal(res.status, 200, `${name} ${url}`);
        const text = await res.text();
        assert.match(text, own[name] ?? ccmMetric, name);
      }
      // Without the token, the ccm's port refuses: it is the secure port, not an open one.
      const anonymous = await undiciFetch(ccmPods[0]!.url, { dispatcher: insecure });
      assert.equal(anonymous.status, 403);
    } finally {
      await insecure.close();
    }
    const entry = (
      parseYaml(await readFile(clouds, 'utf8')) as {
        clouds: Record<string, { auth: { auth_url: string } }>;
      }
    ).clouds['shiftstack-demo'];
    const versions = await fetch(entry!.auth.auth_url);
    assert.equal(versions.status, 200);
    run.child.kill('SIGINT');
    assert.equal(await run.exited, 0, run.errors());
  });

  it('Ctrl-C during a step says what happens: it stops there, with no teardown, and the emulators go', async () => {
    const cwd = await mkdtemp(join(dir, 'interrupt-'));
    // A real cloud's pace: the cluster step is still running when Ctrl-C comes.
    const run = startCli(
      ['--log-level', 'error', 'up', '--once', '--time-scale', '1'],
      /▸ create the cluster/,
      {
        cwd,
        timeoutMs: 120_000,
      },
    );
    try {
      await run.ready.catch((err: unknown) => assert.fail(`${(err as Error).message}\n${run.errors()}`));
    } finally {
      run.child.kill('SIGINT');
    }
    const code = await run.exited;
    const out = run.output();
    assert.equal(code, 1, `${out}\n${run.errors()}`);
    assert.match(
      out,
      /interrupted during "create the cluster from examples\/capo\/cluster\.yaml[^"]*" \([\d.]+ s\): stopping the controllers and both emulators without the teardown and the leak check; the emulated cloud and cluster live in this process and end with it/,
    );
    assert.doesNotMatch(out, /serving what runs until Ctrl-C|every step held|FAILED|teardown:/);
  });

  it('refuses --once against a real cluster', async () => {
    const run = startCli(['up', '--once', '--kubeconfig', join(dir, 'none')], /never/);
    await assert.rejects(run.ready, /exited with 2/);
  });

  it('refuses a real cluster without a cloud for the ccm', async () => {
    const kubeconfig = join(dir, 'kubeconfig');
    await writeFile(
      kubeconfig,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\n' +
        'users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
    );
    const run = startCli(['up', '--kubeconfig', kubeconfig], /never/);
    await assert.rejects(run.ready, /exited with 2/);
    assert.match(run.errors(), /the ccm needs a cloud: give --cloud-config/);
  });

  describe('against a real cluster and cloud (here: the emulators, reached only through a kubeconfig and a cloud.conf)', () => {
    let env: CcmEnv;
    before(async () => {
      env = await startCcmEnv();
      // A management cluster has CAPO's CRDs installed.
      for (const f of crdFiles()) {
        await env.api
          .create(kinds.CustomResourceDefinition, parseYaml(f.text) as KubernetesObject as never)
          .catch((err: unknown) => {
            if (!isAlreadyExists(err)) throw err;
          });
      }
    });
    after(async () => env?.close());

    it('runs the ccm and capo, initializes the cluster’s Nodes, creates no demo objects, and stops on SIGTERM', async () => {
      const net = await env.os.network.networks.create({ name: 'real-mode' });
      await env.os.network.subnets.create({ network_id: net.id, cidr: '10.9.0.0/24', ip_version: 4 });
      const server = await env.os.compute.servers.create({
        name: 'real-node-0',
        flavorRef: env.boot.flavorId,
        imageRef: env.boot.imageId,
        networks: [{ uuid: net.id }],
      });
      await env.createNode('real-node-0');
      const run = startCli(
        ['up', '--kubeconfig', env.kube.kubeconfigPath, '--cloud-config', await env.cloudConf()],
        /serving until Ctrl-C/,
        { cwd: dir },
      );
      const out = await run.ready;
      assert.match(out, /no demo objects are created/);
      assert.match(out, /ccm: {2}cloud-node, cloud-node-lifecycle, service/);
      assert.match(out, /capo: openstackcluster, openstackmachine, openstackserver/);
      await eventually(
        async () => (await env.api.get(kinds.Node, { name: 'real-node-0' })).spec?.providerID,
        { timeoutMs: 30_000, what: 'the node initialized by the ccm' },
      );
      assert.equal(
        (await env.api.get(kinds.Node, { name: 'real-node-0' })).spec?.providerID,
        `openstack:///${server.id}`,
      );
      const namespaces = (await env.api.list(kinds.Namespace)).items.map((n) => n.metadata?.name);
      assert.ok(!namespaces.includes('capo-demo'), namespaces.join(', '));
      const services = (await env.api.list(kinds.Service)).items.map((s) => s.metadata?.name);
      assert.deepEqual(services, ['kubernetes']);
      run.child.kill('SIGTERM');
      assert.equal(await run.exited, 0, run.errors());
    });
  });
});
