/**
 * The Machine API machine controller with MAPO's actuator on the OpenStackServer path: each Machine
 * gets one OpenStackServer of its name, which capo's OpenStackServer controller turns into ports,
 * volumes and a Nova server. This controller makes no Nova or Neutron write but the server group
 * by name; it translates, validates and reports (docs/mapo.md).
 *
 * Per reconcile, reading from the cache:
 * 1. `status.authoritativeAPI` ClusterAPI or Migrating: Paused=True and nothing else (the
 *    migration's). A Failed Machine is not reconciled again, except its deletion.
 * 2. The cluster label is required; the finalizer goes on before anything exists.
 * 3. No OpenStackServer yet: decode the provider spec, check the flavor, image and zone exist
 *    (read-only), find or make the server group by name, translate (machine/server-spec.ts), write
 *    the user-data Secret, create the OpenStackServer (controller: the Machine). Any problem the
 *    user must fix: phase Failed, errorReason InvalidConfiguration, errorMessage naming the field.
 *    A server that existed and is gone: Failed, InstanceExists=False (InstanceMissing).
 * 4. The OpenStackServer's progress mirrored: providerID (once), labels, annotations, addresses,
 *    providerStatus, InstanceExists; phases Provisioning → Provisioned → Running (nodeRef, set by
 *    nodelink); its terminal failures (instance ERROR, server gone) → Failed with its message.
 *
 * Delete: phase Deleting; wait for Drained=True (unless the Node is excluded from draining or
 * there is no Node); wait while preTerminate hooks remain; delete the OpenStackServer and wait for it
 * to go (its own finalizer cleans the cloud from what it recorded); delete the Node; remove the
 * finalizer. Never sleeps: every wait is a watch (the OpenStackServer, the Machine's spec, nodeRef,
 * Drained) or a requeue.
 */
