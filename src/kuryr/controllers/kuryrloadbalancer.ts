/**
 * The kuryrloadbalancer controller (upstream's KuryrLoadBalancerHandler): a KuryrLoadBalancer's
 * spec becomes an Octavia load balancer through the shared engine, one engine step per reconcile,
 * and its status records what exists in upstream's shape.
 *
 * - Nothing is created until the Service has endpoints (upstream's `_should_ignore`) and the
 *   finalizer is on the KuryrLoadBalancer; the finalizer comes off once the load balancer and our
 *   floating IP are gone.
 * - The engine makes the whole load balancer in one fully populated create; a burst of endpoint
 *   changes seen at once is one batch member update per pool; Octavia PENDING_* is a requeue with
 *   the engine's hint, never a wait; past `lbaas_activation_timeout` it is a LoadBalancerStuck Event.
 * - ERROR: deleted and created again, at most once per `recreateWindowMs` (the ccm's rule); a
 *   provider change (amphora ↔ ovn): released and created again, as upstream.
 * - A status that still describes the desired load balancer costs no Octavia call; the engine looks
 *   again every `resyncMs` (upstream's 600 s reconcile_loadbalancers), so a load balancer deleted by
 *   hand comes back.
 * - A LoadBalancer Service's floating IP goes to the Service's `status.loadBalancer.ingress`.
 */
