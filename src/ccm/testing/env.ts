/**
 * The CCM's end-to-end bed: the Kubernetes emulator and the OpenStack emulator on loopback, a
 * cloud.conf for the emulated cloud's demo user, and `shiftstack ccm` built in-process against
 * both, as a real deployment reaches a cluster and a cloud (a kubeconfig and a cloud.conf).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import { createLogger } from '../../lib/log.ts';
import { createRegistry, type Registry } from '../../lib/metrics.ts';
import { kinds, type KubeClient } from '../../kube/index.ts';
import { kubeConfigFrom, testClient } from '../../kube/testing/env.ts';
import type { OpenStackClient } from '../../openstack/client.ts';
import { bootSources } from '../../openstack/compute/v2/testing/boot.ts';
import { openClientTargetOn, type ClientTarget } from '../../openstack/core/testing/target.ts';
import type { Network } from '../../openstack/network/v2/networks.ts';
import type { Router } from '../../openstack/network/v2/routers.ts';
import type { Subnet } from '../../openstack/network/v2/subnets.ts';
import { Cleanup } from '../../openstack/network/v2/testing/fixtures.ts';
import { startKubeSim, type RunningKubeSim } from '../../sim/kube/start.ts';
import type { CloudOptions } from '../../sim/openstack/index.ts';
import type { Timing } from '../../sim/openstack/core/timing.ts';
import type { PhaseDurations } from '../../openstack/services/loadbalancer/index.ts';
import { startTestCloud, type TestCloud } from '../../sim/openstack/testing/harness.ts';
import { buildCcm, CCM_DEFAULTS, type Ccm, type CcmDeps, type CcmOptions } from '../cmd.ts';
import { TAINT_UNINITIALIZED } from '../node-spec.ts';

export interface RunningCcm {
  ccm: Ccm;
  registry: Registry;
  stop(): Promise<void>;
}

export interface CcmEnv {
  dir: string;
  kube: RunningKubeSim;
  sim: TestCloud;
  target: ClientTarget;
  /** The demo user's client, for setting up servers and networks. */
  os: OpenStackClient;
  api: KubeClient;
  cleanup: Cleanup;
  boot: { flavorId: string; imageId: string };
  /**
   * Writes a cloud.conf: [Global] for the emulator plus `extra` sections; returns its path.
   * `authUrl` replaces the emulator's Keystone URL (a test reaching the cloud through a relay).
   */
  cloudConf(extra?: string, authUrl?: string): Promise<string>;
  /**
   * Builds and starts a CCM (no health port, no leader election unless asked). `opts.kubeconfig`
   * replaces the emulator's kubeconfig (a test reaching the cluster through a relay).
   */
  startCcm(
    opts?: Partial<CcmOptions>,
    env?: Record<string, string>,
    deps?: Pick<CcmDeps, 'serviceBackoff' | 'serviceRetry' | 'serviceNodeBatchWindowMs' | 'clock'> &
      Partial<Pick<CcmDeps, 'log'>>,
  ): Promise<RunningCcm>;
  /** A Node as kubelet `--cloud-provider=external` registers it. */
  createNode(name: string, extra?: Partial<V1Node>): Promise<V1Node>;
  /**
   * The cluster's network as a user sets it up for OCCM: network `k8s`, subnet `k8s-subnet` of
   * `cidr`, router `k8s-router` from it to the external network (so floating IPs reach VIPs).
   */
  routedSubnet(cidr: string): Promise<RoutedSubnet>;
  close(): Promise<void>;
}

export interface RoutedSubnet {
  network: Network;
  subnet: Subnet;
  router: Router;
  /** The external network. */
  publicNetwork: Network;
}

let confs = 0;

