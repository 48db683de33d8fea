/**
 * The operator's end-to-end bed: the Kubernetes emulator with the OpenShift CRDs of
 * deploy/ccm-operator/crds, the namespaces the operator reads and writes, the images ConfigMap,
 * a system trust bundle on disk, and helpers that play the rest of OpenShift: the installer
 * (Infrastructure, the cloud config), the network operator (Proxy), the kube-controller-manager
 * operator (its CloudControllerOwner condition) and the Deployment controller (rollout status,
 * which the emulator does not run). The operator runs in-process, as `shiftstack ccm-operator run`
 * would, against the emulator's kubeconfig.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import type { CoreV1Event, V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import type { Clock } from '../../lib/clock.ts';
import { createLogger, LOG_LEVELS, type Logger, type LogLevel } from '../../lib/log.ts';
import { createRegistry } from '../../lib/metrics.ts';
import { selfSignedCert } from '../../lib/tls-cert.ts';
import {
  clone,
  isAlreadyExists,
  isConflict,
  isNotFound,
  kinds,
  Manager,
  type KubeClient,
  type KubernetesObject,
} from '../../kube/index.ts';
import { resourcePath } from '../../kube/resource.ts';
import { kubeConfigFrom, testClient } from '../../kube/testing/env.ts';
import { startKubeSim, type RunningKubeSim } from '../../sim/kube/start.ts';
import { eventually } from '../../sim/kube/testing/harness.ts';
import {
  ALL_KINDS,
  CLUSTER,
  CLUSTER_OPERATOR_NAME,
  Conditions,
  IMAGES_CONFIGMAP,
  IMAGES_KEY,
  MANAGED_NAMESPACE,
  OPENSHIFT_CONFIG_MANAGED_NAMESPACE,
  OPENSHIFT_CONFIG_NAMESPACE,
  OPERATOR_NAMESPACE,
  crdFiles,
  operatorKinds,
  type ClusterOperator,
  type OpenShiftCondition,
} from '../api/index.ts';
import { registerOperatorControllers } from '../cmd.ts';
import type { OperandsControllerOptions } from '../controllers/operands.ts';
import type { OpenStackCcm, OperandRenderer } from '../operands/types.ts';
import type { OperatorSettings } from '../settings.ts';
import { renderOperands } from '../operands/index.ts';

/** The cloud config ConfigMap the installer writes, and its key. */
export const CLOUD_PROVIDER_CONFIG = 'cloud-provider-config';
export const CLOUD_PROVIDER_CONFIG_KEY = 'config';
export const RELEASE = '4.18.0-test';

/** Images of every platform the test renderer knows, as upstream's images.json names them. */
export const TEST_IMAGES: Readonly<Record<string, string>> = {
  shiftstack: 'quay.io/shiftstack/shiftstack:test',
  cloudControllerManagerOpenStack: 'registry.example/openstack-cloud-controller-manager:test',
  cloudControllerManagerAWS: 'registry.example/aws-cloud-controller-manager:test',
  cloudControllerManagerGCP: 'registry.example/gcp-cloud-controller-manager:test',
};

export interface StartOperatorOptions {
  /** The operand renderer (default: renderOperands). */
  render?: OperandRenderer;
  openstackCcm?: OpenStackCcm;
  imagesFile?: string;
  clock?: Clock;
  log?: Logger;
  operands?: OperandsControllerOptions;
  /** Replaces the emulator's admin kubeconfig (the operator as its ServiceAccount). */
  kubeconfig?: string;
}

export interface RunningOperator {
  manager: Manager;
  settings: OperatorSettings;
  readonly failure: unknown;
  stop(): Promise<void>;
}