import type { V1Service } from '@kubernetes/client-node';
import {
  addFinalizer,
  clone,
  hasFinalizer,
  isDeleting,
  isNotFound,
  kinds,
  mergePatch,
  patchStatus,
  removeFinalizer,
  specOrMetadataChanged,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import { cidrContains, parseCidr, parseIp } from '../../lib/cidr.ts';
import type { LbAlgorithm } from '../../openstack/loadbalancer/v2/pools.ts';
import {
  LoadBalancerEngine,
  RecreateWindow,
  type BackoffPolicy,
  type DesiredLoadBalancer,
  type EnsureResult,
  type LoadBalancerApi,
  type Warning,
} from '../../openstack/services/loadbalancer/index.ts';
import { Finalizers, kuryrKinds } from '../api/index.ts';
import type { KuryrContext } from '../context.ts';
import { isPending, type SubnetsDriver } from '../drivers.ts';
import { desiredLoadBalancer, type MemberMode } from '../lb/desired.ts';
import { LoadBalancerSyncError } from '../lb/errors.ts';
import type { KlbSpec, KlbStatus, KuryrLoadBalancer } from '../lb/klb.ts';
import { MemberSubnets, type PodSubnetLookup } from '../lb/member-subnets.ts';
import {
  FLOATING_IP_MARKER,
  floatingIpDescription,
  loadBalancerDescription,
  loadBalancerName,
} from '../lb/names.ts';
import { isOvn, providerChanged } from '../lb/provider.ts';
import { LbReason } from '../lb/reasons.ts';
import { klbStatus, lbRecord, statusMatches } from '../lb/status.ts';

export const KURYRLOADBALANCER_CONTROLLER = 'kuryrloadbalancer';

/** The waits of the controller; kuryr.conf has none of these but the activation timeout. */
export interface KuryrLoadBalancerTiming {
  /** At most one recreate of an ERROR load balancer per KuryrLoadBalancer in this window (5 min). */
  recreateWindowMs?: number | undefined;
  /** How often a load balancer whose status matches is looked at in Octavia (600 s). */
  resyncMs?: number | undefined;
  /** The engine's PENDING requeue floor and cap (1 s, 10 s); time-scaled clouds scale them. */
  backoff?: Partial<Pick<BackoffPolicy, 'initialMs' | 'maxMs'>> | undefined;
  /** L2: how soon an endpoint whose subnet is unknown is looked for again (10 s). */
  memberRetryMs?: number | undefined;
  workers?: number | undefined;
}

/** What the reconciler is told, from kuryr.conf and the context. */
interface Settings extends KuryrLoadBalancerTiming {
  tags: readonly string[];
  memberMode: MemberMode;
  lbAlgorithm: LbAlgorithm;
  publicNetworkId: string | undefined;
  publicSubnetId: string | undefined;
  activationTimeoutMs: number;
  podSubnet: PodSubnetLookup;
}

export function registerKuryrLoadBalancerController(
  mgr: Manager,
  ctx: KuryrContext,
  timing: KuryrLoadBalancerTiming = {},
): void {
  const { octaviaDefaults, neutronDefaults } = ctx.options;
  const r = new KuryrLoadBalancerReconciler(mgr, ctx.os, {
    ...timing,
    tags: ctx.tags,
    memberMode: octaviaDefaults.memberMode,
    lbAlgorithm: octaviaDefaults.lbAlgorithm,
    publicNetworkId: neutronDefaults.externalSvcNet || undefined,
    publicSubnetId: neutronDefaults.externalSvcSubnet || undefined,
    activationTimeoutMs: octaviaDefaults.lbaasActivationTimeout * 1000,
    podSubnet: namespaceSubnet(ctx.subnets),
  });
  mgr
    .controller(KURYRLOADBALANCER_CONTROLLER)
    // Our own status writes wake nothing; the spec (the Service, its endpoints) and deletion do.
    .for(KLB, { predicates: [specOrMetadataChanged()] })
    .withOptions({ maxConcurrentReconciles: timing.workers ?? 4 })
    .complete((req, signal, rctx) => r.reconcile(req, signal, rctx));
}

const KLB = kuryrKinds.KuryrLoadBalancer;
const FINALIZER = Finalizers.KuryrLoadBalancer;

/**
 * A pod's subnet as the subnets driver has it for its namespace (upstream's `_get_pod_subnet`): the
 * default driver's pod subnet, or the namespace's own; an address outside it is looked up in Neutron.
 */
function namespaceSubnet(subnets: SubnetsDriver): PodSubnetLookup {
  return async (pod, address, signal) => {
    const s = await subnets.forNamespace(pod.namespace, signal);
    if (isPending(s)) return undefined;
    const cidr = parseCidr(s.cidr);
    const ip = parseIp(address);
    return cidr && ip && cidrContains(cidr, ip) ? s.subnetId : undefined;
  };
}

class KuryrLoadBalancerReconciler {
  private readonly mgr: Manager;
  private readonly opts: Settings;
  private readonly engine: LoadBalancerEngine;
  private readonly recreates: RecreateWindow;
  private readonly subnets: MemberSubnets;
  /** When the engine last found a KuryrLoadBalancer's load balancer Ready, per key. */
  private readonly checked = new Map<string, number>();
  /** Writes since the last Ready, per key, for the closing Event. */
  private readonly progress = new Map<string, string[]>();
  private readonly resyncMs: number;

  constructor(mgr: Manager, os: LoadBalancerApi, opts: Settings) {
    this.mgr = mgr;
    this.opts = opts;
    this.engine = new LoadBalancerEngine(os, {
      backoff: { stuckAfterMs: opts.activationTimeoutMs, ...opts.backoff },
      now: () => mgr.clock.now(),
    });
    this.recreates = new RecreateWindow(mgr.clock, opts.recreateWindowMs ?? 300_000);
    this.subnets = new MemberSubnets(os.network, opts.podSubnet);
    this.resyncMs = opts.resyncMs ?? 600_000;
  }

  async reconcile(req: Request, signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    const key = `${req.namespace ?? ''}/${req.name}`;
    let klb = await this.mgr.client.get(KLB, req, { signal });
    if (!klb) {
      this.forget(key);
      return {};
    }
    if (isDeleting(klb)) {
      if (!hasFinalizer(klb, FINALIZER)) return {};
      return this.release(klb, key, signal, ctx);
    }
    const spec = klb.spec ?? {};
    if (!spec.ip || (!hasEndpoints(spec) && !klb.status?.loadbalancer)) return {};
    // Before any Octavia create: a KuryrLoadBalancer deleted from here on waits for our release.
    if (!hasFinalizer(klb, FINALIZER)) {
      klb = await addFinalizer(this.mgr.api, KLB, klb, FINALIZER, { signal });
    }

    const recorded = klb.status?.loadbalancer?.provider;
    if (providerChanged(recorded, spec.provider)) return this.providerChange(klb, key, recorded, signal);

    const l2 = this.opts.memberMode === 'L2' || isOvn(spec.provider);
    const memberSubnets = l2
      ? await this.subnets.resolve(key, req.namespace ?? 'default', spec, signal)
      : undefined;
    const { desired, pending, unsupported } = desiredLoadBalancer({
      namespace: req.namespace ?? 'default',
      name: req.name,
      spec,
      status: klb.status,
      tags: this.opts.tags,
      memberMode: l2 ? 'L2' : 'L3',
      lbAlgorithm: this.opts.lbAlgorithm,
      memberSubnets,
      publicNetworkId: this.opts.publicNetworkId,
      publicSubnetId: this.opts.publicSubnetId,
    });
    for (const port of unsupported) {
      this.warn(klb, LbReason.ServiceSpecIgnored, `port ${port}: only TCP, UDP and SCTP listeners are made`);
    }
    if (pending.length > 0) {
      this.warn(
        klb,
        LbReason.MemberSubnetUnknown,
        `no subnet found yet for ${pending.join(', ')}: not members until their port is found`,
      );
    }
    const retry = pending.length > 0 ? (this.opts.memberRetryMs ?? 10_000) : undefined;

    if (this.recreates.removing(key)) return this.recreateStep(klb, key, desired, signal);

    const wantsFip = spec.type === 'LoadBalancer';
    const last = this.checked.get(key);
    const now = this.mgr.clock.now();
    if (last !== undefined && now - last < this.resyncMs && statusMatches(klb.status, desired, wantsFip)) {
      await this.syncServiceStatus(klb, signal);
      return { requeueAfterMs: Math.min(retry ?? Infinity, this.resyncMs - (now - last)) };
    }

    const result = await this.engine.ensure(desired, { signal });
    for (const w of result.warnings) this.warnEngine(klb, w);
    const progress = this.progress.get(key) ?? [];
    if (progress.length === 0 && result.actions.length > 0) {
      this.mgr.events.event(klb, 'Normal', LbReason.EnsuringLoadBalancer, 'Ensuring load balancer');
    }
    progress.push(...result.actions.map((a) => a.resource));
    this.progress.set(key, progress);

    switch (result.phase) {
      case 'Pending':
        // The load balancer's id as soon as there is one: a release after a crash starts from it.
        if (result.loadBalancer && klb.status?.loadbalancer?.id !== result.loadBalancer.id) {
          await this.writeStatus(
            klb,
            { ...klb.status, loadbalancer: lbRecord(result.loadBalancer, spec) },
            signal,
          );
        }
        if (result.reason === 'LoadBalancerStuck') this.warn(klb, LbReason.LoadBalancerStuck, result.message);
        if (result.reason === 'Conflict') throw new LoadBalancerSyncError(key, result.reason, result.message);
        return { requeueAfterMs: result.retryAfterMs };
      case 'Failed':
        if (result.recreate && this.recreates.begin(key)) {
          this.warn(
            klb,
            LbReason.RecreatingLoadBalancer,
            `${result.message}; deleting it to create it again`,
          );
          return this.recreateStep(klb, key, desired, signal);
        }
        this.warn(klb, LbReason.SyncLoadBalancerFailed, result.message);
        throw new LoadBalancerSyncError(key, result.reason, result.message);
      case 'Ready':
        return this.ready(klb, key, desired, result, retry, signal, ctx);
    }
  }

  private async ready(
    klb: KuryrLoadBalancer,
    key: string,
    desired: DesiredLoadBalancer,
    result: Extract<EnsureResult, { phase: 'Ready' }>,
    retry: number | undefined,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    const spec = klb.spec ?? {};
    const state = await this.engine.read(desired, result.loadBalancer, { signal });
    klb = await this.writeStatus(klb, klbStatus(result, state, spec), signal);
    await this.syncServiceStatus(klb, signal);
    const progress = this.progress.get(key) ?? [];
    if (progress.length > 0) {
      const membersOnly = progress.every((a) => a === 'members' || a === 'member');
      this.mgr.events.event(
        klb,
        'Normal',
        membersOnly ? LbReason.UpdatedLoadBalancer : LbReason.EnsuredLoadBalancer,
        membersOnly ? 'Updated load balancer members' : `Ensured load balancer ${result.loadBalancer.id}`,
      );
      ctx.log.info({ loadBalancer: result.loadBalancer.id, writes: progress }, 'load balancer ready');
    }
    this.progress.delete(key);
    this.checked.set(key, this.mgr.clock.now());
    return { requeueAfterMs: Math.min(retry ?? Infinity, this.resyncMs) };
  }

  /** ERROR: delete until gone, then clear the status so the next pass creates afresh. */
  private async recreateStep(
    klb: KuryrLoadBalancer,
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
      this.warn(klb, LbReason.SyncLoadBalancerFailed, r.message);
      throw new LoadBalancerSyncError(key, r.reason, r.message);
    }
    this.checked.delete(key);
    await this.writeStatus(klb, {}, signal);
    return { requeueAfterMs: 1 };
  }

  /** amphora ↔ ovn: Octavia cannot change a provider; the old load balancer goes first. */
  private async providerChange(
    klb: KuryrLoadBalancer,
    key: string,
    recorded: string | undefined,
    signal: AbortSignal,
  ): Promise<Result> {
    if (!this.progress.get(key)?.includes('provider')) {
      this.mgr.events.event(
        klb,
        'Normal',
        LbReason.ProviderChanged,
        `provider ${recorded ?? 'default'} → ${klb.spec?.provider ?? 'default'}: releasing the load balancer to create it again`,
      );
      this.progress.set(key, ['provider']);
    }
    const r = await this.engine.remove(this.removalTarget(klb), { signal });
    if (r.phase === 'Pending') {
      if (r.reason === 'Conflict') throw new LoadBalancerSyncError(key, r.reason, r.message);
      return { requeueAfterMs: r.retryAfterMs };
    }
    if (r.phase === 'Failed') {
      this.warn(klb, LbReason.SyncLoadBalancerFailed, r.message);
      throw new LoadBalancerSyncError(key, r.reason, r.message);
    }
    this.progress.delete(key);
    this.checked.delete(key);
    await this.writeStatus(klb, {}, signal);
    return { requeueAfterMs: 1 };
  }

  private async release(
    klb: KuryrLoadBalancer,
    key: string,
    signal: AbortSignal,
    ctx: ReconcileContext,
  ): Promise<Result> {
    if (!this.progress.get(key)?.includes('deleting')) {
      this.mgr.events.event(klb, 'Normal', LbReason.DeletingLoadBalancer, 'Deleting load balancer');
      this.progress.set(key, ['deleting']);
    }
    const r = await this.engine.remove(this.removalTarget(klb), { signal });
    for (const w of r.warnings) this.warnEngine(klb, w);
    if (r.phase === 'Pending') {
      if (r.reason === 'LoadBalancerStuck') this.warn(klb, LbReason.LoadBalancerStuck, r.message);
      if (r.reason === 'Conflict') throw new LoadBalancerSyncError(key, r.reason, r.message);
      return { requeueAfterMs: r.retryAfterMs };
    }
    if (r.phase === 'Failed') {
      this.warn(klb, LbReason.DeleteLoadBalancerFailed, r.message);
      throw new LoadBalancerSyncError(key, r.reason, r.message);
    }
    ctx.log.info('load balancer released');
    await this.clearServiceStatus(klb, signal);
    await removeFinalizer(this.mgr.api, KLB, klb, FINALIZER, { signal });
    this.forget(key);
    return {};
  }

  /** What remove() needs: the identity (recorded id first) and the floating IP rules. */
  private removalTarget(klb: KuryrLoadBalancer): DesiredLoadBalancer {
    const namespace = klb.metadata?.namespace ?? 'default';
    const name = klb.metadata?.name ?? '';
    const id = klb.status?.loadbalancer?.id;
    return {
      identity: {
        name: loadBalancerName(namespace, name),
        description: loadBalancerDescription(namespace, name),
        tags: this.opts.tags,
        ...(id ? { id } : {}),
      },
      vip: {},
      listeners: [],
      floatingIp: {
        external: false,
        description: floatingIpDescription(namespace, name),
        ownedMarker: FLOATING_IP_MARKER,
      },
    };
  }

  /**
   * Writes the status when it changed; the KuryrLoadBalancer as stored. Upstream's CRD has no status
   * subresource: the status is a merge patch of the object, which touches no other field.
   */
  private async writeStatus(
    klb: KuryrLoadBalancer,
    status: KlbStatus,
    signal: AbortSignal,
  ): Promise<KuryrLoadBalancer> {
    const draft = clone(klb);
    draft.status = status;
    return mergePatch(this.mgr.api, KLB, klb, draft, { signal });
  }

  /** A LoadBalancer Service shows its floating IP; any other shows none (upstream's `_update_lb_status`). */
  private async syncServiceStatus(klb: KuryrLoadBalancer, signal: AbortSignal): Promise<void> {
    const svc = await this.service(klb, signal);
    if (!svc || isDeleting(svc)) return;
    const ip = klb.spec?.type === 'LoadBalancer' ? klb.status?.service_pub_ip_info?.ip_addr : undefined;
    const want = ip ? [{ ip }] : [];
    const have = svc.status?.loadBalancer?.ingress ?? [];
    if (have.length === want.length && have.every((h, i) => h.ip === want[i]!.ip && !h.hostname)) return;
    const draft = clone(svc);
    draft.status = { ...draft.status, loadBalancer: want.length > 0 ? { ingress: want } : {} };
    await patchStatus(this.mgr.api, kinds.Service, svc, draft, { signal });
  }

  private async clearServiceStatus(klb: KuryrLoadBalancer, signal: AbortSignal): Promise<void> {
    const svc = await this.service(klb, signal);
    if (!svc || isDeleting(svc) || (svc.status?.loadBalancer?.ingress ?? []).length === 0) return;
    const draft = clone(svc);
    draft.status = { ...draft.status, loadBalancer: {} };
    await patchStatus(this.mgr.api, kinds.Service, svc, draft, { signal }).catch((err: unknown) => {
      if (!isNotFound(err)) throw err;
    });
  }

  /** The KuryrLoadBalancer's Service (same namespace and name), if it is still there. */
  private service(klb: KuryrLoadBalancer, signal: AbortSignal): Promise<V1Service | undefined> {
    return this.mgr.client.get(
      kinds.Service,
      { namespace: klb.metadata?.namespace ?? 'default', name: klb.metadata?.name ?? '' },
      { signal },
    );
  }

  private forget(key: string): void {
    this.checked.delete(key);
    this.progress.delete(key);
    this.recreates.forget(key);
    this.subnets.forget(key);
  }

  private warn(klb: KuryrLoadBalancer, reason: string, message: string): void {
    this.mgr.events.event(klb, 'Warning', reason, message);
  }

  private warnEngine(klb: KuryrLoadBalancer, w: Warning): void {
    this.warn(
      klb,
      /^[A-Z][A-Za-z0-9]*$/.test(w.reason) ? w.reason : LbReason.SyncLoadBalancerFailed,
      w.message,
    );
  }
}

function hasEndpoints(spec: KlbSpec): boolean {
  return (spec.endpointSlices ?? []).length > 0;
}
