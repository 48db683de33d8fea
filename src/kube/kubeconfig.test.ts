import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, formatProblem } from '../lib/config.ts';
import { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig, podNamespace, type KubeConfigLookup } from './kubeconfig.ts';

const kubeconfig = (server: string, extra = '') =>
  `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}"${extra}}}]\n` +
  'users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n' +
  'current-context: x\n';

/** Every problem line, or a failure when the kubeconfig loads. */
function problems(file: string | undefined, lookup: KubeConfigLookup): string[] {
  try {
    loadKubeConfig(file, lookup);
  } catch (err) {
    assert.ok(ConfigError.is(err), String(err));
    return err.problems.map(formatProblem);
  }
  assert.fail('expected a ConfigError');
}

describe('loadKubeConfig', () => {
  let dir: string;
  let home: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'shiftstack-kubeconfig-'));
    home = join(dir, 'home');
    await mkdir(home);
  });
  after(async () => rm(dir, { recursive: true, force: true }));
  const none = () => ({ homedir: home, root: join(dir, 'no-pod') });
  /** The process's environment with `vars` (undefined: unset) while `fn` runs. */
  const withEnv = <T>(vars: Record<string, string | undefined>, fn: () => T): T => {
    const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
    const set = (values: Record<string, string | undefined>) => {
      for (const [k, v] of Object.entries(values)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    };
    set(vars);
    try {
      return fn();
    } finally {
      set(saved);
    }
  };
  const NO_ENV = {
    KUBECONFIG: undefined,
    KUBERNETES_SERVICE_HOST: undefined,
    KUBERNETES_SERVICE_PORT: undefined,
  };

  it('loads the file given, else KUBECONFIG (merged), else ~/.kube/config', async () => {
    const a = join(dir, 'a');
    await writeFile(a, kubeconfig('https://a.example:6443'));
    assert.equal(loadKubeConfig(a, none()).getCurrentCluster()?.server, 'https://a.example:6443');
    const b = join(dir, 'b');
    await writeFile(
      b,
      'apiVersion: v1\nkind: Config\nclusters: [{name: other, cluster: {server: "https://b.example"}}]\n',
    );
    const merged = withEnv({ ...NO_ENV, KUBECONFIG: [a, b].join(delimiter) }, () =>
      loadKubeConfig(undefined, none()),
    );
    assert.deepEqual(
      merged.getClusters().map((c) => c.name),
      ['c', 'other'],
    );
    const userHome = join(dir, 'user');
    await mkdir(join(userHome, '.kube'), { recursive: true });
    await writeFile(join(userHome, '.kube', 'config'), kubeconfig('https://home.example'));
    const fromHome = withEnv(NO_ENV, () => loadKubeConfig(undefined, { ...none(), homedir: userHome }));
    assert.equal(fromHome.getCurrentCluster()?.server, 'https://home.example');
  });

  it('uses the pod’s service account when nothing else is there, and says what is missing otherwise', async () => {
    const [nothing] = withEnv(NO_ENV, () => problems(undefined, none()));
    assert.match(
      nothing!,
      /^kubeconfig: none found: no --kubeconfig, KUBECONFIG is not set, .*\.kube\/config does not exist, and this is not a pod/,
    );
    assert.match(nothing!, /Fix: pass --kubeconfig <file> or set KUBECONFIG/);

    const pod = join(dir, 'pod');
    const sa = join(pod, 'var/run/secrets/kubernetes.io/serviceaccount');
    await mkdir(sa, { recursive: true });
    await writeFile(join(sa, 'token'), 'tok');
    await writeFile(join(sa, 'ca.crt'), 'pem');
    const [noEnv] = withEnv(NO_ENV, () => problems(undefined, { homedir: home, root: pod }));
    assert.match(noEnv!, /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set/);
    const kc = withEnv(
      { ...NO_ENV, KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' },
      () => loadKubeConfig(undefined, { homedir: home, root: pod }),
    );
    assert.equal(kc.getCurrentCluster()?.server, 'https://10.0.0.1:443');
  });

  it('names a missing file, whether given or from KUBECONFIG', () => {
    const [given] = problems('/nonexistent/kubeconfig', none());
    assert.match(
      given!,
      /^\/nonexistent\/kubeconfig: the kubeconfig given with --kubeconfig does not exist\. Fix: check the path/,
    );
    const [fromEnv] = withEnv({ ...NO_ENV, KUBECONFIG: '/nonexistent/kc' }, () =>
      problems(undefined, none()),
    );
    assert.match(fromEnv!, /^\/nonexistent\/kc: a kubeconfig that KUBECONFIG names does not exist/);
  });

  it('reports bad YAML with its line, and a kubeconfig client-node cannot read', async () => {
    const yaml = join(dir, 'yaml');
    await writeFile(yaml, 'apiVersion: v1\nclusters: [\n');
    assert.match(problems(yaml, none())[0]!, /invalid YAML at line \d/);
    const noServer = join(dir, 'no-server');
    await writeFile(noServer, 'clusters: [{name: c, cluster: {}}]\n');
    assert.match(
      problems(noServer, none())[0]!,
      /not a usable kubeconfig: clusters\[0\]\.cluster\.server is missing\. Fix: compare it with what `kubectl config view/,
    );
  });

  it('needs a current context naming a cluster with a server client-node talks to, and the files it names', async () => {
    const noContext = join(dir, 'no-context');
    await writeFile(noContext, kubeconfig('https://a.example').replace('current-context: x\n', ''));
    assert.match(
      problems(noContext, none())[0]!,
      /key "current-context": no current context\. Fix: pick one with `kubectl config use-context <name>` \(contexts: x\)/,
    );
    const wrongContext = join(dir, 'wrong-context');
    await writeFile(
      wrongContext,
      kubeconfig('https://a.example').replace('current-context: x', 'current-context: y'),
    );
    assert.match(problems(wrongContext, none())[0]!, /key "current-context" \(value "y"\): names no context/);
    const http = join(dir, 'http');
    await writeFile(http, kubeconfig('http://127.0.0.1:8080'));
    assert.match(
      problems(http, none())[0]!,
      /key "clusters\.c\.server" \(value "http:\/\/127\.0\.0\.1:8080"\): plain http:\/\/ is refused unless insecure-skip-tls-verify is true/,
    );
    const insecure = join(dir, 'insecure');
    await writeFile(insecure, kubeconfig('http://127.0.0.1:8080', ', insecure-skip-tls-verify: true'));
    assert.equal(loadKubeConfig(insecure, none()).getCurrentCluster()?.server, 'http://127.0.0.1:8080');
    const ca = join(dir, 'ca');
    await writeFile(ca, kubeconfig('https://a.example', ', certificate-authority: missing-ca.pem'));
    assert.deepEqual(problems(ca, none()), [
      `${ca}: key "clusters.c.certificate-authority" (value "${join(dir, 'missing-ca.pem')}"): the file does not exist. Fix: check the path (relative paths are taken from the kubeconfig’s folder)`,
    ]);
  });
});

describe('podNamespace', () => {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig('https://x').replace('user: u}', 'user: u, namespace: ctx-ns}'));
  it('is POD_NAMESPACE, else the service account file, else the context, else default', () => {
    assert.equal(
      podNamespace({ POD_NAMESPACE: ' env-ns ' }, () => 'sa-ns', kc),
      'env-ns',
    );
    assert.equal(
      podNamespace({}, () => 'sa-ns\n', kc),
      'sa-ns',
    );
    assert.equal(
      podNamespace({}, () => undefined, kc),
      'ctx-ns',
    );
    assert.equal(
      podNamespace({}, () => undefined),
      'default',
    );
  });
});
