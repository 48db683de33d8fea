/**
 * mapo's end-to-end bed, on capo's (`startCapoEnv`: both emulators, deploy/capo/crds): plus
 * deploy/mapo/crds and deploy/ccm-operator/crds, the namespace openshift-machine-api with what the
 * installer leaves there for examples/mapo/machineset.yaml (the clouds Secret
 * `openstack-cloud-credentials`, the user data Secrets `worker-user-data` and `master-user-data`),
 * the Infrastructure `cluster` with its API and ingress VIPs, and in the cloud the image, nodes
 * network and subnet and the worker and master security groups the example names, so that the
 * whole file applies (its worker MachineSet and its control-plane Machine). `startMapo` runs the machine controller and capo's
 * OpenStackServer controller in-process on one Manager and one ScopeCache, waits scaled down; on
 * request also the machine-api-operator's controllers (`mao`), the migration controller
 * (`migration`) and the kubelet stand-in of src/demo (`kubelets`: a Node for each ACTIVE server,
 * with providerID and addresses as a kubelet on the in-tree provider sets them, since no ccm runs).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { V1Secret } from '@kubernetes/client-node';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { CLUSTER, operatorKinds, CRD_DIR as CCM_OPERATOR_CRD_DIR } from '../../ccm-operator/api/index.ts';
import type { OpenStackPlatformStatus } from '../../ccm-operator/api/index.ts';
import { MAPO_UNCACHED_KINDS } from '../cmd.ts';
import {
  registerOpenStackServerController,
  type OpenStackServerControllerOptions,
} from '../../capo/controllers/openstackserver.ts';
import { ScopeCache } from '../../capo/identity.ts';
import { startCapoEnv, type CapoEnv } from '../../capo/testing/env.ts';
import { createLogger, LOG_LEVELS, type Logger, type LogLevel } from '../../lib/log.ts';
import { createRegistry, type Registry } from '../../lib/metrics.ts';
import { isAlreadyExists, kinds, Manager, type KubernetesObject } from '../../kube/index.ts';
import { kubeConfigFrom } from '../../kube/testing/env.ts';
import { DiscoveryCache } from '../../openstack/core/discovery.ts';
import { TokenCache } from '../../openstack/core/token-cache.ts';
import type { CloudOptions } from '../../sim/openstack/index.ts';
import { eventually } from '../../sim/openstack/testing/harness.ts';
import { ALL_KINDS, CRD_DIR, type Machine, type MachineSet } from '../api/index.ts';
import { registerMachineController, type MachineControllerOptions } from '../controllers/machine.ts';
import { ServerGroupsByName } from '../machine/server-group.ts';
import { registerMachineAPIOperatorControllers, type MachineAPIOperatorOptions } from '../mao/index.ts';
import { registerMigrationController } from '../migration/index.ts';
import { emulatedHosts, registerKubelets } from '../../demo/kubelet.ts';

export const MAPI_NAMESPACE = 'openshift-machine-api';
export const CLOUDS_SECRET = 'openstack-cloud-credentials';
export const USER_DATA_SECRET = 'worker-user-data';
/** The user data of the example's control-plane Machine. */
export const MASTER_USER_DATA_SECRET = 'master-user-data';
export const CLUSTER_ID = 'ostest-7xk2p';
export const API_VIP = '10.0.0.5';
export const INGRESS_VIP = '10.0.0.7';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const EXAMPLE = join(ROOT, 'examples', 'mapo', 'machineset.yaml');

export interface MapoEnv extends CapoEnv {
  /** The nodes network and subnet of the example's filter (name + tag). */
  nodes: { networkId: string; subnetId: string };
  /** The example's worker MachineSet, as the installer wrote it. */
  machineSet: MachineSet;
  /** A Machine from the MachineSet's template (as the MachineSet controller makes them). */
  machineFrom(name: string, edit?: (providerSpec: Record<string, unknown>) => void): Machine;
  startMapo(opts?: StartMapoOptions): Promise<RunningMapo>;
}

