/**
 * The migration controller (OpenShift's MachineAPIMigration, cluster-capi-operator's
 * `machinemigration`): a Machine whose `spec.authoritativeAPI` differs from its
 * `status.authoritativeAPI` (unset ≡ MachineAPI) is handed over to the other API with no OpenStack
 * call — the OpenStackServer that carries the server stays, and only its controller changes.
 *
 * To ClusterAPI:
 * 1. Refusals first, while the status still says MachineAPI (see `look`): MigrationRefused=True
 *    with the reason and the fix, a Warning Event, the status unchanged.
 * 2. status Migrating, Paused=True (the machine controller stops acting).
 * 3. The Cluster API Machine and OpenStackMachine of the Machine's name, derived from the
 *    OpenStackServer's spec (derive.ts), created paused — or found by name, as a previous
 *    switch or an interrupted run left them.
 * 4. The OpenStackServer's controller reference moves to the OpenStackMachine (the Machine stays
 *    an owner).
 * 5. Both unpaused: CAPO's OpenStackMachine controller finds the server it controls and mirrors it.
 * 6. status ClusterAPI, Paused=True.
 *
 * To MachineAPI: the refusals that apply, status Migrating, the Cluster API Machine and
 * OpenStackMachine paused (`cluster.x-k8s.io/paused`; kept, so a later switch finds them), the
 * controller reference back to the Machine, status MachineAPI, Paused=False.
 *
 * Every step reads what is there and does only what is missing, so a run interrupted anywhere
 * ends the same when run again; while Migrating the direction is the spec's, so switching the spec
 * back mid-way cancels the same way. Nothing here is remembered between reconciles.
 */
import {
  clone,
  fieldsChanged,
  isAlreadyExists,
  isDeleting,
  mergePatch,
  objectKey,
  ownerReference,
  patchStatus,
  specOrMetadataChanged,
  type KubernetesObject,
  type Manager,
  type ReconcileContext,
  type Request,
  type ResourceType,
  type Result,
} from '../../kube/index.ts';
import {
  capoKinds,
  type Machine as CapiMachine,
  type OpenStackMachine,
  type OpenStackServer,
} from '../../capo/api/index.ts';
import {
  Labels,
  MachineConditions,
  mapoKinds,
  type AuthoritativeAPI,
  type AuthorityState,
  type Condition,
  type Machine,
} from '../api/index.ts';
import {
  getMachineCondition,
  pausedCondition,
  removeMachineCondition,
  setMachineCondition,
} from '../conditions.ts';
import { deriveClusterAPIMachine, type ClusterAPIMachine, type Refusal } from './derive.ts';
import { MIGRATION_CONTROLLER, MigrationEventReasons, PAUSED_ANNOTATION, RefusalReasons } from './names.ts';
import { controlledOnlyBy, controllerOf, withController } from './owners.ts';

export interface MigrationControllerOptions {
  /** Concurrent reconciles (default 2). */
  workers?: number;
  /**
   * Looking again at a refused switch (default 30 s). Most causes (no server yet, a Cluster not
   * created yet) also wake the Machine when they go; this bounds the rest.
   */
  refusedRetryMs?: number;
}

