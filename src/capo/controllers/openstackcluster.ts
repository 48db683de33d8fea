/**
 * The OpenStackCluster controller (CAPO's `controllers/openstackcluster_controller.go`, v0.14):
 * the network, router, security groups, API endpoint, failure domains and bastion of a Cluster API
 * cluster. One job per module in src/capo/cluster; this file is the order and the bookkeeping.
 *
 * Per reconcile, reading from the cache:
 * 1. The Cluster (ownerReference kind Cluster, else the `cluster.x-k8s.io/cluster-name` label); a
 *    paused Cluster or OpenStackCluster is left alone; none yet → wait for the watch that brings it.
 * 2. `reviewSpec`: the spec to act on (refused changes → SpecAccepted=False + Warning Event, and
 *    the accepted spec is used; removing `bastion` without disabling it first is refused there).
 * 3. The finalizer, then return (CAPO: nothing is ever created before it is stored).
 * 4. External network → network, subnet, router (NetworkReady, RouterReady) → security groups
 *    (SecurityGroupsReady) → API endpoint (APIEndpointReady; `spec.controlPlaneEndpoint` set once)
 *    → failure domains → `status.ready` → bastion. Status is written after each step that may have
 *    created something, so what exists is recorded before the next thing is created; every object
 *    is also found again by its deterministic name after a crash.
 *
 * The API load balancer, members included, belongs to this controller (see cluster/api-endpoint.ts):
 * it watches the cluster's OpenStackMachines and hands the engine the control-plane machines'
 * addresses, one batch member update per change.
 *
 * Delete (CAPO's reconcileDelete): wait until no Machine or OpenStackMachine of the cluster is left;
 * the bastion (floating IP, then the OpenStackServer, waited out); the load balancer and its
 * floating IP; what managedSubnets made (router, leftover ports, network); the security groups;
 * the finalizer. What the user brought (network, subnets, router, floating IPs they named) is never
 * deleted. Cleanup does not depend on the current spec: it uses the accepted one and names.
 *
 * `actAsClusterAPICore` (off by default; tests and the demo turn it on, where no Cluster API core
 * controller runs): once the OpenStackCluster is ready, also do what CAPI's Cluster controller
 * would — the Cluster becomes the OpenStackCluster's owner, and gets `status.infrastructureReady`,
 * `status.failureDomains` and (if unset) `spec.controlPlaneEndpoint`. Never on a real management
 * cluster: CAPI owns those fields there.
 *
 * Never sleeps: Octavia and server waits are `{ requeueAfterMs }` (CAPO's intervals, capped at 15 s);
 * the bastion's OpenStackServer and the machines wake the cluster as soon as they change.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  addFinalizer,
  clone,
  fieldsChanged,
  hasFinalizer,
  isAlreadyExists,
  isDeleting,
  mergePatch,
  objectKey,
  OWNER_UID_INDEX,
  patchStatus,
  removeFinalizer,
  timeMs,
  type Manager,
  type ObjectKey,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import { OpenStackHttpError } from '../../openstack/core/errors.ts';
import {
  LoadBalancerEngine,
  RecreateWindow,
  type BackoffPolicy,
  type DesiredLoadBalancer,
} from '../../openstack/services/loadbalancer/index.ts';
import { DependencyError } from '../../openstack/services/server/index.ts';
import { ageMs, waitByAge } from '../../openstack/services/wait-by-age.ts';
import {
  capoKinds,
  CLUSTER_FINALIZER,
  CLUSTER_NAME_LABEL,
  Conditions,
  CONTROL_PLANE_LABEL,
  EventReasons,
  Reasons,
  reviewSpec,
  type CapiCondition,
  type Cluster,
  type OpenStackCluster,
  type OpenStackClusterSpec,
  type OpenStackClusterStatus,
  type OpenStackMachine,
  type OpenStackServer,
} from '../api/index.ts';
import type { ClusterApi } from '../cluster/api.ts';
import {
  apiServerPort,
  canonicalAllowedCIDRs,
  controlPlaneMembers,
  desiredApiLoadBalancer,
  EndpointError,
  ensureApiFloatingIP,
  loadBalancerEnabled,
  loadBalancerNetwork,
} from '../cluster/api-endpoint.ts';
import {
  bastionEnabled,
  bastionServerSpec,
  bastionSpecHash,
  bastionStatus,
  deleteBastionServer,
  ensureBastionFloatingIP,
  newBastionServer,
  nextBastionName,
  pickBastion,
  releaseBastionFloatingIPs,
  releaseRecordedFloatingIP,
  type FloatingIpContext,
} from '../cluster/bastion.ts';
import { deleteManagedNetwork } from '../cluster/delete.ts';
import { foreignMessage, type ForeignResource } from '../cluster/foreign.ts';
import { reconcileExternalNetwork } from '../cluster/external-network.ts';
import { reconcileFailureDomains } from '../cluster/failure-domains.ts';
import { clusterResourceName, loadBalancerName, resourceDescription } from '../cluster/names.ts';
import { NetworkStepError, reconcileNetwork } from '../cluster/network.ts';
import { clusterNameOf, isPaused, ownerClusterName } from '../cluster/owner.ts';
import { ensureFloatingIpTags } from '../cluster/tags.ts';
import { RuleSpecError } from '../cluster/security-group-rules.ts';
import { deleteSecurityGroups, reconcileSecurityGroups } from '../cluster/security-groups.ts';
import { IdentityError, type Scope, type ScopeCache } from '../identity.ts';
import { markFalse, markTrue, setCapiCondition, type Severity } from '../machine/conditions.ts';

export const OPENSTACK_CLUSTER_CONTROLLER = 'openstackcluster';

/** Reasons this controller adds to CAPO's (CamelCase, as CAPI's). */
export const ClusterReasons = {
  /** APIEndpointReady while Octavia works on the load balancer. */
  WaitingForLoadBalancer: 'WaitingForLoadBalancer',
  /** Ready while the cluster is being deleted. */
  Deleting: 'Deleting',
  /** Ready while the deletion waits for resources this cluster did not make to go. */
  ForeignResources: 'ForeignResources',
} as const;

