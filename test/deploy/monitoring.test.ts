/**
 * deploy/<part>/monitoring: applied by the real kubectl beside each command's own manifests, on the
 * Kubernetes emulator with the Prometheus Operator's CRDs (stand-ins), and pointing at what runs:
 * each ServiceMonitor selects one Service whose port exists, whose selector picks the command's pods
 * and whose target is the container port the command serves /metrics on (its flag, or kuryr.conf);
 * HTTPS with a bearer token and TLS settings exactly where the port is a secure one, with the
 * scraper bound to a role that may get /metrics. The PodMonitor picks the kuryr daemon's pods.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type {
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1Container,
  V1PodTemplateSpec,
  V1Service,
} from '@kubernetes/client-node';
import { kinds, type KubeClient, type KubernetesObject } from '../../src/kube/index.ts';
import { testClient } from '../../src/kube/testing/env.ts';
import { kubectl, noKubectl } from '../../src/kube/testing/kubectl.ts';
import { PROMETHEUS_OPERATOR_CRDS } from '../../src/kube/testing/prometheus-operator.ts';
import { eventually, startTestKube, type TestKube } from '../../src/sim/kube/testing/harness.ts';

const DEPLOY = join(import.meta.dirname, '..', '..', 'deploy');
const skip = noKubectl();

interface Endpoint {
  port?: string;
  path?: string;
  scheme?: string;
  bearerTokenFile?: string;
  tlsConfig?: Record<string, unknown>;
}
interface Monitor extends KubernetesObject {
  spec: {
    selector: { matchLabels: Record<string, string> };
    endpoints?: Endpoint[];
    podMetricsEndpoints?: Endpoint[];
  };
}
interface Workload extends KubernetesObject {
  spec: { template: V1PodTemplateSpec };
}

/** The port a command serves /metrics on, from its command line or config, and whether it is secure. */
interface Expected {
  part: string;
  monitor: { kind: 'ServiceMonitor' | 'PodMonitor'; namespace: string; name: string };
  workload: string;
  port: (c: V1Container, kuryrConf: string) => number;
  secure: boolean;
}

const flagPort = (c: V1Container, flag: string): number => {
  const arg = (c.args ?? []).find((a) => a.startsWith(`${flag}=`));
  assert.ok(arg, `${c.name} has ${flag}`);
  return Number(arg.split(':').at(-1)!.split('=').at(-1));
};
const confPort = (conf: string, key: string): number =>
  Number(new RegExp(`^\\s*${key} = (\\d+)$`, 'm').exec(conf)?.[1]);

const EXPECTED: Expected[] = [
  {
    part: 'ccm',
    monitor: { kind: 'ServiceMonitor', namespace: 'kube-system', name: 'shiftstack-ccm' },
    workload: 'shiftstack-ccm',
    port: (c) => flagPort(c, '--secure-port'),
    secure: true,
  },
  {
    part: 'capo',
    monitor: { kind: 'ServiceMonitor', namespace: 'capo-system', name: 'capo-controller-manager' },
    workload: 'capo-controller-manager',
    port: (c) => flagPort(c, '--diagnostics-address'),
    secure: true,
  },
  {
    part: 'mapo',
    monitor: {
      kind: 'ServiceMonitor',
      namespace: 'openshift-machine-api',
      name: 'machine-api-provider-openstack',
    },
    workload: 'machine-api-provider-openstack',
    port: (c) => flagPort(c, '--metrics-bind-address'),
    secure: false,
  },
  {
    part: 'ccm-operator',
    monitor: {
      kind: 'ServiceMonitor',
      namespace: 'openshift-cloud-controller-manager-operator',
      name: 'cluster-cloud-controller-manager-operator',
    },
    workload: 'cluster-cloud-controller-manager-operator',
    port: (c) => flagPort(c, '--metrics-bind-address'),
    secure: false,
  },
  {
    part: 'kuryr',
    monitor: { kind: 'ServiceMonitor', namespace: 'openshift-kuryr', name: 'kuryr-controller' },
    workload: 'kuryr-controller',
    port: (_, conf) => confPort(conf, 'controller_exporter_port'),
    secure: false,
  },
  {
    part: 'kuryr',
    monitor: { kind: 'PodMonitor', namespace: 'openshift-kuryr', name: 'kuryr-cni' },
    workload: 'kuryr-cni',
    port: (_, conf) => confPort(conf, 'cni_exporter_port'),
    secure: false,
  },
];

const matches = (selector: Record<string, string>, labels: Record<string, string> | undefined) =>
  Object.entries(selector).every(([k, v]) => labels?.[k] === v);