export function registerMigrationController(mgr: Manager, opts: MigrationControllerOptions = {}): void {
  const r = new MigrationReconciler(mgr, { workers: 2, refusedRetryMs: 30_000, ...opts });
  const machines = mgr.informers.informerFor(mapoKinds.Machine);
  // The Cluster API side and the server share the Machine's name and namespace.
  const sameName = (o: KubernetesObject): Request[] =>
    o.metadata?.name ? [{ namespace: o.metadata.namespace ?? 'default', name: o.metadata.name }] : [];
  mgr
    .controller(MIGRATION_CONTROLLER)
    .for(mapoKinds.Machine, { predicates: [machineRelevant] })
    .watches(capoKinds.OpenStackServer, sameName, {
      predicates: [fieldsChanged((s) => [s.metadata?.ownerReferences, s.metadata?.deletionTimestamp])],
    })
    .watches(capoKinds.Machine, sameName, { predicates: [specOrMetadataChanged()] })
    .watches(capoKinds.OpenStackMachine, sameName, { predicates: [specOrMetadataChanged()] })
    // A Cluster created (or gone) answers a refusal of the Machines labelled with its name.
    .watches(
      capoKinds.Cluster,
      (c) =>
        machines
          .list()
          .filter(
            (m) =>
              m.metadata?.namespace === c.metadata?.namespace &&
              m.metadata?.labels?.[Labels.Cluster] === c.metadata?.name,
          )
          .map((m) => objectKey(m)),
      { predicates: [{ update: () => false }] },
    )
    .withOptions({ maxConcurrentReconciles: r.workers })
    .complete((req, signal, ctx) => r.reconcile(req, signal, ctx));
}

/** What can start, continue or refuse a switch; the rest of a Machine's status is the machine controller's. */
const machineRelevant = fieldsChanged<Machine>((m) => [
  m.spec?.authoritativeAPI,
  m.status?.authoritativeAPI,
  m.status?.phase,
  m.metadata?.deletionTimestamp,
  m.metadata?.labels?.[Labels.Cluster],
]);

/** What a switch works on, read once per reconcile. */
interface Scene {
  server: OpenStackServer;
  capiMachine: CapiMachine | undefined;
  openStackMachine: OpenStackMachine | undefined;
  /** Only toward ClusterAPI. */
  derived?: ClusterAPIMachine;
}

type Look = { ok: true; scene: Scene } | { ok: false; refusal: Refusal };

class MigrationReconciler {
  private readonly mgr: Manager;
  readonly workers: number;
  private readonly refusedRetryMs: number;

  constructor(mgr: Manager, opts: Required<MigrationControllerOptions>) {
    this.mgr = mgr;
    this.workers = opts.workers;
    this.refusedRetryMs = opts.refusedRetryMs;
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    let machine = await this.mgr.client.get(mapoKinds.Machine, req, { signal });
    if (!machine) return {};
    const desired: AuthoritativeAPI = machine.spec?.authoritativeAPI ?? 'MachineAPI';
    const state = machine.status?.authoritativeAPI;
    if (state === desired || (state === undefined && desired === 'MachineAPI')) {
      await this.settled(machine, desired, signal);
      return {};
    }
    const current: AuthorityState = state ?? 'MachineAPI';
    const look = await this.look(machine, current, desired, signal);
    if (!look.ok) return this.refuse(machine, look.refusal, signal, ctx);

    if (current !== 'Migrating') {
      machine = await this.writeAuthority(machine, 'Migrating', current, signal);
      this.mgr.events.event(
        machine,
        'Normal',
        MigrationEventReasons.Started,
        `Switching from ${current} to ${desired}`,
      );
      ctx.log.info({ from: current, to: desired }, 'migration started');
    }
    if (desired === 'ClusterAPI') await this.toClusterAPI(machine, look.scene, signal, ctx);
    else await this.toMachineAPI(machine, look.scene, signal, ctx);
    machine = await this.writeAuthority(machine, desired, desired, signal);
    this.mgr.events.event(
      machine,
      'Normal',
      MigrationEventReasons.Migrated,
      `The ${desired} now manages this Machine; OpenStackServer ${req.name} was handed over unchanged`,
    );
    ctx.log.info({ authoritativeAPI: desired }, 'migration done');
    return {};
  }

