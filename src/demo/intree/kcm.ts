/**
 * The stand-in of kube-controller-manager's in-tree OpenStack cloud loops (`shiftstack sim
 * kube-controller-manager`): what KCM with `--cloud-provider=openstack` ran before 1.26, the side a
 * migration to `shiftstack ccm` starts from and goes back to, and the baseline of the benchmarks.
 * Emulation, not product: no production command loads it (scripts/architecture.ts).
 *
 * - `service`: LoadBalancer Services through the in-tree provider (service.ts), TCP only, one
 *   Octavia call at a time under the legacy names;
 * - `cloud-node-lifecycle`: the k8s.io/cloud-provider loop KCM ran (the CCM's, same code upstream):
 *   a Node whose server is gone is deleted, a SHUTOFF one tainted;
 * - `route` is known (`--controllers`) but not emulated; KCM's other controllers are not its job.
 *   Node addresses are not KCM's either: kubelets set them in-tree (see docs/sim-kcm.md).
 *
 * Who runs the loops: `--cloud-provider` (`external` or none: no loop), leader election on its own
 * Lease, KEP-2436 leader migration with component `kube-controller-manager` (the same runtime as the
 * CCM), and the OpenShift handshake on the KubeControllerManager's `CloudControllerOwner`
 * (cloud-owner.ts), which it also sets, as its operator does.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { CcmConfigSource, rotatingClient, type OpenStackApi } from '../../ccm/secret-config.ts';
import {
  CLOUD_NODE_LIFECYCLE_CONTROLLER,
  cloudNodeLifecycleReconciler,
} from '../../ccm/controllers/cloud-node-lifecycle.ts';
import { systemClock, type Clock } from '../../lib/clock.ts';
import { UsageError } from '../../lib/config.ts';
import type { Logger } from '../../lib/log.ts';
import { createRegistry, type Registry } from '../../lib/metrics.ts';
import {
  kinds,
  leaderMigrationSetup,
  loadKubeConfig,
  Manager,
  objectKey,
  type LeaderMigrationSetup,
} from '../../kube/index.ts';
import type { LoadContext } from '../../openstack/config/types.ts';
import { CloudLoopsGate, CloudOwnership } from './cloud-owner.ts';
import { IN_TREE_WAITS, registerInTreeServiceController, SERVICE_CONTROLLER } from './service.ts';

export const KCM_COMPONENT = 'kube-controller-manager';
export const ROUTE_CONTROLLER = 'route';
/** The in-tree cloud loops KCM ran, by their `--controllers` names (those leader migration moves). */
export const CLOUD_LOOPS = [SERVICE_CONTROLLER, CLOUD_NODE_LIFECYCLE_CONTROLLER, ROUTE_CONTROLLER] as const;
const EMULATED: readonly string[] = [SERVICE_CONTROLLER, CLOUD_NODE_LIFECYCLE_CONTROLLER];
/**
 * KCM's other controllers (1.25's `--controllers` names): accepted, since real command lines name
 * them (`*,bootstrapsigner,tokencleaner`), and not run: the stand-in is only the cloud loops.
 */
export const OTHER_KCM_CONTROLLERS = [
  'attachdetach',
  'bootstrapsigner',
  'clusterrole-aggregation',
  'cronjob',
  'csrapproving',
  'csrcleaner',
  'csrsigning',
  'daemonset',
  'deployment',
  'disruption',
  'endpoint',
  'endpointslice',
  'endpointslicemirroring',
  'ephemeral-volume',
  'garbagecollector',
  'horizontalpodautoscaling',
  'job',
  'namespace',
  'nodeipam',
  'nodelifecycle',
  'persistentvolume-binder',
  'persistentvolume-expander',
  'podgc',
  'pv-protection',
  'pvc-protection',
  'replicaset',
  'replicationcontroller',
  'resourcequota',
  'root-ca-cert-publisher',
  'serviceaccount',
  'serviceaccount-token',
  'statefulset',
  'tokencleaner',
  'ttl',
  'ttl-after-finished',
] as const;