describe(
  'deploy/*/monitoring: ServiceMonitors and PodMonitors on the real ports and labels',
  { skip },
  () => {
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

    const run = async (args: string[]) => {
      const r = await kubectl(args, kube.kubeconfigPath, kube.dir);
      assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.err}`);
      return r.out;
    };

    it('without the Prometheus Operator’s CRDs, kubectl refuses a monitoring kustomization (deploy/<part> itself needs none)', async () => {
      const r = await kubectl(
        ['apply', '-k', join(DEPLOY, 'mapo', 'monitoring')],
        kube.kubeconfigPath,
        kube.dir,
      );
      assert.notEqual(r.code, 0);
      assert.match(r.err, /no matches for kind "ServiceMonitor"/);
    });

    it('applies beside each command’s manifests, and every monitor reaches its command’s metrics port', async () => {
      for (const crd of PROMETHEUS_OPERATOR_CRDS) await api.create(kinds.CustomResourceDefinition, crd);
      await eventually(
        async () => {
          for (const kind of ['ServiceMonitor', 'PodMonitor'])
            await api.discover('monitoring.coreos.com/v1', kind);
          return true;
        },
        { timeoutMs: 30_000, intervalMs: 50, what: 'the Prometheus Operator kinds served' },
      );

      // The ccm's is a component added to the user's own kustomization (a path relative to it).
      const overlay = join(kube.dir, 'ccm-monitored');
      await mkdir(overlay, { recursive: true });
      await writeFile(
        join(overlay, 'kustomization.yaml'),
        `resources: [${relative(overlay, join(DEPLOY, 'ccm'))}]\ncomponents: [${relative(overlay, join(DEPLOY, 'ccm', 'monitoring'))}]\n`,
      );
      const out = await run(['apply', '-k', overlay]);
      assert.match(out, /servicemonitor.monitoring.coreos.com\/shiftstack-ccm created/);
      for (const part of ['capo', 'mapo', 'ccm-operator', 'kuryr']) {
        await run(['apply', '-k', join(DEPLOY, part)]);
        assert.match(
          await run(['apply', '-k', join(DEPLOY, part, 'monitoring')]),
          /monitor.monitoring.coreos.com\/\S+ created/,
        );
      }
      const kuryrConf = await readFile(join(DEPLOY, 'kuryr', 'config.yaml'), 'utf8');

      for (const want of EXPECTED) {
        const { namespace } = want.monitor;
        const what = `${want.part}: ${want.monitor.kind} ${namespace}/${want.monitor.name}`;
        const type = await api.discover('monitoring.coreos.com/v1', want.monitor.kind);
        const monitor = (await api.get(type, { namespace, name: want.monitor.name })) as Monitor;
        const selector = monitor.spec.selector.matchLabels;
        const workloads = [
          ...(await api.list(kinds.Deployment, { namespace })).items,
          ...(await api.list(kinds.DaemonSet, { namespace })).items,
        ] as Workload[];
        const workload = workloads.find((w) => w.metadata?.name === want.workload);
        assert.ok(workload, what);
        const container = workload.spec.template.spec!.containers[0]!;
        const metricsPort = want.port(container, kuryrConf);
        assert.ok(metricsPort > 0, what);

        const endpoints = monitor.spec.endpoints ?? monitor.spec.podMetricsEndpoints ?? [];
        assert.equal(endpoints.length, 1, what);
        const endpoint = endpoints[0]!;
        assert.equal(endpoint.path, '/metrics', what);
        let containerPortName = endpoint.port;
        if (want.monitor.kind === 'ServiceMonitor') {
          const services = (await api.list<V1Service>(kinds.Service, { namespace })).items.filter((s) =>
            matches(selector, s.metadata?.labels),
          );
          assert.equal(services.length, 1, `${what} selects one Service`);
          const service = services[0]!;
          const servicePort = service.spec?.ports?.find((p) => p.name === endpoint.port);
          assert.ok(servicePort, `${what}: the Service has the port ${endpoint.port}`);
          const picked = workloads.filter((w) =>
            matches(service.spec!.selector!, w.spec.template.metadata?.labels),
          );
          assert.deepEqual(
            picked.map((w) => w.metadata?.name),
            [want.workload],
            `${what}: the Service picks the command's pods only`,
          );
          containerPortName = String(servicePort.targetPort);
          assert.equal(servicePort.port, metricsPort, what);
        } else {
          assert.ok(matches(selector, workload.spec.template.metadata?.labels), `${what} picks the pods`);
          const others = workloads.filter(
            (w) => w !== workload && matches(selector, w.spec.template.metadata?.labels),
          );
          assert.deepEqual(others, [], what);
        }
        const declared = container.ports?.find((p) => p.name === containerPortName);
        assert.equal(
          declared?.containerPort,
          metricsPort,
          `${what}: ${containerPortName} is the metrics port`,
        );

        if (want.secure) {
          assert.equal(endpoint.scheme, 'https', what);
          assert.ok(endpoint.bearerTokenFile, `${what}: a bearer token for delegated auth`);
          assert.ok(endpoint.tlsConfig, `${what}: TLS settings for the serving certificate`);
        } else {
          assert.equal(endpoint.scheme, 'http', what);
          assert.equal(endpoint.bearerTokenFile, undefined, what);
        }
      }

      // The scrapers of the secure ports may get /metrics.
      for (const name of ['system:cloud-controller-manager:metrics-reader', 'capo-metrics-reader']) {
        const binding = await api.get<V1ClusterRoleBinding>(kinds.ClusterRoleBinding, { name });
        const role = await api.get<V1ClusterRole>(kinds.ClusterRole, { name: binding.roleRef.name });
        assert.ok(
          role.rules?.some((r) => r.nonResourceURLs?.includes('/metrics') && r.verbs.includes('get')),
          name,
        );
        assert.equal(binding.subjects?.[0]?.kind, 'ServiceAccount');
      }
      // The ccm's port is opened for the scrape; the probes still reach it on the loopback.
      const ds = await api.get(kinds.DaemonSet, { namespace: 'kube-system', name: 'shiftstack-ccm' });
      const args = ds.spec!.template.spec!.containers[0]!.args!;
      assert.ok(args.includes('--bind-address=0.0.0.0'), args.join(' '));
      assert.ok(!args.includes('--bind-address=127.0.0.1'), args.join(' '));
    });
  },
);