export interface StartMapoOptions {
  machine?: Partial<MachineControllerOptions>;
  /** capo's OpenStackServer controller: waits 5–200 ms unless told otherwise (a benchmark scales CAPO's). */
  server?: Partial<OpenStackServerControllerOptions>;
  /** Replaces the emulator's kubeconfig (a process reaching the cluster through a relay). */
  kubeconfig?: string;
  /** The machine-api-operator's MachineSet, nodelink and drain controllers (`--act-as-machine-api-operator`). */
  mao?: boolean | MachineAPIOperatorOptions;
  /** The MAPI ↔ CAPI migration controller. */
  migration?: boolean;
  /** The kubelet stand-in for the Machine API Machines' servers. */
  kubelets?: boolean;
  log?: Logger;
}

export interface RunningMapo {
  manager: Manager;
  scopes: ScopeCache;
  /** The process's metrics (the work queues' reconcile counts among them). */
  registry: Registry;
  stop(): Promise<void>;
}

/** `cloudOptions`: the OpenStack emulator's (a benchmark's realistic profile); capo's bed's by default. */
export async function startMapoEnv(cloudOptions?: CloudOptions): Promise<MapoEnv> {
  const capo = await startCapoEnv(cloudOptions);
  try {
    return await prepare(capo);
  } catch (err) {
    await capo.close();
    throw err;
  }
}

async function prepare(capo: CapoEnv): Promise<MapoEnv> {
  const { api, os } = capo;
  for (const dir of [CRD_DIR, CCM_OPERATOR_CRD_DIR]) await applyCrds(capo, dir);
  await waitServed(capo);
  await capo.ensureNamespace(MAPI_NAMESPACE);
  await capo.identitySecret(CLOUDS_SECRET, { namespace: MAPI_NAMESPACE });
  for (const name of [USER_DATA_SECRET, MASTER_USER_DATA_SECRET]) {
    await createIgnoringExisting(capo, kinds.Secret, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: MAPI_NAMESPACE },
      stringData: { userData: '{"ignition":{"version":"3.2.0"}}' },
    });
  }
  const platform: OpenStackPlatformStatus = {
    apiServerInternalIPs: [API_VIP],
    ingressIPs: [INGRESS_VIP],
    loadBalancer: { type: 'OpenShiftManagedDefault' },
  };
  const infra = await api.create(operatorKinds.Infrastructure, {
    apiVersion: operatorKinds.Infrastructure.apiVersion,
    kind: 'Infrastructure',
    metadata: { name: CLUSTER },
    spec: { platformSpec: { type: 'OpenStack' } },
  });
  await api.updateStatus(operatorKinds.Infrastructure, {
    ...infra,
    status: { infrastructureName: CLUSTER_ID, platformStatus: { type: 'OpenStack', openstack: platform } },
  });

  const network = await os.network.networks.create({ name: `${CLUSTER_ID}-openshift` });
  const subnet = await os.network.subnets.create({
    network_id: network.id,
    cidr: '10.0.0.0/16',
    ip_version: 4,
    name: `${CLUSTER_ID}-nodes`,
  });
  await os.network.tags.replace('subnets', subnet.id, [`openshiftClusterID=${CLUSTER_ID}`]);
  for (const role of ['worker', 'master'])
    await os.network.securityGroups.create({ name: `${CLUSTER_ID}-${role}` });
  const image = await os.image.images.create({
    name: `${CLUSTER_ID}-rhcos`,
    disk_format: 'raw',
    container_format: 'bare',
  });
  await os.image.images.upload(image.id, new Uint8Array(1024));

  const docs = parseAllDocuments(await readFile(EXAMPLE, 'utf8')).map((d) => d.toJS() as KubernetesObject);
  const machineSet = docs.find((d) => d.kind === 'MachineSet') as MachineSet;

  const env: MapoEnv = {
    ...capo,
    nodes: { networkId: network.id, subnetId: subnet.id },
    machineSet,
    machineFrom(name, edit) {
      const template = structuredClone(machineSet.spec!.template!);
      const value = template.spec!.providerSpec!.value as Record<string, unknown>;
      edit?.(value);
      return {
        apiVersion: 'machine.openshift.io/v1beta1',
        kind: 'Machine',
        metadata: { name, namespace: MAPI_NAMESPACE, labels: { ...template.metadata?.labels } },
        spec: template.spec!,
      };
    },
    startMapo(opts = {}) {
      return startMapo(env, opts);
    },
  };
  return env;
}

