/**
 * The kubeconfig a command runs with, found where client-node's `loadFromDefault` looks (the file
 * given, else KUBECONFIG, else ~/.kube/config, else the pod's service account) and checked before
 * anything connects: the files exist and parse, a current context names a cluster whose server
 * client-node will talk to, and the files it names exist. Every problem comes back at once in a
 * ConfigError naming the file, the key and the fix.
 *
 * Without this, a missing file is an ENOENT stack trace, and nothing found at all is client-node's
 * fallback to http://localhost:8080, which every informer then refuses forever ("HTTP protocol is
 * not allowed when skipTLSVerify is not set").
 *
 *   const kc = loadKubeConfig(flags.kubeconfig);   // ConfigError with every problem
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigError, parseText, type ConfigProblem } from '../lib/config.ts';

/** Where the pod's service account is mounted, under `root`. */
const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

/** For tests; the environment is always the process's, as client-node's in-cluster config reads it. */
export interface KubeConfigLookup {
  homedir?: string;
  /** Prefix of the service account path (tests); the real file system by default. */
  root?: string;
}

/** The kubeconfig of `file`, or of the default chain when none is given; a ConfigError otherwise. */
export function loadKubeConfig(file: string | undefined, lookup: KubeConfigLookup = {}): KubeConfig {
  const env = process.env;
  const problems: ConfigProblem[] = [];
  const kc = new KubeConfig();
  const fromEnv = (env.KUBECONFIG ?? '').split(delimiter).filter((f) => f !== '');
  const home = join(lookup.homedir ?? homedir(), '.kube', 'config');
  let source: string;
  if (file !== undefined) {
    source = file;
    readInto(kc, file, 'the kubeconfig given with --kubeconfig', problems);
  } else if (fromEnv.length > 0) {
    source = fromEnv.join(delimiter);
    fromEnv.forEach((f, i) => {
      const into = i === 0 ? kc : new KubeConfig();
      if (readInto(into, f, 'a kubeconfig that KUBECONFIG names', problems) && i > 0) kc.mergeConfig(into);
    });
  } else if (existsSync(home)) {
    source = home;
    readInto(kc, home, 'the kubeconfig', problems);
  } else {
    source = 'in-cluster config';
    if (!inCluster(kc, lookup.root ?? '', env, home, problems)) throw new ConfigError(problems);
  }
  if (problems.length === 0) checkUsable(kc, source, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return kc;
}

/** Reads and parses one file into `kc` (paths made absolute as client-node does); false on a problem. */
function readInto(kc: KubeConfig, file: string, what: string, problems: ConfigProblem[]): boolean {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    problems.push({
      file,
      key: '',
      value: undefined,
      problem:
        code === 'ENOENT'
          ? `${what} does not exist`
          : `${what} cannot be read (${code ?? (err as Error).message})`,
      fix:
        code === 'ENOENT'
          ? 'check the path; without --kubeconfig, KUBECONFIG, ~/.kube/config and then the pod’s service account are used'
          : 'check the file permissions for the user running shiftstack',
    });
    return false;
  }
  try {
    // Our YAML reader first: its errors carry the line.
    parseText(text, 'yaml', file);
    kc.loadFromString(text);
  } catch (err) {
    if (ConfigError.is(err)) {
      problems.push(...err.problems);
      return false;
    }
    problems.push({
      file,
      key: '',
      value: undefined,
      problem: `not a usable kubeconfig: ${(err as Error).message}`,
      fix: `compare it with what \`kubectl config view --kubeconfig ${file}\` shows, or write it again (kubectl config set-cluster / set-credentials / set-context)`,
    });
    return false;
  }
  kc.makePathsAbsolute(dirname(file));
  return true;
}

/** client-node's in-cluster config, when this is a pod with a service account; a problem otherwise. */
function inCluster(
  kc: KubeConfig,
  root: string,
  env: Readonly<Record<string, string | undefined>>,
  home: string,
  problems: ConfigProblem[],
): boolean {
  const token = `${root}${SERVICE_ACCOUNT}/token`;
  if (!existsSync(token)) {
    problems.push({
      file: 'kubeconfig',
      key: '',
      value: undefined,
      problem: `none found: no --kubeconfig, KUBECONFIG is not set, ${home} does not exist, and this is not a pod (${token} does not exist)`,
      fix: 'pass --kubeconfig <file> or set KUBECONFIG; in a pod, mount a service account token',
    });
    return false;
  }
  const missing = ['KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT'].filter((v) => !env[v]);
  if (missing.length > 0) {
    problems.push({
      file: 'environment',
      key: missing.join(', '),
      value: undefined,
      problem: `a service account token is mounted (${token}) but ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set, so the API server is unknown`,
      fix: 'run in a pod (the kubelet sets both), or pass --kubeconfig <file>',
    });
    return false;
  }
  kc.loadFromCluster(root);
  return true;
}