export interface InTreeKcmOptions {
  /** `--cloud-provider`: `openstack` runs the in-tree loops; `external` or '' runs none. */
  cloudProvider: string;
  /** `--cloud-config`: the in-tree provider's cloud.conf (the CCM reads the same file). */
  cloudConfig?: string | undefined;
  kubeconfig?: string | undefined;
  /** `--controllers` as given (comma lists split). */
  controllers: readonly string[];
  leaderElect: boolean;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  leaseName: string;
  leaseNamespace: string;
  enableLeaderMigration?: boolean | undefined;
  leaderMigrationConfig?: string | undefined;
  /** `--node-monitor-period` (5 s). */
  nodeMonitorPeriodMs: number;
  /** `--concurrent-service-syncs` (1): with 1, one Service at a time, blocked while Octavia works. */
  concurrentServiceSyncs: number;
  /** Put before `shiftstack-kube-controller-manager` in the User-Agent of OpenStack calls. */
  userAgent?: readonly string[] | undefined;
  /** Multiplies the in-tree waits and back-offs (0.1: ten times faster), as `sim openstack --time-scale`. */
  timeScale?: number | undefined;
}

export const KCM_DEFAULTS: Omit<InTreeKcmOptions, 'cloudConfig' | 'kubeconfig'> = {
  cloudProvider: '',
  controllers: ['*'],
  leaderElect: true,
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  leaseName: 'kube-controller-manager',
  leaseNamespace: 'kube-system',
  nodeMonitorPeriodMs: 5_000,
  concurrentServiceSyncs: 1,
  timeScale: 1,
};

/** How often KCMO's part reads who owns the cloud loops, unscaled. */
const OWNERSHIP_POLL_MS = 2_000;

/** What `--controllers` selects among the cloud loops; KCM's upstream rules, unknown names refused. */
export function selectCloudLoops(list: readonly string[]): { run: string[]; notEmulated: string[] } {
  const known = new Set<string>([...CLOUD_LOOPS, ...OTHER_KCM_CONTROLLERS]);
  const on = new Set<string>();
  const off = new Set<string>();
  let star = false;
  for (const raw of list) {
    const item = raw.trim();
    if (item === '') continue;
    if (item === '*') {
      star = true;
      continue;
    }
    const name = item.replace(/^-/, '');
    if (!known.has(name)) {
      throw new UsageError(
        `--controllers: unknown controller "${name}"; the cloud loops are ${CLOUD_LOOPS.join(', ')} (and "*", "-name")`,
      );
    }
    (item.startsWith('-') ? off : on).add(name);
  }
  const wanted = [...CLOUD_LOOPS].filter((n) => (star || on.has(n)) && !off.has(n));
  return {
    run: wanted.filter((n) => EMULATED.includes(n)),
    notEmulated: wanted.filter((n) => !EMULATED.includes(n)),
  };
}

/** `--enable-leader-migration` for KCM; refused when KCM runs no cloud loop (it would hold the Lease for nothing). */
export async function kcmLeaderMigration(
  opts: Pick<
    InTreeKcmOptions,
    'enableLeaderMigration' | 'leaderMigrationConfig' | 'leaderElect' | 'cloudProvider'
  >,
  signal?: AbortSignal,
): Promise<LeaderMigrationSetup | undefined> {
  if (opts.enableLeaderMigration && opts.cloudProvider !== 'openstack') {
    // Upstream's guide: a KCM without the in-tree provider must not enable migration.
    throw new UsageError(
      `--enable-leader-migration with --cloud-provider=${opts.cloudProvider || '(none)'}: this kube-controller-manager runs no cloud loop, yet would hold the migration Lease and keep the cloud controller manager from them. Fix: leave --enable-leader-migration off here`,
    );
  }
  return leaderMigrationSetup(opts, KCM_COMPONENT, CLOUD_LOOPS, signal);
}

export interface InTreeKcmDeps {
  log: Logger;
  kubeConfig?: KubeConfig;
  loadContext?: LoadContext;
  registry?: Registry;
  clock?: Clock;
  /** Where /metrics is served (kube-controller-manager's secure port is not emulated); none without. */
  metricsServer?: { host: string; port: number };
}

export interface InTreeKcm {
  manager: Manager;
  /** The cloud loops' gate (who owns them); open while this process runs them. */
  gate: CloudLoopsGate;
  controllers: string[];
  run(signal: AbortSignal): Promise<void>;
}