/**
 * The machine controller and capo's OpenStackServer controller in-process, on one Manager and one
 * ScopeCache (as `shiftstack mapo` runs them), waits scaled down.
 */
export function startMapo(env: CapoEnv, opts: StartMapoOptions = {}): Promise<RunningMapo> {
  const log = opts.log ?? createLogger({ level: testLogLevel() });
  const registry = createRegistry({ defaultMetrics: false });
  const manager = new Manager({
    name: 'mapo-controller-manager',
    kubeConfig: kubeConfigFrom(opts.kubeconfig ?? env.kube.kubeconfigPath),
    qps: 0,
    disableCacheFor: MAPO_UNCACHED_KINDS,
    log,
    registry,
    gracefulShutdownTimeoutMs: 5_000,
  });
  const scopes = new ScopeCache({
    reader: manager.client,
    client: {
      log,
      registry,
      tokenCache: new TokenCache(),
      discoveryCache: new DiscoveryCache(),
      retry: { baseDelayMs: 10, maxDelayMs: 50 },
      userAgent: 'shiftstack-mapo',
    },
    log,
  });
  registerMachineController(manager, scopes, {
    workers: 10,
    retryMs: 200,
    serverGroups: new ServerGroupsByName(),
    ...opts.machine,
  });
  registerOpenStackServerController(manager, scopes, {
    workers: 10,
    backoff: { initialMs: 5, maxMs: 100, idleMs: 200 },
    waitMs: 200,
    errorInitialMs: 20,
    errorMaxMs: 200,
    ...opts.server,
  });
  if (opts.mao) {
    registerMachineAPIOperatorControllers(manager, {
      drain: { backoff: { baseMs: 20, maxMs: 500 }, podDeletionPollMs: 50, requeueMs: 200 },
      ...(opts.mao === true ? {} : opts.mao),
    });
  }
  if (opts.migration) registerMigrationController(manager, { refusedRetryMs: 200 });
  if (opts.kubelets) {
    const cloud = env.sim.cloud;
    registerKubelets(manager, {
      host: emulatedHosts(cloud),
      heartbeatMs: 60_000,
      pollMs: 50,
      cloudProvider: 'openstack',
      machineAPI: true,
    });
  }
  const stopper = new AbortController();
  const done = manager.start(stopper.signal).catch((err: unknown) => {
    log.error({ err }, 'mapo manager stopped with an error');
    if (!opts.log && testLogLevel() === 'silent')
      process.stderr.write(`mapo manager stopped with an error: ${String(err)}\n`);
  });
  return Promise.resolve({
    manager,
    scopes,
    registry,
    async stop() {
      stopper.abort(new Error('test done'));
      await done;
      await scopes.close();
    },
  });
}

/** `MAPO_TEST_LOG=debug` shows the controllers' log; silent by default. */
function testLogLevel(): LogLevel {
  const level = process.env.MAPO_TEST_LOG;
  return LOG_LEVELS.find((l) => l === level) ?? 'silent';
}

async function createIgnoringExisting(env: CapoEnv, type: typeof kinds.Secret, obj: V1Secret): Promise<void> {
  try {
    await env.api.create(type, obj);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

async function applyCrds(env: CapoEnv, dir: string): Promise<void> {
  const files = (await readdir(join(ROOT, dir))).filter((f) => f.endsWith('.yaml')).sort();
  for (const f of files) {
    const crd = parseYaml(await readFile(join(ROOT, dir, f), 'utf8')) as KubernetesObject;
    try {
      await env.api.create(kinds.CustomResourceDefinition, crd as never);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  }
}

async function waitServed(env: CapoEnv): Promise<void> {
  for (const k of [...ALL_KINDS, { resource: operatorKinds.Infrastructure, crdName: 'infrastructures' }]) {
    await eventually(
      async () => {
        await env.api.list(k.resource, { limit: 1 });
        return true;
      },
      { timeoutMs: 20_000, what: `${k.crdName} served` },
    );
  }
}