export async function startCcmEnv(cloudOptions: CloudOptions = {}): Promise<CcmEnv> {
  const dir = await mkdtemp(join(tmpdir(), 'shiftstack-ccm-'));
  const kube = await startKubeSim({ kubeconfigPath: join(dir, 'kubeconfig') });
  const sim = await startTestCloud(cloudOptions);
  const target = await openClientTargetOn(sim);
  const os = await target.client(target.demo);
  const api = testClient(kube.kubeconfigPath);
  const cleanup = new Cleanup();
  const boot = (await bootSources(target, os, cleanup))!;
  const running = new Set<RunningCcm>();

  const env: CcmEnv = {
    dir,
    kube,
    sim,
    target,
    os,
    api,
    cleanup,
    boot,
    async cloudConf(extra = '', authUrl = sim.authUrl) {
      const path = join(dir, `cloud-${++confs}.conf`);
      await writeFile(
        path,
        `[Global]\nauth-url = ${authUrl}\nusername = demo\npassword = secret\ntenant-name = demo\n` +
          `user-domain-name = Default\ntenant-domain-name = Default\nregion = RegionOne\n${extra}`,
      );
      return path;
    },
    async startCcm(opts = {}, processEnv = {}, extraDeps = {}) {
      const registry = createRegistry({ defaultMetrics: false });
      const ccm = await buildCcm(
        {
          ...CCM_DEFAULTS,
          cloudConfig: opts.cloudConfig ?? (await env.cloudConf()),
          securePort: 0,
          leaderElect: false,
          ...opts,
        },
        {
          log: createLogger({ level: 'silent' }),
          loadContext: { env: processEnv, homedir: dir, cwd: dir },
          registry,
          kubeConfig: kubeConfigFrom(opts.kubeconfig ?? kube.kubeconfigPath),
          ...extraDeps,
          // The controller expects the emulator's Octavia to take as long as it does (its profile).
          serviceBackoff: { phases: octaviaPhases(sim.cloud.timing), ...extraDeps.serviceBackoff },
        },
      );
      const stopper = new AbortController();
      const done = ccm.run(stopper.signal);
      const handle: RunningCcm = {
        ccm,
        registry,
        async stop() {
          running.delete(handle);
          stopper.abort(new Error('test done'));
          await done;
        },
      };
      running.add(handle);
      return handle;
    },
    async routedSubnet(cidr) {
      const network = await os.network.networks.create({ name: 'k8s' });
      const subnet = await os.network.subnets.create({
        network_id: network.id,
        cidr,
        ip_version: 4,
        name: 'k8s-subnet',
      });
      const [publicNetwork] = await os.network.networks.list({ 'router:external': true }).all();
      if (!publicNetwork) throw new Error('the emulator has no external network');
      const router = await os.network.routers.create({
        name: 'k8s-router',
        external_gateway_info: { network_id: publicNetwork.id },
      });
      await os.network.routers.addInterface(router.id, { subnet_id: subnet.id });
      return { network, subnet, router, publicNetwork };
    },
    async createNode(name, extra = {}) {
      return api.create(kinds.Node, {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, ...extra.metadata },
        spec: {
          taints: [{ key: TAINT_UNINITIALIZED, value: 'true', effect: 'NoSchedule' }],
          ...extra.spec,
        },
        ...(extra.status ? { status: extra.status } : {}),
      });
    },
    async close() {
      for (const r of [...running]) await r.stop();
      // The emulator is discarded whole; nothing of the cloud outlives the test.
      await api.close();
      await target.close();
      await kube.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return env;
}

/** The emulator's Octavia phase durations under its current profile and time scale. */
export function octaviaPhases(timing: Timing): PhaseDurations {
  return {
    create: timing.transition('octavia.loadbalancer.create'),
    update: Math.max(
      timing.transition('octavia.loadbalancer.update'),
      timing.transition('octavia.child.create'),
      timing.transition('octavia.member.batch'),
    ),
    delete: timing.transition('octavia.loadbalancer.delete'),
  };
}

/** The sum of a counter's samples whose labels include `labels`. */
export async function counterValue(
  registry: Registry,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  let sum = 0;
  for (const v of metric?.values ?? []) {
    if (Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want)) sum += v.value;
  }
  return sum;
}
