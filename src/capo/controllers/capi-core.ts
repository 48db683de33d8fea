/**
 * Cluster API core's Machine and Cluster controllers, as far as CAPO's objects need them, for
 * where none runs (`actAsClusterAPICore`: tests, the demo). `shiftstack capo` registers them
 * only with that option: on a management cluster CAPI's own controllers write these statuses.
 *
 * - Machine (machine_controller.go): the infrastructure facts from the OpenStackMachine, the
 *   Node by providerID (`status.nodeRef`), the conditions and the phase; machine/capi-core.ts
 *   holds the rules. A Node that registers, or gets its providerID from the ccm, after the
 *   machine is ready wakes the Machine through the Node watch; nothing polls.
 * - Cluster (cluster_controller.go): the phase, `controlPlaneReady` and the conditions, woken by
 *   its Machines' phase changes.
 *
 * CAPI reads Nodes from the workload cluster; here they are in the cluster these controllers
 * watch, as in the demo. Writes are status merge patches of what changed, so the OpenStackMachine
 * and OpenStackCluster controllers' own stand-in writes (providerID, infrastructureReady) do not
 * conflict with these.
 */
import type { V1Node } from '@kubernetes/client-node';
import {
  clone,
  fieldsChanged,
  isNotFound,
  kinds,
  mergePatch,
  patchStatus,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import { capoKinds, type Cluster, type Machine, type OpenStackMachine } from '../api/index.ts';
import { clusterAsCore, machineStatusAsCore } from '../machine/capi-core.ts';
import { clusterNameOf, isPaused } from '../machine/owners.ts';

export const CAPI_CORE_MACHINE_CONTROLLER = 'capi-core-machine';
export const CAPI_CORE_CLUSTER_CONTROLLER = 'capi-core-cluster';

const NODE_BY_PROVIDER_ID = 'capi-core/node-providerID';
const MACHINE_BY_PROVIDER_ID = 'capi-core/machine-providerID';
const MACHINE_BY_INFRA = 'capi-core/machine-infrastructure';
const MACHINE_BY_CLUSTER = 'capi-core/machine-cluster';

export interface ClusterAPICoreOptions {
  /** CAPI's `--machine-concurrency` (10). */
  machineWorkers?: number;
  /** CAPI's `--cluster-concurrency` (10). */
  clusterWorkers?: number;
}

export function registerClusterAPICoreControllers(mgr: Manager, opts: ClusterAPICoreOptions = {}): void {
  const machines = mgr.informers.informerFor(capoKinds.Machine, {
    indexers: {
      [MACHINE_BY_PROVIDER_ID]: (m) => (m.spec?.providerID ? [m.spec.providerID] : []),
      [MACHINE_BY_INFRA]: (m) => {
        const ref = m.spec?.infrastructureRef;
        if (!ref?.name || (ref.kind !== undefined && ref.kind !== 'OpenStackMachine')) return [];
        return [`${ref.namespace ?? m.metadata?.namespace ?? ''}/${ref.name}`];
      },
      [MACHINE_BY_CLUSTER]: (m) => {
        const cluster = m.spec ? clusterNameOf(m) : undefined;
        return cluster ? [`${m.metadata?.namespace ?? ''}/${cluster}`] : [];
      },
    },
  });
  mgr.informers.informerFor(kinds.Node, {
    indexers: { [NODE_BY_PROVIDER_ID]: (n) => (n.spec?.providerID ? [n.spec.providerID] : []) },
  });
  const keys = (list: readonly Machine[]): Request[] =>
    list.map((m) => ({ namespace: m.metadata?.namespace ?? 'default', name: m.metadata?.name ?? '' }));

  const machine = new MachineCore(mgr);
  mgr
    .controller(CAPI_CORE_MACHINE_CONTROLLER)
    .for(capoKinds.Machine)
    // External tracking of the infrastructure object: its readiness, providerID, addresses.
    .watches(capoKinds.OpenStackMachine, (o) =>
      keys(machines.byIndex(MACHINE_BY_INFRA, `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`)),
    )
    // A Node registering or getting its providerID after the machine is ready.
    .watches(
      kinds.Node,
      (n) => (n.spec?.providerID ? keys(machines.byIndex(MACHINE_BY_PROVIDER_ID, n.spec.providerID)) : []),
      { predicates: [nodeRelevant] },
    )
    .watches(
      capoKinds.Cluster,
      (c) =>
        keys(
          machines.byIndex(MACHINE_BY_CLUSTER, `${c.metadata?.namespace ?? ''}/${c.metadata?.name ?? ''}`),
        ),
      { predicates: [{ update: (a, b) => a.spec?.paused !== b.spec?.paused }] },
    )
    .withOptions({ maxConcurrentReconciles: opts.machineWorkers ?? 10 })
    .complete((req, signal, ctx) => machine.reconcile(req, signal, ctx));

  const cluster = new ClusterCore(mgr);
  mgr
    .controller(CAPI_CORE_CLUSTER_CONTROLLER)
    .for(capoKinds.Cluster)
    .watches(
      capoKinds.Machine,
      (m) => {
        const name = m.spec ? clusterNameOf(m) : undefined;
        return name ? [{ namespace: m.metadata?.namespace ?? 'default', name }] : [];
      },
      { predicates: [machinePhaseChanged] },
    )
    .withOptions({ maxConcurrentReconciles: opts.clusterWorkers ?? 10 })
    .complete((req, signal, ctx) => cluster.reconcile(req, signal, ctx));
}

/** Node updates that matter to a Machine: the providerID, a condition's status, nodeInfo; not heartbeats. */
const nodeRelevant = fieldsChanged<V1Node>((n) => [
  n.spec?.providerID,
  (n.status?.conditions ?? []).map((c) => [c.type, c.status]),
  n.status?.nodeInfo ?? {},
]);

/** Machine updates that can change its Cluster's status: the phase, the Node, the labels. */
const machinePhaseChanged = fieldsChanged<Machine>((m) => [
  m.status?.phase,
  m.status?.nodeRef?.uid,
  m.metadata?.labels ?? {},
]);

class MachineCore {
  private readonly mgr: Manager;

  constructor(mgr: Manager) {
    this.mgr = mgr;
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const client = this.mgr.client;
    const machine = await client.get(capoKinds.Machine, req, { signal });
    if (!machine) return {};
    const namespace = machine.metadata?.namespace ?? 'default';
    const clusterName = clusterNameOf(machine);
    const cluster = clusterName
      ? await client.get(capoKinds.Cluster, { namespace, name: clusterName }, { signal })
      : undefined;
    if (isPaused(cluster, machine)) {
      ctx.log.info('the Machine or its Cluster is paused; not reconciling');
      return {};
    }
    const ref = machine.spec.infrastructureRef;
    const infra =
      ref?.name && (ref.kind === undefined || ref.kind === 'OpenStackMachine')
        ? await client.get<OpenStackMachine>(
            capoKinds.OpenStackMachine,
            { namespace: ref.namespace ?? namespace, name: ref.name },
            { signal },
          )
        : undefined;
    const providerID = machine.spec.providerID || infra?.spec.providerID;
    const nodes = providerID
      ? await client.list(kinds.Node, { index: { name: NODE_BY_PROVIDER_ID, value: providerID }, signal })
      : [];
    const byRef = machine.status?.nodeRef;
    const named = byRef?.name ? await client.get(kinds.Node, { name: byRef.name }, { signal }) : undefined;
    const next = machineStatusAsCore(machine, {
      infra,
      nodes,
      nodeByRef: named && named.metadata?.uid === byRef?.uid ? named : undefined,
    });

    try {
      let current = machine;
      if (next.spec.providerID !== machine.spec.providerID) {
        const draft = clone(machine);
        draft.spec.providerID = next.spec.providerID;
        current = await mergePatch(this.mgr.api, capoKinds.Machine, machine, draft, { signal });
      }
      const draft = clone(current);
      draft.status = next.status;
      await patchStatus(this.mgr.api, capoKinds.Machine, current, draft, { signal });
    } catch (err) {
      // Deleted behind the cache: nothing left to report on.
      if (isNotFound(err)) return {};
      throw err;
    }
    if (next.status?.phase !== machine.status?.phase) {
      ctx.log.info(
        { phase: next.status?.phase, node: next.status?.nodeRef?.name },
        'acting as Cluster API core: Machine phase',
      );
    }
    return {};
  }
}

class ClusterCore {
  private readonly mgr: Manager;

  constructor(mgr: Manager) {
    this.mgr = mgr;
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const cluster = await this.mgr.client.get<Cluster>(capoKinds.Cluster, req, { signal });
    if (!cluster) return {};
    if (isPaused(cluster, cluster)) {
      ctx.log.info('the Cluster is paused; not reconciling');
      return {};
    }
    const machines = await this.mgr.client.list(capoKinds.Machine, {
      index: { name: MACHINE_BY_CLUSTER, value: `${req.namespace ?? ''}/${req.name}` },
      signal,
    });
    const next = clusterAsCore(cluster, machines);
    const draft = clone(cluster);
    draft.status = next.status;
    try {
      await patchStatus(this.mgr.api, capoKinds.Cluster, cluster, draft, { signal });
    } catch (err) {
      if (isNotFound(err)) return {};
      throw err;
    }
    if (next.status?.phase !== cluster.status?.phase) {
      ctx.log.info({ phase: next.status?.phase }, 'acting as Cluster API core: Cluster phase');
    }
    return {};
  }
}
