/**
 * The OpenStackMachine controller (CAPO's `controllers/openstackmachine_controller.go`, v0.11+):
 * a Cluster API Machine's infrastructure is one OpenStackServer of the same name, which the
 * OpenStackServer controller turns into ports, volumes and a Nova server. This controller only
 * translates and reports; it makes no Nova or Neutron call on the create path, except the API
 * floating IP of a cluster without a load balancer.
 *
 * Per reconcile, reading from the cache:
 * 1. The owner Machine (ownerReference kind Machine), its Cluster (label
 *    `cluster.x-k8s.io/cluster-name`) and the OpenStackCluster the Cluster names; missing → wait
 *    for the watch that brings them. A paused Cluster or object is left alone.
 * 2. The spec to act on: `reviewSpec` (refused changes → SpecAccepted=False + Warning Event, and
 *    the accepted spec is used).
 * 3. Wait for `Cluster.status.infrastructureReady` (requeue 15 s) and the bootstrap data Secret
 *    name; then the finalizer; then get or create the OpenStackServer, controlled by this object,
 *    its spec from `openStackMachineSpecToOpenStackServerSpec` (machine/server-spec.ts). It is
 *    never updated: the server spec is immutable.
 * 4. Mirror the server: instanceID, instanceState, addresses; its failure conditions (CAPO #3013);
 *    ACTIVE → providerID, status.ready, initialization.provisioned.
 * 5. Control-plane machines: API ingress (machine/api-ingress.ts: the cluster controller owns the
 *    load balancer members; the API floating IP goes to the first control-plane port that finds it
 *    free).
 * 6. With `actAsClusterAPICore`, what CAPI core would do (machine/capi-core.ts).
 *
 * Delete: delete the OpenStackServer (only if we control it) and wait until it is gone — its own
 * finalizer removes the OpenStack resources, from what its status recorded — then the finalizer.
 * The delete path needs neither the Machine nor the clusters, so it finishes whatever is left.
 *
 * Never sleeps: every wait is `{ requeueAfterMs }` with CAPO's intervals capped at 15 s, except
 * waiting for the OpenStackServer, which needs none: the changes of the fields the machine
 * mirrors wake it at once (`owns`; CAPO watches its OpenStackServers too, waking only on ready or a
 * terminal error, where this controller also mirrors the steps in between).
 *
 * Wake-ups are filtered so one create costs a handful of reconciles, not one per write: the
 * machine's own status patches, the server's intermediate steps, and the Machine's status (but
 * nodeRef) are dropped; spec, metadata (labels, annotations, owners, finalizers, deletion) and
 * every create and delete still pass.
 */
