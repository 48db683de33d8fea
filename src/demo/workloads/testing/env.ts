/**
 * The runner's test bed: the CCM's (both emulators, the demo user's cloud) with deploy/ccm's
 * ServiceAccount and RBAC applied in kube-system, the cloud config as the operator syncs it (a
 * `cloud-conf` ConfigMap whose `clouds-file` names the `openstack-cloud-credentials` Secret's
 * clouds.yaml, mounted) and a WorkloadRunner on a manager of its own, on a scaled clock.
 */
import { join } from 'node:path';
import type { V1Container, V1Deployment } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { createLogger } from '../../../lib/log.ts';
import { kinds, Manager } from '../../../kube/index.ts';
import { kubeConfigFrom } from '../../../kube/testing/env.ts';
import { kustomizationObjects } from '../../../kube/testing/kustomization.ts';
import { startCcmEnv, type CcmEnv } from '../../../ccm/testing/env.ts';
import { registerWorkloadRunner, type WorkloadRunner } from '../runner.ts';

export const NS = 'kube-system';
export const IMAGE = 'registry.example.com/shiftstack:test';
/** Every kubelet and controller duration at a fifth: probes every 2 s, back-off from 2 s. */
export const TIME_SCALE = 0.2;

const DEPLOY = join(import.meta.dirname, '..', '..', '..', '..', 'deploy', 'ccm');

export interface RunnerEnv {
  env: CcmEnv;
  runner: WorkloadRunner;
  /** Stops the runner's manager (and so every pod). */
  stopRunner(): Promise<void>;
  close(): Promise<void>;
}

export interface RunnerEnvOptions {
  /** The images the runner runs (default [IMAGE]). */
  images?: string[];
  /** The node the runner plays (default this host's name). */
  nodeName?: string;
  /** False leaves deploy/ccm's ServiceAccount and RBAC to the test (it applies deploy/ccm itself). */
  ccmRbac?: boolean;
}

export async function startRunnerEnv(opts: RunnerEnvOptions = {}): Promise<RunnerEnv> {
  const env = await startCcmEnv();
  // deploy/ccm's ServiceAccount and RBAC (not its Secret and DaemonSet: the tests bring their own).
  for (const obj of opts.ccmRbac === false ? [] : await kustomizationObjects(join(DEPLOY, 'base'))) {
    if (obj.kind === 'Secret') continue;
    await env.api.create(await env.api.discover(obj.apiVersion!, obj.kind!), obj);
  }
  const clouds = {
    clouds: {
      openstack: {
        auth: {
          auth_url: env.sim.authUrl,
          username: 'demo',
          password: 'secret',
          project_name: 'demo',
          user_domain_name: 'Default',
          project_domain_name: 'Default',
        },
        region_name: 'RegionOne',
      },
    },
  };
  await env.api.create(kinds.Secret, {
    metadata: { name: 'openstack-cloud-credentials', namespace: NS },
    stringData: { 'clouds.yaml': stringify(clouds) },
  });
  await env.api.create(kinds.ConfigMap, {
    metadata: { name: 'cloud-conf', namespace: NS },
    data: {
      'cloud.conf':
        '[Global]\nuse-clouds = true\nclouds-file = /etc/openstack/secret/clouds.yaml\ncloud = openstack\n',
    },
  });
  await env.api.create(kinds.ConfigMap, {
    metadata: { name: 'cluster', namespace: NS },
    data: { name: 'infra-test' },
  });

  const mgr = new Manager({
    name: 'workload-runner-test',
    kubeConfig: kubeConfigFrom(env.kube.kubeconfigPath),
    qps: 0,
    log: createLogger({ level: 'silent' }),
    gracefulShutdownTimeoutMs: 30_000,
  });
  const runner = registerWorkloadRunner(mgr, {
    namespaces: [NS],
    images: opts.images ?? [IMAGE],
    kubeConfig: kubeConfigFrom(env.kube.kubeconfigPath),
    dir: join(env.dir, 'pods'),
    timeScale: TIME_SCALE,
    ...(opts.nodeName ? { nodeName: opts.nodeName } : {}),
  });
  const stopper = new AbortController();
  const done = mgr.start(stopper.signal);
  let stopped: Promise<void> | undefined;
  const stopRunner = () => {
    stopper.abort(new Error('test done'));
    stopped ??= done;
    return stopped;
  };
  return {
    env,
    runner,
    stopRunner,
    async close() {
      await stopRunner();
      await env.close();
    },
  };
}

/** `shiftstack ccm` as the ccm-operator's OpenStack operand runs it (src/ccm-operator/operands). */
export function ccmContainer(extraArgs: string[] = []): V1Container {
  const probe = (path: string) => ({
    httpGet: { host: '127.0.0.1', port: 10258, scheme: 'HTTPS', path },
  });
  return {
    name: 'cloud-controller-manager',
    image: IMAGE,
    command: [
      '/bin/sh',
      '-c',
      'set -a; if [ -f /etc/kubernetes/apiserver-url.env ]; then . /etc/kubernetes/apiserver-url.env; fi; exec ' +
        '/usr/local/bin/entrypoint "$@"',
      'shiftstack',
    ],
    args: [
      'ccm',
      '--cloud-config=/etc/openstack/config/cloud.conf',
      '--cluster-name=$(CLUSTER_NAME)',
      '--configure-cloud-routes=false',
      '--bind-address=127.0.0.1',
      '--secure-port=10258',
      '--leader-elect=true',
      '--leader-elect-lease-duration=15s',
      '--leader-elect-renew-deadline=10s',
      '--leader-elect-retry-period=2s',
      ...extraArgs,
    ],
    env: [
      { name: 'CLUSTER_NAME', valueFrom: { configMapKeyRef: { name: 'cluster', key: 'name' } } },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    ],
    ports: [{ name: 'https', containerPort: 10258, protocol: 'TCP' }],
    livenessProbe: { ...probe('/healthz'), initialDelaySeconds: 10, failureThreshold: 8 },
    readinessProbe: probe('/readyz'),
    volumeMounts: [
      { name: 'host-etc-kube', mountPath: '/etc/kubernetes', readOnly: true },
      { name: 'secret-occm', mountPath: '/etc/openstack/secret', readOnly: true },
      { name: 'cloud-config', mountPath: '/etc/openstack/config', readOnly: true },
    ],
  };
}

export function ccmDeployment(name: string, replicas: number, container = ccmContainer()): V1Deployment {
  const labels = { 'k8s-app': name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS, labels },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          hostNetwork: true,
          serviceAccountName: 'cloud-controller-manager',
          terminationGracePeriodSeconds: 10,
          containers: [container],
          volumes: [
            { name: 'host-etc-kube', hostPath: { path: '/etc/kubernetes', type: 'Directory' } },
            {
              name: 'secret-occm',
              secret: {
                secretName: 'openstack-cloud-credentials',
                items: [{ key: 'clouds.yaml', path: 'clouds.yaml' }],
              },
            },
            {
              name: 'cloud-config',
              configMap: { name: 'cloud-conf', items: [{ key: 'cloud.conf', path: 'cloud.conf' }] },
            },
          ],
        },
      },
    },
  };
}

/** Whether a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
