import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { main } from '../main.ts';
import { envWithoutCluster, runCli } from './testing/spawn.ts';

const bin = join(import.meta.dirname, '../../../bin/shiftstack.js');

async function run(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['node', 'shiftstack', '--log-level', 'silent', '--log-format', 'json', ...args], {
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    signal: new AbortController().signal,
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/**
 * `shiftstack --log-format json ccm ...args` in a child process (the logger writes to the
 * process's stderr): its exit code, the messages it logged as warnings, and the rest of stderr.
 */
async function spawnCcm(args: string[]): Promise<{ code: number; warnings: string[]; err: string }> {
  let code = 0;
  let stderr: string;
  try {
    stderr = (await promisify(execFile)(process.execPath, [bin, '--log-format', 'json', 'ccm', ...args]))
      .stderr;
  } catch (e) {
    const failed = e as { code?: number; stderr?: string };
    code = failed.code ?? -1;
    stderr = failed.stderr ?? '';
  }
  const warnings: string[] = [];
  const rest: string[] = [];
  for (const line of stderr.split('\n')) {
    let entry: { level?: string; msg?: string } | undefined;
    try {
      entry = JSON.parse(line) as { level?: string; msg?: string };
    } catch {
      entry = undefined;
    }
    // Logged when it starts; in the report with the problems when it does not.
    if (entry?.level === 'warn' && entry.msg) warnings.push(entry.msg);
    else if (line.startsWith('warning: ')) warnings.push(line.slice('warning: '.length));
    else rest.push(line);
  }
  return { code, warnings, err: rest.join('\n') };
}

describe('shiftstack ccm', () => {
  let dir: string;
  let kubeconfig: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-cli-ccm-'));
    // Never reached: the runs below stop at the missing cloud.conf, after every flag is read.
    kubeconfig = join(dir, 'kubeconfig');
    await writeFile(
      kubeconfig,
      'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\n' +
        'users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n' +
        'current-context: c\n',
    );
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('--help lists the upstream flags with their defaults', async () => {
    const { code, out } = await run('ccm', '--help');
    assert.equal(code, 0);
    for (const flag of [
      '--cloud-config <file>',
      '--kubeconfig <file>',
      '--cluster-name <name>',
      '--leader-elect [bool]',
      '--leader-elect-lease-duration <duration>',
      '--leader-elect-renew-deadline <duration>',
      '--leader-elect-retry-period <duration>',
      '--leader-elect-resource-name <name>',
      '--leader-elect-resource-namespace <namespace>',
      '--controllers <list>',
      '--node-monitor-period <duration>',
      '--node-status-update-frequency <duration>',
      '--concurrent-service-syncs <n>',
      '--configure-cloud-routes [bool]',
      '--cluster-cidr <cidrs>',
      '--route-reconciliation-period <duration>',
      '--secure-port <port>',
      '--bind-address <address>',
      '--tls-cert-file <file>',
      '--tls-private-key-file <file>',
      '--authentication-kubeconfig <file>',
      '--authorization-kubeconfig <file>',
      '--authorization-always-allow-paths <paths>',
    ]) {
      assert.ok(out.includes(flag), flag);
    }
    assert.match(out, /default: "kubernetes"/);
    assert.match(out, /default: "cloud-controller-manager"/);
    assert.match(out, /default: "kube-system"/);
    assert.match(out, /default: 10258/);
    assert.match(out, /default: "5s"/);
    assert.match(out, /default: "5m0s"/);
  });

  it('a bad cloud.conf exits 2 naming the file, the key and the fix', async () => {
    const conf = join(dir, 'bad.conf');
    await writeFile(
      conf,
      '[Global]\nauth-url = https://keystone.example/v3\nusername = u\npassword = p\ntenant-name = t\n' +
        '[LoadBalancer]\nmonitor-max-retries = 20\n',
    );
    const { code, err } = await run('ccm', '--cloud-config', conf, '--secure-port', '0');
    assert.equal(code, 2);
    assert.match(err, /^shiftstack ccm: not started; fix these inputs:$/m);
    assert.ok(err.includes(`${conf}:7`), err);
    assert.match(err, /monitor-max-retries/);
    assert.match(err, /1.*10/);
  });

  it('an unknown controller is a usage error', async () => {
    const conf = join(dir, 'unused.conf');
    const unknown = await run('ccm', '--cloud-config', conf, '--controllers', '*,-cloud-nod');
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /unknown controller "cloud-nod"/);
  });

  it('--concurrent-service-syncs takes a whole number ≥ 1 (upstream default 1)', async () => {
    const help = (await run('ccm', '--help')).out.replace(/\s+/g, ' ');
    assert.ok(
      help.includes(
        '--concurrent-service-syncs <n> Services the service controller reconciles at once (default: 1)',
      ),
      help,
    );
    for (const bad of ['0', 'two', '1.5']) {
      const { code, err } = await run('ccm', '--cloud-config', 'x.conf', '--concurrent-service-syncs', bad);
      assert.equal(code, 2, bad);
      assert.ok(
        err.includes(`--concurrent-service-syncs: "${bad}" is not valid. Fix: write a whole number ≥ 1`),
        err,
      );
    }
  });

  it('--kube-api-qps and --kube-api-burst set the Kubernetes client limits (upstream defaults 20, 30)', async () => {
    const help = (await run('ccm', '--help')).out.replace(/\s+/g, ' ');
    assert.match(
      help,
      /--kube-api-qps <n> Kubernetes API requests per second, negative for no limit .*\(default: 20\)/,
    );
    assert.match(help, /--kube-api-burst <n> Kubernetes API requests in one burst \(default: 30\)/);
    for (const [flag, bad, fix] of [
      ['--kube-api-qps', 'fast', 'write a number (a negative one: no client-side limit)'],
      ['--kube-api-burst', '2.5', 'write a whole number ≥ 0'],
    ] as const) {
      const { code, err } = await run('ccm', '--cloud-config', 'x.conf', flag, bad);
      assert.equal(code, 2, flag);
      assert.ok(err.includes(`${flag}: "${bad}" is not valid. Fix: ${fix}`), err);
    }
  });

  it("the flags of OCCM's Deployments are accepted; those that change nothing here are named in a warning", async () => {
    const missing = join(dir, 'missing', 'cloud.conf');
    const common = [`--cloud-config=${missing}`, `--kubeconfig=${kubeconfig}`];
    const [openshift, upstream, extras] = await Promise.all([
      // CCCMO's Deployment (OpenShift).
      spawnCcm([
        '--v=1',
        ...common,
        '--cloud-provider=openstack',
        '--cluster-name=ocp-x7k2p',
        '--use-service-account-credentials=true',
        '--configure-cloud-routes=false',
        '--bind-address=127.0.0.1',
        '--leader-elect=true',
        '--leader-elect-lease-duration=137s',
        '--leader-elect-renew-deadline=107s',
        '--leader-elect-retry-period=26s',
        '--leader-elect-resource-namespace=openshift-cloud-controller-manager',
        '--feature-gates=AWSEFSDriverVolumeMetrics=true,VSphereMultiVCenters=false',
        '--tls-cipher-suites=TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
        '--tls-min-version=VersionTLS12',
        '--secure-port=0',
      ]),
      // cloud-provider-openstack's DaemonSet manifest.
      spawnCcm([
        '--v=1',
        '--cluster-name=kubernetes',
        ...common,
        '--cloud-provider=openstack',
        '--use-service-account-credentials=false',
        '--bind-address=127.0.0.1',
      ]),
      // Flags other manifests and charts add.
      spawnCcm([
        ...common,
        '--cluster-cidr=10.244.0.0/16',
        '--allocate-node-cidrs=true',
        '--configure-cloud-routes',
        '--secure-port=10258',
        '--authentication-skip-lookup=true',
        '--authorization-always-allow-paths=/healthz',
        '--authorization-always-allow-paths=/metrics',
        '-v=4',
        '--concurrent-service-syncs=2',
        '--logtostderr=true',
        '--profiling=false',
        '--user-agent=my-cluster',
      ]),
    ]);
    for (const r of [openshift, upstream, extras]) {
      // Every flag was read: the run stops at the missing cloud.conf, never at a flag.
      assert.equal(r.code, 2, r.err);
      assert.doesNotMatch(r.err, /unknown flag|is not valid/);
      assert.ok(r.err.includes(`${missing}: the file does not exist`), r.err);
    }
    const named = (warnings: string[]) => warnings.map((w) => /^(.*?) is accepted/.exec(w)?.[1] ?? w);
    // TLS settings with --secure-port=0 and a verbosity info shows are what shiftstack does anyway.
    assert.deepEqual(named(openshift.warnings), [
      '--use-service-account-credentials=true',
      '--feature-gates=AWSEFSDriverVolumeMetrics=true,VSphereMultiVCenters=false',
    ]);
    assert.match(openshift.warnings[0]!, /one client of the process/);
    assert.deepEqual(upstream.warnings, []);
    // The secure port's flags are implemented; skipping the client-CA lookup is what happens anyway.
    // --user-agent is OCCM's own flag, implemented: no warning.
    assert.deepEqual(named(extras.warnings), ['--v=4', '--allocate-node-cidrs=true']);
    assert.match(extras.warnings[0]!, /--log-level debug/);
  });

  it('--enable-leader-migration and --leader-migration-config are checked as upstream reads them, before anything starts', async () => {
    const conf = join(dir, 'never-read.conf');
    const help = (await run('ccm', '--help')).out;
    assert.ok(help.includes('--enable-leader-migration [bool]'), help);
    assert.ok(help.includes('--leader-migration-config <file>'), help);

    // Without leader election there is no Lease to migrate under.
    const noElection = await run(
      'ccm',
      '--cloud-config',
      conf,
      '--enable-leader-migration',
      '--leader-elect=false',
    );
    assert.equal(noElection.code, 2);
    assert.ok(noElection.err.includes('--enable-leader-migration needs leader election'), noElection.err);

    // A broken file: the key and the fix, with the other problems.
    const bad = join(dir, 'lm-bad.yaml');
    await writeFile(
      bad,
      'kind: LeaderMigrationConfiguration\napiVersion: controllermanager.config.k8s.io/v1\nresourceLock: endpoints\n',
    );
    const broken = await run(
      'ccm',
      '--cloud-config',
      conf,
      '--enable-leader-migration=true',
      `--leader-migration-config=${bad}`,
    );
    assert.equal(broken.code, 2);
    assert.match(broken.err, /leaderName/);
    assert.match(broken.err, /resourceLock.*leases/);

    // A name this component does not have migrates nothing: said before the start; a file without
    // --enable-leader-migration is ignored, as upstream, and said too.
    const odd = join(dir, 'lm-odd.yaml');
    await writeFile(
      odd,
      'kind: LeaderMigrationConfiguration\napiVersion: controllermanager.config.k8s.io/v1\n' +
        'leaderName: cloud-provider-extraction-migration\ncontrollerLeaders:\n' +
        '  - name: service-controller\n    component: cloud-controller-manager\n' +
        '  - name: service\n    component: cloud-controller-manager\n',
    );
    const [warned, ignored] = await Promise.all([
      spawnCcm([
        `--cloud-config=${conf}`,
        `--kubeconfig=${kubeconfig}`,
        '--enable-leader-migration',
        `--leader-migration-config=${odd}`,
      ]),
      spawnCcm([`--cloud-config=${conf}`, `--kubeconfig=${kubeconfig}`, `--leader-migration-config=${odd}`]),
    ]);
    assert.equal(warned.code, 2, warned.err);
    assert.doesNotMatch(warned.err, /leader/, 'the file itself is valid');
    assert.deepEqual(warned.warnings, [
      `${odd}: controllerLeaders "service-controller" is not a controller of cloud-controller-manager (cloud-node, cloud-node-lifecycle, service, route), so it migrates nothing here`,
    ]);
    assert.deepEqual(ignored.warnings, [
      `--leader-migration-config=${odd} is ignored without --enable-leader-migration, as upstream does`,
    ]);
  });

  it('--cloud-provider other than openstack, or a bad value of an upstream flag, is a usage error', async () => {
    const provider = await run('ccm', '--cloud-config', 'x.conf', '--cloud-provider=aws');
    assert.equal(provider.code, 2);
    assert.match(provider.err, /--cloud-provider: "aws" is not a cloud shiftstack ccm serves/);
    const bool = await run('ccm', '--cloud-config', 'x.conf', '--use-service-account-credentials=yes');
    assert.equal(bool.code, 2);
    assert.ok(
      bool.err.includes('--use-service-account-credentials: "yes" is not valid. Fix: write true or false'),
      bool.err,
    );
  });

  it('a flag upstream does not have either is an unknown flag, as upstream, with the nearest one', async () => {
    const { code, err } = await run('ccm', '--cloud-config', 'x.conf', '--leader-elect-lease-durration=15s');
    assert.equal(code, 2);
    assert.ok(
      err.includes(
        '--leader-elect-lease-durration: unknown flag (did you mean --leader-elect-lease-duration?). Fix: write --leader-elect-lease-duration, or remove it',
      ),
      err,
    );
  });

  it('a bad duration is a usage error', async () => {
    const { code, err } = await run('ccm', '--cloud-config', 'x.conf', '--node-monitor-period', '5');
    assert.equal(code, 2);
    assert.match(err, /--node-monitor-period: "5" is not a duration/);
  });

  describe('checks every input before it starts, and reports every problem at once', () => {
    const VALID = `[Global]\nauth-url = https://keystone.example/v3\nusername = u\npassword = p\ntenant-name = t\ndomain-name = Default\n`;
    /** The report's lines after its heading, checked to carry no stack trace. */
    const problemLines = (err: string) => {
      assert.doesNotMatch(err, /^\s+at /m, 'a stack trace');
      const lines = err.trimEnd().split('\n');
      assert.equal(lines[0], 'shiftstack ccm: not started; fix these inputs:', err);
      return lines.slice(1);
    };

    it('with no kubeconfig anywhere (no flag, no KUBECONFIG, no ~/.kube/config, not a pod): one line with the fix, exit 2', async () => {
      const conf = join(dir, 'valid.conf');
      await writeFile(conf, VALID);
      const home = join(dir, 'empty-home');
      const r = await runCli(['ccm', '--cloud-config', conf, '--secure-port', '0'], {
        env: envWithoutCluster(home),
      });
      assert.equal(r.code, 2, r.err);
      const [line, ...more] = problemLines(r.err);
      assert.deepEqual(more, []);
      assert.match(
        line!,
        /^kubeconfig: none found: no --kubeconfig, KUBECONFIG is not set, .*empty-home\/\.kube\/config does not exist, and this is not a pod .*\. Fix: pass --kubeconfig <file> or set KUBECONFIG/,
      );
    });

    it('--kubeconfig /nonexistent with a broken cloud.conf: both, one line each, with the warnings that explain them', async () => {
      const conf = join(dir, 'broken.conf');
      await writeFile(
        conf,
        '[Global]\nauth-url = https://keystone.example/v3\nusername = u\npassword = p\n' +
          'project-name = demo\ndomain-name = Default\n[LoadBalancer]\nfloating-network = public\nmonitor-max-retries = 20\n',
      );
      const r = await runCli([
        'ccm',
        '--kubeconfig',
        '/nonexistent',
        '--cloud-config',
        conf,
        '--secure-port',
        '0',
      ]);
      assert.equal(r.code, 2, r.err);
      assert.deepEqual(problemLines(r.err), [
        '/nonexistent: the kubeconfig given with --kubeconfig does not exist. Fix: check the path; without --kubeconfig, KUBECONFIG, ~/.kube/config and then the pod’s service account are used',
        `${conf}:9: key "[LoadBalancer] monitor-max-retries" (value "20"): must be between 1 and 10. Fix: Octavia accepts 1 to 10 checks`,
        `${conf}: key "[Global] user-domain-name": Keystone needs the domain of a user given by name. Fix: rename [Global] project-name to [Global] tenant-name: with a project, [Global] domain-name is the user's domain too; or set [Global] user-domain-name (usually "Default") or [Global] user-domain-id`,
        `warning: ${conf}:5: key "[Global] project-name": unknown key, ignored (did you mean "tenant-name"?)`,
        `warning: ${conf}:8: key "[LoadBalancer] floating-network": unknown key, ignored (did you mean "floating-network-id"?)`,
      ]);
    });

    it('an unknown flag comes first, with the other problems (not only the missing --cloud-config)', async () => {
      const r = await runCli([
        'ccm',
        '--bogus-flag',
        '--kubeconfig',
        kubeconfig,
        '--node-monitor-period',
        '5',
      ]);
      assert.equal(r.code, 2, r.err);
      assert.deepEqual(problemLines(r.err), [
        '--bogus-flag: unknown flag. Fix: remove it; `shiftstack ccm --help` lists the flags',
        "--cloud-config: missing. Fix: give OCCM's cloud.conf, e.g. --cloud-config=/etc/kubernetes/cloud.conf",
        '--node-monitor-period: "5" is not a duration. Fix: write it as Go does, e.g. 15s, 5m0s, 500ms',
      ]);
    });
  });
});
