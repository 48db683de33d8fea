/**
 * The OpenStackServer controller (CAPO v0.14 `controllers/openstackserver_controller.go`): one Nova
 * server with its ports, trunks and volumes per object, through the shared server engine
 * (src/openstack/services/server), one engine step per reconcile.
 *
 * reconcileNormal, per CAPO:
 *   reviewSpec (the spec is immutable: a refused change is a SpecAccepted=False condition and a
 *   Warning Event, and the accepted spec is what we act on) → instanceState ERROR is terminal →
 *   finalizer → credentials (identityRef, through the ScopeCache) → bootstrap data (userDataRef) →
 *   the engine: resolve (lookups shared per identity for 10 s), recorded in status.resolved before
 *   anything is created, then in the same step the ports (each id in status.resources.ports as soon
 *   as it exists) beside the volumes (their names recorded before their create), the server
 *   (status.instanceID at once) → instanceState, addresses, ready and the InstanceReady and Ready
 *   conditions.
 * reconcileDelete: from status alone (status.resolved, status.resources with the volumes recorded
 *   before their create, instanceID; never a name derived from the spec): the engine adopts again by
 *   name, deletes the server, volumes, trunks and ports; the finalizer goes last. Nothing recorded
 *   means nothing was created.
 *
 * Never blocks: every wait is `{ requeueAfterMs }` (the engine's hint for BUILD and deletes, capped
 * at 10 s; 15 s, CAPO's, for bootstrap data and credentials). A failure that may pass, such as
 * Nova's NoValidHost, is reported and thrown (RetryableServerError): the work queue retries it with
 * its per-key exponential back-off, capped at 15 s and reset by a success.
 *
 * Not supported yet, and said so (condition + Warning Event, never silently ignored):
 * `floatingIPPoolRef` (the server is made, FloatingAddressFromPoolReady stays False), an ORC
 * `image.imageRef` and a port `qosPolicy` (nothing is made).
 */