/** What client-node needs from the current context to make a single request. */
function checkUsable(kc: KubeConfig, source: string, problems: ConfigProblem[]): void {
  const add = (key: string, value: unknown, problem: string, fix: string) =>
    problems.push({ file: source, key, value, problem, fix });
  const names = kc.getContexts().map((c) => c.name);
  const pick = names.length
    ? `pick one with \`kubectl config use-context <name>\` (contexts: ${names.join(', ')})`
    : 'add one with `kubectl config set-context`, then `kubectl config use-context <name>`';
  const current = kc.getCurrentContext();
  if (!current) {
    add('current-context', undefined, 'no current context', pick);
    return;
  }
  const context = kc.getContextObject(current);
  if (!context) {
    add('current-context', current, 'names no context of the kubeconfig', pick);
    return;
  }
  const cluster = kc.getCluster(context.cluster);
  if (!cluster) {
    const clusters = kc.getClusters().map((c) => c.name);
    add(
      `contexts.${current}.cluster`,
      context.cluster,
      'names no cluster of the kubeconfig',
      `name one of: ${clusters.join(', ') || '(none: add one with `kubectl config set-cluster`)'}`,
    );
    return;
  }
  checkServer(cluster.server, cluster.skipTLSVerify, `clusters.${cluster.name}.server`, add);
  if (context.user && !kc.getUser(context.user)) {
    add(
      `contexts.${current}.user`,
      context.user,
      'names no user of the kubeconfig',
      `name one of: ${
        kc
          .getUsers()
          .map((u) => u.name)
          .join(', ') || '(none: add one with `kubectl config set-credentials`)'
      }`,
    );
  }
  const user = context.user ? kc.getUser(context.user) : null;
  const files: [string, string | undefined][] = [
    [`clusters.${cluster.name}.certificate-authority`, cluster.caFile],
    [`users.${context.user}.client-certificate`, user?.certFile ?? undefined],
    [`users.${context.user}.client-key`, user?.keyFile ?? undefined],
  ];
  for (const [key, path] of files) {
    if (path && !isFile(path)) {
      add(
        key,
        path,
        'the file does not exist',
        'check the path (relative paths are taken from the kubeconfig’s folder)',
      );
    }
  }
}

function checkServer(
  server: string,
  skipTLSVerify: boolean,
  key: string,
  add: (key: string, value: unknown, problem: string, fix: string) => void,
): void {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    add(key, server, 'not a URL', 'write the API server’s address, e.g. https://api.example.com:6443');
    return;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    add(key, server, `${url.protocol} is not a scheme the API server speaks`, 'write https://host:port');
  } else if (url.protocol === 'http:' && !skipTLSVerify) {
    // client-node refuses every request then: "HTTP protocol is not allowed when skipTLSVerify is not set".
    add(
      key,
      server,
      'plain http:// is refused unless insecure-skip-tls-verify is true',
      'write the https:// address of the API server (or, for a test server without TLS, set insecure-skip-tls-verify: true)',
    );
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The namespace a component runs in, where controller-runtime puts its Lease when told nothing:
 * the pod's (POD_NAMESPACE, else the service account's namespace file), else the kubeconfig
 * context's, else `default`.
 */
export function podNamespace(
  env: Record<string, string | undefined>,
  readServiceAccountNamespace: () => string | undefined = serviceAccountNamespace,
  kubeConfig?: KubeConfig,
): string {
  const fromEnv = env.POD_NAMESPACE?.trim();
  if (fromEnv) return fromEnv;
  const fromFile = readServiceAccountNamespace()?.trim();
  if (fromFile) return fromFile;
  const ctx = kubeConfig?.getContextObject(kubeConfig.getCurrentContext());
  return ctx?.namespace || 'default';
}

function serviceAccountNamespace(): string | undefined {
  try {
    return readFileSync(join(SERVICE_ACCOUNT, 'namespace'), 'utf8');
  } catch {
    return undefined;
  }
}