import type { V1Node, V1Secret } from '@kubernetes/client-node';
import { operatorKinds, CLUSTER, type Infrastructure } from '../../ccm-operator/api/index.ts';
import { capoKinds, type OpenStackServer } from '../../capo/api/index.ts';
import {
  and,
  clone,
  fieldsChanged,
  hasFinalizer,
  isAlreadyExists,
  isControlledBy,
  isDeleting,
  isNotFound,
  kinds,
  mergePatch,
  metaTime,
  objectKey,
  or,
  OwnWrites,
  ownerReference,
  removeFinalizer,
  addFinalizer,
  setControllerReference,
  specOrMetadataChanged,
  StatusPatcher,
  type Manager,
  type Predicate,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import {
  Annotations,
  decodeProviderSpec,
  errorMessageOf,
  formatProviderSpecProblem,
  Labels,
  MACHINE_FINALIZER,
  MachineConditions,
  mapoKinds,
  type Condition,
  type Machine,
  type OpenstackProviderSpec,
} from '../api/index.ts';
import { getMachineCondition, pausedCondition, setMachineCondition } from '../conditions.ts';
import { MachineReasons } from '../machine/reasons.ts';
import { ServerGroupsByName } from '../machine/server-group.ts';
import { machineToServerSpec, userDataSecretName } from '../machine/server-spec.ts';
import { machineAddresses, providerIDOf, providerStatusOf } from '../machine/state.ts';
import { validateAgainstCloud } from '../machine/validate.ts';
import { OpenStackHttpError } from '../../openstack/core/errors.ts';
import { isIdentityError, type MapoScope, type MapoScopes } from '../scopes.ts';

export const MACHINE_CONTROLLER = 'machine';

/** MAPO's Event reasons (its actuator's), and ours for the steps it does not have. */
export const MachineEventReasons = {
  Created: 'Created',
  Updated: 'Updated',
  Deleted: 'Deleted',
  FailedCreate: 'FailedCreate',
  FailedDelete: 'FailedDelete',
  InvalidConfiguration: 'InvalidConfiguration',
  ServerNotOwned: 'OpenStackServerNotOwned',
} as const;

/** MAPO's key of the user data in `userDataSecret`. */
export const MAPI_USER_DATA_KEY = 'userData';
/** CAPO's key of the bootstrap data in the Secret `userDataRef` names. */
export const SERVER_USER_DATA_KEY = 'value';

export interface MachineControllerOptions {
  /** Machines reconciled at once (MAPO: controller-runtime's 1; ours 10). */
  workers: number;
  /** Looking again while something outside any watch may change (credentials, an unowned server): 30 s. */
  retryMs?: number;
  /** The server groups by name, shared by every controller of the process (single-flight). */
  serverGroups?: ServerGroupsByName;
}

type Phase = 'Provisioning' | 'Provisioned' | 'Running' | 'Deleting' | 'Failed';

/** What a Machine reads of its OpenStackServer; only changes of these wake it. */
export function serverFacts(s: OpenStackServer): unknown {
  const st = s.status;
  const ready = st?.conditions?.find((c) => c.type === 'InstanceReady');
  return [
    s.metadata?.ownerReferences,
    s.metadata?.deletionTimestamp,
    st?.ready === true,
    st?.instanceID,
    st?.instanceState,
    ready?.status === 'False' ? [ready.reason, ready.message] : undefined,
    st?.resolved,
    st?.resources?.ports,
    st?.ready ? st.addresses : undefined,
  ];
}

/** The Machine's spec and metadata; of its status, what others write and the controller acts on. */
const machineRelevant: Predicate<Machine> = or(
  specOrMetadataChanged(),
  fieldsChanged((m) => [
    m.status?.nodeRef,
    m.status?.authoritativeAPI,
    getMachineCondition(m.status?.conditions, MachineConditions.Drained)?.status,
  ]),
);

export function registerMachineController(
  mgr: Manager,
  scopes: MapoScopes,
  opts: MachineControllerOptions,
): void {
  const own = new OwnWrites<Machine>();
  const r = new MachineReconciler(mgr, scopes, opts, own);
  mgr
    .controller(MACHINE_CONTROLLER)
    .for(mapoKinds.Machine, { predicates: [and(machineRelevant, own.predicate())] })
    .owns(capoKinds.OpenStackServer, { predicates: [fieldsChanged(serverFacts)] })
    .withOptions({ maxConcurrentReconciles: opts.workers })
    .complete((req, signal, ctx) => r.reconcile(req, signal, ctx));
}

class MachineReconciler {
  private readonly mgr: Manager;
  private readonly scopes: MapoScopes;
  private readonly own: OwnWrites<Machine>;
  private readonly retryMs: number;
  private readonly serverGroups: ServerGroupsByName;

  constructor(mgr: Manager, scopes: MapoScopes, opts: MachineControllerOptions, own: OwnWrites<Machine>) {
    this.mgr = mgr;
    this.scopes = scopes;
    this.own = own;
    this.retryMs = opts.retryMs ?? 30_000;
    this.serverGroups = opts.serverGroups ?? new ServerGroupsByName();
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const machine = await this.mgr.client.get(mapoKinds.Machine, req, { signal });
    if (!machine) return {};
    const patcher = new StatusPatcher(machine);
    const before = JSON.stringify(machine.status ?? {});
    let result: Result;
    try {
      result = isDeleting(machine)
        ? await this.reconcileDelete(machine, patcher, signal, ctx)
        : await this.reconcileNormal(machine, patcher, signal, ctx);
    } finally {
      const status = (patcher.draft.status ??= {});
      if (JSON.stringify(status) !== before) status.lastUpdated = metaTime(Date.now());
      if (!signal.aborted) {
        await patcher.patch(this.mgr.api, mapoKinds.Machine, { signal }).catch((err: unknown) => {
          // Gone behind a stale cache (the finalizer was the last thing holding it).
          if (!isNotFound(err)) throw err;
        });
      }
    }
    return result;
  }

  private async reconcileNormal(
    machine: Machine,
    patcher: StatusPatcher<Machine>,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    const status = (patcher.draft.status ??= {});
    const conditions: Condition[] = (status.conditions ??= []);

    const authority = machine.status?.authoritativeAPI;
    if (authority === 'ClusterAPI' || authority === 'Migrating') {
      setMachineCondition(conditions, pausedCondition(authority), this.mgr.clock.now());
      return {};
    }
    if (authority || getMachineCondition(conditions, MachineConditions.Paused)) {
      setMachineCondition(conditions, pausedCondition('MachineAPI'), this.mgr.clock.now());
    }
    if (machine.status?.phase === 'Failed') {
      ctx.log.info({ reason: machine.status.errorReason }, 'the Machine is Failed; not reconciling it');
      return {};
    }
    if (!machine.metadata?.labels?.[Labels.Cluster]) {
      const message = `the Machine has no label ${Labels.Cluster}: set it to the cluster's infrastructure name`;
      this.warn(machine, MachineEventReasons.InvalidConfiguration, message);
      ctx.log.warn(message);
      return {};
    }
    if (!hasFinalizer(machine, MACHINE_FINALIZER)) {
      const intended = clone(machine);
      intended.metadata!.finalizers = [...(machine.metadata?.finalizers ?? []), MACHINE_FINALIZER];
      machine = this.own.record(
        machine,
        intended,
        await addFinalizer(this.mgr.api, mapoKinds.Machine, machine, MACHINE_FINALIZER, { signal }),
      );
    }

    const key = objectKey(machine);
    const server = await this.mgr.client.get(capoKinds.OpenStackServer, key, { signal });
    if (!server) {
      if (machine.spec?.providerID || machine.status?.nodeRef) {
        // It was made once: someone deleted it (upstream: "can't find created instance").
        this.failed(
          machine,
          status,
          'InvalidConfiguration',
          `Can't find created instance: OpenStackServer ${key.name} is gone`,
          ctx,
        );
        setMachineCondition(conditions, {
          type: MachineConditions.InstanceExists,
          status: 'False',
          reason: MachineReasons.InstanceMissing,
          severity: 'Warning',
          message: "Instance not found on provider: can't find created instance",
        });
        return {};
      }
      status.phase ??= 'Provisioning';
      return this.create(machine, status, signal, ctx);
    }
    if (!isControlledBy(server, machine)) {
      const message = `OpenStackServer ${key.name} exists and is not controlled by this Machine; rename or delete it`;
      this.warn(machine, MachineEventReasons.ServerNotOwned, message);
      ctx.log.warn(message);
      return { requeueAfterMs: this.retryMs };
    }
    return this.mirror(machine, server, status, signal, ctx);
  }

  /** Everything up to the OpenStackServer's create; a problem the user must fix fails the Machine. */
  private async create(
    machine: Machine,
    status: NonNullable<Machine['status']>,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    const decoded = decodeProviderSpec(machine.spec?.providerSpec?.value, 'spec.providerSpec.value');
    for (const p of decoded.problems.filter((p) => !p.fatal)) {
      ctx.log.info({ field: p.path }, formatProviderSpecProblem(p));
    }
    if (!decoded.spec) {
      this.failed(machine, status, 'InvalidConfiguration', errorMessageOf(decoded.problems), ctx);
      return {};
    }
    const spec = decoded.spec;
    const namespace = machine.metadata?.namespace ?? 'default';
    let scope: MapoScope;
    try {
      scope = await this.scopes.authenticatedScopeFor({
        namespace,
        identityRef: { type: 'Secret', name: spec.cloudsSecret.name, cloudName: spec.cloudName },
        signal,
      });
    } catch (err) {
      if (!isIdentityError(err)) throw err;
      // Credentials can be fixed without touching the Machine: a warning and a look later.
      const message = `${err.message}; ${err.fix}`;
      this.warn(machine, MachineEventReasons.FailedCreate, message);
      ctx.log.warn({ reason: err.reason }, message);
      return { requeueAfterMs: this.retryMs };
    }
    let serverGroupID = spec.serverGroupID;
    try {
      const problems = await validateAgainstCloud(scope.client, spec, signal);
      if (problems.length > 0) {
        this.failed(
          machine,
          status,
          'InvalidConfiguration',
          problems.map((p) => `${p.path}: ${p.message}`).join('; '),
          ctx,
        );
        return {};
      }
      if (spec.serverGroupName && !serverGroupID) {
        const identity = JSON.stringify([namespace, spec.cloudsSecret.name, spec.cloudName]);
        const group = await this.serverGroups.ensure(
          identity,
          spec.serverGroupName,
          scope.client.compute,
          signal,
        );
        if (!group.ok) {
          this.failed(
            machine,
            status,
            'InvalidConfiguration',
            `spec.providerSpec.value.serverGroupName: ${group.message}`,
            ctx,
          );
          return {};
        }
        if (group.created) {
          ctx.log.info({ serverGroup: spec.serverGroupName, id: group.id }, 'created the server group');
        }
        serverGroupID = group.id;
      }
    } finally {
      scope.release();
    }

    const infrastructure = await this.mgr.client.get<Infrastructure>(
      operatorKinds.Infrastructure,
      { name: CLUSTER },
      { signal },
    );
    const platform = (infrastructure?.status?.platformStatus as { openstack?: never } | undefined)?.openstack;
    const translated = machineToServerSpec({ spec, machine, platform, serverGroupID });
    if (!translated.ok) {
      this.failed(machine, status, 'InvalidConfiguration', `${translated.path}: ${translated.message}`, ctx);
      return {};
    }
    if (spec.userDataSecret) {
      const written = await this.writeUserData(machine, spec, signal);
      if (written !== true) {
        // The installer writes it beside the MachineSet; it may come a moment later.
        this.warn(machine, MachineEventReasons.FailedCreate, written);
        ctx.log.warn(written);
        return { requeueAfterMs: this.retryMs };
      }
    }

    const key = objectKey(machine);
    const labels: Record<string, string> = { [Labels.Cluster]: machine.metadata!.labels![Labels.Cluster]! };
    const set = machine.metadata?.labels?.[Labels.MachineSet];
    if (set) labels[Labels.MachineSet] = set;
    const server: OpenStackServer = {
      apiVersion: capoKinds.OpenStackServer.apiVersion,
      kind: capoKinds.OpenStackServer.kind,
      metadata: { name: key.name, namespace: key.namespace, labels },
      spec: translated.spec,
    };
    setControllerReference(machine, server);
    try {
      await this.mgr.api.create(capoKinds.OpenStackServer, server, { signal });
      this.mgr.events.event(
        machine,
        'Normal',
        MachineEventReasons.Created,
        `Created OpenStackServer ${key.name} for Machine ${key.name}`,
      );
      ctx.log.info({ server: key.name }, 'created the OpenStackServer');
    } catch (err) {
      // The cache lags our own create: its create event brings the next reconcile.
      if (!isAlreadyExists(err)) throw err;
    }
    return {};
  }

  /**
   * `<machine>-user-data` (key `value`, owned by the Machine) from MAPO's `userDataSecret` (key
   * `userData`); true, or why not yet.
   */
  private async writeUserData(
    machine: Machine,
    spec: OpenstackProviderSpec,
    signal: AbortSignal,
  ): Promise<true | string> {
    const ref = spec.userDataSecret!;
    const namespace = ref.namespace || (machine.metadata?.namespace ?? 'default');
    const source = await this.mgr.client.get<V1Secret>(
      kinds.Secret,
      { namespace, name: ref.name },
      { signal },
    );
    const raw = source?.data?.[MAPI_USER_DATA_KEY];
    const text =
      raw !== undefined
        ? Buffer.from(raw, 'base64').toString('utf8')
        : source?.stringData?.[MAPI_USER_DATA_KEY];
    if (!source) return `waiting for the user data Secret ${namespace}/${ref.name}`;
    if (text === undefined)
      return `the user data Secret ${namespace}/${ref.name} has no key ${MAPI_USER_DATA_KEY}`;
    const name = userDataSecretName(machine.metadata?.name ?? '');
    const secret: V1Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name,
        namespace: machine.metadata?.namespace,
        ownerReferences: [{ ...ownerReference(machine), blockOwnerDeletion: true }],
      },
      type: 'Opaque',
      data: { [SERVER_USER_DATA_KEY]: Buffer.from(text, 'utf8').toString('base64') },
    };
    try {
      await this.mgr.api.create(kinds.Secret, secret, { signal });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // Made by an earlier reconcile: the content is the same Secret's (MAPO reads it once too).
    }
    return true;
  }

  /** The OpenStackServer's progress on the Machine. */
  private async mirror(
    machine: Machine,
    server: OpenStackServer,
    status: NonNullable<Machine['status']>,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    const conditions = (status.conditions ??= []);
    const st = server.status;
    const ready = st?.conditions?.find((c) => c.type === 'InstanceReady');
    status.providerStatus = providerStatusOf(server) as unknown as Record<string, unknown>;

    const gone =
      ready?.status === 'False' &&
      (ready.reason === 'InstanceNotFound' || ready.reason === 'InstanceDeleted');
    if (gone) {
      setMachineCondition(conditions, {
        type: MachineConditions.InstanceExists,
        status: 'False',
        reason: MachineReasons.InstanceMissing,
        severity: 'Warning',
        message: "Instance not found on provider: can't find created instance",
      });
      this.failed(
        machine,
        status,
        'InvalidConfiguration',
        `Can't find created instance: ${ready.message ?? ''}`,
        ctx,
      );
      await this.annotate(machine, { state: 'Unknown' }, signal);
      return {};
    }
    if (st?.instanceState === 'ERROR') {
      const message = `OpenStackServer ${server.metadata?.name}: ${ready?.message ?? 'the instance is in ERROR'}`;
      this.failed(machine, status, 'CreateError', message, ctx);
      await this.annotate(machine, { state: 'Unknown' }, signal);
      return {};
    }
    if (ready?.status === 'False' && ready.reason && ready.reason !== 'InstanceNotReady' && ready.message) {
      // Not terminal (a dependency that may appear, NoValidHost): said, and the server retries.
      ctx.log.info({ reason: ready.reason }, ready.message);
    }
    if (!st?.instanceID) {
      status.phase = 'Provisioning';
      setMachineCondition(conditions, {
        type: MachineConditions.InstanceExists,
        status: 'False',
        reason: MachineReasons.InstanceNotCreated,
        severity: 'Info',
        message: ready?.message ?? `waiting for OpenStackServer ${server.metadata?.name}`,
      });
      return {};
    }
    setMachineCondition(conditions, { type: MachineConditions.InstanceExists, status: 'True' });
    const updated = await this.annotate(
      machine,
      { state: st.instanceState ?? '', instanceID: st.instanceID, server },
      signal,
    );
    if (st.ready) status.addresses = machineAddresses(machine, server);
    const phase: Phase = machine.status?.nodeRef ? 'Running' : 'Provisioned';
    if (status.phase !== phase) {
      status.phase = phase;
      if (updated) {
        this.mgr.events.event(
          machine,
          'Normal',
          MachineEventReasons.Updated,
          `Updated Machine ${machine.metadata?.name}`,
        );
      }
    }
    return {};
  }

  /**
   * providerID (set once), the instance-state and resource-id annotations, the region, zone and
   * instance-type labels; one metadata/spec write when anything differs. True when written.
   */
  private async annotate(
    machine: Machine,
    what: { state: string; instanceID?: string; server?: OpenStackServer },
    signal: AbortSignal,
  ): Promise<boolean> {
    const draft = clone(machine);
    const annotations = (draft.metadata!.annotations ??= {});
    // Nova's state once the server controller has seen one.
    if (what.state) annotations[Annotations.InstanceState] = what.state;
    if (what.instanceID) {
      annotations[Annotations.ResourceID] = what.instanceID;
      draft.spec = { ...draft.spec, providerID: draft.spec?.providerID || providerIDOf(what.instanceID) };
      const labels = (draft.metadata!.labels ??= {});
      const spec = what.server?.spec;
      if (spec?.flavor) labels[Labels.InstanceType] = spec.flavor;
      if (what.server && (!labels[Labels.Region] || !labels[Labels.Zone])) {
        const placed = await this.placement(machine, what.server, what.instanceID, signal);
        if (placed.region) labels[Labels.Region] ||= placed.region;
        if (placed.zone) labels[Labels.Zone] ||= placed.zone;
      }
    }
    const result = await mergePatch(this.mgr.api, mapoKinds.Machine, machine, draft, { signal });
    this.own.record(machine, draft, result);
    return result.metadata?.resourceVersion !== machine.metadata?.resourceVersion;
  }

  /**
   * The region (of the credentials' clouds.yaml) and the zone Nova placed the server in: one read
   * of the server, once, when the labels are first written (MAPO reads them from the instance).
   */
  private async placement(
    machine: Machine,
    server: OpenStackServer,
    instanceID: string,
    signal: AbortSignal,
  ): Promise<{ region?: string | undefined; zone?: string | undefined }> {
    let scope: MapoScope;
    try {
      scope = await this.scopes.authenticatedScopeFor({
        namespace: machine.metadata?.namespace ?? 'default',
        identityRef: server.spec.identityRef,
        signal,
      });
    } catch (err) {
      if (isIdentityError(err)) return { zone: server.spec.availabilityZone };
      throw err;
    }
    try {
      const nova = await scope.client.compute.servers.get(instanceID, { signal }).catch((err: unknown) => {
        if (OpenStackHttpError.is(err) && err.status === 404) return undefined;
        throw err;
      });
      return {
        region: scope.region,
        zone: nova?.['OS-EXT-AZ:availability_zone'] || server.spec.availabilityZone,
      };
    } finally {
      scope.release();
    }
  }

  private failed(
    machine: Machine,
    status: NonNullable<Machine['status']>,
    reason: 'InvalidConfiguration' | 'CreateError',
    message: string,
    ctx: ReconcileContext,
  ): void {
    status.phase = 'Failed';
    status.errorReason = reason;
    status.errorMessage = message;
    this.warn(
      machine,
      reason === 'CreateError' ? MachineEventReasons.FailedCreate : MachineEventReasons.InvalidConfiguration,
      message,
    );
    ctx.log.warn({ errorReason: reason }, message);
  }

  private async reconcileDelete(
    machine: Machine,
    patcher: StatusPatcher<Machine>,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    if (!hasFinalizer(machine, MACHINE_FINALIZER)) return {};
    const status = (patcher.draft.status ??= {});
    status.phase = 'Deleting';
    const nodeName = machine.status?.nodeRef?.name;
    const excluded = machine.metadata?.annotations?.[Annotations.ExcludeNodeDraining] !== undefined;
    if (nodeName && !excluded) {
      const drained = getMachineCondition(machine.status?.conditions, MachineConditions.Drained);
      if (drained?.status !== 'True') {
        ctx.log.info({ node: nodeName }, 'waiting for the Node to be drained (condition Drained)');
        return {};
      }
    }
    const hooks = machine.spec?.lifecycleHooks?.preTerminate ?? [];
    if (hooks.length > 0) {
      ctx.log.info({ hooks: hooks.map((h) => h.name) }, 'waiting for the preTerminate lifecycle hooks to go');
      return {};
    }

    const key = objectKey(machine);
    let server = await this.mgr.client.get(capoKinds.OpenStackServer, key, { signal });
    if (!server) {
      // The cache may not show a server we created a moment ago: ask the API before letting go.
      try {
        server = await this.mgr.api.get(capoKinds.OpenStackServer, key, { signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    if (server && isControlledBy(server, machine)) {
      if (!isDeleting(server)) {
        await this.mgr.api.delete(capoKinds.OpenStackServer, key, { signal }).catch((err: unknown) => {
          if (!isNotFound(err)) throw err;
        });
        this.mgr.events.event(
          machine,
          'Normal',
          MachineEventReasons.Deleted,
          `Deleting OpenStackServer ${key.name}`,
        );
        ctx.log.info({ server: key.name }, 'deleting the OpenStackServer; waiting for it to go');
      }
      // Its removal wakes us (owns).
      return {};
    }
    if (server) ctx.log.warn({ server: key.name }, 'an OpenStackServer of this name is not ours; leaving it');

    if (nodeName) {
      try {
        await this.mgr.api.delete<V1Node>(kinds.Node, { name: nodeName }, { signal });
        ctx.log.info({ node: nodeName }, 'deleted the Node');
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
    try {
      await removeFinalizer(this.mgr.api, mapoKinds.Machine, machine, MACHINE_FINALIZER, { signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    ctx.log.info('machine deleted');
    return {};
  }

  private warn(machine: Machine, reason: string, message: string): void {
    this.mgr.events.event(machine, 'Warning', reason, message);
  }
}
