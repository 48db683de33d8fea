/**
 * The kuryr test bed: the Kubernetes emulator with deploy/kuryr/crds applied, the OpenStack emulator,
 * and a cluster's network as Kuryr finds it on OpenStack — worker servers whose primary port is the
 * parent of a trunk (what CAPO and the installer make), a Node per server (providerID
 * `openstack:///<server id>`, InternalIP, Ready), a pod network and subnet (the `default` subnets
 * driver's `[neutron_defaults] pod_subnet`), a service subnet, a router on all three, and a pod
 * security group. Controllers run in-process against both, the way a deployment reaches them: a
 * kubeconfig and an OpenStack client of the demo project.
 *
 * Each kuryr controller registers itself through `KURYR_CONTROLLERS` (helpers add their entry);
 * `env.startKuryr({ controllers, options })` picks which run and with which kuryr.conf options.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import type { Clock } from '../../lib/clock.ts';
import { createLogger, LOG_LEVELS, type Logger, type LogLevel } from '../../lib/log.ts';
import { createRegistry, type Registry } from '../../lib/metrics.ts';
import { isAlreadyExists, kinds, Manager, type KubeClient, type KubernetesObject } from '../../kube/index.ts';
import { resourcePath } from '../../kube/resource.ts';
import { kubeConfigFrom, testClient } from '../../kube/testing/env.ts';
import { OpenStackClient, type OpenStackClientOptions } from '../../openstack/client.ts';
import { bootSources } from '../../openstack/compute/v2/testing/boot.ts';
import { DiscoveryCache } from '../../openstack/core/discovery.ts';
import { openClientTargetOn, type ClientTarget } from '../../openstack/core/testing/target.ts';
import { TokenCache } from '../../openstack/core/token-cache.ts';
import { Cleanup } from '../../openstack/network/v2/testing/fixtures.ts';
import { startKubeSim, type RunningKubeSim } from '../../sim/kube/start.ts';
import type { CloudOptions } from '../../sim/openstack/index.ts';
import { eventually, startTestCloud, type TestCloud } from '../../sim/openstack/testing/harness.ts';
import { ALL_KINDS, CRD_DIR } from '../api/index.ts';
import { kuryrContext, type KuryrContext } from '../context.ts';
import { withOptions, type KuryrOptions, type KuryrOptionsOverrides } from '../options.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/** What a controller's registration gets: the manager and the shared kuryr context. */
export type RegisterKuryrController = (mgr: Manager, ctx: KuryrContext) => void;

/**
 * Every kuryr controller a test can run, by its controller name (kuryr-common: `pod`, `kuryrport`,
 * …). Each area adds its own entries in its own block below.
 */
export const KURYR_CONTROLLERS: Record<string, RegisterKuryrController> = {};

/** A worker: its server, the trunk on its primary port, and its Node. */
export interface Worker {
  name: string;
  serverId: string;
  /** The trunk's parent port (the server's primary port). */
  parentPortId: string;
  trunkId: string;
  /** The parent port's fixed IP: the Node's InternalIP. */
  address: string;
}

export interface KuryrNetworkFixture {
  /** The nodes' network and subnet (`[pod_vif_nested] worker_nodes_subnets`). */
  nodes: { networkId: string; subnetId: string; cidr: string };
  /** `[neutron_defaults] pod_subnet` and its network. */
  pods: { networkId: string; subnetId: string; cidr: string };
  /** `[neutron_defaults] service_subnet`. */
  services: { networkId: string; subnetId: string; cidr: string };
  /** The router on all three (`[namespace_subnet] pod_router`). */
  routerId: string;
  /** `[neutron_defaults] pod_security_groups`. */
  podSecurityGroupId: string;
  /** The cloud's external network (floating IPs of LoadBalancer Services). */
  externalNetworkId: string | undefined;
}

