/**
 * The controllers the demo runs in its own process, each reaching the emulators the way a
 * deployment reaches a cluster and a cloud (a kubeconfig; a cloud.conf, a clouds.yaml Secret or an
 * identity Secret). The cluster's cloud loops run one of two ways (`cloudLoops`):
 *
 * - `in-tree` (`shiftstack up`): the cluster starts as clusters did before 1.26, on
 *   kube-controller-manager's in-tree OpenStack provider (the stand-in in src/demo/intree, its
 *   kubelets setting their own providerID and addresses), with `shiftstack ccm-operator` installed on
 *   OpenShift's configuration (openshift.ts). The operator deploys nothing until kube-controller-manager
 *   hands over the loops; then it deploys `shiftstack ccm` as the Deployment
 *   `openstack-cloud-controller-manager`, which the workload runner (src/demo/workloads) runs as a
 *   child process from the Deployment's own command line, config and ServiceAccount;
 * - `ccm`: `shiftstack ccm` (cloud-node, cloud-node-lifecycle, service) in this process, with a
 *   cloud.conf for the demo project and the external network as the floating network.
 *
 * Besides: `shiftstack capo` (OpenStackCluster, OpenStackMachine, OpenStackServer) acting as
 * Cluster API's core too, since no CAPI core controller runs here; on OpenShift's side (`in-tree`),
 * `shiftstack mapo` (mapo.ts: the Machine API's machine controller on capo's OpenStackServers, the
 * machine-api-operator's controllers, the migration to Cluster API); the kubelets of the machines
 * (kubelet.ts), on the demo's own manager, whose caches also feed the progress view and the
 * scenario's waits (reading a cache costs the API server nothing).
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
import { buildCcmOperator, CCM_OPERATOR_DEFAULTS, type CcmOperator } from '../ccm-operator/cmd.ts';
import { MANAGED_NAMESPACE, operatorKinds, OPERATOR_NAMESPACE } from '../ccm-operator/api/index.ts';
import { buildInTreeKcm, KCM_DEFAULTS, type InTreeKcm } from './intree/kcm.ts';
import { registerKubelets, type Kubelets } from './kubelet.ts';
import { installOpenShiftConfig, SHIFTSTACK_IMAGE } from './openshift.ts';
import { registerWorkloadRunner, type WorkloadRunner } from './workloads/runner.ts';
import { buildDemoCapo, type DemoCapo } from './capo.ts';
import { buildDemoMapo, type DemoMapo } from './mapo.ts';
import { ALL_KINDS as MAPO_KINDS, crdFiles as mapoCrdFiles, mapoKinds } from '../mapo/api/index.ts';
import { ALL_KINDS as KURYR_KINDS, crdFiles as kuryrCrdFiles, kuryrKinds } from '../kuryr/api/index.ts';
import { registerEndpointSliceController } from './endpointslices.ts';
import { registerPodKubelet } from './kubelet-pods.ts';
import { DEMO_METRICS, metricsEndpoints, workloadMetricsEndpoints, type MetricsEndpoint } from './metrics.ts';
import { OPENSTACK_CCM_NAME } from '../ccm-operator/operands/openstack.ts';
import { CCM_PORT } from '../ccm-operator/operands/common.ts';
import { installCrds } from './world.ts';
import type { World } from './world.ts';

export interface ControllersOptions {
  log: Logger;
  /** The cluster name the ccm puts in load balancer names (upstream `--cluster-name`). */
  clusterName: string;
  /** False runs no capo (tests that play its part themselves). */
  capo?: boolean;
  /** Who runs the cloud loops (see above); `ccm` by default. */
  cloudLoops?: 'ccm' | 'in-tree';
  /**
   * The cluster's pods on Kuryr (kuryr.ts): Kuryr's CRDs installed, the kubelets' pod half
   * (kubelet-pods.ts) and the EndpointSlice controller's stand-in (endpointslices.ts) on the demo's manager; the kuryr controller starts in the scenario, once the
   * installer's part is there.
   */
  kuryr?: boolean;
}

