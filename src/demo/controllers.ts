/**
 * The controllers the demo runs in its own process, each reaching the emulators the way a
 * deployment reaches a cluster and a cloud (a kubeconfig; a cloud.conf or an identity Secret):
 *
 * - `shiftstack ccm` (cloud-node, cloud-node-lifecycle, service) with a cloud.conf for the demo
 *   project and the external network as the floating network;
 * - `shiftstack capo` (OpenStackCluster, OpenStackMachine, OpenStackServer) acting as Cluster API's
 *   core too, since no CAPI core controller runs here;
 * - the kubelets of the machines (kubelet.ts), on the demo's own manager, whose caches also feed
 *   the progress view and the scenario's waits (reading a cache costs the API server nothing);
 * - when asked (`workloads`), the WorkloadRunner (workloads/), on the same manager: shiftstack's
 *   own Deployments in the namespaces given run as child processes of this one.
 *
 * Every wait the controllers make on the cloud is scaled with the cloud's time scale, so the demo
 * keeps the rhythm a real cloud would have, only faster.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../lib/log.ts';
import { createRegistry } from '../lib/metrics.ts';
import { kinds, Manager } from '../kube/index.ts';
import { capoKinds } from '../capo/api/index.ts';
import { buildCcm, CCM_DEFAULTS, type Ccm } from '../ccm/cmd.ts';
import { registerKubelets, type Kubelets } from './kubelet.ts';
import { buildDemoCapo, type DemoCapo } from './capo.ts';
import {
  registerWorkloadRunner,
  type WorkloadRunner,
  type WorkloadRunnerOptions,
} from './workloads/runner.ts';
import type { World } from './world.ts';

export interface ControllersOptions {
  log: Logger;
  /** The cluster name the ccm puts in load balancer names (upstream `--cluster-name`). */
  clusterName: string;
  /** False runs no capo (tests that play its part themselves). */
  capo?: boolean;
  /** Run the Deployments of these namespaces that use these images (none when absent). */
  workloads?: Pick<WorkloadRunnerOptions, 'namespaces' | 'images'>;
}

export interface Controllers {
  ccm: Ccm;
  /** Undefined only when asked for none. */
  capo: DemoCapo | undefined;
  /** The demo's own manager: kubelets, and caches for the progress view. */
  demo: Manager;
  kubelets: Kubelets;
  /** Undefined unless asked for. */
  workloads: WorkloadRunner | undefined;
  cloudConfPath: string;
  /** Stops every controller (graceful: in-flight reconciles finish). */
  stop(): Promise<void>;
  /** Rejects when a controller manager fails. */
  failed: Promise<never>;
}

/** kubelet's `--node-status-update-frequency`. */
const KUBELET_HEARTBEAT_MS = 10_000;

export async function startControllers(world: World, opts: ControllersOptions): Promise<Controllers> {
  const scale = world.timeScale;
  const scaled = (ms: number, floor = 20) => Math.max(floor, Math.round(ms * scale));
  const stopper = new AbortController();
  const runs: Promise<void>[] = [];
  let fail!: (err: unknown) => void;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => undefined);
  const watch = (name: string, p: Promise<void>) => {
    runs.push(
      p.catch((err: unknown) => {
        if (!stopper.signal.aborted)
          fail(new Error(`${name} stopped: ${(err as Error).message}`, { cause: err }));
      }),
    );
  };

  const [external] = await world.demo.network.networks.list({ 'router:external': true }).all();
  const cloudConfPath = join(world.dir, 'cloud.conf');
  const c = world.sim.cloud;
  await writeFile(
    cloudConfPath,
    `# Written by shiftstack up for the emulator at ${c.baseUrl}\n[Global]\nauth-url = ${c.authUrl}\n` +
      `username = demo\npassword = ${c.options.password}\ntenant-name = demo\n` +
      `user-domain-name = Default\ntenant-domain-name = Default\nregion = ${c.options.region}\n\n` +
      `[LoadBalancer]\n${external ? `floating-network-id = ${external.id}\n` : ''}`,
    { mode: 0o600 },
  );

  const ccm = await buildCcm(
    {
      ...CCM_DEFAULTS,
      cloudConfig: cloudConfPath,
      clusterName: opts.clusterName,
      leaderElect: false,
      securePort: 0,
      nodeMonitorPeriodMs: scaled(CCM_DEFAULTS.nodeMonitorPeriodMs),
    },
    {
      log: opts.log.child({ component: 'ccm' }),
      kubeConfig: world.kubeConfig,
      registry: createRegistry({ defaultMetrics: false }),
      loadContext: { env: {}, homedir: world.dir, cwd: world.dir },
      serviceBackoff: { initialMs: scaled(1_000), maxMs: scaled(10_000) },
      serviceRetry: { minMs: scaled(5_000), maxMs: scaled(300_000) },
    },
  );

  const capo =
    opts.capo === false
      ? undefined
      : buildDemoCapo(world, { log: opts.log.child({ component: 'capo' }), scale });

  const demo = new Manager({
    name: 'shiftstack-demo',
    kubeConfig: world.kubeConfig,
    qps: 0,
    log: opts.log.child({ component: 'demo' }),
    gracefulShutdownTimeoutMs: 5_000,
  });
  const kubelets = registerKubelets(demo, {
    host: (id) => world.host(id),
    heartbeatMs: scaled(KUBELET_HEARTBEAT_MS, 200),
    pollMs: scaled(1_000, 20),
  });
  const workloads = opts.workloads
    ? registerWorkloadRunner(demo, {
        ...opts.workloads,
        kubeConfig: world.kubeConfig,
        dir: join(world.dir, 'pods'),
        timeScale: scale,
      })
    : undefined;
  // The progress view's and the scenario's view of the cluster.
  demo.informers.informerFor(capoKinds.Cluster);
  demo.informers.informerFor(capoKinds.OpenStackCluster);
  demo.informers.informerFor(capoKinds.Machine);
  demo.informers.informerFor(capoKinds.OpenStackMachine);
  demo.informers.informerFor(kinds.Node);
  demo.informers.informerFor(kinds.Service);

  watch('ccm', ccm.run(stopper.signal));
  if (capo) watch('capo', capo.run(stopper.signal));
  watch('the demo kubelets', demo.start(stopper.signal));

  return {
    ccm,
    capo,
    demo,
    kubelets,
    workloads,
    cloudConfPath,
    failed,
    async stop() {
      stopper.abort(new Error('shiftstack up is stopping'));
      await Promise.all(runs);
    },
  };
}