export interface StartKuryrOptions {
  /** The controllers to run, by KURYR_CONTROLLERS name; all of them by default. */
  controllers?: readonly string[];
  /** kuryr.conf options over the bed's (`env.options`). */
  options?: KuryrOptionsOverrides;
  /** Replaces the emulator's kubeconfig (a test reaching the cluster through a relay). */
  kubeconfig?: string;
  /** Options of the controllers' OpenStack client; each start gets its own token and discovery caches, as a process has. */
  client?: Omit<OpenStackClientOptions, 'signal'>;
  /** Default: silent, or the level in KURYR_TEST_LOG. */
  log?: Logger;
  gracefulShutdownTimeoutMs?: number;
  clock?: Clock;
  /** Adjusts the context before the controllers are registered (a test's own driver). */
  context?: (ctx: KuryrContext) => void;
}

export interface RunningKuryr {
  manager: Manager;
  ctx: KuryrContext;
  registry: Registry;
  readonly failure: unknown;
  stop(): Promise<void>;
}

export interface KuryrEnv {
  dir: string;
  kube: RunningKubeSim;
  sim: TestCloud;
  target: ClientTarget;
  /** The demo project's client (kuryr's identity here): set-up and checks. */
  os: OpenStackClient;
  /** The admin's client: census of everything in the cloud. */
  admin: OpenStackClient;
  api: KubeClient;
  cleanup: Cleanup;
  projectId: string;
  workers: Worker[];
  net: KuryrNetworkFixture;
  /** The kuryr.conf options the bed's network implies (default subnets and security-groups drivers). */
  options: KuryrOptions;
  ensureNamespace(name: string, labels?: Record<string, string>): Promise<void>;
  /** Adds a worker (server + trunk + Node). */
  addWorker(name: string): Promise<Worker>;
  startKuryr(opts?: StartKuryrOptions): Promise<RunningKuryr>;
  close(): Promise<void>;
}

export interface KuryrEnvOptions {
  /** Worker nodes (default 2). */
  nodes?: number;
  cloud?: CloudOptions;
}