  /**
   * What the switch needs, or why it cannot happen. Checked in the order a user fixes things: the
   * Machine itself, its server, then (toward Cluster API) the Cluster and the derived objects.
   */
  private async look(
    machine: Machine,
    current: AuthorityState,
    desired: AuthoritativeAPI,
    signal: AbortSignal,
  ): Promise<Look> {
    const key = objectKey(machine);
    const name = key.name;
    const back =
      current === 'Migrating'
        ? 'set spec.authoritativeAPI back to cancel'
        : `set spec.authoritativeAPI back to ${current}`;
    if (isDeleting(machine)) {
      return refused(
        RefusalReasons.MachineDeleting,
        `Machine ${name} is being deleted; a Machine going away is not switched. Fix: let the deletion finish, or ${back}`,
      );
    }
    if (machine.status?.phase === 'Failed') {
      const why = machine.status.errorMessage ? ` (${machine.status.errorMessage})` : '';
      return refused(
        RefusalReasons.MachineFailed,
        `Machine ${name} is Failed${why}; a failed Machine is not switched. Fix: delete it (its MachineSet makes a new one) and switch the new Machine, or ${back}`,
      );
    }
    const server = await this.mgr.client.get(capoKinds.OpenStackServer, key, { signal });
    if (!server || isDeleting(server)) {
      return refused(
        RefusalReasons.NoOpenStackServer,
        server
          ? `OpenStackServer ${name} is being deleted; there is no server to hand over. Fix: let the Machine go, or set spec.authoritativeAPI back`
          : `Machine ${name} has no OpenStackServer yet; there is nothing to hand over. Fix: wait until the Machine is Provisioned (the switch is retried), or set spec.authoritativeAPI back`,
      );
    }
    const controller = controllerOf(server.metadata?.ownerReferences);
    const ours =
      controller !== undefined &&
      (controller.uid === machine.metadata?.uid ||
        (controller.kind === capoKinds.OpenStackMachine.kind && controller.name === name));
    if (!ours) {
      return refused(
        RefusalReasons.OpenStackServerNotOwned,
        `OpenStackServer ${name} is controlled by ${controller ? `${controller.kind} ${controller.name}` : 'nothing'}, neither Machine ${name} nor OpenStackMachine ${name}; handing it over could give one server two masters. Fix: give the server back to its Machine, or set spec.authoritativeAPI back`,
      );
    }
    const capiMachine = await this.mgr.client.get(capoKinds.Machine, key, { signal });
    const openStackMachine = await this.mgr.client.get(capoKinds.OpenStackMachine, key, { signal });
    const conflict = counterpartConflict(name, capiMachine, openStackMachine);
    if (conflict) return refused(RefusalReasons.NameTaken, conflict);
    if (desired === 'MachineAPI') return { ok: true, scene: { server, capiMachine, openStackMachine } };

    const clusterName = machine.metadata?.labels?.[Labels.Cluster];
    if (!clusterName) {
      return refused(
        RefusalReasons.ClusterNotFound,
        `Machine ${name} has no label ${Labels.Cluster}, which names its Cluster API Cluster. Fix: label it with the cluster's infrastructure name`,
      );
    }
    const cluster = await this.mgr.client.get(
      capoKinds.Cluster,
      { namespace: key.namespace, name: clusterName },
      { signal },
    );
    if (!cluster) {
      return refused(
        RefusalReasons.ClusterNotFound,
        `no Cluster API Cluster ${clusterName} in namespace ${key.namespace ?? ''} (label ${Labels.Cluster} of Machine ${name}). Fix: create the Cluster and its OpenStackCluster (the switch is retried), or correct the label`,
      );
    }
    const ref = cluster.spec?.infrastructureRef;
    const infraName =
      ref?.name && (ref.kind === undefined || ref.kind === capoKinds.OpenStackCluster.kind)
        ? ref.name
        : undefined;
    const openStackCluster = infraName
      ? await this.mgr.client.get(
          capoKinds.OpenStackCluster,
          { namespace: key.namespace, name: infraName },
          { signal },
        )
      : undefined;
    if (!openStackCluster) {
      return refused(
        RefusalReasons.OpenStackClusterNotFound,
        infraName
          ? `Cluster ${clusterName} names OpenStackCluster ${infraName}, which does not exist. Fix: create it (the switch is retried)`
          : `Cluster ${clusterName} has no spec.infrastructureRef to an OpenStackCluster. Fix: set it`,
      );
    }
    const derived = deriveClusterAPIMachine({ machine, server, clusterName });
    if (!derived.ok) return { ok: false, refusal: derived.refusal };
    return { ok: true, scene: { server, capiMachine, openStackMachine, derived: derived.objects } };
  }