import {
  addFinalizer,
  clone,
  hasFinalizer,
  isAlreadyExists,
  isControlledBy,
  isDeleting,
  isNotFound,
  mergePatch,
  objectKey,
  or,
  OwnWrites,
  patchStatus,
  removeFinalizer,
  setControllerReference,
  specOrMetadataChanged,
  fieldsChanged,
  StatusPatcher,
  type Manager,
  type Predicate,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import {
  capoKinds,
  CLUSTER_NAME_LABEL,
  Conditions,
  EventReasons,
  MACHINE_FINALIZER,
  Reasons,
  reviewSpec,
  type CapiCondition,
  type Cluster,
  type IdentityRef,
  type Machine,
  type OpenStackCluster,
  type OpenStackMachine,
  type OpenStackServer,
} from '../api/index.ts';
import { clusterNameOf as clusterOfOpenStackCluster } from '../cluster/owner.ts';
import { IdentityError, type ScopeCache } from '../identity.ts';
import {
  apiIngress,
  ensureAPIFloatingIP,
  isLoadBalancerMember,
  managementPortID,
} from '../machine/api-ingress.ts';
import { adoptedMetadata, machineAsCore, machineReferencing } from '../machine/capi-core.ts';
import {
  getCapiCondition,
  markFalse,
  markTrue,
  markUnknown,
  mirror,
  setCapiCondition,
  setSummary,
} from '../machine/conditions.ts';
import {
  clusterNameOf,
  infraClusterName,
  isControlPlaneMachine,
  isPaused,
  ownerMachineName,
} from '../machine/owners.ts';
import { machineIdentityRef, openStackMachineSpecToOpenStackServerSpec } from '../machine/server-spec.ts';
import { internalIP, machineAddresses, machineState, providerID } from '../machine/state.ts';

export const OPENSTACK_MACHINE_CONTROLLER = 'openstackmachine';

/** Reasons this controller adds to CAPO's (CamelCase, as CAPI's). */
export const MachineReasons = {
  /** InstanceReady while the OpenStackServer is not ready and says nothing worse. */
  WaitingForServer: 'WaitingForOpenStackServer',
  /** APIServerIngressReady while the cluster controller has not made the machine a member yet. */
  WaitingForLoadBalancerMember: 'WaitingForLoadBalancerMember',
  /** An OpenStackServer of the machine's name that this machine does not control. */
  ServerNotOwned: 'OpenStackServerNotOwned',
  Deleting: 'Deleting',
} as const;

/** Event reasons (CamelCase), besides the api's SpecChangeRefused / InvalidSpec. */
export const MachineEventReasons = {
  CreatedServer: 'SuccessfulCreateOpenStackServer',
  DeletingServer: 'DeletingOpenStackServer',
  InvalidMachineSpec: 'InvalidMachineSpec',
  InstanceError: 'InstanceStateError',
  ServerNotOwned: 'OpenStackServerNotOwned',
  FloatingIPError: 'FloatingIPError',
  AuthenticationFailed: 'OpenStackAuthenticationFailed',
} as const;

/** CAPI's failure reason for a machine whose instance went to ERROR (capierrors.UpdateMachineError). */
const UPDATE_MACHINE_ERROR = 'UpdateError';

export interface OpenStackMachineControllerOptions {
  /** CAPO's `--openstackmachine-concurrency` (10). */
  workers: number;
  /**
   * Also do what Cluster API core does for Machines (owner reference, Machine.spec.providerID,
   * status.addresses, infrastructureReady, phase). Only where no CAPI core runs: tests, the demo.
   */
  actAsClusterAPICore?: boolean;
  /** Waiting for the Cluster's infrastructure (CAPO: 15 s). */
  infrastructureWaitMs?: number;
  /**
   * Looking again at an OpenStackServer this machine cannot use (not ours, or a spec that does not
   * translate) (CAPO: 10 s). A building one needs no poll: its status changes wake the machine.
   */
  buildWaitMs?: number;
  /** An instance in another state (SHUTOFF, MIGRATING, …) (CAPO: 60 s; capped here at 15 s). */
  otherStateWaitMs?: number;
  /** Waiting for the OpenStackServer object to go on delete (CAPO: 10 s). */
  deleteWaitMs?: number;
  /** Waiting for the load-balancer member or the API floating IP (5 s). */
  ingressWaitMs?: number;
}

const CAP_MS = 15_000;

/** OpenStackMachines by their cluster (`namespace/cluster-name` label). */
const MACHINE_BY_CLUSTER = 'capo/machine-cluster';

export function registerOpenStackMachineController(
  mgr: Manager,
  scopes: ScopeCache,
  opts: OpenStackMachineControllerOptions,
): void {
  const own = new OwnWrites<OpenStackMachine>();
  const r = new OpenStackMachineReconciler(mgr, scopes, opts, own);
  // A cluster's machines by index, not a scan of every machine per Cluster or control-plane event.
  const machines = mgr.informers.informerFor(capoKinds.OpenStackMachine, {
    indexers: {
      [MACHINE_BY_CLUSTER]: (m) => {
        const cluster = m.metadata?.labels?.[CLUSTER_NAME_LABEL];
        return cluster ? [`${m.metadata?.namespace ?? ''}/${cluster}`] : [];
      },
    },
  });
  const ofCluster = (namespace: string | undefined, cluster: string) =>
    machines.byIndex(MACHINE_BY_CLUSTER, `${namespace ?? ''}/${cluster}`);
  mgr
    .controller(OPENSTACK_MACHINE_CONTROLLER)
    // Our own status patch after every reconcile, our finalizer and providerID would otherwise
    // wake us once more each.
    .for(capoKinds.OpenStackMachine, { predicates: [specOrMetadataChanged(), own.predicate()] })
    .owns(capoKinds.OpenStackServer, { predicates: [serverMirrored] })
    // util.MachineToInfrastructureMapFunc: a Machine wakes the OpenStackMachine it names.
    .watches(
      capoKinds.Machine,
      (m) => {
        const ref = m.spec?.infrastructureRef;
        if (!ref?.name || (ref.kind !== undefined && ref.kind !== 'OpenStackMachine')) return [];
        return [{ namespace: m.metadata?.namespace ?? 'default', name: ref.name }];
      },
      { predicates: [machineRelevant] },
    )
    // The Cluster's infrastructureReady and paused decide whether machines may proceed.
    .watches(
      capoKinds.Cluster,
      (c) => ofCluster(c.metadata?.namespace, c.metadata?.name ?? '').map((m) => objectKey(m)),
      { predicates: [clusterGate] },
    )
    // OpenStackClusterToOpenStackMachines: a machine that found its OpenStackCluster not there yet
    // (the cluster's cache behind the machine's) waits for it to come. Its status changes need no
    // watch here: the Cluster's infrastructureReady above follows them.
    .watches(
      capoKinds.OpenStackCluster,
      (c) => ofCluster(c.metadata?.namespace, clusterOfOpenStackCluster(c)).map((m) => objectKey(m)),
      { predicates: [{ update: () => false, delete: () => false }] },
    )
    // A control-plane machine that goes frees the API floating IP: the others may take it.
    .watches(
      capoKinds.OpenStackMachine,
      (m) => {
        const cluster = m.metadata?.labels?.[CLUSTER_NAME_LABEL];
        if (!cluster || !isControlPlaneMachine(m)) return [];
        return ofCluster(m.metadata?.namespace, cluster)
          .filter((o) => isControlPlaneMachine(o) && o.metadata?.uid !== m.metadata?.uid)
          .map((o) => objectKey(o));
      },
      { predicates: [{ create: () => false, update: () => false }] },
    )
    .withOptions({ maxConcurrentReconciles: opts.workers })
    .complete((req, signal, ctx) => r.reconcile(req, signal, ctx));
}

/**
 * What the machine reads of its OpenStackServer. The server controller writes its status once per
 * step (ports, volumes, each BUILD poll); only these facts change what the machine reports, so
 * only they wake it — and they always do, which is why waiting for the server needs no requeue.
 * Keep in step with reconcileNormal and waitingForServer.
 */
export function serverFacts(s: OpenStackServer): unknown {
  const st = s.status;
  const own = getCapiCondition(st?.conditions, Conditions.InstanceReady);
  // Mirrored only as a failure, or as the message of an instance in ERROR (serverMessage).
  const failure =
    own?.status === 'False' && (own.reason !== Reasons.InstanceNotReady || st?.instanceState === 'ERROR')
      ? [own.reason, own.message, own.severity]
      : undefined;
  return [
    s.metadata?.ownerReferences,
    s.metadata?.deletionTimestamp,
    st?.ready === true,
    st?.instanceID,
    st?.instanceState,
    failure,
    // Read only once the server is ready, and its becoming ready wakes the machine anyway.
    st?.ready ? [st.addresses, st.resolved?.ports, st.resources?.ports] : undefined,
  ];
}

const serverMirrored: Predicate<OpenStackServer> = fieldsChanged(serverFacts);

/**
 * The Machine's spec and metadata (bootstrap data, labels, owner, deletion), and of its status only
 * nodeRef (whether an instance in ERROR fails the machine); phase, addresses and conditions, which
 * Cluster API core (or we, acting as it) write, cannot change what this controller does.
 */
const machineRelevant: Predicate<Machine> = or(
  specOrMetadataChanged(),
  fieldsChanged((m) => m.status?.nodeRef),
);

const clusterGate: Predicate<Cluster> = {
  update: (a, b) =>
    a.status?.infrastructureReady !== b.status?.infrastructureReady ||
    a.spec?.paused !== b.spec?.paused ||
    a.spec?.infrastructureRef?.name !== b.spec?.infrastructureRef?.name,
};

interface Related {
  machine: Machine;
  cluster: Cluster;
  openStackCluster: OpenStackCluster;
}

class OpenStackMachineReconciler {
  private readonly mgr: Manager;
  private readonly scopes: ScopeCache;
  private readonly opts: Required<OpenStackMachineControllerOptions>;

  private readonly own: OwnWrites<OpenStackMachine>;

  constructor(
    mgr: Manager,
    scopes: ScopeCache,
    opts: OpenStackMachineControllerOptions,
    own: OwnWrites<OpenStackMachine>,
  ) {
    this.mgr = mgr;
    this.own = own;
    this.scopes = scopes;
    const cap = (v: number) => Math.min(v, CAP_MS);
    this.opts = {
      actAsClusterAPICore: false,
      infrastructureWaitMs: 15_000,
      buildWaitMs: 10_000,
      otherStateWaitMs: CAP_MS,
      deleteWaitMs: 10_000,
      ingressWaitMs: 5_000,
      ...opts,
    };
    this.opts.otherStateWaitMs = cap(this.opts.otherStateWaitMs);
    this.opts.infrastructureWaitMs = cap(this.opts.infrastructureWaitMs);
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    let osm = await this.mgr.client.get(capoKinds.OpenStackMachine, req, { signal });
    if (!osm) return {};
    if (isDeleting(osm)) return this.reconcileDelete(osm, signal, ctx);
    if (!ownerMachineName(osm) && this.opts.actAsClusterAPICore) {
      // Adopted, it goes on in this reconcile: a second trip through the queue only waited behind
      // every other machine (100 created together: ~1.5 s before their OpenStackServers existed).
      const adopted = await this.adopt(osm, signal, ctx);
      if (!adopted) return {};
      osm = adopted;
    }

    const related = await this.related(osm, signal, ctx);
    if (!related) return {};
    if (isPaused(related.cluster, osm)) {
      ctx.log.info('the OpenStackMachine or its Cluster is paused; not reconciling');
      return {};
    }
    const patcher = new StatusPatcher(osm);
    let result: Result;
    try {
      result = await this.reconcileNormal(osm, patcher, related, signal, ctx);
    } finally {
      const conditions = (patcher.draft.status ??= {}).conditions ?? [];
      setSummary(
        conditions,
        isControlPlaneMachine(related.machine)
          ? [Conditions.InstanceReady, Conditions.APIServerIngressReady]
          : [Conditions.InstanceReady],
      );
      patcher.draft.status.conditions = conditions;
      if (!signal.aborted) {
        // Deleted behind a stale cache: nothing left to report on.
        await patcher.patch(this.mgr.api, capoKinds.OpenStackMachine, { signal }).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
      }
    }
    if (this.opts.actAsClusterAPICore) await this.actAsCore(osm, patcher.draft, related.machine, signal);
    return result;
  }

  /** The Machine, Cluster and OpenStackCluster; undefined (logged) while one is missing. */
  private async related(
    osm: OpenStackMachine,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Related | undefined> {
    const namespace = osm.metadata?.namespace ?? 'default';
    const machineName = ownerMachineName(osm);
    if (!machineName) {
      ctx.log.info('the Machine controller has not set the owner reference yet');
      return undefined;
    }
    const machine = await this.mgr.client.get(
      capoKinds.Machine,
      { namespace, name: machineName },
      { signal },
    );
    if (!machine) {
      ctx.log.info({ machine: machineName }, 'the owner Machine is not there yet');
      return undefined;
    }
    const clusterName = clusterNameOf(machine);
    const cluster = clusterName
      ? await this.mgr.client.get(capoKinds.Cluster, { namespace, name: clusterName }, { signal })
      : undefined;
    if (!cluster) {
      ctx.log.info(
        { machine: machineName, cluster: clusterName },
        'the Machine has no cluster label, or its Cluster does not exist',
      );
      return undefined;
    }
    const infraName = infraClusterName(cluster);
    const openStackCluster = infraName
      ? await this.mgr.client.get(capoKinds.OpenStackCluster, { namespace, name: infraName }, { signal })
      : undefined;
    if (!openStackCluster) {
      ctx.log.info(
        { cluster: clusterName, openStackCluster: infraName },
        'the OpenStackCluster is not there yet',
      );
      return undefined;
    }
    return { machine, cluster, openStackCluster };
  }

  private async reconcileNormal(
    osm: OpenStackMachine,
    patcher: StatusPatcher<OpenStackMachine>,
    related: Related,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    const { machine, cluster, openStackCluster } = related;
    const status = (patcher.draft.status ??= {});
    const conditions: CapiCondition[] = (status.conditions ??= []);

    const review = reviewSpec('OpenStackMachine', osm);
    setCapiCondition(conditions, {
      ...review.condition,
      ...(review.condition.status === 'False' ? { severity: 'Warning' as const } : {}),
    });
    if (review.refused.length > 0) {
      const reason =
        review.condition.reason === Reasons.ImmutableFieldChanged
          ? EventReasons.SpecChangeRefused
          : EventReasons.InvalidSpec;
      this.warn(osm, reason, review.condition.message);
      ctx.log.warn({ problems: review.refused }, review.condition.message);
    }
    if (review.record) Object.assign(status, review.record);
    const spec = review.spec;
    if (!spec) {
      markFalse(
        conditions,
        Conditions.InstanceReady,
        Reasons.InvalidMachineSpec,
        'Error',
        review.condition.message,
      );
      return {};
    }
    if (status.failureReason || status.failureMessage) {
      ctx.log.info('not reconciling a machine in a failed state (see status.failureReason)');
      return {};
    }

    if (!cluster.status?.infrastructureReady) {
      ctx.log.info('the Cluster infrastructure is not ready yet');
      markFalse(
        conditions,
        Conditions.InstanceReady,
        Reasons.WaitingForClusterInfrastructure,
        'Info',
        `waiting for Cluster ${cluster.metadata?.name} to report infrastructureReady`,
      );
      return { requeueAfterMs: this.opts.infrastructureWaitMs };
    }
    if (!machine.spec.bootstrap?.dataSecretName) {
      ctx.log.info('the bootstrap data secret reference is not there yet');
      markFalse(
        conditions,
        Conditions.InstanceReady,
        Reasons.WaitingForBootstrapData,
        'Info',
        `waiting for Machine ${machine.metadata?.name} to name its bootstrap data Secret`,
      );
      return {};
    }
    // Before the OpenStackServer exists, so a delete always waits for it to go.
    if (!hasFinalizer(osm, MACHINE_FINALIZER)) {
      osm = await addFinalizer(this.mgr.api, capoKinds.OpenStackMachine, osm, MACHINE_FINALIZER, {
        signal,
        own: this.own,
      });
    }

    const server = await this.server(osm, spec, related, conditions, signal, ctx);
    // Just created: its create event wakes us. Otherwise (not ours, a spec that does not
    // translate) nothing we watch need change, so look again later.
    if (server === 'created') return {};
    if (!server) return { requeueAfterMs: this.opts.buildWaitMs };

    if (server.status?.instanceID) status.instanceID = server.status.instanceID;
    if (server.status?.instanceState !== undefined) status.instanceState = server.status.instanceState;
    const state = machineState(server);
    switch (state.phase) {
      case 'Error': {
        // A machine that became a node may recover; one that never did is replaced by CAPI.
        if (!machine.status?.nodeRef) {
          status.failureReason = UPDATE_MACHINE_ERROR;
          status.failureMessage = `OpenStack instance ${server.status?.instanceID ?? ''}: ${state.message}`;
        }
        markFalse(
          conditions,
          Conditions.InstanceReady,
          state.reason,
          'Error',
          this.serverMessage(server, state.message),
        );
        this.warn(
          osm,
          MachineEventReasons.InstanceError,
          `OpenStackServer ${server.metadata?.name}: ${state.message}`,
        );
        ctx.log.warn({ instanceID: server.status?.instanceID }, `machine instance: ${state.message}`);
        return {};
      }
      case 'Deleted':
        markFalse(conditions, Conditions.InstanceReady, state.reason, 'Error', state.message);
        return {};
      case 'Building':
        // Every field of the server we mirror wakes us when it changes (serverMirrored): no poll.
        this.waitingForServer(conditions, server);
        return {};
      case 'Other':
        markUnknown(
          conditions,
          Conditions.InstanceReady,
          Reasons.InstanceNotReady,
          `Instance state is not handled: ${state.state}`,
        );
        return { requeueAfterMs: this.opts.otherStateWaitMs };
      case 'Active':
        break;
    }
    if (!server.status?.ready) {
      this.waitingForServer(conditions, server);
      return {};
    }

    status.addresses = machineAddresses(server);
    markTrue(conditions, Conditions.InstanceReady);
    const id = providerID(spec.identityRef?.region || undefined, state.instanceID);
    if (osm.spec.providerID !== id) {
      if (osm.spec.providerID) {
        // Set once (CAPO's webhook): a different one was written by someone else; say so, keep it.
        ctx.log.warn(
          { providerID: osm.spec.providerID, expected: id },
          'spec.providerID differs from the instance',
        );
      } else {
        const draft = clone(osm);
        draft.spec.providerID = id;
        osm = this.own.record(
          osm,
          draft,
          await mergePatch(this.mgr.api, capoKinds.OpenStackMachine, osm, draft, { signal }),
        );
        // What the wake-up this write no longer causes would have recorded: the accepted spec.
        const again = reviewSpec('OpenStackMachine', osm);
        if (again.refused.length === 0 && again.record) Object.assign(status, again.record);
      }
    }
    patcher.draft.spec.providerID = osm.spec.providerID;
    status.ready = true;
    status.initialization = { ...status.initialization, provisioned: true };

    if (!isControlPlaneMachine(machine)) return {};
    const identityRef = machineIdentityRef(spec, openStackCluster);
    return this.apiServerIngress(
      osm,
      server,
      openStackCluster,
      identityRef,
      status.addresses,
      conditions,
      signal,
      ctx,
    );
  }

  /**
   * The OpenStackServer of this machine; `created` when this reconcile (or one the cache has not
   * caught up with) made it; undefined while it cannot be used.
   */
  private async server(
    osm: OpenStackMachine,
    spec: OpenStackMachine['spec'],
    related: Related,
    conditions: CapiCondition[],
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<OpenStackServer | 'created' | undefined> {
    const key = objectKey(osm);
    const existing = await this.mgr.client.get(capoKinds.OpenStackServer, key, { signal });
    if (existing) {
      if (isControlledBy(existing, osm)) return existing;
      const message = `OpenStackServer ${key.name} exists and is not controlled by this OpenStackMachine; rename or delete it`;
      markFalse(conditions, Conditions.InstanceReady, MachineReasons.ServerNotOwned, 'Error', message);
      this.warn(osm, MachineEventReasons.ServerNotOwned, message);
      ctx.log.warn(message);
      return undefined;
    }
    const translated = openStackMachineSpecToOpenStackServerSpec({
      machineSpec: spec,
      machine: related.machine,
      cluster: related.openStackCluster,
    });
    if (!translated.ok) {
      markFalse(
        conditions,
        Conditions.InstanceReady,
        Reasons.InvalidMachineSpec,
        'Error',
        translated.message,
      );
      this.warn(osm, MachineEventReasons.InvalidMachineSpec, translated.message);
      ctx.log.warn(translated.message);
      return undefined;
    }
    const clusterLabel =
      related.openStackCluster.metadata?.labels?.[CLUSTER_NAME_LABEL] ?? related.cluster.metadata?.name;
    const server: OpenStackServer = {
      apiVersion: capoKinds.OpenStackServer.apiVersion,
      kind: capoKinds.OpenStackServer.kind,
      metadata: {
        name: key.name,
        namespace: key.namespace,
        ...(clusterLabel ? { labels: { [CLUSTER_NAME_LABEL]: clusterLabel } } : {}),
      },
      spec: translated.spec,
    };
    setControllerReference(osm, server);
    try {
      const created = await this.mgr.api.create(capoKinds.OpenStackServer, server, { signal });
      this.mgr.events.event(
        osm,
        'Normal',
        MachineEventReasons.CreatedServer,
        `Created OpenStackServer ${key.name}`,
      );
      ctx.log.info({ server: key.name }, 'created the OpenStackServer');
      this.waitingForServer(conditions, created);
    } catch (err) {
      // The cache lags our own create: its create event brings the next reconcile.
      if (!isAlreadyExists(err)) throw err;
    }
    return 'created';
  }

  /** InstanceReady while the server is not ready: its own failure when it reports one (CAPO #3013). */
  private waitingForServer(conditions: CapiCondition[], server: OpenStackServer): void {
    const own = getCapiCondition(server.status?.conditions, Conditions.InstanceReady);
    // A failure the server reports (InstanceCreateFailed, DependencyFailed, …) is the machine's;
    // its plain "not ready yet" is said below in the machine's own words.
    if (own && own.status === 'False' && own.reason && own.reason !== Reasons.InstanceNotReady) {
      mirror(conditions, own);
      return;
    }
    const state = server.status?.instanceState;
    markFalse(
      conditions,
      Conditions.InstanceReady,
      state ? Reasons.InstanceNotReady : MachineReasons.WaitingForServer,
      'Info',
      state
        ? `instance state is ${state}`
        : `waiting for OpenStackServer ${server.metadata?.name} to be ready`,
    );
  }

  private serverMessage(server: OpenStackServer, fallback: string): string {
    const own = getCapiCondition(server.status?.conditions, Conditions.InstanceReady);
    return own?.status === 'False' && own.message ? own.message : fallback;
  }

  private async apiServerIngress(
    osm: OpenStackMachine,
    server: OpenStackServer,
    cluster: OpenStackCluster,
    identityRef: IdentityRef,
    addresses: readonly { type: string; address: string }[],
    conditions: CapiCondition[],
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    const ingress = apiIngress(cluster);
    if (ingress.mode === 'None') {
      markTrue(conditions, Conditions.APIServerIngressReady);
      return {};
    }
    const previous = getCapiCondition(conditions, Conditions.APIServerIngressReady);
    if (ingress.mode === 'LoadBalancer') {
      // Members change only through the cluster controller; once in, the condition stays.
      if (previous?.status === 'True') return {};
      const address = internalIP(addresses);
      if (!ingress.loadBalancerID || !address) {
        markFalse(
          conditions,
          Conditions.APIServerIngressReady,
          MachineReasons.WaitingForLoadBalancerMember,
          'Info',
          !address
            ? 'the server has no InternalIP yet'
            : 'the API load balancer is not in the OpenStackCluster status yet',
        );
        return { requeueAfterMs: this.opts.ingressWaitMs };
      }
      const scope = await this.client(osm, identityRef, conditions, signal, ctx);
      if (!scope) return { requeueAfterMs: this.opts.ingressWaitMs };
      let member: boolean;
      try {
        member = await isLoadBalancerMember(scope.client, ingress.loadBalancerID, address, signal);
      } finally {
        scope.release();
      }
      if (member) {
        markTrue(conditions, Conditions.APIServerIngressReady);
        return {};
      }
      markFalse(
        conditions,
        Conditions.APIServerIngressReady,
        MachineReasons.WaitingForLoadBalancerMember,
        'Info',
        `waiting for ${address} to become a member of load balancer ${ingress.loadBalancerID}`,
      );
      return { requeueAfterMs: this.opts.ingressWaitMs };
    }

    if (!ingress.address) {
      markFalse(
        conditions,
        Conditions.APIServerIngressReady,
        Reasons.FloatingIPError,
        'Warning',
        'the OpenStackCluster has no API floating IP (controlPlaneEndpoint or apiServerFloatingIP) yet',
      );
      return { requeueAfterMs: this.opts.ingressWaitMs };
    }
    // The holder of the floating IP keeps it; the others look again when woken.
    if (
      previous?.status === 'True' &&
      previous.message?.startsWith(`floating IP ${ingress.address} on this`)
    ) {
      return {};
    }
    const portID = managementPortID(server, cluster);
    if (!portID) {
      markFalse(
        conditions,
        Conditions.APIServerIngressReady,
        Reasons.FloatingIPError,
        'Warning',
        'the server has no port on the cluster network',
      );
      return { requeueAfterMs: this.opts.ingressWaitMs };
    }
    const scope = await this.client(osm, identityRef, conditions, signal, ctx);
    if (!scope) return { requeueAfterMs: this.opts.ingressWaitMs };
    let outcome;
    try {
      outcome = await ensureAPIFloatingIP(scope.client, ingress.address, portID, signal);
    } finally {
      scope.release();
    }
    switch (outcome.result) {
      case 'Associated':
        if (outcome.changed)
          ctx.log.info({ floatingIP: outcome.floatingIP, port: portID }, 'associated the API floating IP');
        setCapiCondition(conditions, {
          type: Conditions.APIServerIngressReady,
          status: 'True',
          message: `floating IP ${outcome.floatingIP} on this machine's port ${portID}`,
        });
        return {};
      case 'HeldElsewhere':
        setCapiCondition(conditions, {
          type: Conditions.APIServerIngressReady,
          status: 'True',
          message: `floating IP ${outcome.floatingIP} is on port ${outcome.portID} of another control-plane machine`,
        });
        return {};
      case 'NotFound': {
        const message = `the API floating IP ${outcome.floatingIP} does not exist in the project`;
        markFalse(conditions, Conditions.APIServerIngressReady, Reasons.FloatingIPError, 'Error', message);
        this.warn(osm, MachineEventReasons.FloatingIPError, message);
        ctx.log.warn({ floatingIP: outcome.floatingIP }, message);
        return { requeueAfterMs: this.opts.ingressWaitMs };
      }
    }
  }

  /**
   * A lease on the OpenStack client of the machine's identity (release it when done); undefined
   * (condition + Event) when it cannot be had.
   */
  private async client(
    osm: OpenStackMachine,
    identityRef: IdentityRef,
    conditions: CapiCondition[],
    signal: AbortSignal,
    ctx: ReconcileContext,
  ) {
    try {
      // Authenticated means Keystone issued a token, not that a client could be built.
      const scope = await this.scopes.authenticatedScopeFor({
        namespace: osm.metadata?.namespace ?? 'default',
        identityRef,
        signal,
      });
      markTrue(conditions, Conditions.OpenStackAuthenticationSucceeded);
      return scope;
    } catch (err) {
      if (!IdentityError.is(err)) throw err;
      const message = `${err.message}; ${err.fix}`;
      markFalse(
        conditions,
        Conditions.OpenStackAuthenticationSucceeded,
        Reasons.OpenStackAuthenticationFailed,
        'Error',
        message,
      );
      this.warn(osm, MachineEventReasons.AuthenticationFailed, message);
      ctx.log.warn({ reason: err.reason }, message);
      return undefined;
    }
  }

  private async reconcileDelete(
    osm: OpenStackMachine,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    if (!hasFinalizer(osm, MACHINE_FINALIZER)) return {};
    const key = objectKey(osm);
    // The cache may not show a server we created a moment ago: ask the API before letting go.
    let server = await this.mgr.client.get(capoKinds.OpenStackServer, key, { signal });
    if (!server) {
      try {
        server = await this.mgr.api.get(capoKinds.OpenStackServer, key, { signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    if (server && isControlledBy(server, osm)) {
      if (!isDeleting(server)) {
        try {
          await this.mgr.api.delete(capoKinds.OpenStackServer, key, { signal });
        } catch (err) {
          if (!isNotFound(err)) {
            const draft = clone(osm);
            const conditions = ((draft.status ??= {}).conditions ??= []);
            markFalse(
              conditions,
              Conditions.InstanceReady,
              Reasons.InstanceDeleteFailed,
              'Error',
              `Deleting the OpenStackServer failed: ${(err as Error).message}`,
            );
            await patchStatus(this.mgr.api, capoKinds.OpenStackMachine, osm, draft, { signal });
            this.warn(
              osm,
              Reasons.InstanceDeleteFailed,
              `Deleting OpenStackServer ${key.name} failed: ${(err as Error).message}`,
            );
            throw err;
          }
        }
        this.mgr.events.event(
          osm,
          'Normal',
          MachineEventReasons.DeletingServer,
          `Deleting OpenStackServer ${key.name}`,
        );
        ctx.log.info({ server: key.name }, 'deleting the OpenStackServer; waiting for it to go');
        const draft = clone(osm);
        const conditions = ((draft.status ??= {}).conditions ??= []);
        markFalse(
          conditions,
          Conditions.InstanceReady,
          MachineReasons.Deleting,
          'Info',
          `deleting OpenStackServer ${key.name}`,
        );
        setSummary(conditions, [Conditions.InstanceReady]);
        draft.status.ready = false;
        await patchStatus(this.mgr.api, capoKinds.OpenStackMachine, osm, draft, { signal });
      }
      return { requeueAfterMs: this.opts.deleteWaitMs };
    }
    if (server) ctx.log.warn({ server: key.name }, 'an OpenStackServer of this name is not ours; leaving it');
    try {
      await removeFinalizer(this.mgr.api, capoKinds.OpenStackMachine, osm, MACHINE_FINALIZER, { signal });
    } catch (err) {
      // The cache lagged our own removal: the object is already gone.
      if (!isNotFound(err)) throw err;
    }
    ctx.log.info('machine deleted');
    return {};
  }

  /**
   * actAsClusterAPICore: become owned by the Machine that names us, as CAPI's machine controller
   * does; the object as written (its event wakes nothing: this reconcile goes on with it), or
   * undefined while no Machine names it.
   */
  private async adopt(
    osm: OpenStackMachine,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<OpenStackMachine | undefined> {
    const machines = await this.mgr.client.list(capoKinds.Machine, {
      namespace: osm.metadata?.namespace ?? 'default',
      signal,
    });
    const machine = machineReferencing(osm, machines);
    if (!machine) {
      ctx.log.info('no Machine names this OpenStackMachine as its infrastructure yet');
      return undefined;
    }
    const draft = clone(osm);
    draft.metadata = adoptedMetadata(osm, machine);
    const adopted = await this.own.write(osm, draft, () =>
      mergePatch(this.mgr.api, capoKinds.OpenStackMachine, osm, draft, { signal, optimisticLock: true }),
    );
    ctx.log.info(
      { machine: machine.metadata?.name },
      'acting as Cluster API core: the Machine now owns the OpenStackMachine',
    );
    return adopted;
  }

  /** actAsClusterAPICore: the Machine's providerID, addresses and readiness, as CAPI core copies them. */
  private async actAsCore(
    osm: OpenStackMachine,
    draft: OpenStackMachine,
    machine: Machine,
    signal: AbortSignal,
  ): Promise<void> {
    const next = machineAsCore(machine, {
      ready: draft.status?.ready === true,
      providerID: draft.spec.providerID ?? osm.spec.providerID,
      addresses: draft.status?.addresses ?? [],
    });
    let current = machine;
    if (next.spec.providerID !== machine.spec.providerID) {
      const specDraft = clone(machine);
      specDraft.spec.providerID = next.spec.providerID;
      current = await mergePatch(this.mgr.api, capoKinds.Machine, machine, specDraft, { signal });
    }
    const statusDraft = clone(current);
    statusDraft.status = next.status;
    await patchStatus(this.mgr.api, capoKinds.Machine, current, statusDraft, { signal });
  }

  private warn(osm: OpenStackMachine, reason: string, message: string): void {
    this.mgr.events.event(osm, 'Warning', reason, message);
  }
}