export async function buildInTreeKcm(opts: InTreeKcmOptions, deps: InTreeKcmDeps): Promise<InTreeKcm> {
  const log = deps.log;
  const inTree = opts.cloudProvider === 'openstack';
  if (inTree && !opts.cloudConfig)
    throw new UsageError('--cloud-provider=openstack needs --cloud-config: the in-tree provider reads it');
  const selection = inTree ? selectCloudLoops(opts.controllers) : { run: [], notEmulated: [] };
  const migration = await kcmLeaderMigration(opts);
  for (const w of migration?.warnings ?? []) log.warn(w);
  const scale = opts.timeScale ?? 1;
  const clock = deps.clock ?? systemClock;
  const kubeConfig = deps.kubeConfig ?? loadKubeConfig(opts.kubeconfig);
  const registry = deps.registry ?? createRegistry();
  const manager = new Manager({
    name: KCM_COMPONENT,
    kubeConfig,
    log,
    registry,
    clock,
    ...(deps.metricsServer ? { metricsServer: deps.metricsServer } : {}),
    ...(opts.leaderElect
      ? {
          leaderElection: {
            leaseName: opts.leaseName,
            leaseNamespace: opts.leaseNamespace,
            leaseDurationMs: opts.leaseDurationMs,
            renewDeadlineMs: opts.renewDeadlineMs,
            retryPeriodMs: opts.retryPeriodMs,
            // Upstream KCM lets its Lease expire; released here, a handover is not a lease duration long.
            releaseOnCancel: true,
          },
        }
      : {}),
    ...(migration ? { leaderMigration: { config: migration.config, component: KCM_COMPONENT } } : {}),
  });
  const gate = new CloudLoopsGate();
  manager.add(
    new CloudOwnership({
      api: manager.api,
      gate,
      external: !inTree,
      pollMs: OWNERSHIP_POLL_MS * scale,
      clock,
      log: log.child({ component: 'cloud-owner' }),
    }),
  );
  let openstack: (OpenStackApi & { close(): Promise<void> }) | undefined;
  if (inTree) {
    try {
      const source = await CcmConfigSource.open({
        path: opts.cloudConfig!,
        kube: manager.api,
        events: manager.events,
        log,
        ...(deps.loadContext ? { loadContext: deps.loadContext } : {}),
      });
      manager.add(source);
      openstack = await rotatingClient(source, {
        registry,
        log,
        userAgent: [...(opts.userAgent ?? []), 'shiftstack-kube-controller-manager'].join(' '),
      });
      const loadBalancer = source.current().loadBalancer;
      if (loadBalancer.manageSecurityGroups)
        log.warn(
          "[LoadBalancer] manage-security-groups: the stand-in does not emulate the in-tree provider's security groups",
        );
      if (selection.run.includes(SERVICE_CONTROLLER)) {
        registerInTreeServiceController(manager, openstack, source, gate, {
          workers: opts.concurrentServiceSyncs,
          waits: { ...IN_TREE_WAITS, initialMs: IN_TREE_WAITS.initialMs * scale },
          retry: { minMs: 5_000 * scale, maxMs: 300_000 * scale },
        });
      }
      if (selection.run.includes(CLOUD_NODE_LIFECYCLE_CONTROLLER)) {
        const reconcile = cloudNodeLifecycleReconciler(manager, openstack, source, {
          monitorPeriodMs: opts.nodeMonitorPeriodMs,
        });
        const lifecycle = manager
          .controller(CLOUD_NODE_LIFECYCLE_CONTROLLER)
          .for(kinds.Node)
          .complete(
            async (req, signal, ctx) => (await gate.run(signal, (s) => reconcile(req, s, ctx))) ?? {},
          );
        gate.onOpen(() => {
          for (const n of manager.informers.informerFor(kinds.Node).list()) lifecycle.enqueue(objectKey(n));
        });
      }
    } catch (err) {
      await openstack?.close();
      await manager.api.close();
      throw err;
    }
  }
  if (selection.notEmulated.length > 0)
    log.warn({ controllers: selection.notEmulated }, 'not emulated by the stand-in, so not running');
  log.info(
    {
      cloudProvider: opts.cloudProvider || '(none)',
      controllers: selection.run,
      leaderElect: opts.leaderElect,
      ...(migration ? { leaderMigration: migration.config.leaderName } : {}),
    },
    'kube-controller-manager stand-in configured',
  );
  return {
    manager,
    gate,
    controllers: selection.run,
    async run(signal) {
      try {
        await manager.start(signal);
      } finally {
        await openstack?.close();
      }
    },
  };
}