export async function startKuryrEnv(envOptions: KuryrEnvOptions = {}): Promise<KuryrEnv> {
  const dir = await mkdtemp(join(tmpdir(), 'shiftstack-kuryr-'));
  const kube = await startKubeSim({ kubeconfigPath: join(dir, 'kubeconfig') });
  const sim = await startTestCloud({ profile: 'fast', ...envOptions.cloud });
  const target = await openClientTargetOn(sim);
  const os = await target.client(target.demo);
  const admin = await target.client(target.admin!);
  const api = testClient(kube.kubeconfigPath);
  const cleanup = new Cleanup();
  const boot = (await bootSources(target, os, cleanup))!;
  const projectId = (await os.session.token()).token.project?.id ?? '';
  const running = new Set<RunningKuryr>();

  await applyCrds(api);
  const net = await makeNetwork(os);

  const options = withOptions({
    kubernetes: {
      podSubnetsDriver: 'default',
      podSecurityGroupsDriver: 'default',
      serviceSecurityGroupsDriver: 'default',
    },
    neutronDefaults: {
      project: projectId,
      podSubnet: net.pods.subnetId,
      podSecurityGroups: [net.podSecurityGroupId],
      serviceSubnet: net.services.subnetId,
      externalSvcNet: net.externalNetworkId ?? '',
    },
    namespaceSubnet: { podRouter: net.routerId },
    podVifNested: { workerNodesSubnets: [net.nodes.subnetId] },
    // Fast waits would come from the controllers' own options; the pool's loop runs often here.
    vifPool: { portsPoolUpdateFrequency: 1 },
  });

  const env: KuryrEnv = {
    dir,
    kube,
    sim,
    target,
    os,
    admin,
    api,
    cleanup,
    projectId,
    workers: [],
    net,
    options,
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
    async addWorker(name) {
      const worker = await makeWorker(os, api, net, boot, name);
      env.workers.push(worker);
      return worker;
    },
    startKuryr(opts = {}) {
      return startKuryr(env, running, opts);
    },
    async close() {
      for (const r of [...running]) await r.stop();
      // The emulators are discarded whole; nothing of the cloud outlives the test.
      await api.close();
      await target.close();
      await kube.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  };
  for (let i = 0; i < (envOptions.nodes ?? 2); i++) await env.addWorker(`worker-${i}`);
  return env;
}

async function makeNetwork(os: OpenStackClient): Promise<KuryrNetworkFixture> {
  const subnetOn = async (name: string, cidr: string, extra: Record<string, unknown> = {}) => {
    const network = await os.network.networks.create({ name });
    const subnet = await os.network.subnets.create({
      network_id: network.id,
      cidr,
      ip_version: 4,
      name,
      ...extra,
    });
    return { networkId: network.id, subnetId: subnet.id, cidr };
  };
  const nodes = await subnetOn('kuryr-nodes', '10.0.0.0/16');
  const pods = await subnetOn('kuryr-pods', '10.128.0.0/14');
  // As OpenShift's installer makes it for Kuryr: twice the cluster's service network (the emulator's
  // 10.96.0.0/12), Neutron allocating only from the upper half, so a load balancer's VIP can take any
  // ClusterIP as its fixed address and nothing else Neutron hands out collides with one.
  const services = await subnetOn('kuryr-services', '10.96.0.0/11', {
    gateway_ip: '10.127.255.254',
    allocation_pools: [{ start: '10.112.0.1', end: '10.127.255.253' }],
  });
  const router = await os.network.routers.create({ name: 'kuryr-router' });
  for (const s of [nodes, pods, services])
    await os.network.routers.addInterface(router.id, { subnet_id: s.subnetId });
  const sg = await os.network.securityGroups.create({ name: 'kuryr-pods', description: 'pods' });
  const external = (await os.network.networks.list({ 'router:external': true }).all()).find(
    (n) => n.subnets.length > 0,
  );
  return {
    nodes,
    pods,
    services,
    routerId: router.id,
    podSecurityGroupId: sg.id,
    externalNetworkId: external?.id,
  };
}

async function makeWorker(
  os: OpenStackClient,
  api: KubeClient,
  net: KuryrNetworkFixture,
  boot: { flavorId: string; imageId: string },
  name: string,
): Promise<Worker> {
  const port = await os.network.ports.create({ name: `${name}-0`, network_id: net.nodes.networkId });
  const trunk = await os.network.trunks.create({ name: `${name}-trunk`, port_id: port.id });
  const server = await os.compute.servers.create({
    name,
    flavorRef: boot.flavorId,
    imageRef: boot.imageId,
    networks: [{ port: port.id }],
  });
  const address = port.fixed_ips[0]?.ip_address ?? '';
  await eventually(async () => (await os.compute.servers.get(server.id)).status === 'ACTIVE', {
    timeoutMs: 30_000,
    what: `server ${name} ACTIVE`,
  });
  const now = new Date().toISOString();
  const node: V1Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    spec: { providerID: `openstack:///${server.id}` },
    status: {
      addresses: [
        { type: 'InternalIP', address },
        { type: 'Hostname', address: name },
      ],
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'KubeletReady',
          message: 'kubelet is posting ready status',
          lastHeartbeatTime: now as never,
          lastTransitionTime: now as never,
        },
      ],
    },
  };
  await api.create(kinds.Node, node);
  return { name, serverId: server.id, parentPortId: port.id, trunkId: trunk.id, address };
}

