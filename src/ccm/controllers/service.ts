/**
 * The service controller (k8s.io/cloud-provider `controllers/service` with OCCM's LoadBalancer):
 * Services of type LoadBalancer become Octavia load balancers through the shared engine
 * (src/openstack/services/loadbalancer), one engine step per reconcile.
 *
 * - The finalizer `service.kubernetes.io/load-balancer-cleanup` (upstream's) is on the Service
 *   before anything is created in OpenStack, and comes off only once the load balancer, its
 *   listeners (when shared) and our floating IP are gone.
 * - Every reconcile reads the Service and the Nodes from the cache, parses the Service once
 *   (parseService), takes out what this cloud cannot do (applyCapabilities, each with its Event),
 *   and hands the engine the whole desired state; the engine's diff makes a steady state cost no
 *   write and a burst of node events one batch member PUT per pool (the queue dedups the keys).
 * - Waiting never blocks a worker: the engine's Pending becomes `{ requeueAfterMs }`.
 * - A load balancer our create left in ERROR is deleted and created again, at most once per
 *   `recreateWindowMs` per Service.
 * - Once the load balancer is ACTIVE, its member security group is reconciled (manage-security-groups)
 *   or one an earlier configuration left is deleted; deleting the load balancer always deletes it.
 */
import type { V1Node, V1Service } from '@kubernetes/client-node';
import {
  addFinalizer,
  clone,
  Coalescer,
  fieldsChanged,
  hasFinalizer,
  isDeleting,
  ItemExponentialFailureRateLimiter,
  keyString,
  kinds,
  mergePatch,
  objectKey,
  OwnWrites,
  patchStatus,
  removeFinalizer,
  specOrMetadataChanged,
  type Manager,
  type Predicate,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import type { OpenStackApi } from '../secret/rotating-client.ts';
import type { ApiVersion } from '../../openstack/core/api-version.ts';
import { ApiVersionError } from '../../openstack/core/errors.ts';
import {
  AMPHORA_PHASES,
  LoadBalancerEngine,
  RecreateWindow,
  type BackoffPolicy,
  type DesiredLoadBalancer,
  type EnsureResult,
  type Failed,
  type Warning,
} from '../../openstack/services/loadbalancer/index.ts';
import { applyCapabilities, type LoadBalancerPlan, type OctaviaCapabilities } from '../capabilities.ts';
import type { CcmConfig, LiveConfig } from '../config/types.ts';
import { changedSections } from '../secret/compare.ts';
import { FrameworkReason, UpstreamReason } from '../events.ts';
import { eligibleNodes } from '../members.ts';
import { observeReconcile, ReconcileOperation, reconcileMetrics, type ReconcileMetrics } from '../metrics.ts';
import { securityGroupDescription, securityGroupName } from '../naming.ts';
import { parseService, wantsLoadBalancer } from '../service-config.ts';
import { Annotation } from '../service/annotations.ts';
import { memberRules } from '../service/security-group-rules.ts';
import {
  desiredLoadBalancer,
  memberNodes,
  memberSubnetOf,
  serviceIdentity,
  type MemberNode,
} from './service/desired.ts';
import { LoadBalancerSyncError } from './service/errors.ts';
import { ServiceControllerReason } from './service/reasons.ts';
import { refusalMessage } from './service/refusal.ts';
import { MemberSecurityGroups, SecurityGroupAction } from './service/security-group.ts';
import { ingressFor, sameIngress } from './service/status.ts';

export const SERVICE_CONTROLLER = 'service';
/** Upstream's finalizer, so a Service OCCM guarded stays guarded after the switch, and back. */
export const LOAD_BALANCER_FINALIZER = 'service.kubernetes.io/load-balancer-cleanup';

export interface ServiceControllerOptions {
  clusterName: string;
  /** Upstream `--concurrent-service-syncs` (1). */
  workers: number;
  /** At most one delete-and-recreate of an ERROR load balancer per Service in this window (5 min). */
  recreateWindowMs?: number;
  /** Octavia's PENDING_* age after which the engine reports LoadBalancerStuck (10 min). */
  stuckAfterMs?: number;
  /** How soon members without a port on the member subnet are looked for again (1 min). */
  portlessRetryMs?: number;
  /**
   * The engine's PENDING requeue floor and cap (1 s, 10 s) and Octavia's expected phase durations
   * (AMPHORA_PHASES: the first look after a write, then fine polls): a benchmark on a time-scaled
   * cloud scales them too; `stuckAfterMs` here wins over the option above (tests).
   */
  backoff?: Partial<Pick<BackoffPolicy, 'initialMs' | 'maxMs' | 'stuckAfterMs' | 'phases'>>;
  /**
   * The work queue's per-Service failure back-off: upstream's service controller waits 5 s after a
   * failed sync, doubling up to 300 s (minRetryDelay, maxRetryDelay), reset by a success.
   */
  retry?: { minMs?: number; maxMs?: number };
  /**
   * Node changes are acted on once they have been quiet for this long (at most 10× after the
   * first): a burst of Nodes joining or leaving wakes every Service once, and each load balancer
   * gets one member update per pool (100 ms, as Kuryr's member_batch_window_ms).
   */
  nodeBatchWindowMs?: number;
}

export const NODE_BATCH_WINDOW_MS = 100;

/** Upstream's minRetryDelay and maxRetryDelay (k8s.io/cloud-provider controllers/service). */
export const SERVICE_RETRY_MIN_MS = 5_000;
export const SERVICE_RETRY_MAX_MS = 300_000;

export function registerServiceController(
  mgr: Manager,
  os: OpenStackApi,
  config: LiveConfig,
  opts: ServiceControllerOptions,
): void {
  const own = new OwnWrites<V1Service>();
  const r = new ServiceReconciler(mgr, os, config, opts, own);
  const services = mgr.informers.informerFor(kinds.Service);
  // Failures are paced per Service by the queue, as upstream: a request that failed is not sent again
  // before its back-off is over, whatever wakes the controller meanwhile.
  const retry = new ItemExponentialFailureRateLimiter<string>(
    opts.retry?.minMs ?? SERVICE_RETRY_MIN_MS,
    opts.retry?.maxMs ?? SERVICE_RETRY_MAX_MS,
  );
  const backingOff = (key: string) => retry.numRequeues(key) > 0;
  // Any member-relevant node change concerns every load balancer: a burst of them wakes each
  // Service once. A Service backing off after a failure is left to its retry, which reads the Nodes anyway.
  const nodeSync = new Coalescer(
    mgr.clock,
    { windowMs: opts.nodeBatchWindowMs ?? NODE_BATCH_WINDOW_MS },
    () => {
      for (const s of services.list()) {
        if (!wantsLoadBalancer(s) && !hasFinalizer(s, LOAD_BALANCER_FINALIZER)) continue;
        const key = objectKey(s);
        if (!backingOff(keyString(key))) controller.enqueue(key);
      }
    },
  );
  const controller = mgr
    .controller(SERVICE_CONTROLLER)
    // Not our own status write, finalizer or annotations (as upstream's needsUpdate ignores the
    // status); a change anyone else makes to the spec or metadata still wakes us.
    .for(kinds.Service, { predicates: [specOrMetadataChanged(), own.predicate()] })
    .watches(
      kinds.Node,
      () => {
        nodeSync.touch();
        return [];
      },
      { predicates: [memberRelevant] },
    )
    .withOptions({ maxConcurrentReconciles: opts.workers, rateLimiter: retry })
    .complete((req, signal, ctx) => r.reconcile(req, signal, ctx));
  // A rotated [LoadBalancer] or class concerns every Service, failing ones included: each is
  // reconciled again at once with the new values.
  config.onChange((next, previous) => {
    const changed = changedSections(previous, next);
    if (!changed.includes('[LoadBalancer]') && !changed.includes('[LoadBalancerClass]')) return;
    r.forgetConfigFacts();
    for (const s of services.list()) {
      if (wantsLoadBalancer(s) || hasFinalizer(s, LOAD_BALANCER_FINALIZER)) controller.enqueue(objectKey(s));
    }
  });
}

/** Node updates that can change a member: labels, taints, addresses (kubelet heartbeats cannot). */
const memberRelevant: Predicate<V1Node> = fieldsChanged((n) => [
  n.metadata?.labels,
  n.spec?.taints,
  n.status?.addresses,
]);

/** What the member security group of a Ready load balancer is made from. */
interface SecurityGroupInput {
  plan: LoadBalancerPlan;
  members: readonly MemberNode[];
  detectedSubnetId: string | undefined;
}

interface Progress {
  /** Actions of the convergence under way (since the last Ready), for the closing Event. */
  actions: string[];
}

class ServiceReconciler {
  private readonly mgr: Manager;
  private readonly os: OpenStackApi;
  private readonly live: LiveConfig;
  private readonly opts: Required<ServiceControllerOptions>;
  private readonly engine: LoadBalancerEngine;
  private readonly metrics: ReconcileMetrics;
  private readonly progress = new Map<string, Progress>();
  /** When a Service's load balancer in ERROR is deleted and created again. */
  private readonly recreates: RecreateWindow;
  /** VIP subnets found from a node address (OCCM's getSubnetIDForLB), per address. */
  private readonly subnets = new Map<string, string>();
  /** Subnet CIDRs, per subnet id (Neutron never changes a subnet's CIDR). */
  private readonly cidrs = new Map<string, string>();
  private readonly securityGroups: MemberSecurityGroups;
  /**
   * Services (key → uid) whose leftover security group this process already found absent while
   * manage-security-groups is off (so it cannot have made one since): saves a Neutron call per reconcile.
   */
  private readonly noLeftoverGroup = new Map<string, string>();
  /** The version last read, for the removal path (which needs no gated feature to be exact). */
  private apiVersion: ApiVersion | undefined;
  private readonly own: OwnWrites<V1Service>;

  constructor(
    mgr: Manager,
    os: OpenStackApi,
    config: LiveConfig,
    opts: ServiceControllerOptions,
    own: OwnWrites<V1Service>,
  ) {
    this.mgr = mgr;
    this.own = own;
    this.os = os;
    this.live = config;
    this.opts = {
      recreateWindowMs: 300_000,
      stuckAfterMs: 600_000,
      backoff: {},
      retry: {},
      portlessRetryMs: 60_000,
      nodeBatchWindowMs: NODE_BATCH_WINDOW_MS,
      ...opts,
    };
    this.engine = new LoadBalancerEngine(os, {
      backoff: { stuckAfterMs: this.opts.stuckAfterMs, phases: AMPHORA_PHASES, ...this.opts.backoff },
    });
    this.metrics = reconcileMetrics(mgr.registry);
    this.securityGroups = new MemberSecurityGroups(os);
    this.recreates = new RecreateWindow(mgr.clock, this.opts.recreateWindowMs);
  }

  /** The config now: a rotation of the Secret reaches the next reconcile. */
  private get config(): CcmConfig {
    return this.live.current();
  }

  /** What this process learnt under the previous config (manage-security-groups may have changed). */
  forgetConfigFacts(): void {
    this.noLeftoverGroup.clear();
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const key = `${req.namespace ?? ''}/${req.name}`;
    let svc = await this.mgr.client.get(kinds.Service, req, { signal });
    if (!svc) {
      this.progress.delete(key);
      this.recreates.forget(key);
      this.noLeftoverGroup.delete(key);
      return {};
    }
    if (isDeleting(svc) || !wantsLoadBalancer(svc)) {
      if (!hasFinalizer(svc, LOAD_BALANCER_FINALIZER)) return {};
      return this.cleanup(svc, key, signal, ctx);
    }
    // Before any OpenStack create: a Service deleted from here on still waits for our cleanup.
    if (!hasFinalizer(svc, LOAD_BALANCER_FINALIZER)) {
      svc = await addFinalizer(this.mgr.client.api, kinds.Service, svc, LOAD_BALANCER_FINALIZER, {
        signal,
        own: this.own,
      });
    }
    return this.ensure(svc, key, signal, ctx);
  }

  private async ensure(
    svc: V1Service,
    key: string,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    const config = this.config;
    const lb = config.loadBalancer;
    const parsed = parseService(svc, config);
    for (const p of parsed.problems) {
      if (!p.fatal) this.warn(svc, p.reason, p.message);
    }
    if (!parsed.spec) {
      const message = parsed.problems
        .filter((p) => p.fatal)
        .map((p) => `${p.field}: ${p.message}`)
        .join('; ');
      this.warn(svc, FrameworkReason.SyncLoadBalancerFailed, `Error syncing load balancer: ${message}`);
      // Only a change to the Service can fix it, and that change wakes us.
      return {};
    }
    const caps = await this.capabilities(key, signal, ctx);
    const plan = applyCapabilities(parsed.spec, caps, { manageSecurityGroups: lb.manageSecurityGroups });
    for (const d of plan.degradations) this.warn(svc, d.reason, d.message);
    const spec = plan.spec;
    if (spec.ipFamily === 'IPv6' && !spec.internal) {
      this.warn(
        svc,
        UpstreamReason.FloatingIPSkipped,
        'Floating IP is not supported for IPv6 load balancers; the VIP address is used',
      );
    }

    const nodes = eligibleNodes(await this.mgr.client.list(kinds.Node, { signal }), spec.nodeSelector);
    const { members, skipped } = memberNodes(nodes, spec);
    if (skipped.length > 0) {
      ctx.log.warn({ nodes: skipped }, 'nodes without an address of the Service family are not members');
    }
    if (members.length === 0) {
      this.warn(
        svc,
        FrameworkReason.UnAvailableLoadBalancer,
        'There are no available nodes for LoadBalancer',
      );
    }
    const detectedSubnetId =
      spec.vip.subnetId || spec.vip.networkId || spec.vip.portId
        ? undefined
        : await this.detectSubnet(members[0]?.address, signal);
    if (!spec.vip.subnetId && !spec.vip.networkId && !spec.vip.portId && !detectedSubnetId) {
      this.warn(
        svc,
        FrameworkReason.SyncLoadBalancerFailed,
        'Error syncing load balancer: no VIP subnet: set [LoadBalancer] subnet-id or the annotation ' +
          `${Annotation.SubnetId} (it is found from a member node's port otherwise)`,
      );
      return { requeueAfterMs: this.opts.recreateWindowMs };
    }
    const desired = desiredLoadBalancer({
      plan,
      clusterName: this.opts.clusterName,
      nodes,
      detectedSubnetId,
      maxSharedLb: lb.maxSharedLb,
      serialApiCalls: lb.providerRequiresSerialApiCalls,
    });

    const progress = this.progress.get(key) ?? { actions: [] };
    if (!this.progress.has(key)) this.progress.set(key, progress);
    if (this.recreates.removing(key)) return this.recreateStep(svc, key, desired, signal);

    const result = await observeReconcile(this.metrics, ReconcileOperation.Ensure, () =>
      this.engine.ensure(desired, { signal }),
    );
    const answered = this.mgr.clock.now();
    for (const w of result.warnings) this.warnEngine(svc, w);
    if (progress.actions.length === 0 && result.actions.length > 0) {
      this.mgr.events.event(svc, 'Normal', FrameworkReason.EnsuringLoadBalancer, 'Ensuring load balancer');
    }
    progress.actions.push(...result.actions.map((a) => a.resource));
    // Record the id as soon as one exists, as OCCM's deferred patcher does even on error; once
    // ready, with the address in the same patch (adopting many Services costs one write each).
    if (result.loadBalancer && result.phase !== 'Ready')
      svc = await this.annotate(svc, { [Annotation.LoadBalancerId]: result.loadBalancer.id }, signal);

    switch (result.phase) {
      case 'Pending':
        if (result.reason === 'LoadBalancerStuck') {
          this.warn(svc, ServiceControllerReason.Stuck, result.message);
          this.metrics.errors.inc({ operation: ReconcileOperation.Ensure });
        }
        // A write refused because someone else's got there first: the queue's back-off paces a
        // repeat, so a refusal that keeps coming never turns into a write per second.
        if (result.reason === 'Conflict') throw new LoadBalancerSyncError(key, result.reason, result.message);
        // The engine's wait runs from its answer: the annotation written since (a Kubernetes call,
        // slow on a busy API server) is not added to it, or the look comes after the phase's end.
        return { requeueAfterMs: Math.max(1, result.retryAfterMs - (this.mgr.clock.now() - answered)) };
      case 'Failed':
        return this.failed(svc, key, plan.spec, desired, result, signal);
      case 'Ready':
        return this.ready(svc, { plan, members, detectedSubnetId }, result, progress, signal, ctx);
    }
  }

  private async ready(
    svc: V1Service,
    sg: SecurityGroupInput,
    result: Extract<EnsureResult, { phase: 'Ready' }>,
    progress: Progress,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    const spec = sg.plan.spec;
    svc = await this.annotate(
      svc,
      {
        [Annotation.LoadBalancerId]: result.loadBalancer.id,
        [Annotation.LoadBalancerAddress]: result.address,
      },
      signal,
    );
    // As OCCM's EnsureLoadBalancer: the status is written only once the security group is right too.
    const retryAfterMs = await this.syncSecurityGroup(svc, sg, progress, signal, ctx);
    const ingress = ingressFor(result.address, spec, this.config.loadBalancer);
    if (!sameIngress(svc.status?.loadBalancer?.ingress, ingress)) {
      const draft = clone(svc);
      draft.status = { ...draft.status, loadBalancer: { ingress } };
      await patchStatus(this.mgr.client.api, kinds.Service, svc, draft, { signal });
      progress.actions.push('status');
    }
    if (progress.actions.length > 0) {
      const membersOnly = progress.actions.every(
        (a) => a === 'members' || a === 'member' || a === SecurityGroupAction.Port,
      );
      this.mgr.events.event(
        svc,
        'Normal',
        membersOnly ? FrameworkReason.UpdatedLoadBalancer : FrameworkReason.EnsuredLoadBalancer,
        membersOnly ? 'Updated load balancer with new hosts' : 'Ensured load balancer',
      );
      progress.actions = [];
    }
    return retryAfterMs === undefined ? {} : { requeueAfterMs: retryAfterMs };
  }

  /**
   * OCCM's EnsureLoadBalancer step 12: with manage-security-groups, the Service's member group
   * (rules, member ports); without, the removal of one an earlier configuration left. A failure is
   * a SyncLoadBalancerFailed Event naming the group and a retry with the queue's back-off. Returns
   * a retry delay when a member has no port yet.
   */
  private async syncSecurityGroup(
    svc: V1Service,
    input: SecurityGroupInput,
    progress: Progress,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<number | undefined> {
    const { spec } = input.plan;
    const { namespace, name, uid } = spec.service;
    const groupName = securityGroupName(uid, namespace, name);
    try {
      if (!this.config.loadBalancer.manageSecurityGroups) {
        const key = `${namespace}/${name}`;
        if (this.noLeftoverGroup.get(key) === uid) return undefined;
        progress.actions.push(...(await this.securityGroups.remove(groupName, signal)));
        this.noLeftoverGroup.set(key, uid);
        return undefined;
      }
      const subnetId =
        memberSubnetOf(spec, input.detectedSubnetId) ??
        (await this.detectSubnet(input.members[0]?.address, signal));
      if (subnetId === undefined) {
        throw new Error(
          `no member subnet: set [LoadBalancer] member-subnet-id or the annotation ${Annotation.MemberSubnetId}`,
        );
      }
      const rules = memberRules({
        ports: spec.listeners,
        subnetCidr: await this.subnetCidr(subnetId, signal),
        sourceRanges: input.plan.securityGroupRanges,
        healthCheckNodePort:
          svc.spec?.externalTrafficPolicy === 'Local' ? svc.spec.healthCheckNodePort : undefined,
      });
      const out = await this.securityGroups.ensure(
        {
          name: groupName,
          description: securityGroupDescription(namespace, name, this.opts.clusterName),
          rules,
          subnetId,
          members: input.members,
        },
        signal,
      );
      progress.actions.push(...out.actions);
      if (out.unsecured.length > 0) {
        ctx.log.debug(
          { nodes: out.unsecured },
          'member ports without port security do not get the security group',
        );
      }
      if (out.portless.length > 0) {
        ctx.log.warn(
          { nodes: out.portless, subnetId, securityGroup: groupName },
          "no port on the member subnet holds these members' addresses; looking again later",
        );
        return this.opts.portlessRetryMs;
      }
      return undefined;
    } catch (err) {
      if (signal.aborted) throw err;
      this.warn(
        svc,
        FrameworkReason.SyncLoadBalancerFailed,
        `Error syncing load balancer: security group ${groupName}: ${err instanceof Error ? err.message : String(err)}`,
      );
      throw err;
    }
  }

  /** The CIDR of a subnet, read once. */
  private async subnetCidr(subnetId: string, signal: AbortSignal): Promise<string> {
    const known = this.cidrs.get(subnetId);
    if (known) return known;
    const subnet = await this.os.network.subnets.get(subnetId, { signal });
    this.cidrs.set(subnetId, subnet.cidr);
    return subnet.cidr;
  }

  private async failed(
    svc: V1Service,
    key: string,
    spec: LoadBalancerPlan['spec'],
    desired: DesiredLoadBalancer,
    result: Failed,
    signal: AbortSignal,
  ): Promise<Result> {
    if (result.recreate && this.recreates.begin(key)) {
      this.warn(svc, ServiceControllerReason.Recreating, `${result.message}; deleting it to create it again`);
      return this.recreateStep(svc, key, desired, signal);
    }
    // A refused flavor, subnet or network is named by the annotation or key that supplied it.
    const message = refusalMessage(result, spec, desired) ?? result.message;
    this.warn(svc, FrameworkReason.SyncLoadBalancerFailed, `Error syncing load balancer: ${message}`);
    // The per-key back-off of the queue spaces the retries; the errors counter records the failure.
    throw new LoadBalancerSyncError(key, result.reason, message);
  }

  private async recreateStep(
    svc: V1Service,
    key: string,
    desired: DesiredLoadBalancer,
    signal: AbortSignal,
  ): Promise<Result> {
    const r = await this.engine.remove(desired, { signal });
    if (r.phase === 'Pending') {
      if (r.reason === 'Conflict') throw new LoadBalancerSyncError(key, r.reason, r.message);
      return { requeueAfterMs: r.retryAfterMs };
    }
    this.recreates.removed(key);
    if (r.phase === 'Failed') {
      this.warn(svc, FrameworkReason.SyncLoadBalancerFailed, `Error syncing load balancer: ${r.message}`);
      throw new LoadBalancerSyncError(key, r.reason, r.message);
    }
    return { requeueAfterMs: 1 };
  }

  private async cleanup(
    svc: V1Service,
    key: string,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    const desired = this.removalTarget(svc);
    const progress = this.progress.get(key) ?? { actions: [] };
    if (!this.progress.has(key)) {
      this.progress.set(key, progress);
    }
    if (!progress.actions.includes('deleting')) {
      this.mgr.events.event(svc, 'Normal', FrameworkReason.DeletingLoadBalancer, 'Deleting load balancer');
      progress.actions = ['deleting'];
    }
    const r = await observeReconcile(this.metrics, ReconcileOperation.Delete, () =>
      this.engine.remove(desired, { signal }),
    );
    for (const w of r.warnings) this.warnEngine(svc, w);
    if (r.phase === 'Pending') {
      if (r.reason === 'LoadBalancerStuck') {
        this.warn(svc, ServiceControllerReason.Stuck, r.message);
        this.metrics.errors.inc({ operation: ReconcileOperation.Delete });
      }
      if (r.reason === 'Conflict') throw new LoadBalancerSyncError(key, r.reason, r.message);
      return { requeueAfterMs: r.retryAfterMs };
    }
    if (r.phase === 'Failed') {
      this.warn(svc, FrameworkReason.DeleteLoadBalancerFailed, `Error deleting load balancer: ${r.message}`);
      throw new LoadBalancerSyncError(key, r.reason, r.message);
    }
    ctx.log.info('load balancer deleted');
    await this.removeSecurityGroup(svc, signal);
    if (!isDeleting(svc)) {
      // A Service that stopped being a LoadBalancer keeps living: it must not advertise the old address.
      if ((svc.status?.loadBalancer?.ingress ?? []).length > 0) {
        const draft = clone(svc);
        draft.status = { ...draft.status, loadBalancer: {} };
        svc = await patchStatus(this.mgr.client.api, kinds.Service, svc, draft, { signal });
      }
      svc = await this.annotate(
        svc,
        { [Annotation.LoadBalancerId]: null, [Annotation.LoadBalancerAddress]: null },
        signal,
      );
    }
    await removeFinalizer(this.mgr.client.api, kinds.Service, svc, LOAD_BALANCER_FINALIZER, { signal });
    this.mgr.events.event(svc, 'Normal', FrameworkReason.DeletedLoadBalancer, 'Deleted load balancer');
    this.progress.delete(key);
    this.recreates.forget(key);
    return {};
  }

  /**
   * OCCM's EnsureLoadBalancerDeleted step 6: the Service's group goes with the load balancer, whatever
   * manage-security-groups says now, so no group is ever orphaned.
   */
  private async removeSecurityGroup(svc: V1Service, signal: AbortSignal): Promise<void> {
    const m = svc.metadata ?? {};
    if (!m.uid) return;
    const key = `${m.namespace ?? 'default'}/${m.name ?? ''}`;
    // Found absent under this config, which makes none: nothing to look for (one Neutron call fewer
    // before the finalizer comes off). A config change forgets it (forgetConfigFacts).
    if (this.noLeftoverGroup.get(key) === m.uid && !this.config.loadBalancer.manageSecurityGroups) {
      this.noLeftoverGroup.delete(key);
      return;
    }
    const groupName = securityGroupName(m.uid, m.namespace ?? 'default', m.name ?? '');
    try {
      await this.securityGroups.remove(groupName, signal);
      this.noLeftoverGroup.delete(key);
    } catch (err) {
      if (signal.aborted) throw err;
      this.warn(
        svc,
        FrameworkReason.DeleteLoadBalancerFailed,
        `Error deleting load balancer: security group ${groupName}: ${err instanceof Error ? err.message : String(err)}`,
      );
      throw err;
    }
  }

  /** What remove() needs: the full desired state when the Service still parses, else its identity. */
  private removalTarget(svc: V1Service): DesiredLoadBalancer {
    const lb = this.config.loadBalancer;
    const parsed = parseService(svc, this.config);
    if (parsed.spec) {
      const plan = applyCapabilities(
        parsed.spec,
        { provider: lb.lbProvider, apiVersion: this.apiVersion },
        {
          manageSecurityGroups: lb.manageSecurityGroups,
        },
      );
      return {
        ...desiredLoadBalancer({
          plan,
          clusterName: this.opts.clusterName,
          nodes: [],
          maxSharedLb: lb.maxSharedLb,
          serialApiCalls: lb.providerRequiresSerialApiCalls,
        }),
        cascadeDelete: lb.cascadeDelete,
      };
    }
    const m = svc.metadata ?? {};
    const namespace = m.namespace ?? 'default';
    const name = m.name ?? '';
    const id = m.annotations?.[Annotation.LoadBalancerId] || undefined;
    return {
      identity: serviceIdentity(
        { namespace, name, uid: m.uid ?? '' },
        this.opts.clusterName,
        lb.maxSharedLb,
        id,
      ),
      vip: {},
      listeners: [],
      floatingIp: {
        external: false,
        description: `Floating IP for Kubernetes external service ${namespace}/${name} from cluster ${this.opts.clusterName}`,
        ownedMarker: 'Floating IP for Kubernetes external service',
        keep: m.annotations?.[Annotation.KeepFloatingIp] === 'true',
      },
      serialApiCalls: lb.providerRequiresSerialApiCalls,
      cascadeDelete: lb.cascadeDelete,
    };
  }

  /** Sets (or with null removes) annotations, writing only when something changes. */
  private async annotate(
    svc: V1Service,
    values: Record<string, string | null>,
    signal: AbortSignal,
  ): Promise<V1Service> {
    const current = svc.metadata?.annotations ?? {};
    const changed = Object.entries(values).some(([k, v]) => (v === null ? k in current : current[k] !== v));
    if (!changed) return svc;
    const draft = clone(svc);
    const annotations = { ...current };
    for (const [k, v] of Object.entries(values)) {
      if (v === null) delete annotations[k];
      else annotations[k] = v;
    }
    draft.metadata = { ...draft.metadata, annotations };
    return this.own.write(svc, draft, () =>
      mergePatch(this.mgr.client.api, kinds.Service, svc, draft, { signal }),
    );
  }

  /**
   * The Octavia version (the client's discovery cache reads the document once an hour). Only a
   * version actually read gates features: a document Octavia serves without a version turns the
   * gated features off (each with its Event), as OCCM does; a document that could not be read (an
   * outage, a timeout) is no answer, and the Service waits for one with the queue's back-off
   * instead of being created without its flavor or zone for good.
   */
  private async capabilities(
    key: string,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<OctaviaCapabilities> {
    try {
      this.apiVersion = (await this.os.loadBalancer.versions({ signal })).max;
    } catch (err) {
      if (signal.aborted) throw err;
      if (!ApiVersionError.is(err)) {
        ctx.log.warn({ err }, "Octavia's version document could not be read; looking again with back-off");
        throw new LoadBalancerSyncError(
          key,
          'OctaviaVersionUnknown',
          "Octavia's version document could not be read",
          {
            cause: err,
          },
        );
      }
      this.apiVersion = undefined;
    }
    return { provider: this.config.loadBalancer.lbProvider, apiVersion: this.apiVersion };
  }

  /** OCCM's getSubnetIDForLB: the subnet of the member node's port that holds its address. */
  private async detectSubnet(address: string | undefined, signal: AbortSignal): Promise<string | undefined> {
    if (address === undefined) return undefined;
    const known = this.subnets.get(address);
    if (known) return known;
    const ports = await this.os.network.ports
      .list({ fixed_ips: [{ ip_address: address }] }, { signal })
      .all();
    for (const p of ports) {
      const ip = p.fixed_ips.find((f) => f.ip_address === address);
      if (ip) {
        this.subnets.set(address, ip.subnet_id);
        return ip.subnet_id;
      }
    }
    return undefined;
  }

  private warn(svc: V1Service, reason: string, message: string): void {
    this.mgr.events.event(svc, 'Warning', reason, message);
  }

  private warnEngine(svc: V1Service, w: Warning): void {
    this.warn(
      svc,
      /^[A-Z][A-Za-z0-9]*$/.test(w.reason) ? w.reason : FrameworkReason.SyncLoadBalancerFailed,
      w.message,
    );
  }
}