  private async toClusterAPI(
    machine: Machine,
    scene: Scene,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<void> {
    const derived = scene.derived!;
    const capiMachine =
      scene.capiMachine ??
      (await this.createPaused(capoKinds.Machine, derived.machine, ownerReference(machine), signal, ctx));
    const openStackMachine =
      scene.openStackMachine ??
      (await this.createPaused(
        capoKinds.OpenStackMachine,
        derived.openStackMachine,
        ownerReference(capiMachine),
        signal,
        ctx,
      ));
    await this.giveServerTo(scene.server, openStackMachine, signal, ctx);
    await this.setPaused(capoKinds.Machine, capiMachine, false, signal);
    await this.setPaused(capoKinds.OpenStackMachine, openStackMachine, false, signal);
  }

  private async toMachineAPI(
    machine: Machine,
    scene: Scene,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<void> {
    // Paused before the server changes hands, so CAPO stops acting for it first.
    if (scene.capiMachine) await this.setPaused(capoKinds.Machine, scene.capiMachine, true, signal);
    if (scene.openStackMachine)
      await this.setPaused(capoKinds.OpenStackMachine, scene.openStackMachine, true, signal);
    await this.giveServerTo(scene.server, machine, signal, ctx);
  }

  /** Creates `obj` paused and owned by `owner`; an object already there (an interrupted run) is taken as it is. */
  private async createPaused<T extends KubernetesObject>(
    type: ResourceType<T>,
    obj: T,
    owner: ReturnType<typeof ownerReference>,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<T> {
    const draft = clone(obj);
    draft.metadata = {
      ...draft.metadata,
      annotations: { ...draft.metadata?.annotations, [PAUSED_ANNOTATION]: 'true' },
      ownerReferences: [owner],
    };
    try {
      const created = await this.mgr.api.create(type, draft, { signal });
      ctx.log.info({ kind: type.kind, name: obj.metadata?.name }, 'created, paused');
      return created;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      return this.mgr.api.get(type, objectKey(obj), { signal });
    }
  }

  /** Moves the server's controller reference to `owner`; the previous controller stays an owner. */
  private async giveServerTo(
    server: OpenStackServer,
    owner: KubernetesObject,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<void> {
    const uid = owner.metadata?.uid ?? '';
    if (controlledOnlyBy(server.metadata?.ownerReferences, uid)) return;
    const draft = clone(server);
    draft.metadata = {
      ...draft.metadata,
      ownerReferences: withController(server.metadata?.ownerReferences, ownerReference(owner)),
    };
    // Optimistic: a server someone else just changed is looked at again, not overwritten.
    await mergePatch(this.mgr.api, capoKinds.OpenStackServer, server, draft, {
      signal,
      optimisticLock: true,
    });
    ctx.log.info(
      { server: server.metadata?.name, controller: `${owner.kind ?? ''}/${owner.metadata?.name ?? ''}` },
      'OpenStackServer handed over',
    );
  }

  private async setPaused<T extends KubernetesObject>(
    type: ResourceType<T>,
    obj: T,
    paused: boolean,
    signal: AbortSignal,
  ): Promise<void> {
    if ((obj.metadata?.annotations?.[PAUSED_ANNOTATION] !== undefined) === paused) return;
    const draft = clone(obj);
    const annotations = { ...draft.metadata?.annotations };
    if (paused) annotations[PAUSED_ANNOTATION] = 'true';
    else delete annotations[PAUSED_ANNOTATION];
    draft.metadata = { ...draft.metadata, annotations };
    await mergePatch(this.mgr.api, type, obj, draft, { signal, optimisticLock: true });
  }

  /**
   * status.authoritativeAPI (with synchronizedAPI, the last settled API) and the Paused condition
   * that goes with it, in one write; a refusal the switch answered goes.
   */
  private async writeAuthority(
    machine: Machine,
    state: AuthorityState,
    synchronized: AuthoritativeAPI,
    signal: AbortSignal,
  ): Promise<Machine> {
    const draft = clone(machine);
    const status = (draft.status ??= {});
    status.authoritativeAPI = state;
    status.synchronizedAPI = synchronized;
    const conditions: Condition[] = (status.conditions ??= []);
    setMachineCondition(conditions, pausedCondition(state), this.mgr.clock.now());
    removeMachineCondition(conditions, MachineConditions.MigrationRefused);
    // Optimistic: the machine controller writes this status too, and a merge patch replaces
    // the conditions list whole.
    return patchStatus(this.mgr.api, mapoKinds.Machine, machine, draft, { signal, optimisticLock: true });
  }

  /** No switch requested: record an unset status, and drop a refusal the user answered by switching back. */
  private async settled(machine: Machine, api: AuthoritativeAPI, signal: AbortSignal): Promise<void> {
    const refusal = getMachineCondition(machine.status?.conditions, MachineConditions.MigrationRefused);
    if (machine.status?.authoritativeAPI !== undefined && !refusal) return;
    await this.writeAuthority(machine, api, api, signal);
  }

  private async refuse(
    machine: Machine,
    refusal: Refusal,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    const draft = clone(machine);
    const conditions: Condition[] = ((draft.status ??= {}).conditions ??= []);
    const changed = setMachineCondition(
      conditions,
      {
        type: MachineConditions.MigrationRefused,
        status: 'True',
        reason: refusal.reason,
        message: refusal.message,
      },
      this.mgr.clock.now(),
    );
    if (changed) {
      await patchStatus(this.mgr.api, mapoKinds.Machine, machine, draft, { signal, optimisticLock: true });
      this.mgr.events.event(machine, 'Warning', MigrationEventReasons.Refused, refusal.message);
      ctx.log.warn({ reason: refusal.reason }, refusal.message);
    }
    return { requeueAfterMs: this.refusedRetryMs };
  }
}

function refused(reason: Refusal['reason'], message: string): Look {
  return { ok: false, refusal: { reason, message } };
}

/**
 * A Cluster API Machine or OpenStackMachine of the name that is not this Machine's counterpart
 * (one a user made for something else): never taken over.
 */
function counterpartConflict(
  name: string,
  capiMachine: CapiMachine | undefined,
  openStackMachine: OpenStackMachine | undefined,
): string | undefined {
  const ref = capiMachine?.spec.infrastructureRef;
  if (capiMachine && (ref?.name !== name || (ref.kind !== undefined && ref.kind !== 'OpenStackMachine'))) {
    return `Cluster API Machine ${name} exists and its infrastructureRef names ${ref?.kind ?? ''} ${ref?.name ?? ''}, not OpenStackMachine ${name}. Fix: rename or delete it, or set spec.authoritativeAPI back`;
  }
  const owner = (openStackMachine?.metadata?.ownerReferences ?? []).find(
    (r) => r.kind === capoKinds.Machine.kind && r.apiVersion.startsWith('cluster.x-k8s.io/'),
  );
  if (openStackMachine && owner && owner.uid !== capiMachine?.metadata?.uid) {
    return `OpenStackMachine ${name} exists and belongs to Cluster API Machine ${owner.name} (uid ${owner.uid}), not this Machine's counterpart. Fix: rename or delete it, or set spec.authoritativeAPI back`;
  }
  return undefined;
}