export interface OperatorEnv {
  kube: RunningKubeSim;
  api: KubeClient;
  dir: string;
  /** The system trust bundle the operator reads (`--system-ca-bundle`). */
  systemBundlePath: string;
  /** Creates or updates Infrastructure `cluster` with `platformStatus.type = platform` (undefined: no platformStatus). */
  setInfrastructure(platform: string | undefined, status?: Record<string, unknown>): Promise<void>;
  /** Writes the cloud config ConfigMap (`openshift-config/cloud-provider-config`, key `config`) and its other keys. */
  setCloudConfig(text: string, extra?: Record<string, string>): Promise<void>;
  /** KubeControllerManager `cluster` with its CloudControllerOwner condition; undefined deletes the object. */
  setCloudControllerOwner(status: 'True' | 'False' | 'Unknown' | undefined): Promise<void>;
  /** Proxy `cluster` naming `openshift-config/<name>` (key ca-bundle.crt) as its trustedCA. */
  setProxyTrustedCA(name: string, pem: string): Promise<void>;
  /** Plays the Deployment controller once: every Deployment of the managed namespace has rolled out. */
  rollOut(): Promise<void>;
  /**
   * Plays the Deployment controller from now on: each Deployment of the managed namespace rolls
   * out whenever its generation moves (polled every 50 ms), until the env closes.
   */
  startRollouts(): void;
  clusterOperator(): Promise<ClusterOperator | undefined>;
  condition(type: string): Promise<OpenShiftCondition | undefined>;
  /** Waits until the ClusterOperator's conditions match `want` (type → status). */
  waitForConditions(want: Record<string, string>, what?: string): Promise<ClusterOperator>;
  configMap(namespace: string, name: string): Promise<V1ConfigMap | undefined>;
  deployments(): Promise<V1Deployment[]>;
  /** Events about an object, by involvedObject name (and namespace for namespaced objects). */
  events(name: string, namespace?: string): Promise<CoreV1Event[]>;
  startOperator(opts?: StartOperatorOptions): Promise<RunningOperator>;
  close(): Promise<void>;
}