/** Event reasons, CAPO's where CAPO has one. */
export const ClusterEventReasons = {
  Created: 'SuccessfulCreate',
  CreateNetwork: 'SuccessfulCreateNetwork',
  CreateSubnet: 'SuccessfulCreateSubnet',
  CreateRouter: 'SuccessfulCreateRouter',
  CreateSecurityGroup: 'SuccessfulCreateSecurityGroup',
  CreateLoadBalancer: 'SuccessfulCreateLoadBalancer',
  CreateFloatingIP: 'SuccessfulCreateFloatingIP',
  CreateBastion: 'SuccessfulCreateBastion',
  ReplaceBastion: 'ReplacingBastion',
  DeleteBastion: 'SuccessfulDeleteBastion',
  Deleted: 'SuccessfulDelete',
  ReconcileError: 'ReconcileError',
  DeleteError: 'DeleteError',
  BastionError: 'BastionError',
  AuthenticationFailed: 'OpenStackAuthenticationFailed',
  InvalidAllowedCIDR: 'FailedIPAddressValidation',
  OctaviaProviderNotFound: 'OctaviaProviderNotFound',
  OctaviaFlavorNotFound: 'OctaviaFlavorNotFound',
  /** Something on the cluster's network or bastion this cluster did not make, left in place. */
  ForeignResources: 'ForeignResources',
} as const;

export interface OpenStackClusterControllerOptions {
  /** CAPO's `--openstackcluster-concurrency` (10). */
  workers: number;
  /** Do what Cluster API core would do for the Cluster (see the module comment). Default false. */
  actAsClusterAPICore?: boolean;
  /** Waiting for the bastion's server (CAPO: 15 s; its status changes wake us sooner). */
  bastionWaitMs?: number;
  /** Waiting for the cluster's machines to go before deleting (CAPO: 5 s). */
  machinesWaitMs?: number;
  /** Waiting for OpenStack deletions (a load balancer, a network port) (CAPO: 15 s). */
  deleteWaitMs?: number;
  /** Retrying after an error the next change will not fix by itself (a missing identity, a quota). */
  errorRetryMs?: number;
  /** The load-balancer engine's PENDING requeue floor and cap (1 s, 10 s). */
  loadBalancerBackoff?: Partial<Pick<BackoffPolicy, 'initialMs' | 'maxMs'>>;
  /** At most one delete-and-recreate of an ERROR load balancer per cluster in this window (5 min). */
  recreateWindowMs?: number;
  /**
   * A deletion waiting for foreign resources (someone else's port on the network, floating IP on
   * the bastion) looks again after half the deletion's age, from `deleteWaitMs` up to this (2 min).
   */
  foreignWaitMaxMs?: number;
}

const CAP_MS = 15_000;

export function registerOpenStackClusterController(
  mgr: Manager,
  scopes: ScopeCache,
  opts: OpenStackClusterControllerOptions,
): void {
  const r = new OpenStackClusterReconciler(mgr, scopes, opts);
  const clusters = mgr.informers.informerFor(capoKinds.OpenStackCluster);
  const ofCluster = (namespace: string | undefined, name: string | undefined): ObjectKey[] =>
    name === undefined
      ? []
      : clusters
          .list()
          .filter((o) => o.metadata?.namespace === namespace && clusterNameOf(o) === name)
          .map((o) => objectKey(o));
  mgr
    .controller(OPENSTACK_CLUSTER_CONTROLLER)
    .for(capoKinds.OpenStackCluster)
    // The bastion: its status changes (ready, ports) and its going away.
    .owns(capoKinds.OpenStackServer)
    // The load balancer's members, and a delete waiting for machines to go.
    .watches(
      capoKinds.OpenStackMachine,
      (m) => ofCluster(m.metadata?.namespace, m.metadata?.labels?.[CLUSTER_NAME_LABEL]),
      { predicates: [memberRelevant] },
    )
    .watches(
      capoKinds.Machine,
      (m) =>
        ofCluster(m.metadata?.namespace, m.metadata?.labels?.[CLUSTER_NAME_LABEL] ?? m.spec?.clusterName),
      { predicates: [{ create: () => false, update: () => false }] },
    )
    // Paused, and the Cluster appearing (or naming this OpenStackCluster).
    .watches(
      capoKinds.Cluster,
      (c) => {
        const keys = ofCluster(c.metadata?.namespace, c.metadata?.name);
        const ref = c.spec?.infrastructureRef;
        if (ref?.name && (ref.kind ?? 'OpenStackCluster') === 'OpenStackCluster')
          keys.push({ namespace: c.metadata?.namespace ?? 'default', name: ref.name });
        return keys;
      },
      { predicates: [clusterGate] },
    )
    .withOptions({ maxConcurrentReconciles: opts.workers })
    .complete((req, signal, ctx) => r.reconcile(req, signal, ctx));
}

/** OpenStackMachine updates that can change a member: the control-plane label, addresses, deletion. */
const memberRelevant = fieldsChanged<OpenStackMachine>((m) => [
  m.metadata?.labels?.[CONTROL_PLANE_LABEL],
  Boolean(m.metadata?.deletionTimestamp),
  m.status?.addresses ?? [],
]);

/** Cluster updates that matter here: paused, which OpenStackCluster it names, its deletion. */
const clusterGate = fieldsChanged<Cluster>((c) => [
  c.spec?.paused,
  c.spec?.infrastructureRef?.name,
  Boolean(c.metadata?.deletionTimestamp),
]);

/** The status being built, written whenever something was created (so it is recorded first). */
class StatusDraft {
  private base: OpenStackCluster;
  readonly draft: OpenStackCluster;
  private readonly mgr: Manager;

  constructor(mgr: Manager, obj: OpenStackCluster) {
    this.mgr = mgr;
    this.base = obj;
    this.draft = clone(obj);
  }

  get status(): OpenStackClusterStatus {
    return (this.draft.status ??= {});
  }

  get conditions(): CapiCondition[] {
    return (this.status.conditions ??= []);
  }

  async persist(signal: AbortSignal): Promise<void> {
    await patchStatus(this.mgr.api, capoKinds.OpenStackCluster, this.base, this.draft, { signal });
    this.base = { ...this.base, status: clone(this.draft.status) };
  }
}

