/**
 * The CAPO controllers' end-to-end bed: the Kubernetes emulator with the CRDs of deploy/capo/crds
 * applied (their conversion webhook served by the bed, `env.webhook`), the OpenStack emulator, a
 * namespace holding the identity Secret a user's manifests name (`capo-demo-cloud-config`, key
 * `clouds.yaml`, cloud `openstack`: the emulator's demo project, as in examples/capo/cluster.yaml), and the controllers run in-process against both the way a deployment
 * reaches them: a kubeconfig, and the clouds.yaml of the Secret.
 *
 * Each controller registers itself through `CAPO_CONTROLLERS` (helpers add their entry); a test
 * picks which run with `startCapo(env, { controllers })` and tunes them with the per-controller
 * option blocks of `StartCapoOptions`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Secret } from '@kubernetes/client-node';
import { stringify as stringifyYaml } from 'yaml';
import type { Clock } from '../../lib/clock.ts';
import { createLogger, LOG_LEVELS, type Logger, type LogLevel } from '../../lib/log.ts';
import { createRegistry, type Registry } from '../../lib/metrics.ts';
import { isAlreadyExists, kinds, Manager, type KubeClient } from '../../kube/index.ts';
import { resourcePath } from '../../kube/resource.ts';
import { kubeConfigFrom, testClient } from '../../kube/testing/env.ts';
import type { OpenStackClient, OpenStackClientOptions } from '../../openstack/client.ts';
import { bootSources } from '../../openstack/compute/v2/testing/boot.ts';
import { DiscoveryCache } from '../../openstack/core/discovery.ts';
import { openClientTargetOn, type ClientTarget } from '../../openstack/core/testing/target.ts';
import { TokenCache } from '../../openstack/core/token-cache.ts';
import { Cleanup } from '../../openstack/network/v2/testing/fixtures.ts';
import { startKubeSim, type RunningKubeSim } from '../../sim/kube/start.ts';
import type { CloudOptions } from '../../sim/openstack/index.ts';
import { eventually, startTestCloud, type TestCloud } from '../../sim/openstack/testing/harness.ts';
import { ALL_KINDS, type IdentityRef } from '../api/index.ts';
import { capoCustomResourceDefinitions } from '../api/files.ts';
import { customResourceDefinition, type CustomResourceDefinition } from '../../kube/crd/kind.ts';
import { capoConversions } from '../api/webhook.ts';
import { serveConversionWebhook, type RunningWebhook } from '../../kube/conversion/webhook.ts';
import { CAPO_INFORMERS, CAPO_UNCACHED_KINDS, secretVersions } from '../cache.ts';
import { clientConcurrency, CLOUDS_YAML_KEY, ScopeCache } from '../identity.ts';
import {
  OPENSTACK_MACHINE_CONTROLLER,
  registerOpenStackMachineController,
  type OpenStackMachineControllerOptions,
} from '../controllers/openstackmachine.ts';
import {
  OPENSTACK_MACHINE_TEMPLATE_CONTROLLER,
  registerOpenStackMachineTemplateController,
} from '../controllers/openstackmachinetemplate.ts';
import {
  OPENSTACK_CLUSTER_CONTROLLER,
  registerOpenStackClusterController,
  type OpenStackClusterControllerOptions,
} from '../controllers/openstackcluster.ts';
import {
  OPENSTACK_SERVER_CONTROLLER,
  registerOpenStackServerController,
  type OpenStackServerControllerOptions,
} from '../controllers/openstackserver.ts';

/** The namespace and identity of examples/capo/cluster.yaml. */
export const CAPO_NAMESPACE = 'capo-demo';
export const IDENTITY_SECRET = 'capo-demo-cloud-config';
export const CLOUD_NAME = 'openstack';

/** What a controller's registration gets: the manager, the shared scope cache, the test's options. */
export type RegisterCapoController = (mgr: Manager, scopes: ScopeCache, opts: StartCapoOptions) => void;

/**
 * Every CAPO controller a test can run, by name. Each helper adds its own entry (and, in
 * StartCapoOptions, its option block).
 */
export const CAPO_CONTROLLERS: Record<string, RegisterCapoController> = {};

CAPO_CONTROLLERS[OPENSTACK_MACHINE_CONTROLLER] = (mgr, scopes, opts) =>
  registerOpenStackMachineController(mgr, scopes, {
    workers: 10,
    actAsClusterAPICore: true,
    infrastructureWaitMs: 1_000,
    buildWaitMs: 500,
    otherStateWaitMs: 1_000,
    deleteWaitMs: 200,
    ingressWaitMs: 200,
    ...opts.machine,
  });