export async function startOperatorEnv(opts: { systemBundle?: string } = {}): Promise<OperatorEnv> {
  const dir = await mkdtemp(join(tmpdir(), 'shiftstack-ccm-operator-'));
  const kube = await startKubeSim({ kubeconfigPath: join(dir, 'kubeconfig') });
  const api = testClient(kube.kubeconfigPath);
  await applyCrds(api);
  for (const name of [
    OPERATOR_NAMESPACE,
    MANAGED_NAMESPACE,
    OPENSHIFT_CONFIG_NAMESPACE,
    OPENSHIFT_CONFIG_MANAGED_NAMESPACE,
  ]) {
    await ignoreExists(
      api.create(kinds.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
    );
  }
  await api.create(kinds.ConfigMap, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace: OPERATOR_NAMESPACE, name: IMAGES_CONFIGMAP },
    data: { [IMAGES_KEY]: JSON.stringify(TEST_IMAGES) },
  });
  const systemBundlePath = join(dir, 'tls-ca-bundle.pem');
  await writeFile(systemBundlePath, opts.systemBundle ?? testCA('system-root'));
  const running = new Set<RunningOperator>();
  let rollouts: (AbortController & { done?: Promise<void> }) | undefined;

  const upsertConfigMap = async (namespace: string, name: string, data: Record<string, string>) => {
    const cur = await getOr(api.get(kinds.ConfigMap, { namespace, name }));
    if (!cur) {
      await api.create(kinds.ConfigMap, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { namespace, name },
        data,
      });
      return;
    }
    const next = clone(cur);
    next.data = data;
    await api.update(kinds.ConfigMap, next);
  };

  /** Creates the cluster-scoped object if absent, then writes its status through /status. */
  const upsertStatus = async <T extends KubernetesObject & { status?: unknown; spec?: unknown }>(
    type: (typeof operatorKinds)[keyof typeof operatorKinds],
    spec: unknown,
    status: unknown,
  ) => {
    let cur = (await getOr(api.get(type, { name: CLUSTER }))) as T | undefined;
    if (!cur) {
      cur = (await api.create(type, {
        apiVersion: type.apiVersion,
        kind: type.kind,
        metadata: { name: CLUSTER },
        spec,
      } as never)) as T;
    }
    await api.updateStatus(type, { ...cur, status } as never);
  };

  const env: OperatorEnv = {
    kube,
    api,
    dir,
    systemBundlePath,
    async setInfrastructure(platform, status = {}) {
      await upsertStatus(
        operatorKinds.Infrastructure,
        {
          cloudConfig: { name: CLOUD_PROVIDER_CONFIG, key: CLOUD_PROVIDER_CONFIG_KEY },
          ...(platform ? { platformSpec: { type: platform } } : {}),
        },
        {
          infrastructureName: 'test-x7k2p',
          controlPlaneTopology: 'HighlyAvailable',
          infrastructureTopology: 'HighlyAvailable',
          ...(platform ? { platform, platformStatus: { type: platform } } : {}),
          ...status,
        },
      );
    },
    async setCloudConfig(text, extra = {}) {
      await upsertConfigMap(OPENSHIFT_CONFIG_NAMESPACE, CLOUD_PROVIDER_CONFIG, {
        [CLOUD_PROVIDER_CONFIG_KEY]: text,
        ...extra,
      });
    },
    async setCloudControllerOwner(status) {
      if (status === undefined) {
        await getOr(api.delete(operatorKinds.KubeControllerManager, { name: CLUSTER }));
        return;
      }
      await upsertStatus(
        operatorKinds.KubeControllerManager,
        { managementState: 'Managed' },
        {
          conditions: [
            {
              type: Conditions.CloudControllerOwner,
              status,
              reason: status === 'False' ? 'CloudProviderExternal' : 'InTreeCloudProvider',
              message: `test: CloudControllerOwner=${status}`,
              lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
            },
          ],
        },
      );
    },
    async setProxyTrustedCA(name, pem) {
      await upsertConfigMap(OPENSHIFT_CONFIG_NAMESPACE, name, { 'ca-bundle.crt': pem });
      await upsertStatus(operatorKinds.Proxy, { trustedCA: { name } }, {});
    },
    async rollOut() {
      for (const listed of await env.deployments()) {
        const key = { namespace: MANAGED_NAMESPACE, name: listed.metadata?.name ?? '' };
        // The operator may write the Deployment meanwhile: read again and retry, as a controller would.
        await eventually(
          async () => {
            // Gone meanwhile (the operator pruned it): nothing to roll out.
            const d = await getOr(api.get(kinds.Deployment, key));
            if (!d) return true;
            const replicas = d.spec?.replicas ?? 1;
            try {
              await api.updateStatus(kinds.Deployment, {
                ...d,
                status: {
                  observedGeneration: d.metadata?.generation ?? 1,
                  replicas,
                  updatedReplicas: replicas,
                  readyReplicas: replicas,
                  availableReplicas: replicas,
                },
              });
              return true;
            } catch (err) {
              if (isConflict(err) || isNotFound(err)) return isNotFound(err);
              throw err;
            }
          },
          { what: `Deployment ${key.name} rolled out` },
        );
      }
    },
    startRollouts() {
      if (rollouts) return;
      const stop = new AbortController();
      rollouts = stop;
      const loop = async () => {
        while (!stop.signal.aborted) {
          const pending = (await env.deployments()).some(
            (d) => (d.status?.observedGeneration ?? 0) < (d.metadata?.generation ?? 0),
          );
          // One failed round (the API busy, a Deployment pruned mid-way) must not end the loop:
          // every later test would wait for rollouts that never come.
          if (pending)
            await env
              .rollOut()
              .catch((err: unknown) => process.stderr.write(`test rollout: ${String(err)}\n`));
          await sleep(50, undefined, { signal: stop.signal }).catch(() => undefined);
        }
      };
      rollouts.done = loop().catch((err: unknown) => {
        if (!stop.signal.aborted) process.stderr.write(`test rollouts stopped: ${String(err)}\n`);
      });
    },
    async clusterOperator() {
      return getOr(api.get(operatorKinds.ClusterOperator, { name: CLUSTER_OPERATOR_NAME }));
    },
    async condition(type) {
      return (await env.clusterOperator())?.status?.conditions?.find((c) => c.type === type);
    },
    async waitForConditions(want, what) {
      let last = '';
      try {
        return await eventually(
          async () => {
            const co = await env.clusterOperator();
            const conditions = co?.status?.conditions ?? [];
            last = conditions.map((c) => `${c.type}=${c.status} (${c.message ?? ''})`).join('; ');
            return Object.entries(want).every(([t, s]) =>
              conditions.some((c) => c.type === t && c.status === s),
            )
              ? co
              : undefined;
          },
          { timeoutMs: 20_000, what: what ?? JSON.stringify(want) },
        );
      } catch (err) {
        throw new Error(`${(err as Error).message}; the conditions: ${last}`, { cause: err });
      }
    },
    configMap(namespace, name) {
      return getOr(api.get(kinds.ConfigMap, { namespace, name }));
    },
    async deployments() {
      return (await api.list(kinds.Deployment, { namespace: MANAGED_NAMESPACE })).items;
    },
    async events(name, namespace) {
      const items = (await api.list(kinds.Event, { namespace: namespace ?? 'default' })).items;
      return items.filter((e) => e.involvedObject.name === name);
    },
    startOperator(o = {}) {
      return startOperator(env, running, o);
    },
    async close() {
      for (const r of [...running]) await r.stop();
      rollouts?.abort();
      await rollouts?.done;
      await kube.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return env;
}

function startOperator(
  env: OperatorEnv,
  running: Set<RunningOperator>,
  o: StartOperatorOptions,
): Promise<RunningOperator> {
  const log = o.log ?? createLogger({ level: testLogLevel() });
  const manager = new Manager({
    name: 'cloud-controller-manager-operator',
    kubeConfig: kubeConfigFrom(o.kubeconfig ?? env.kube.kubeconfigPath),
    qps: 0,
    log,
    registry: createRegistry({ defaultMetrics: false }),
    gracefulShutdownTimeoutMs: 5_000,
    ...(o.clock ? { clock: o.clock } : {}),
  });
  const settings: OperatorSettings = {
    managedNamespace: MANAGED_NAMESPACE,
    operatorNamespace: OPERATOR_NAMESPACE,
    releaseVersion: RELEASE,
    systemTrustBundle: env.systemBundlePath,
    imagesFile: o.imagesFile,
    openstackCcm: o.openstackCcm ?? 'shiftstack',
    render: o.render ?? renderOperands,
  };
  // Rollouts are seen through the Deployments' watch events; the timer must not hide a missing watch.
  registerOperatorControllers(manager, settings, { progressingRequeueMs: 600_000, ...o.operands });
  const stopper = new AbortController();
  let failure: unknown;
  const done = manager.start(stopper.signal).catch((err: unknown) => {
    failure = err;
    if (!o.log && testLogLevel() === 'silent')
      process.stderr.write(`ccm-operator manager stopped with an error: ${String(err)}\n`);
  });
  const handle: RunningOperator = {
    manager,
    settings,
    get failure() {
      return failure;
    },
    async stop() {
      running.delete(handle);
      stopper.abort(new Error('test done'));
      await done;
    },
  };
  running.add(handle);
  return Promise.resolve(handle);
}

/** A PEM CA certificate named `cn`, for trust bundles. */
export function testCA(cn: string): string {
  return selfSignedCert({ commonName: cn, hosts: [cn] }).certPem;
}

/** `CCM_OPERATOR_TEST_LOG=debug` shows the operator's log of a test run; silent by default. */
function testLogLevel(): LogLevel {
  const level = process.env.CCM_OPERATOR_TEST_LOG;
  return LOG_LEVELS.find((l) => l === level) ?? 'silent';
}

/** deploy/ccm-operator/crds, as `kubectl apply -f` would, then waits until every kind is served. */
async function applyCrds(api: KubeClient): Promise<void> {
  for (const f of crdFiles()) {
    await ignoreExists(api.create(kinds.CustomResourceDefinition, parseYaml(f.text) as never));
  }
  for (const k of ALL_KINDS) {
    await eventually(
      async () => {
        await api.list(k.resource, { limit: 1 });
        return true;
      },
      { timeoutMs: 20_000, what: `${k.crdName} served (${resourcePath(k.resource)})` },
    );
  }
}

async function ignoreExists(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

async function getOr<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