export interface Controllers {
  /** The in-process ccm (`cloudLoops: 'ccm'`). */
  ccm: Ccm | undefined;
  /** The in-tree provider's stand-in, the operator and the runner of its operands (`cloudLoops: 'in-tree'`). */
  migration: Migration | undefined;
  /** Undefined only when asked for none. */
  capo: DemoCapo | undefined;
  /** The Machine API on OpenShift's side (`cloudLoops: 'in-tree'`, with capo). */
  mapo: DemoMapo | undefined;
  /** The demo's own manager: kubelets, and caches for the progress view. */
  demo: Manager;
  /** Pods run on Kuryr (see ControllersOptions.kuryr). */
  kuryr: boolean;
  kubelets: Kubelets;
  cloudConfPath: string;
  /**
   * Where every controller serves /metrics: each manager of this process once it listens, those
   * started later (`addManager`), and the pods of the ccm the operator deploys that run now.
   */
  metrics(signal: AbortSignal): Promise<MetricsEndpoint[]>;
  /** A manager started after these (the kuryr controller, by the scenario); the returned function removes it. */
  addManager(name: string, manager: Manager): () => void;
  /** Stops every controller (graceful: in-flight reconciles finish). */
  stop(): Promise<void>;
  /** Rejects when a controller manager fails. */
  failed: Promise<never>;
}

export interface Migration {
  kcm: InTreeKcm;
  operator: CcmOperator;
  workloads: WorkloadRunner;
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

  const inTree = opts.cloudLoops === 'in-tree';
  const ccm = inTree ? undefined : await inProcessCcm(world, opts, cloudConfPath, scaled);
  const migration = inTree
    ? await migrationSide(world, opts, cloudConfPath, external?.id, scaled)
    : undefined;

  const capo =
    opts.capo === false
      ? undefined
      : buildDemoCapo(world, { log: opts.log.child({ component: 'capo' }), scale });
  // The Machine API's CRDs, which a real OpenShift has: the installer's part of the demo.
  if (inTree && capo) await installCrds(world.api, mapoCrdFiles(), MAPO_KINDS, undefined);
  const mapo =
    inTree && capo
      ? await buildDemoMapo(world, capo, { log: opts.log.child({ component: 'mapo' }), scale })
      : undefined;

  /** Managers started after these, listed with them while they run. */
  const later: { name: string; manager: Manager }[] = [];
  const demo = new Manager({
    name: 'shiftstack-demo',
    kubeConfig: world.kubeConfig,
    qps: 0,
    log: opts.log.child({ component: 'demo' }),
    gracefulShutdownTimeoutMs: 5_000,
    metricsServer: DEMO_METRICS,
  });
  const kubelets = registerKubelets(demo, {
    host: (id) => world.host(id),
    heartbeatMs: scaled(KUBELET_HEARTBEAT_MS, 200),
    pollMs: scaled(1_000, 20),
    cloudProvider: inTree ? 'openstack' : 'external',
    machineAPI: mapo !== undefined,
  });
  if (opts.kuryr) {
    await installCrds(world.api, kuryrCrdFiles(), KURYR_KINDS, undefined);
    registerPodKubelet(demo);
    // kube-controller-manager's EndpointSlice controller: the Services' endpoints kuryr's members follow.
    registerEndpointSliceController(demo);
    demo.informers.informerFor(kinds.Namespace);
    demo.informers.informerFor(kinds.Pod);
    demo.informers.informerFor(kuryrKinds.KuryrPort);
    demo.informers.informerFor(kuryrKinds.KuryrLoadBalancer);
    demo.informers.informerFor(kuryrKinds.KuryrNetworkPolicy);
  }
  const workloads = inTree
    ? registerWorkloadRunner(demo, {
        namespaces: [MANAGED_NAMESPACE],
        images: [SHIFTSTACK_IMAGE],
        kubeConfig: world.kubeConfig,
        dir: join(world.dir, 'pods'),
        timeScale: Math.max(scale, 0.05),
        log: opts.log.child({ component: 'workloads' }),
      })
    : undefined;
  // The progress view's and the scenario's view of the cluster.
  demo.informers.informerFor(capoKinds.Cluster);
  demo.informers.informerFor(capoKinds.OpenStackCluster);
  demo.informers.informerFor(capoKinds.Machine);
  demo.informers.informerFor(capoKinds.OpenStackMachine);
  demo.informers.informerFor(kinds.Node);
  demo.informers.informerFor(kinds.Service);
  if (mapo) {
    demo.informers.informerFor(mapoKinds.Machine);
    demo.informers.informerFor(mapoKinds.MachineSet);
    demo.informers.informerFor(capoKinds.OpenStackServer);
  }
  if (inTree) {
    demo.informers.informerFor(kinds.Deployment);
    demo.informers.informerFor(operatorKinds.ClusterOperator);
    demo.informers.informerFor(operatorKinds.KubeControllerManager);
  }