CAPO_CONTROLLERS[OPENSTACK_MACHINE_TEMPLATE_CONTROLLER] = (mgr, scopes) =>
  registerOpenStackMachineTemplateController(mgr, scopes, { workers: 2, errorRetryMs: 200 });

CAPO_CONTROLLERS[OPENSTACK_CLUSTER_CONTROLLER] = (mgr, scopes, opts) =>
  registerOpenStackClusterController(mgr, scopes, {
    workers: 4,
    actAsClusterAPICore: true,
    bastionWaitMs: 200,
    machinesWaitMs: 200,
    deleteWaitMs: 200,
    errorRetryMs: 500,
    loadBalancerBackoff: { initialMs: 50, maxMs: 500 },
    foreignWaitMaxMs: 1_000,
    ...opts.cluster,
  });

CAPO_CONTROLLERS[OPENSTACK_SERVER_CONTROLLER] = (mgr, scopes, opts) =>
  registerOpenStackServerController(mgr, scopes, {
    workers: 10,
    backoff: { initialMs: 5, maxMs: 100, idleMs: 200 },
    waitMs: 200,
    errorInitialMs: 20,
    errorMaxMs: 200,
    ...opts.server,
  });

export interface StartCapoOptions {
  /** The controllers to run, by CAPO_CONTROLLERS name; all of them by default. */
  controllers?: readonly string[];
  /** CAPO's --scope-cache-max-size. */
  scopeCacheMaxSize?: number;
  /** Replaces the emulator's kubeconfig (a test reaching the cluster through a relay). */
  kubeconfig?: string;
  /** `--kube-api-qps` / `--kube-api-burst`; 0 (the default here): no client-side limit. */
  kubeApiQps?: number;
  kubeApiBurst?: number;
  /**
   * Options for the OpenStack clients the scope cache builds. By default each started CAPO has its
   * own token and discovery caches, as a process has: a restart remembers nothing.
   */
  client?: Omit<OpenStackClientOptions, 'signal'>;
  /** Default: silent, or the level in CAPO_TEST_LOG. */
  log?: Logger;
  /** How long in-flight reconciles may run on stop (default 5 s). */
  gracefulShutdownTimeoutMs?: number;
  /** The manager's clock (the controllers' waits and windows read it); the system's by default. */
  clock?: Clock;
  /**
   * The OpenStackMachine controller: acts as Cluster API core (no CAPI runs here) and waits
   * 100 ms–1 s instead of CAPO's 10–15 s, unless told otherwise.
   */
  machine?: Partial<OpenStackMachineControllerOptions>;
  /**
   * The OpenStackCluster controller: acts as Cluster API core and waits 50–500 ms instead of
   * CAPO's 5–15 s, unless told otherwise.
   */
  cluster?: Partial<OpenStackClusterControllerOptions>;
  /**
   * The OpenStackServer controller: waits 5–200 ms (the engine's BUILD and delete hints, bootstrap
   * data, credentials, failure back-off) instead of CAPO's 10–15 s, unless told otherwise.
   */
  server?: Partial<OpenStackServerControllerOptions>;
}

export interface RunningCapo {
  manager: Manager;
  scopes: ScopeCache;
  registry: Registry;
  /** Why the manager stopped on its own (a runnable failed), if it did. */
  readonly failure: unknown;
  stop(): Promise<void>;
}

export interface CapoEnv {
  dir: string;
  kube: RunningKubeSim;
  /**
   * The conversion webhook the CRDs name (CAPO's and Cluster API's conversions), served by the bed
   * so it outlives every capo a test starts and stops; v1beta1 traffic never calls it.
   */
  webhook: RunningWebhook;
  sim: TestCloud;
  target: ClientTarget;
  /** The demo project's client (the identity the Secret carries): set-up and checks. */
  os: OpenStackClient;
  /** The admin's client: census of everything in the cloud, whatever the project. */
  admin: OpenStackClient;
  api: KubeClient;
  cleanup: Cleanup;
  /** An active image and a flavor it fits. */
  boot: { flavorId: string; imageId: string };
  /** The namespace the identity Secret is in (`capo-demo`). */
  namespace: string;
  /** The identityRef of the Secret `capo-demo-cloud-config`. */
  identityRef: IdentityRef;
  /** A clouds.yaml for the demo project under cloud `openstack`; `authUrl` replaces Keystone's (a relay). */
  cloudsYaml(opts?: { authUrl?: string; cloudName?: string }): string;
  /** Creates (or replaces) an identity Secret; returns the identityRef naming it. */
  identitySecret(
    name: string,
    opts?: { namespace?: string; authUrl?: string; cloudName?: string; cacert?: string },
  ): Promise<IdentityRef>;
  /** Creates a namespace if absent. */
  ensureNamespace(name: string, labels?: Record<string, string>): Promise<void>;
  startCapo(opts?: StartCapoOptions): Promise<RunningCapo>;
  /**
   * Applies this release's CRDs over whatever is installed (`kubectl apply` of a new release's
   * deploy/capo/crds), their conversion webhook at `webhook`.
   */
  applyCurrentCrds(): Promise<void>;
  close(): Promise<void>;
}