/** One reconcile's inputs. */
interface Run {
  osc: OpenStackCluster;
  spec: OpenStackClusterSpec;
  cluster: Cluster | undefined;
  /** CAPI's Cluster name (names the bastion). */
  clusterName: string;
  /** `<namespace>-<cluster>`: names everything in OpenStack. */
  resourceName: string;
  api: ClusterApi;
  draft: StatusDraft;
  signal: AbortSignal;
  ctx: ReconcileContext;
  /** spec.controlPlaneEndpoint as it is after this reconcile. */
  endpoint?: { host: string; port: number } | undefined;
}

/** A step's answer: go on, or stop this reconcile with this result. */
type Step = { stop: Result } | undefined;

class OpenStackClusterReconciler {
  private readonly mgr: Manager;
  private readonly scopes: ScopeCache;
  private readonly opts: Required<OpenStackClusterControllerOptions>;
  /** When a cluster's API load balancer in ERROR is deleted and created again. */
  private readonly recreates: RecreateWindow;
  /** Octavia's providers and features, per client (they do not change while a process runs). */
  private readonly octavia = new WeakMap<ClusterApi, Promise<{ providers: string[]; cidrs: boolean }>>();

  constructor(mgr: Manager, scopes: ScopeCache, opts: OpenStackClusterControllerOptions) {
    this.mgr = mgr;
    this.scopes = scopes;
    const cap = (v: number) => Math.min(Math.max(v, 1), CAP_MS);
    this.opts = {
      actAsClusterAPICore: false,
      bastionWaitMs: 15_000,
      machinesWaitMs: 5_000,
      deleteWaitMs: 15_000,
      errorRetryMs: 15_000,
      loadBalancerBackoff: {},
      recreateWindowMs: 300_000,
      foreignWaitMaxMs: 120_000,
      ...opts,
    };
    this.opts.bastionWaitMs = cap(this.opts.bastionWaitMs);
    this.opts.machinesWaitMs = cap(this.opts.machinesWaitMs);
    this.opts.deleteWaitMs = cap(this.opts.deleteWaitMs);
    this.opts.errorRetryMs = cap(this.opts.errorRetryMs);
    this.recreates = new RecreateWindow(mgr.clock, this.opts.recreateWindowMs);
  }

  private lbEngine(api: ClusterApi): LoadBalancerEngine {
    // The engine holds nothing but the client and the back-off policy: cheap to make per reconcile.
    return new LoadBalancerEngine(api, { backoff: this.opts.loadBalancerBackoff });
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const key = `${req.namespace ?? ''}/${req.name}`;
    const osc = await this.mgr.client.get(capoKinds.OpenStackCluster, req, { signal });
    if (!osc) {
      this.recreates.forget(key);
      return {};
    }
    const namespace = osc.metadata?.namespace ?? 'default';
    const ownerName = ownerClusterName(osc);
    const cluster = ownerName
      ? await this.mgr.client.get(capoKinds.Cluster, { namespace, name: ownerName }, { signal })
      : undefined;
    if (isPaused(cluster, osc)) {
      ctx.log.info('the OpenStackCluster or its Cluster is paused; not reconciling');
      return {};
    }
    if (!cluster && !isDeleting(osc)) {
      ctx.log.info({ cluster: ownerName }, 'waiting for the Cluster that owns this OpenStackCluster');
      return {};
    }

    const draft = new StatusDraft(this.mgr, osc);
    const review = reviewSpec('OpenStackCluster', osc);
    setCapiCondition(draft.conditions, {
      ...review.condition,
      ...(review.condition.status === 'False' ? { severity: 'Warning' as const } : {}),
    });
    if (review.refused.length > 0) {
      const reason =
        review.condition.reason === Reasons.ImmutableFieldChanged
          ? EventReasons.SpecChangeRefused
          : EventReasons.InvalidSpec;
      this.warn(osc, reason, review.condition.message);
      ctx.log.warn({ problems: review.refused }, review.condition.message);
    }
    if (review.record) Object.assign(draft.status, review.record);

    const clusterName = clusterNameOf(osc);
    let run: Run | undefined;
    let scope: Scope | undefined;
    let gone = false;
    try {
      if (isDeleting(osc)) {
        if (!hasFinalizer(osc, CLUSTER_FINALIZER)) return {};
        markFalse(
          draft.conditions,
          Conditions.Ready,
          ClusterReasons.Deleting,
          'Info',
          'the cluster is being deleted',
        );
        const out = await this.reconcileDelete(osc, review.spec, clusterName, draft, signal, ctx, key);
        gone = out === undefined;
        return out ?? {};
      }
      if (!hasFinalizer(osc, CLUSTER_FINALIZER)) {
        // CAPO's first step: the finalizer is stored before anything exists in OpenStack.
        await addFinalizer(this.mgr.api, capoKinds.OpenStackCluster, osc, CLUSTER_FINALIZER, { signal });
        return {};
      }
      const spec = review.spec;
      if (!spec) {
        markFalse(draft.conditions, Conditions.Ready, Reasons.InvalidSpec, 'Error', review.condition.message);
        return {};
      }
      scope = await this.client(osc, spec, draft, signal, ctx);
      if (!scope) return { requeueAfterMs: this.opts.errorRetryMs };
      run = {
        osc,
        spec,
        cluster,
        clusterName,
        resourceName: clusterResourceName(namespace, clusterName),
        api: scope.client,
        draft,
        signal,
        ctx,
      };
      return await this.reconcileNormal(run, key);
    } finally {
      // Once the finalizer is off the object may be gone: nothing left to record.
      scope?.release();
      if (!signal.aborted && !gone) await draft.persist(signal);
      if (run && this.opts.actAsClusterAPICore && draft.status.ready) await this.actAsCore(run);
    }
  }