import {
  addFinalizer,
  BucketRateLimiter,
  hasFinalizer,
  isDeleting,
  isNotFound,
  ItemExponentialFailureRateLimiter,
  keyOf,
  kinds,
  MaxOfRateLimiter,
  metadataOnly,
  objectKey,
  OwnWrites,
  removeFinalizer,
  requeueCountedFrom,
  specOrMetadataChanged,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import { AuthenticationError, EndpointNotFoundError } from '../../openstack/core/errors.ts';
import {
  backoffPolicy,
  instanceAddresses,
  LookupCache,
  ServerEngine,
  volumeSpecs,
  type BackoffPolicy,
  type EnsureResult,
  type Failed,
  type RemoveResult,
  type ServerState,
} from '../../openstack/services/server/index.ts';
import {
  capoKinds,
  Conditions,
  EventReasons,
  Reasons,
  reviewSpec,
  SERVER_FINALIZER,
  SERVER_UNEXPECTEDLY_DELETED_MESSAGE,
  type OpenStackServer,
  type OpenStackServerSpec,
} from '../api/index.ts';
import { IdentityError, type Scope, type ScopeCache } from '../identity.ts';
import { BuildPoller } from '../server/build-poller.ts';
import { ServerReport } from '../server/report.ts';
import { toServerSpec } from '../server/spec.ts';
import { addressesOf, stateFromStatus, statusFromState } from '../server/status.ts';
import { readUserData, type UserData } from '../server/user-data.ts';

export const OPENSTACK_SERVER_CONTROLLER = 'openstackserver';

/** CAPO's Event reasons for the server's own lifecycle. */
export const ServerEventReasons = {
  SuccessfulCreateServer: 'SuccessfulCreateServer',
  FailedCreateServer: 'FailedCreateServer',
  SuccessfulDeleteServer: 'SuccessfulDeleteServer',
  FailedDeleteServer: 'FailedDeleteServer',
  /** shiftstack: a status CAPO wrote names no volumes; a delete leaves any CAPO made (see unrecordedVolumes). */
  VolumesNotRecorded: 'VolumesNotRecorded',
} as const;

/** Condition reasons of a True condition (metav1 wants one). */
const InstanceActive = 'InstanceActive';
const ServerReady = 'Ready';

export interface OpenStackServerControllerOptions {
  /** Concurrent reconciles (CAPO has no flag of its own for this controller; default 10). */
  workers?: number;
  /** The engine's waits: first look after a write, cap (≤ 10 s), and the idle-state wait (60 s). */
  backoff?: Partial<BackoffPolicy>;
  /** Waiting for bootstrap data or credentials: CAPO's 15 s (capped at 15 s). */
  waitMs?: number;
  /**
   * A failure that may pass (NoValidHost, a quota): the work queue's per-key back-off starts here
   * (default 1 s) and doubles up to `errorMaxMs`; a success or a wait resets it.
   */
  errorInitialMs?: number;
  /** Cap of the failure back-off (default and ceiling 15 s). */
  errorMaxMs?: number;
  /**
   * Building servers are looked at together, one `GET /servers/detail?changes-since` per identity
   * this often (default 1 s; see server/build-poller.ts), each server's own look only at the
   * engine's cap. 0: no shared look, each server by its age alone.
   */
  buildPollMs?: number;
}

const MAX_WAIT_MS = 15_000;

/** OpenStackServers by the bootstrap Secret they read (`namespace/name`). */
const SERVER_BY_USER_DATA = 'capo/server-user-data';

/**
 * A failure that may pass (Nova's NoValidHost, a quota, a delete refused for now), already said in
 * the conditions and an Event: thrown so that the work queue retries the object with its per-key
 * back-off, which a success or a wait resets.
 */
export class RetryableServerError extends Error {
  override readonly name = 'RetryableServerError';
  /** The condition reason it was reported with. */
  readonly reason: string;
  /** `namespace/name` of the OpenStackServer. */
  readonly server: string;

  constructor(server: string, reason: string, message: string) {
    super(`OpenStackServer ${server}: ${reason}: ${message}`);
    this.server = server;
    this.reason = reason;
  }
}

export function registerOpenStackServerController(
  mgr: Manager,
  scopes: ScopeCache,
  opts: OpenStackServerControllerOptions = {},
): void {
  let wake: (req: Request) => void = () => {};
  const pollMs = opts.buildPollMs ?? 1_000;
  const poller =
    pollMs > 0
      ? new BuildPoller(scopes, (o) => wake(o), { intervalMs: pollMs, clock: mgr.clock, log: mgr.log })
      : undefined;
  const own = new OwnWrites<OpenStackServer>();
  const r = new OpenStackServerReconciler(mgr, scopes, opts, poller, own);
  // A Secret's event looks up the servers naming it (not a scan of every server: at 1,000 machines
  // the bootstrap Secrets' 1,000 events would each walk all 1,000 servers).
  const servers = mgr.informers.informerFor(capoKinds.OpenStackServer, {
    indexers: {
      [SERVER_BY_USER_DATA]: (s) =>
        s.spec?.userDataRef?.name ? [`${s.metadata?.namespace ?? ''}/${s.spec.userDataRef.name}`] : [],
    },
  });
  const errorMaxMs = Math.min(Math.max(opts.errorMaxMs ?? MAX_WAIT_MS, 1), MAX_WAIT_MS);
  const errorInitialMs = Math.min(Math.max(opts.errorInitialMs ?? 1_000, 1), errorMaxMs);
  const controller = mgr
    .controller(OPENSTACK_SERVER_CONTROLLER)
    // Our own status writes need no reconcile (each step requeues for what it waits on), nor does
    // our finalizer (it was one more reconcile per server, a bootstrap Secret read included).
    .for(capoKinds.OpenStackServer, { predicates: [specOrMetadataChanged(), own.predicate()] })
    // The bootstrap data appears after the server object: look again as soon as it does. Metadata
    // only: the Secrets themselves are read uncached (CAPO_UNCACHED_KINDS), never held here.
    .watches(metadataOnly(kinds.Secret), (secret) =>
      servers
        .byIndex(SERVER_BY_USER_DATA, `${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`)
        .map((s) => objectKey(s)),
    )
    .withOptions({
      maxConcurrentReconciles: opts.workers ?? 10,
      // Failures (RetryableServerError, or no answer at all) back off per object, capped at CAPO's
      // 15 s; the bucket bounds all retries together, as client-go's default limiter does.
      rateLimiter: new MaxOfRateLimiter<string>(
        new ItemExponentialFailureRateLimiter(errorInitialMs, errorMaxMs),
        new BucketRateLimiter(10, 100, mgr.clock),
      ),
    })
    .complete((req, signal, ctx) => r.reconcile(req, signal, ctx));
  if (poller) {
    wake = (req) => controller.enqueue(req);
    mgr.add(poller);
  }
}

class OpenStackServerReconciler {
  private readonly mgr: Manager;
  private readonly scopes: ScopeCache;
  private readonly backoff: Partial<BackoffPolicy>;
  private readonly waitMs: number;
  private readonly poller: BuildPoller | undefined;
  private readonly own: OwnWrites<OpenStackServer>;
  /** The resourceVersion of our last write per object (namespace/name), while the cache may lag it. */
  private readonly written = new Map<string, string>();
  /**
   * Resolve lookups per identity (its client: one per credentials, region and cloud in the
   * ScopeCache), so servers created together resolve their image, flavor and networks once.
   */
  private readonly lookups = new WeakMap<object, LookupCache>();
  /** The engine's clock: a wait it hands back may have begun before its call returned. */
  private readonly now = Date.now;

  constructor(
    mgr: Manager,
    scopes: ScopeCache,
    opts: OpenStackServerControllerOptions,
    poller: BuildPoller | undefined,
    own: OwnWrites<OpenStackServer>,
  ) {
    this.mgr = mgr;
    this.poller = poller;
    this.own = own;
    this.scopes = scopes;
    this.backoff = opts.backoff ?? {};
    this.waitMs = Math.min(Math.max(opts.waitMs ?? MAX_WAIT_MS, 1), MAX_WAIT_MS);
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const key = `${req.namespace ?? ''}/${req.name}`;
    let obj = await this.mgr.client.get(capoKinds.OpenStackServer, req, { signal });
    if (!obj) {
      this.written.delete(key);
      return {};
    }
    const mine = this.written.get(key);
    let fresh = false;
    // Read our own writes: a cache that has not caught up with the last status we wrote would make
    // us resolve again, or worse, on delete, believe nothing was created. A delete always reads fresh.
    if (isDeleting(obj) || (mine !== undefined && mine !== obj.metadata?.resourceVersion)) {
      try {
        obj = await this.mgr.api.get(capoKinds.OpenStackServer, req, { signal });
      } catch (err) {
        if (!isNotFound(err)) throw err;
        this.written.delete(key);
        return {};
      }
      fresh = true;
    }
    const report = new ServerReport(obj, { api: this.mgr.api, events: this.mgr.events, log: ctx.log });
    report.status.ready ??= false;
    const remember = () => {
      const rv = report.object.metadata?.resourceVersion;
      if (rv !== undefined && (fresh || rv !== obj.metadata?.resourceVersion)) this.written.set(key, rv);
      else this.written.delete(key);
    };
    if (isDeleting(obj)) {
      if (!hasFinalizer(obj, SERVER_FINALIZER)) return {};
      try {
        return await this.reconcileDelete(report, signal);
      } finally {
        remember();
      }
    }
    let result: Result;
    let decidedAt: number;
    try {
      result = await this.reconcileNormal(report, signal);
      decidedAt = this.now();
    } finally {
      // Whatever happened, what the conditions say reaches the object (a no-op when nothing changed).
      if (!signal.aborted) {
        await report.write(signal).catch((err: unknown) => ctx.log.warn({ err }, 'status write failed'));
      }
      remember();
    }
    return requeueCountedFrom(result, decidedAt, this.now());
  }

  private async reconcileNormal(report: ServerReport, signal: AbortSignal): Promise<Result> {
    let obj = report.object;
    const status = report.status;
    const review = reviewSpec('OpenStackServer', obj);
    report.condition({
      ...review.condition,
      event: review.refused.length > 0 ? refusalEvent(review.condition.reason) : undefined,
    });
    if (review.record) Object.assign(status, review.record);
    const spec = review.spec;
    if (!spec) {
      // Never accepted: nothing to act on until the spec is fixed (and that edit wakes us).
      this.notReady(report, Reasons.InvalidSpec, review.condition.message);
      return {};
    }

    if (status.instanceState === 'ERROR') return {};

    // Until the server exists its bootstrap data is needed: read beside the finalizer's write and
    // the credentials (none needs another), one round trip fewer before the volumes are asked for.
    // Once it exists the data is Nova's: the engine only reads the server, so the Secret is not
    // read again on every BUILD look (an uncached GET each).
    const userData: Promise<UserData> =
      status.instanceID !== undefined
        ? Promise.resolve({ ready: true, value: undefined })
        : readUserData(this.mgr.client, obj.metadata!.namespace!, spec.userDataRef, signal);
    // Awaited in ensure; a return before it must not leave a rejection unhandled.
    userData.catch(() => undefined);

    if (!hasFinalizer(obj, SERVER_FINALIZER)) {
      obj = await addFinalizer(this.mgr.api, capoKinds.OpenStackServer, obj, SERVER_FINALIZER, {
        signal,
        own: this.own,
      });
      report.rebase(obj);
    }

    if (spec.floatingIPPoolRef) {
      report.condition({
        type: Conditions.FloatingAddressFromPoolReady,
        status: 'False',
        reason: Reasons.NotSupported,
        message: `floatingIPPoolRef ${spec.floatingIPPoolRef.kind}/${spec.floatingIPPoolRef.name}: floating IPs from an OpenStackFloatingIPPool are not supported yet; the server is created without one`,
        event: Reasons.NotSupported,
      });
    }
    const check = toServerSpec(obj.metadata!.name!, spec, undefined);
    if (!check.spec) {
      const message = check.unsupported.map((u) => `${u.path}: ${u.message}`).join('; ');
      this.notReady(report, Reasons.NotSupported, message, Reasons.NotSupported);
      return {};
    }

    const scope = await this.scope(report, spec, obj.metadata!.namespace!, signal);
    if (!scope) return { requeueAfterMs: this.waitMs };
    try {
      return await this.ensure(report, spec, scope, await userData, signal);
    } finally {
      scope.release();
    }
  }

  /** With the bootstrap data, one engine step with the identity's client. */
  private async ensure(
    report: ServerReport,
    spec: OpenStackServerSpec,
    scope: Scope,
    userData: UserData,
    signal: AbortSignal,
  ): Promise<Result> {
    const obj = report.object;
    if (!userData.ready) {
      this.notReady(report, Reasons.WaitingForBootstrapData, userData.message);
      return { requeueAfterMs: this.waitMs };
    }
    const serverSpec = toServerSpec(obj.metadata!.name!, spec, userData.value).spec!;

    let lookups = this.lookups.get(scope.client);
    if (!lookups) this.lookups.set(scope.client, (lookups = new LookupCache()));
    const engine = new ServerEngine(scope.client, { backoff: this.backoff, lookups, now: this.now });
    let result: EnsureResult;
    try {
      result = await engine.ensure(
        { spec: serverSpec, ...stateFromStatus(report.status) },
        // The reconcile's status write (its `finally`) carries the result's state.
        { signal, record: (state) => this.record(report, state, signal), recordsResult: true },
      );
    } catch (err) {
      return this.openStackError(report, err, 'ensure');
    }
    this.authenticated(report);
    for (const a of result.actions) {
      if (a.resource === 'server' && a.verb === 'create') {
        report.event(
          `Normal:${ServerEventReasons.SuccessfulCreateServer}`,
          `Created server ${serverSpec.name} with id ${a.id ?? '?'}`,
        );
      }
    }
    return this.ensured(report, result, spec);
  }

  /** The engine's result in status and conditions; the requeue it asks for. */
  private ensured(report: ServerReport, result: EnsureResult, spec: OpenStackServerSpec): Result {
    const status = report.status;
    Object.assign(status, statusFromState(result.state));
    const instanceID = result.state.instanceID;
    if (result.phase !== 'Pending' && instanceID !== undefined) this.poller?.forget(instanceID);
    switch (result.phase) {
      case 'Ready':
        status.instanceID = result.instanceID;
        status.instanceState = result.instanceState;
        status.addresses = addressesOf(result.addresses);
        status.ready = true;
        report.condition({ type: Conditions.InstanceReady, status: 'True', reason: InstanceActive });
        report.condition({ type: Conditions.Ready, status: 'True', reason: ServerReady });
        return {};
      case 'Pending':
        if (result.instanceState !== undefined) status.instanceState = result.instanceState;
        if (result.server) status.addresses = addressesOf(instanceAddresses(result.server));
        this.notReady(
          report,
          Reasons.InstanceNotReady,
          result.message,
          undefined,
          result.reason === 'InstanceNotReady' ? 'Unknown' : 'False',
        );
        if (
          this.poller &&
          instanceID !== undefined &&
          (result.reason === 'InstanceBuilding' || result.reason === 'InstanceCreated')
        ) {
          // The shared list wakes us once Nova is done; our own look is only the safety net.
          const obj = report.object;
          this.poller.watch(obj.metadata!.namespace!, spec.identityRef, instanceID, {
            namespace: obj.metadata!.namespace!,
            name: obj.metadata!.name!,
          });
          return { requeueAfterMs: Math.max(result.retryAfterMs, backoffPolicy(this.backoff).maxMs) };
        }
        return requeueCountedFrom({ requeueAfterMs: result.retryAfterMs }, result.since, this.now());
      case 'Failed':
        return this.failed(report, result);
    }
  }

  private failed(report: ServerReport, result: Failed): Result {
    const status = report.status;
    if (result.instanceState !== undefined) status.instanceState = result.instanceState;
    let reason: string;
    let event: string | undefined;
    let message = result.message;
    switch (result.reason) {
      case 'DependencyError':
        reason = Reasons.DependencyFailed;
        event = Reasons.DependencyFailed;
        break;
      case 'InstanceCreateFailed':
        reason = Reasons.InstanceCreateFailed;
        event = ServerEventReasons.FailedCreateServer;
        // CAPO marks a refused create ERROR; here only a refusal that cannot pass is (a 400):
        // NoValidHost may pass, and the ports made for it are reused, not leaked (CAPO #1404).
        if (result.terminal) status.instanceState = 'ERROR';
        break;
      case 'InstanceError':
        reason = Reasons.InstanceStateError;
        event = Reasons.InstanceStateError;
        status.instanceState = 'ERROR';
        break;
      case 'InstanceNotFound':
        reason = Reasons.InstanceNotFound;
        event = Reasons.InstanceNotFound;
        message = `${SERVER_UNEXPECTEDLY_DELETED_MESSAGE}: ${result.message}`;
        break;
      case 'InstanceDeleted':
        reason = Reasons.InstanceDeleted;
        event = Reasons.InstanceDeleted;
        break;
      case 'EndpointNotFound':
        reason = Reasons.EndpointNotFound;
        event = Reasons.EndpointNotFound;
        break;
      case 'PortNotFound':
      case 'MultiplePorts':
      case 'OutOfCapacity':
        reason = Reasons.PortCreateFailed;
        event = Reasons.PortCreateFailed;
        break;
      default:
        reason = Reasons.OpenStackError;
        event = Reasons.OpenStackError;
    }
    status.ready = false;
    this.notReady(report, reason, message, event);
    if (result.terminal) return {};
    throw new RetryableServerError(keyOf(report.object), reason, message);
  }

  private async reconcileDelete(report: ServerReport, signal: AbortSignal): Promise<Result> {
    const obj = report.object;
    const status = report.status;
    const state = stateFromStatus(status);
    if (state.instanceID !== undefined) this.poller?.forget(state.instanceID);
    const done = async (): Promise<Result> => {
      await report.write(signal);
      await removeFinalizer(this.mgr.api, capoKinds.OpenStackServer, report.object, SERVER_FINALIZER, {
        signal,
      });
      return {};
    };
    // The create path records status.resolved before it makes anything: without it (and without
    // an instance id) nothing was made, and no credentials are needed to say so.
    if (!state.resolved && state.instanceID === undefined) return done();

    // Cleanup acts on what was recorded; the accepted spec gives only the credentials used.
    const accepted = (status.acceptedSpec as OpenStackServerSpec | undefined) ?? obj.spec;
    this.unrecordedVolumes(report, state, accepted);
    const scope = await this.scope(report, accepted, obj.metadata!.namespace!, signal);
    if (!scope) {
      await report.write(signal);
      return { requeueAfterMs: this.waitMs };
    }
    try {
      return await this.remove(report, state, scope, done, signal);
    } finally {
      scope.release();
    }
  }

  /** One engine removal step with the identity's client; `done` once nothing is left. */
  private async remove(
    report: ServerReport,
    state: ServerState,
    scope: Scope,
    done: () => Promise<Result>,
    signal: AbortSignal,
  ): Promise<Result> {
    const obj = report.object;
    const engine = new ServerEngine(scope.client, { backoff: this.backoff });
    let result: RemoveResult;
    try {
      result = await engine.remove(
        { name: obj.metadata!.name!, ...state },
        { signal, record: (s) => this.record(report, s, signal) },
      );
    } catch (err) {
      const r = this.openStackError(report, err, 'remove');
      await report.write(signal);
      return r;
    }
    this.authenticated(report);
    for (const a of result.actions) {
      if (a.resource === 'server' && a.verb === 'delete') {
        report.event(
          `Normal:${ServerEventReasons.SuccessfulDeleteServer}`,
          `Deleted server ${obj.metadata!.name!} with id ${a.id ?? '?'}`,
        );
      }
    }
    switch (result.phase) {
      case 'Ready':
        return done();
      case 'Pending':
        await report.write(signal);
        return { requeueAfterMs: result.retryAfterMs };
      case 'Failed':
        // A delete is retried whatever the failure: the finalizer stays until everything is gone.
        this.notReady(
          report,
          Reasons.InstanceDeleteFailed,
          result.message,
          ServerEventReasons.FailedDeleteServer,
        );
        await report.write(signal);
        throw new RetryableServerError(keyOf(obj), Reasons.InstanceDeleteFailed, result.message);
    }
  }

  /**
   * A status CAPO wrote records no volumes: CAPO finds them by names derived from the spec. Those
   * are not deleted here (a removal derives no name, and needs no block storage when none was
   * recorded); Nova takes them along with a recorded server, and when there was none the user is
   * told which names to check.
   */
  private unrecordedVolumes(report: ServerReport, state: ServerState, accepted: OpenStackServerSpec): void {
    if (state.instanceID !== undefined || !state.resolved || state.resolved.volumes) return;
    const spec = toServerSpec(report.object.metadata!.name!, accepted, undefined).spec;
    const names = spec ? volumeSpecs(spec).map((v) => v.name) : [];
    if (names.length === 0) return;
    report.event(
      ServerEventReasons.VolumesNotRecorded,
      `this status was written by CAPO, which records no volumes, and no server was made: volumes ${names.join(', ')} are not looked for; if CAPO made them before its create failed, delete them (openstack volume delete <name>)`,
    );
  }

  /** The client of the identityRef, or undefined with the condition and Event saying why. */
  private async scope(
    report: ServerReport,
    spec: OpenStackServerSpec,
    namespace: string,
    signal: AbortSignal,
  ): Promise<Scope | undefined> {
    try {
      return await this.scopes.scopeFor({ namespace, identityRef: spec.identityRef, signal });
    } catch (err) {
      if (!IdentityError.is(err)) throw err;
      const message = `${err.message}. Fix: ${err.fix}`;
      report.condition({
        type: Conditions.OpenStackAuthenticationSucceeded,
        status: 'False',
        reason: Reasons.OpenStackAuthenticationFailed,
        message,
        event: err.reason,
      });
      this.notReady(report, Reasons.OpenStackAuthenticationFailed, message);
      return undefined;
    }
  }

  private authenticated(report: ServerReport): void {
    report.condition({
      type: Conditions.OpenStackAuthenticationSucceeded,
      status: 'True',
      reason: 'Authenticated',
    });
  }

  /**
   * An error the engine could not turn into a result: Keystone refusing the credentials (a
   * condition, an Event, a wait for the Secret to be fixed), a catalog without a service the
   * server needs (said as such: the credentials worked), or no answer at all (rethrown: the
   * queue's back-off retries it).
   */
  private openStackError(report: ServerReport, err: unknown, during: 'ensure' | 'remove'): Result {
    if (EndpointNotFoundError.is(err)) {
      this.authenticated(report);
      this.notReady(
        report,
        Reasons.EndpointNotFound,
        `${err.message}; use a region or cloud that has it`,
        Reasons.EndpointNotFound,
      );
      return { requeueAfterMs: this.waitMs };
    }
    if (AuthenticationError.is(err)) {
      report.condition({
        type: Conditions.OpenStackAuthenticationSucceeded,
        status: 'False',
        reason: Reasons.OpenStackAuthenticationFailed,
        message: err.message,
        event: Reasons.OpenStackAuthenticationFailed,
      });
      this.notReady(report, Reasons.OpenStackAuthenticationFailed, err.message);
      return { requeueAfterMs: this.waitMs };
    }
    if (during === 'ensure' && !(err instanceof Error && err.name === 'AbortError')) {
      this.notReady(report, Reasons.OpenStackError, err instanceof Error ? err.message : String(err));
    }
    throw err;
  }

  /** InstanceReady and Ready False (or Unknown) with one reason; `event` for a Warning Event. */
  private notReady(
    report: ServerReport,
    reason: string,
    message: string,
    event?: string,
    status: 'False' | 'Unknown' = 'False',
  ): void {
    report.condition({ type: Conditions.InstanceReady, status, reason, message, event });
    // Ready mirrors InstanceReady; a server once Ready stays so while only a wait is reported.
    const ready = report.status.ready === true && status === 'Unknown';
    if (!ready) report.condition({ type: Conditions.Ready, status, reason, message });
  }

  /** Persists what the engine made before it goes on (its `record`). */
  private async record(report: ServerReport, state: ServerState, signal: AbortSignal): Promise<void> {
    Object.assign(report.status, statusFromState(state));
    await report.write(signal);
  }
}

function refusalEvent(reason: string): string {
  return reason === Reasons.ImmutableFieldChanged ? EventReasons.SpecChangeRefused : EventReasons.InvalidSpec;
}