export interface CapoEnvOptions {
  /**
   * `previous`: the CRDs of the release before v1beta2 (v1beta1 only, no conversion: every kind's
   * one version), for an upgrade test; `current` (the default): this release's.
   */
  crds?: 'current' | 'previous';
}

export async function startCapoEnv(
  cloudOptions: CloudOptions = {},
  opts: CapoEnvOptions = {},
): Promise<CapoEnv> {
  const dir = await mkdtemp(join(tmpdir(), 'shiftstack-capo-'));
  const kube = await startKubeSim({ kubeconfigPath: join(dir, 'kubeconfig') });
  const sim = await startTestCloud({ profile: 'fast', ...cloudOptions });
  const target = await openClientTargetOn(sim);
  const os = await target.client(target.demo);
  const admin = await target.client(target.admin!);
  const api = testClient(kube.kubeconfigPath);
  const cleanup = new Cleanup();
  const boot = (await bootSources(target, os, cleanup))!;
  const running = new Set<RunningCapo>();

  const webhook = await serveConversionWebhook({
    conversions: capoConversions({ clusterAPI: true }),
    port: 0,
  });
  await applyCrds(
    api,
    opts.crds === 'previous'
      ? ALL_KINDS.map((k) => customResourceDefinition(k))
      : capoCustomResourceDefinitions({ url: webhook.url, caBundle: webhook.caBundle }),
  );

  const env: CapoEnv = {
    dir,
    kube,
    webhook,
    sim,
    target,
    os,
    admin,
    api,
    cleanup,
    boot,
    namespace: CAPO_NAMESPACE,
    identityRef: { type: 'Secret', name: IDENTITY_SECRET, cloudName: CLOUD_NAME },
    cloudsYaml(opts = {}) {
      return stringifyYaml({
        clouds: {
          [opts.cloudName ?? CLOUD_NAME]: {
            auth: {
              auth_url: opts.authUrl ?? sim.authUrl,
              username: 'demo',
              password: sim.cloud.options.password,
              project_name: 'demo',
              user_domain_name: 'Default',
              project_domain_name: 'Default',
            },
            region_name: sim.cloud.options.region,
            interface: 'public',
            identity_api_version: 3,
          },
        },
      });
    },
    async identitySecret(name, opts = {}) {
      const namespace = opts.namespace ?? CAPO_NAMESPACE;
      await env.ensureNamespace(namespace);
      const secret: V1Secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace },
        stringData: {
          [CLOUDS_YAML_KEY]: env.cloudsYaml(opts),
          ...(opts.cacert !== undefined ? { cacert: opts.cacert } : {}),
        },
      };
      try {
        await api.create(kinds.Secret, secret);
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const current = await api.get(kinds.Secret, { namespace, name });
        await api.update(kinds.Secret, {
          ...secret,
          metadata: { ...secret.metadata, resourceVersion: current.metadata?.resourceVersion },
        });
      }
      return { type: 'Secret', name, cloudName: opts.cloudName ?? CLOUD_NAME };
    },
    async ensureNamespace(name, labels) {
      try {
        await api.create(kinds.Namespace, {
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name, ...(labels ? { labels } : {}) },
        });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
    },
    startCapo(opts = {}) {
      return startCapo(env, opts);
    },
    async applyCurrentCrds() {
      await applyCrds(api, capoCustomResourceDefinitions({ url: webhook.url, caBundle: webhook.caBundle }));
    },
    async close() {
      for (const r of [...running]) await r.stop();
      // The emulators are discarded whole; nothing of the cloud outlives the test.
      await api.close();
      await target.close();
      await kube.dispose();
      await webhook.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
  runningSets.set(env, running);
  await env.identitySecret(IDENTITY_SECRET);
  return env;
}