  if (ccm) watch('ccm', ccm.run(stopper.signal));
  if (migration) {
    watch('the in-tree kube-controller-manager', migration.kcm.run(stopper.signal));
    watch('ccm-operator', migration.operator.run(stopper.signal));
  }
  if (capo) watch('capo', capo.run(stopper.signal));
  if (mapo) watch('mapo', mapo.run(stopper.signal));
  watch('the demo kubelets', demo.start(stopper.signal));

  return {
    ccm,
    migration: migration && workloads ? { ...migration, workloads } : undefined,
    capo,
    mapo,
    demo,
    kuryr: opts.kuryr === true,
    kubelets,
    cloudConfPath,
    failed,
    metrics: async (signal) => [
      ...(await metricsEndpoints(
        [
          ...(capo ? [{ name: 'capo', manager: capo.manager }] : []),
          ...(mapo ? [{ name: 'mapo', manager: mapo.manager }] : []),
          ...(migration
            ? [
                {
                  name: "kube-controller-manager (the in-tree provider's stand-in)",
                  manager: migration.kcm.manager,
                },
                { name: 'ccm-operator', manager: migration.operator.manager },
              ]
            : []),
          { name: 'demo (kubelets, workload runner)', manager: demo },
          ...later,
        ],
        demo.clock,
        signal,
      )),
      ...(workloads
        ? workloadMetricsEndpoints([
            {
              name: 'ccm (deployed by ccm-operator)',
              pods: () => workloads.pods(MANAGED_NAMESPACE, OPENSTACK_CCM_NAME),
              containerPort: CCM_PORT,
              scheme: 'https',
              token: true,
            },
          ])
        : []),
    ],
    addManager(name, manager) {
      const entry = { name, manager };
      later.push(entry);
      return () => {
        const i = later.indexOf(entry);
        if (i >= 0) later.splice(i, 1);
      };
    },
    async stop() {
      stopper.abort(new Error('shiftstack up is stopping'));
      await Promise.all(runs);
    },
  };
}

type Scaled = (ms: number, floor?: number) => number;

async function inProcessCcm(
  world: World,
  opts: ControllersOptions,
  cloudConfPath: string,
  scaled: Scaled,
): Promise<Ccm> {
  return buildCcm(
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
}

/**
 * The in-tree side and the operator: kube-controller-manager's cloud loops on the cloud.conf the
 * in-tree provider read (credentials inline), and `shiftstack ccm-operator` on OpenShift's
 * configuration, which the installer's part writes first.
 */
async function migrationSide(
  world: World,
  opts: ControllersOptions,
  cloudConfPath: string,
  floatingNetworkId: string | undefined,
  scaled: Scaled,
): Promise<Omit<Migration, 'workloads'>> {
  await installOpenShiftConfig(world.api, {
    infrastructureName: opts.clusterName,
    floatingNetworkId,
    cloudsYaml: (cloud) => world.cloudsYaml(cloud),
  });
  const kcm = await buildInTreeKcm(
    {
      ...KCM_DEFAULTS,
      cloudProvider: 'openstack',
      // The loops the stand-in emulates (the route controller is not: no routes in this cluster).
      controllers: ['service', 'cloud-node-lifecycle'],
      cloudConfig: cloudConfPath,
      leaderElect: false,
      nodeMonitorPeriodMs: scaled(KCM_DEFAULTS.nodeMonitorPeriodMs),
      timeScale: world.timeScale,
    },
    {
      log: opts.log.child({ component: 'kube-controller-manager' }),
      kubeConfig: world.kubeConfig,
      registry: createRegistry({ defaultMetrics: false }),
      loadContext: { env: {}, homedir: world.dir, cwd: world.dir },
      metricsServer: DEMO_METRICS,
    },
  );
  const operator = buildCcmOperator(
    {
      ...CCM_OPERATOR_DEFAULTS,
      leaderElect: false,
      operatorNamespace: OPERATOR_NAMESPACE,
      // Node's own CA certificates: the emulators serve plain HTTP, and the demo has no system bundle.
      systemTrustBundle: 'node',
      health: undefined,
      metrics: DEMO_METRICS,
    },
    {
      log: opts.log.child({ component: 'ccm-operator' }),
      kubeConfig: world.kubeConfig,
      registry: createRegistry({ defaultMetrics: false }),
    },
  );
  return { kcm, operator };
}