  /**
   * A lease on the identity's client, once Keystone accepted it (release it when done); undefined
   * (condition + Event) when the identity cannot be used or Keystone refuses it.
   */
  private async client(
    osc: OpenStackCluster,
    spec: OpenStackClusterSpec,
    draft: StatusDraft,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Scope | undefined> {
    try {
      // Authenticated means Keystone issued a token, not that a client could be built.
      const scope = await this.scopes.authenticatedScopeFor({
        namespace: osc.metadata?.namespace ?? 'default',
        identityRef: spec.identityRef,
        signal,
      });
      markTrue(draft.conditions, Conditions.OpenStackAuthenticationSucceeded);
      return scope;
    } catch (err) {
      if (!IdentityError.is(err)) throw err;
      const message = `${err.message}; ${err.fix}`;
      markFalse(
        draft.conditions,
        Conditions.OpenStackAuthenticationSucceeded,
        Reasons.OpenStackAuthenticationFailed,
        'Error',
        message,
      );
      markFalse(draft.conditions, Conditions.Ready, Reasons.OpenStackAuthenticationFailed, 'Error', message);
      this.warn(osc, ClusterEventReasons.AuthenticationFailed, message);
      ctx.log.warn({ reason: err.reason }, message);
      return undefined;
    }
  }

  /* ------------------------------------------------------------------ normal */

  private async reconcileNormal(run: Run, key: string): Promise<Result> {
    const steps: ((run: Run) => Promise<Step>)[] = [
      (r) => this.networkStep(r),
      (r) => this.securityGroupStep(r),
      (r) => this.endpointStep(r, key),
      (r) => this.readyStep(r),
    ];
    for (const step of steps) {
      const out = await step(run);
      if (out) return out.stop;
    }
    return this.bastionStep(run);
  }

  /** Failing: condition (and Ready) False with `reason`, a Warning Event, a log line; retried. */
  private fail(run: Run, type: string, reason: string, err: unknown, severity: Severity = 'Error'): Step {
    if (run.signal.aborted) throw err;
    const message = err instanceof Error ? err.message : String(err);
    markFalse(run.draft.conditions, type, reason, severity, message);
    if (type !== Conditions.Ready)
      markFalse(run.draft.conditions, Conditions.Ready, reason, severity, message);
    this.warn(run.osc, ClusterEventReasons.ReconcileError, `${type}: ${message}`);
    run.ctx.log.warn({ condition: type, reason, err }, message);
    // A transient cloud error retries soon; a lookup or spec problem waits for a change (or the period).
    const transient = OpenStackHttpError.is(err) && (err.status >= 500 || err.status === 429);
    return {
      stop: { requeueAfterMs: transient ? Math.min(2_000, this.opts.errorRetryMs) : this.opts.errorRetryMs },
    };
  }

  private created = (run: Run) => (what: string, name: string, id: string) => {
    const reason =
      {
        network: ClusterEventReasons.CreateNetwork,
        subnet: ClusterEventReasons.CreateSubnet,
        router: ClusterEventReasons.CreateRouter,
        'security group': ClusterEventReasons.CreateSecurityGroup,
      }[what] ?? ClusterEventReasons.Created;
    this.mgr.events.event(run.osc, 'Normal', reason, `Created ${what} ${name} with id ${id}`);
    run.ctx.log.info({ [what.replace(' ', '')]: id, name }, `created ${what}`);
  };

  private async networkStep(run: Run): Promise<Step> {
    const { api, spec, draft, signal } = run;
    let external;
    try {
      external = await reconcileExternalNetwork(api, spec, signal);
    } catch (err) {
      return this.fail(run, Conditions.NetworkReady, Reasons.UnableToFindNetwork, err);
    }
    if (external) draft.status.externalNetwork = external;
    else delete draft.status.externalNetwork;
    try {
      const out = await reconcileNetwork({
        api,
        spec,
        resourceName: run.resourceName,
        externalNetworkID: external?.id,
        signal,
        onCreate: this.created(run),
      });
      if (out.network) draft.status.network = out.network;
      if (out.router) draft.status.router = out.router;
    } catch (err) {
      await draft.persist(signal);
      if (!NetworkStepError.is(err)) throw err;
      const reason = {
        network: Reasons.NetworkCreateFailed,
        subnet: Reasons.SubnetCreateFailed,
        router: Reasons.RouterCreateFailed,
      }[err.step];
      const type = err.step === 'router' ? Conditions.RouterReady : Conditions.NetworkReady;
      return this.fail(run, type, reason, err.cause);
    }
    markTrue(draft.conditions, Conditions.NetworkReady);
    markTrue(draft.conditions, Conditions.RouterReady);
    await draft.persist(signal);
    return undefined;
  }

  private async securityGroupStep(run: Run): Promise<Step> {
    const { api, spec, draft, signal } = run;
    try {
      const out = await reconcileSecurityGroups({
        api,
        spec,
        resourceName: run.resourceName,
        bastionEnabled: bastionEnabled({ spec }),
        subnetCidrs: (draft.status.network?.subnets ?? []).map((s) => s.cidr),
        signal,
        onCreate: this.created(run),
      });
      if (out) {
        draft.status.controlPlaneSecurityGroup = out.controlPlane;
        draft.status.workerSecurityGroup = out.worker;
        if (out.bastion) draft.status.bastionSecurityGroup = out.bastion;
        else delete draft.status.bastionSecurityGroup;
        if (out.created + out.deleted > 0)
          run.ctx.log.info({ created: out.created, deleted: out.deleted }, 'security group rules reconciled');
      }
    } catch (err) {
      await draft.persist(signal);
      const reason = RuleSpecError.is(err) ? Reasons.InvalidSpec : Reasons.SecurityGroupCreateFailed;
      return this.fail(run, Conditions.SecurityGroupsReady, reason, err);
    }
    markTrue(draft.conditions, Conditions.SecurityGroupsReady);
    await draft.persist(signal);
    return undefined;
  }

  private async octaviaInfo(api: ClusterApi, signal: AbortSignal) {
    let info = this.octavia.get(api);
    if (!info) {
      info = (async () => {
        const providers = (await api.loadBalancer.providers.list({ signal }).all()).map((p) => p.name);
        const cidrs = await api.loadBalancer.supports('2.12', { signal });
        return { providers, cidrs };
      })();
      this.octavia.set(api, info);
      info.catch(() => this.octavia.delete(api));
    }
    return info;
  }

  private async endpointStep(run: Run, key: string): Promise<Step> {
    const { draft, spec } = run;
    try {
      const endpoint = loadBalancerEnabled(spec)
        ? await this.loadBalancer(run, key)
        : await this.noLoadBalancer(run);
      if ('stop' in endpoint) return endpoint;
      await this.setEndpoint(run, endpoint.host, endpoint.port);
    } catch (err) {
      await draft.persist(run.signal);
      return this.fail(run, Conditions.APIEndpointReady, Reasons.APIEndpointConfigFailed, err);
    }
    markTrue(draft.conditions, Conditions.APIEndpointReady);
    await draft.persist(run.signal);
    return undefined;
  }

  /** The load balancer, one engine step; the endpoint once it is Ready. */
  private async loadBalancer(
    run: Run,
    key: string,
  ): Promise<{ host: string; port: number } | { stop: Result }> {
    const { api, spec, draft, signal, osc } = run;
    const status = draft.status;
    const lbNetwork = await loadBalancerNetwork(api, spec, status.network, signal);
    const vipSubnet = lbNetwork.subnets?.[0];
    if (!vipSubnet)
      throw new DependencyError('subnet', 'NotFound', 'the load balancer network has no subnet');

    const lbSpec = spec.apiServerLoadBalancer!;
    const octavia = await this.octaviaInfo(api, signal);
    let provider = lbSpec.provider || undefined;
    if (provider && !octavia.providers.includes(provider)) {
      this.warn(
        osc,
        ClusterEventReasons.OctaviaProviderNotFound,
        `Provider ${provider} specified for Octavia not found, using the default provider.`,
      );
      provider = undefined;
    }
    let flavorID: string | undefined;
    if (lbSpec.flavor) {
      const flavors = await api.loadBalancer.flavors
        .list({ name: lbSpec.flavor, enabled: true }, { signal })
        .all();
      flavorID = flavors.find((f) => f.name === lbSpec.flavor && f.enabled)?.id;
      if (!flavorID)
        this.warn(
          osc,
          ClusterEventReasons.OctaviaFlavorNotFound,
          `Flavor ${lbSpec.flavor} specified for Octavia not found, using the default flavor.`,
        );
    }
    const allowed = canonicalAllowedCIDRs(spec, status);
    for (const v of allowed.invalid)
      this.warn(
        osc,
        ClusterEventReasons.InvalidAllowedCIDR,
        `${v} is not a valid IPv4 nor CIDR address and will not get applied to allowed_cidrs`,
      );
    const cidrsSupported = octavia.cidrs && provider !== 'ovn';
    const machines = await this.mgr.client.list(capoKinds.OpenStackMachine, {
      namespace: osc.metadata?.namespace ?? 'default',
      signal,
    });
    const members = controlPlaneMembers(
      machines.filter((m) => m.metadata?.labels?.[CLUSTER_NAME_LABEL] === run.clusterName),
    );
    const desired = desiredApiLoadBalancer({
      spec,
      status,
      resourceName: run.resourceName,
      vipSubnetID: vipSubnet.id,
      members,
      externalNetworkID: status.externalNetwork?.id,
      allowedCIDRs: cidrsSupported ? allowed.cidrs : undefined,
      provider,
      flavorID,
    });

    const engine = this.lbEngine(api);
    if (this.recreates.removing(key)) {
      const r = await engine.remove(desired, { signal });
      if (r.phase === 'Pending') return { stop: { requeueAfterMs: r.retryAfterMs } };
      if (r.phase === 'Failed') throw new EndpointError(`deleting the load balancer in ERROR: ${r.message}`);
      this.recreates.removed(key);
      delete status.apiServerLoadBalancer;
      return { stop: { requeueAfterMs: 1 } };
    }

    const result = await engine.ensure(desired, { signal });
    for (const w of result.warnings) this.warn(osc, ClusterEventReasons.ReconcileError, w.message);
    const lb = result.loadBalancer;
    if (lb) {
      const created = result.actions.some((a) => a.resource === 'loadbalancer' && a.verb === 'create');
      if (created)
        this.mgr.events.event(
          osc,
          'Normal',
          ClusterEventReasons.CreateLoadBalancer,
          `Created load balancer ${lb.name} with id ${lb.id}`,
        );
      status.apiServerLoadBalancer = {
        ...status.apiServerLoadBalancer,
        name: lb.name,
        id: lb.id,
        ip: status.apiServerLoadBalancer?.ip ?? '',
        internalIP: lb.vip_address,
        ...(spec.tags?.length ? { tags: [...spec.tags] } : {}),
        loadBalancerNetwork: lbNetwork,
        ...(cidrsSupported ? { allowedCIDRs: allowed.cidrs } : {}),
      };
    }
    if (result.actions.length > 0)
      run.ctx.log.info(
        { actions: result.actions.map((a) => `${a.verb} ${a.resource}`) },
        'API load balancer',
      );
    switch (result.phase) {
      case 'Pending':
        // A member update of a working load balancer does not make the endpoint any less ready.
        if (!osc.spec.controlPlaneEndpoint?.host || !status.ready)
          markFalse(
            draft.conditions,
            Conditions.APIEndpointReady,
            ClusterReasons.WaitingForLoadBalancer,
            'Info',
            result.message,
          );
        await draft.persist(signal);
        return { stop: { requeueAfterMs: result.retryAfterMs } };
      case 'Failed': {
        if (result.recreate && this.recreates.begin(key)) {
          this.warn(
            osc,
            ClusterEventReasons.ReconcileError,
            `${result.message}; deleting it to create it again`,
          );
          return { stop: { requeueAfterMs: 1 } };
        }
        throw new EndpointError(result.message);
      }
      case 'Ready':
        break;
    }
    if (result.floatingIp) await ensureFloatingIpTags(api, result.floatingIp, spec.tags, signal);
    const fip = result.floatingIp?.floating_ip_address;
    status.apiServerLoadBalancer = { ...status.apiServerLoadBalancer!, ip: fip ?? '' };
    await draft.persist(signal);
    return { host: result.address, port: apiServerPort(spec) };
  }

  /** CAPO's endpoint without a load balancer: preset, else a floating IP, else the fixed IP. */
  private async noLoadBalancer(run: Run): Promise<{ host: string; port: number }> {
    const { spec, draft, osc } = run;
    delete draft.status.apiServerLoadBalancer;
    const preset = spec.controlPlaneEndpoint;
    if (preset?.host) return { host: preset.host, port: preset.port || apiServerPort(spec) };
    if (!spec.disableAPIServerFloatingIP) {
      const { fip, created } = await ensureApiFloatingIP(
        run.api,
        spec,
        run.resourceName,
        draft.status.externalNetwork?.id,
        run.signal,
      );
      await ensureFloatingIpTags(run.api, fip, spec.tags, run.signal);
      if (created)
        this.mgr.events.event(
          osc,
          'Normal',
          ClusterEventReasons.CreateFloatingIP,
          `Created floating IP ${fip.floating_ip_address} with id ${fip.id}`,
        );
      return { host: fip.floating_ip_address, port: apiServerPort(spec) };
    }
    if (spec.apiServerFixedIP) return { host: spec.apiServerFixedIP, port: apiServerPort(spec) };
    throw new EndpointError(
      'unable to determine the control plane endpoint: enable apiServerLoadBalancer, allow the API floating IP, or set apiServerFixedIP or controlPlaneEndpoint',
    );
  }

  /** spec.controlPlaneEndpoint, once: CAPO never changes it after its host is set. */
  private async setEndpoint(run: Run, host: string, port: number): Promise<void> {
    const { osc, signal } = run;
    const preset = osc.spec.controlPlaneEndpoint;
    if (preset?.host && preset.port) {
      run.endpoint = { host: preset.host, port: preset.port };
      return;
    }
    // A preset host without a port keeps its host and gets the port, as the endpoint step chose it.
    if (preset?.host) host = preset.host;
    run.endpoint = { host, port };
    const modified = clone(osc);
    modified.spec.controlPlaneEndpoint = { host, port };
    await mergePatch(this.mgr.api, capoKinds.OpenStackCluster, osc, modified, { signal });
    run.ctx.log.info({ host, port }, 'control plane endpoint set');
  }

  private async readyStep(run: Run): Promise<Step> {
    const { draft, api, spec, signal } = run;
    try {
      draft.status.failureDomains = await reconcileFailureDomains(api, spec, signal);
    } catch (err) {
      return this.fail(run, Conditions.Ready, Reasons.OpenStackError, err);
    }
    // CAPO: ready before the bastion, so machines need not wait for it.
    draft.status.ready = true;
    draft.status.initialization = { ...draft.status.initialization, provisioned: true };
    markTrue(draft.conditions, Conditions.Ready);
    await draft.persist(signal);
    return undefined;
  }

  /* ----------------------------------------------------------------- bastion */

  private async bastionServers(osc: OpenStackCluster, signal: AbortSignal): Promise<OpenStackServer[]> {
    const uid = osc.metadata?.uid;
    if (!uid) return [];
    return this.mgr.client.list(capoKinds.OpenStackServer, {
      namespace: osc.metadata?.namespace ?? 'default',
      index: { name: OWNER_UID_INDEX, value: uid },
      signal,
    });
  }

  private fipContext(
    run: Pick<Run, 'api' | 'spec' | 'draft' | 'resourceName' | 'signal'>,
  ): FloatingIpContext {
    return {
      api: run.api,
      spec: run.spec,
      status: run.draft.status,
      resourceName: run.resourceName,
      signal: run.signal,
    };
  }

  private async bastionStep(run: Run): Promise<Result> {
    const { osc, spec, draft, signal, ctx } = run;
    const servers = await this.bastionServers(osc, signal);
    if (!bastionEnabled({ spec })) {
      const out = await this.deleteBastion(run, servers);
      if (out.foreign.length > 0) this.reportForeign(osc, ctx, "the bastion's ports", out.foreign);
      return out.gone ? {} : { requeueAfterMs: this.opts.bastionWaitMs };
    }
    if (!draft.status.network) {
      this.warn(
        osc,
        ClusterEventReasons.BastionError,
        'the bastion needs a cluster network; the cluster has none',
      );
      return {};
    }
    const serverSpec = bastionServerSpec({ cluster: osc, spec, status: draft.status });
    const hash = bastionSpecHash(serverSpec);
    const { current, old } = pickBastion(servers, serverSpec, hash);
    if (!current) {
      const name = nextBastionName(run.clusterName, servers, hash);
      try {
        await this.mgr.api.create(capoKinds.OpenStackServer, newBastionServer(osc, name, serverSpec, hash), {
          signal,
        });
      } catch (err) {
        // Created by a run whose write the cache has not shown yet.
        if (!isAlreadyExists(err)) throw err;
      }
      const replacing = old.filter((s) => !s.metadata?.deletionTimestamp);
      this.mgr.events.event(
        osc,
        'Normal',
        replacing.length > 0 ? ClusterEventReasons.ReplaceBastion : ClusterEventReasons.CreateBastion,
        replacing.length > 0
          ? `Creating bastion ${name} to replace ${replacing.map((s) => s.metadata?.name).join(', ')} (the bastion spec changed)`
          : `Created bastion OpenStackServer ${name}`,
      );
      ctx.log.info({ bastion: name, hash }, 'bastion OpenStackServer created');
      return { requeueAfterMs: this.opts.bastionWaitMs };
    }
    const fipCtx = this.fipContext(run);
    if (!current.status?.ready) {
      // The old bastion (if any) keeps serving, with its floating IP, until the new one is ready.
      const failed = current.status?.instanceState === 'ERROR';
      if (failed)
        this.warn(
          osc,
          ClusterEventReasons.BastionError,
          `bastion ${current.metadata?.name} is in ERROR; fix or change bastion.spec to replace it`,
        );
      if (old.length === 0) draft.status.bastion = bastionStatus(current, draft.status.bastion?.floatingIP);
      return failed ? {} : { requeueAfterMs: this.opts.bastionWaitMs };
    }
    let fip;
    try {
      const out = await ensureBastionFloatingIP(fipCtx, current);
      fip = out.fip;
      if (fip) await ensureFloatingIpTags(run.api, fip, spec.tags, signal);
      if (out.action && fip)
        ctx.log.info(
          { floatingIP: fip.floating_ip_address, bastion: current.metadata?.name },
          `bastion floating IP ${out.action}`,
        );
    } catch (err) {
      if (signal.aborted) throw err;
      const message = `bastion floating IP: ${err instanceof Error ? err.message : String(err)}`;
      this.warn(osc, ClusterEventReasons.BastionError, message);
      ctx.log.warn({ err }, message);
      return { requeueAfterMs: this.opts.errorRetryMs };
    }
    draft.status.bastion = bastionStatus(current, fip?.floating_ip_address);
    await draft.persist(signal);
    // Only now may the old bastions go: the new one is ready and holds the address.
    let waiting = false;
    for (const server of old) {
      const { foreign } = await releaseBastionFloatingIPs(fipCtx, server, fip?.floating_ip_address);
      waiting = true;
      if (foreign.length > 0) {
        // Deleting its port would detach someone else's address: the old bastion stays meanwhile.
        this.reportForeign(osc, ctx, `the ports of the old bastion ${server.metadata?.name}`, foreign);
        continue;
      }
      await deleteBastionServer(this.mgr.api, server, signal);
      if (!server.metadata?.deletionTimestamp)
        this.mgr.events.event(
          osc,
          'Normal',
          ClusterEventReasons.DeleteBastion,
          `Deleting bastion ${server.metadata?.name}, replaced by ${current.metadata?.name}`,
        );
    }
    return waiting ? { requeueAfterMs: this.opts.bastionWaitMs } : {};
  }

  /**
   * The floating IPs, then the OpenStackServers; gone once none is left. A bastion carrying a
   * floating IP this cluster did not make is not deleted (its port's deletion would detach it).
   */
  private async deleteBastion(
    run: Pick<Run, 'api' | 'spec' | 'draft' | 'resourceName' | 'signal' | 'osc'>,
    servers: readonly OpenStackServer[],
  ): Promise<{ gone: boolean; foreign: ForeignResource[] }> {
    const fipCtx = this.fipContext(run);
    const foreign: ForeignResource[] = [];
    for (const server of servers) {
      const released = await releaseBastionFloatingIPs(fipCtx, server);
      if (released.foreign.length > 0) {
        foreign.push(...released.foreign);
        continue;
      }
      if (!server.metadata?.deletionTimestamp) {
        await deleteBastionServer(this.mgr.api, server, run.signal);
        this.mgr.events.event(
          run.osc,
          'Normal',
          ClusterEventReasons.DeleteBastion,
          `Deleting bastion ${server.metadata?.name}`,
        );
      }
    }
    if (servers.length > 0) return { gone: false, foreign };
    await releaseRecordedFloatingIP(fipCtx);
    delete run.draft.status.bastion;
    return { gone: true, foreign };
  }

  /** A Warning Event (and log line) naming what was found and left, and what the user can do. */
  private reportForeign(
    osc: OpenStackCluster,
    ctx: ReconcileContext,
    where: string,
    foreign: readonly ForeignResource[],
  ): string {
    const message = foreignMessage(where, foreign);
    this.warn(osc, ClusterEventReasons.ForeignResources, message);
    ctx.log.warn({ foreign: foreign.map((r) => r.id) }, message);
    return message;
  }

  /**
   * The deletion waits for resources it did not make: Ready says which and what to do, an Event
   * too, and it looks again after a wait that grows with the deletion's age (restart-proof).
   */
  private waitForForeign(
    osc: OpenStackCluster,
    draft: StatusDraft,
    ctx: ReconcileContext,
    where: string,
    foreign: readonly ForeignResource[],
  ): Result {
    const message = this.reportForeign(osc, ctx, where, foreign);
    markFalse(draft.conditions, Conditions.Ready, ClusterReasons.ForeignResources, 'Warning', message);
    const bounds = {
      initialMs: this.opts.deleteWaitMs,
      maxMs: Math.max(this.opts.deleteWaitMs, this.opts.foreignWaitMaxMs),
    };
    const age = ageMs(timeMs(osc.metadata?.deletionTimestamp), this.mgr.clock.now());
    return { requeueAfterMs: waitByAge(age, bounds) };
  }

  /* ------------------------------------------------------------------ delete */

  /** Undefined once everything is gone and the finalizer removed; else when to look again. */
  private async reconcileDelete(
    osc: OpenStackCluster,
    spec: OpenStackClusterSpec | undefined,
    clusterName: string,
    draft: StatusDraft,
    signal: AbortSignal,
    ctx: ReconcileContext,
    key: string,
  ): Promise<Result | undefined> {
    const namespace = osc.metadata?.namespace ?? 'default';
    const ofCluster = (o: { metadata?: { labels?: Record<string, string> } }) =>
      o.metadata?.labels?.[CLUSTER_NAME_LABEL] === clusterName;
    const machines = (await this.mgr.client.list(capoKinds.Machine, { namespace, signal })).filter(
      (m) => ofCluster(m) || m.spec?.clusterName === clusterName,
    );
    const osms = (await this.mgr.client.list(capoKinds.OpenStackMachine, { namespace, signal })).filter(
      ofCluster,
    );
    if (machines.length + osms.length > 0) {
      ctx.log.info(
        { machines: machines.length, openStackMachines: osms.length },
        'waiting for the cluster machines to be deleted',
      );
      return { requeueAfterMs: this.opts.machinesWaitMs };
    }
    if (!spec) {
      // No spec was ever accepted, so nothing was ever created.
      return this.finish(osc, ctx, key);
    }
    const scope = await this.client(osc, spec, draft, signal, ctx);
    if (!scope) return { requeueAfterMs: this.opts.errorRetryMs };
    const api = scope.client;
    const resourceName = clusterResourceName(namespace, clusterName);
    const run = { api, spec, draft, resourceName, signal, osc };
    try {
      const bastion = await this.deleteBastion(run, await this.bastionServers(osc, signal));
      if (bastion.foreign.length > 0)
        return this.waitForForeign(osc, draft, ctx, "the bastion's ports", bastion.foreign);
      if (!bastion.gone) {
        ctx.log.info('waiting for the bastion to be deleted');
        return { requeueAfterMs: this.opts.bastionWaitMs };
      }
      const lbWait = await this.deleteEndpoint(run, key);
      if (lbWait !== undefined) return { requeueAfterMs: lbWait };
      const network = await deleteManagedNetwork(api, spec, { resourceName, clusterName }, signal);
      if (network.deleted.length > 0) ctx.log.info({ deleted: network.deleted }, 'cluster network deleted');
      if (network.foreign.length > 0)
        return this.waitForForeign(
          osc,
          draft,
          ctx,
          `the cluster network ${network.network ?? ''}`,
          network.foreign,
        );
      if (!network.done) {
        ctx.log.info(network.waitingFor ?? 'waiting for the network to go');
        return { requeueAfterMs: this.opts.deleteWaitMs };
      }
      delete draft.status.network;
      delete draft.status.router;
      const groups = await deleteSecurityGroups(api, resourceName, signal);
      if (groups.remaining.length > 0) {
        ctx.log.info({ securityGroups: groups.remaining }, 'security groups still in use');
        return { requeueAfterMs: this.opts.deleteWaitMs };
      }
    } catch (err) {
      if (signal.aborted) throw err;
      const message = err instanceof Error ? err.message : String(err);
      this.warn(osc, ClusterEventReasons.DeleteError, message);
      ctx.log.warn({ err }, `deleting the cluster: ${message}`);
      return { requeueAfterMs: this.opts.errorRetryMs };
    } finally {
      scope.release();
    }
    return this.finish(osc, ctx, key);
  }

  private async finish(osc: OpenStackCluster, ctx: ReconcileContext, key: string): Promise<undefined> {
    await removeFinalizer(this.mgr.api, capoKinds.OpenStackCluster, osc, CLUSTER_FINALIZER);
    this.recreates.forget(key);
    this.mgr.events.event(osc, 'Normal', ClusterEventReasons.Deleted, 'Deleted the cluster infrastructure');
    ctx.log.info('cluster infrastructure deleted');
    return undefined;
  }

  /** The load balancer (and its floating IP), or the API floating IP of a cluster without one. */
  private async deleteEndpoint(
    run: {
      api: ClusterApi;
      spec: OpenStackClusterSpec;
      draft: StatusDraft;
      resourceName: string;
      signal: AbortSignal;
      osc: OpenStackCluster;
    },
    key: string,
  ): Promise<number | undefined> {
    const { api, spec, draft, resourceName, signal } = run;
    const description = resourceDescription(resourceName);
    if (loadBalancerEnabled(spec) || draft.status.apiServerLoadBalancer) {
      const desired: DesiredLoadBalancer = {
        identity: {
          name: loadBalancerName(resourceName),
          description,
          ...(draft.status.apiServerLoadBalancer?.id ? { id: draft.status.apiServerLoadBalancer.id } : {}),
        },
        vip: {},
        listeners: [],
        floatingIp: {
          external: true,
          description,
          ownedMarker: description,
          keep: Boolean(spec.apiServerFloatingIP),
        },
      };
      const r = await this.lbEngine(api).remove(desired, { signal });
      if (r.phase === 'Pending') return Math.min(r.retryAfterMs, this.opts.deleteWaitMs);
      if (r.phase === 'Failed') throw new EndpointError(`deleting the API load balancer: ${r.message}`);
      delete draft.status.apiServerLoadBalancer;
      this.recreates.forget(key);
      return undefined;
    }
    const host = run.osc.spec.controlPlaneEndpoint?.host;
    if (spec.disableAPIServerFloatingIP || !host) return undefined;
    const [fip] = await api.network.floatingIps.list({ floating_ip_address: host }, { signal }).all();
    if (!fip) return undefined;
    // CAPO never deletes a floating IP the user named; one we made goes.
    if (host !== spec.apiServerFloatingIP && fip.description === description)
      await api.network.floatingIps.delete(fip.id, { signal });
    else if (fip.port_id) await api.network.floatingIps.disassociate(fip.id, { signal });
    return undefined;
  }

  /* ------------------------------------------------------------ CAPI core */

  /** What CAPI's Cluster controller would do for a ready infrastructure (actAsClusterAPICore). */
  private async actAsCore(run: Run): Promise<void> {
    const { cluster, osc, signal, draft } = run;
    if (!cluster) return;
    const ownerRefs = osc.metadata?.ownerReferences ?? [];
    if (
      !ownerRefs.some((r) => r.kind === 'Cluster' && r.name === cluster.metadata?.name) &&
      cluster.metadata?.uid
    ) {
      const modified = clone(osc);
      modified.metadata = {
        ...modified.metadata,
        ownerReferences: [
          ...ownerRefs,
          {
            apiVersion: 'cluster.x-k8s.io/v1beta1',
            kind: 'Cluster',
            name: cluster.metadata.name ?? '',
            uid: cluster.metadata.uid,
          },
        ],
      };
      await mergePatch(this.mgr.api, capoKinds.OpenStackCluster, osc, modified, { signal });
    }
    const endpoint = run.endpoint;
    if (endpoint?.host && !cluster.spec?.controlPlaneEndpoint?.host) {
      const modified = clone(cluster);
      modified.spec = {
        ...modified.spec,
        controlPlaneEndpoint: { host: endpoint.host, port: endpoint.port },
      };
      await mergePatch(this.mgr.api, capoKinds.Cluster, cluster, modified, { signal });
    }
    const status = cluster.status ?? {};
    const failureDomains = draft.status.failureDomains ?? {};
    if (
      status.infrastructureReady !== true ||
      !isDeepStrictEqual(status.failureDomains ?? {}, failureDomains)
    ) {
      const modified = clone(cluster);
      modified.status = { ...status, infrastructureReady: true, failureDomains };
      await patchStatus(this.mgr.api, capoKinds.Cluster, cluster, modified, { signal });
    }
  }

  private warn(obj: OpenStackCluster, reason: string, message: string): void {
    this.mgr.events.event(obj, 'Warning', reason, message);
  }
}