const runningSets = new WeakMap<object, Set<RunningCapo>>();

/**
 * Starts the selected controllers in-process on their own Manager and ScopeCache (no health port,
 * no leader election), as `shiftstack capo` would run them; `stop()` ends them gracefully. All it
 * needs of the bed is the kubeconfig (a bench's capo thread has nothing else of it).
 */
export function startCapo(
  env: { kube: { kubeconfigPath: string } },
  opts: StartCapoOptions = {},
): Promise<RunningCapo> {
  const names = opts.controllers ?? Object.keys(CAPO_CONTROLLERS);
  const unknown = names.filter((n) => !CAPO_CONTROLLERS[n]);
  if (unknown.length > 0) {
    return Promise.reject(
      new Error(
        `unknown CAPO controller(s) ${unknown.join(', ')}; known: ${Object.keys(CAPO_CONTROLLERS).join(', ')}`,
      ),
    );
  }
  const log = opts.log ?? createLogger({ level: testLogLevel() });
  const registry = createRegistry({ defaultMetrics: false });
  const manager = new Manager({
    name: 'capo-controller-manager',
    kubeConfig: kubeConfigFrom(opts.kubeconfig ?? env.kube.kubeconfigPath),
    qps: opts.kubeApiQps ?? 0,
    ...(opts.kubeApiBurst !== undefined ? { burst: opts.kubeApiBurst } : {}),
    disableCacheFor: CAPO_UNCACHED_KINDS,
    informers: CAPO_INFORMERS,
    log,
    registry,
    gracefulShutdownTimeoutMs: opts.gracefulShutdownTimeoutMs ?? 5_000,
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  const scopes = new ScopeCache({
    reader: manager.client,
    secretVersion: secretVersions(manager),
    ...(opts.scopeCacheMaxSize !== undefined ? { maxSize: opts.scopeCacheMaxSize } : {}),
    client: {
      log,
      registry,
      tokenCache: new TokenCache(),
      discoveryCache: new DiscoveryCache(),
      retry: { baseDelayMs: 10, maxDelayMs: 50 },
      userAgent: 'shiftstack-capo',
      // As `shiftstack capo` sizes it: a slot per worker that may call at once.
      concurrency: clientConcurrency(
        (opts.machine?.workers ?? 10) + (opts.server?.workers ?? 10) + (opts.cluster?.workers ?? 4) + 2,
      ),
      ...opts.client,
    },
    log,
  });
  for (const name of names) CAPO_CONTROLLERS[name]!(manager, scopes, opts);

  const stopper = new AbortController();
  let failure: unknown;
  const done = manager.start(stopper.signal).catch((err: unknown) => {
    failure = err;
    log.error({ err }, 'capo manager stopped with an error');
    // A silent test would otherwise only time out waiting for what the controllers never do.
    if (!opts.log && testLogLevel() === 'silent')
      process.stderr.write(`capo manager stopped with an error: ${String(err)}\n`);
  });
  const running = runningSets.get(env);
  const handle: RunningCapo = {
    manager,
    scopes,
    registry,
    get failure() {
      return failure;
    },
    async stop() {
      running?.delete(handle);
      stopper.abort(new Error('test done'));
      await done;
      await scopes.close();
    },
  };
  running?.add(handle);
  return Promise.resolve(handle);
}

/** `CAPO_TEST_LOG=debug` shows the controllers' log of a test run; silent by default. */
function testLogLevel(): LogLevel {
  const level = process.env.CAPO_TEST_LOG;
  return LOG_LEVELS.find((l) => l === level) ?? 'silent';
}

/**
 * Applies CRDs (deploy/capo/crds' with the conversion webhook at the bed's `webhook` instead of the
 * in-cluster Service), replacing those installed, as `kubectl apply` does, and waits until served.
 */
async function applyCrds(api: KubeClient, crds: readonly CustomResourceDefinition[]): Promise<void> {
  for (const crd of crds) {
    try {
      await api.create(kinds.CustomResourceDefinition, crd);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      const current = await api.get(kinds.CustomResourceDefinition, { name: crd.metadata.name });
      await api.update(kinds.CustomResourceDefinition, {
        ...crd,
        metadata: { ...crd.metadata, resourceVersion: current.metadata?.resourceVersion },
      });
    }
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