function startKuryr(
  env: KuryrEnv,
  running: Set<RunningKuryr>,
  opts: StartKuryrOptions,
): Promise<RunningKuryr> {
  const names = opts.controllers ?? Object.keys(KURYR_CONTROLLERS);
  const unknown = names.filter((n) => !KURYR_CONTROLLERS[n]);
  if (unknown.length > 0) {
    return Promise.reject(
      new Error(
        `unknown kuryr controller(s) ${unknown.join(', ')}; known: ${Object.keys(KURYR_CONTROLLERS).join(', ')}`,
      ),
    );
  }
  return (async () => {
    const log = opts.log ?? createLogger({ level: testLogLevel() });
    const registry = createRegistry({ defaultMetrics: false });
    const manager = new Manager({
      name: 'kuryr-controller',
      kubeConfig: kubeConfigFrom(opts.kubeconfig ?? env.kube.kubeconfigPath),
      qps: 0,
      log,
      registry,
      gracefulShutdownTimeoutMs: opts.gracefulShutdownTimeoutMs ?? 5_000,
      ...(opts.clock ? { clock: opts.clock } : {}),
    });
    // Its own client, closed on stop: a restarted kuryr shares no token, pool or cache with the last.
    const os = await OpenStackClient.fromConfig(env.target.demo, {
      log,
      registry,
      tokenCache: new TokenCache(),
      discoveryCache: new DiscoveryCache(),
      retry: { baseDelayMs: 10, maxDelayMs: 50 },
      userAgent: 'shiftstack-kuryr',
      ...opts.client,
    });
    const ctx = kuryrContext({
      os,
      options: withOptions(opts.options ?? {}, env.options),
      projectId: env.projectId,
      log,
      registry,
    });
    opts.context?.(ctx);
    for (const name of names) KURYR_CONTROLLERS[name]!(manager, ctx);

    const stopper = new AbortController();
    let failure: unknown;
    const done = manager.start(stopper.signal).catch((err: unknown) => {
      failure = err;
      log.error({ err }, 'kuryr manager stopped with an error');
      if (!opts.log && testLogLevel() === 'silent')
        process.stderr.write(`kuryr manager stopped with an error: ${String(err)}\n`);
    });
    const handle: RunningKuryr = {
      manager,
      ctx,
      registry,
      get failure() {
        return failure;
      },
      async stop() {
        running.delete(handle);
        stopper.abort(new Error('test done'));
        await done;
        await os.close();
      },
    };
    running.add(handle);
    return handle;
  })();
}

/** `KURYR_TEST_LOG=debug` shows the controllers' log of a test run; silent by default. */
function testLogLevel(): LogLevel {
  const level = process.env.KURYR_TEST_LOG;
  return LOG_LEVELS.find((l) => l === level) ?? 'silent';
}

/** Applies deploy/kuryr/crds, as `kubectl apply -f deploy/kuryr/crds/` does, and waits until served. */
async function applyCrds(api: KubeClient): Promise<void> {
  const dir = join(ROOT, CRD_DIR);
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  for (const f of files) {
    const crd = parseYaml(await readFile(join(dir, f), 'utf8')) as KubernetesObject;
    try {
      await api.create(kinds.CustomResourceDefinition, crd as never);
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
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

// --- kuryr-pods: pod, kuryrport, kuryrnetwork-population ---
import { registerKuryrNetworkPopulationController } from '../controllers/kuryrnetwork-population.ts';
import { registerKuryrPortController } from '../controllers/kuryrport.ts';
import { registerPodController } from '../controllers/pod.ts';
KURYR_CONTROLLERS['pod'] = (mgr, ctx) => registerPodController(mgr, ctx);
KURYR_CONTROLLERS['kuryrport'] = (mgr, ctx) =>
  // The bed's ports turn ACTIVE within milliseconds: look again soon.
  registerKuryrPortController(mgr, ctx, { activeWait: { initialMs: 20, maxMs: 500 }, missWaitMs: 500 });
KURYR_CONTROLLERS['kuryrnetwork-population'] = (mgr, ctx) =>
  registerKuryrNetworkPopulationController(mgr, ctx, { pollMs: 100 });

// --- kuryr-net: namespace, kuryrnetwork ---

// --- kuryr-lb: service, endpointslice, kuryrloadbalancer ---

// --- kuryr-np: networkpolicy, kuryrnetworkpolicy, pod-label ---
