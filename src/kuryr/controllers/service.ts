/**
 * The service and endpointslice controllers (upstream's ServiceHandler and EndpointsHandler,
 * controller/handlers/lbaas.py): every Service kuryr serves gets a KuryrLoadBalancer of its name
 * whose spec says what its load balancer must be; the kuryrloadbalancer controller makes it so.
 *
 * - service: a served Service (klbSpecFor: a selector, ClusterIP or LoadBalancer, a clusterIP) gets
 *   upstream's Service finalizer first, then its KuryrLoadBalancer (owned by the Service, with the
 *   KuryrLoadBalancer finalizer from its create on), whose spec follows the Service: ip, ports,
 *   subnet, project, type, provider, lb_ip, timeouts. A Service deleted, or no longer served,
 *   has its KuryrLoadBalancer deleted; once that is gone (its load balancer released), the Service
 *   finalizer comes off.
 * - endpointslice: `spec.endpointSlices` follows the Service's EndpointSlices. Its queue holds a
 *   Service once however many of its slices changed, and what changed is written once the changes
 *   have been quiet for `coalesceMs` (at most 10× that after the first, so a steady stream still
 *   lands): a burst of pod changes becomes one spec write, which the engine turns into one batch
 *   member update per pool. A fixed window split bursts whose events a busy API server spread out.
 */
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { isDeepStrictEqual } from 'node:util';
import {
  addFinalizer,
  clone,
  hasFinalizer,
  ignoreNotFound,
  isAlreadyExists,
  isDeleting,
  kinds,
  mergePatch,
  ownerReference,
  removeFinalizer,
  specOrMetadataChanged,
  type Manager,
  type Request,
  type Result,
} from '../../kube/index.ts';
import { Finalizers, kuryrKinds } from '../api/index.ts';
import type { KuryrContext } from '../context.ts';
import type { KlbSpec, KuryrLoadBalancer } from '../lb/klb.ts';
import { cloudProviderOwned, klbSpecFor, SERVICE_NAME_LABEL, type KlbSpecOptions } from '../lb/klb-spec.ts';
import { LbReason } from '../lb/reasons.ts';

export const SERVICE_CONTROLLER = 'service';
export const ENDPOINTSLICE_CONTROLLER = 'endpointslice';

export interface ServiceControllerOptions {
  spec: KlbSpecOptions;
  workers?: number | undefined;
  /**
   * How long a Service's endpoint changes must be quiet before the endpointslice controller writes
   * them (`[octavia_defaults] member_batch_window_ms`): pods going or becoming ready together reach
   * the slices one event at a time, and one spec write is one batch member update per pool.
   */
  coalesceMs?: number | undefined;
}

/** A stream that never goes quiet is still written this many windows after its first change. */
const MAX_WINDOWS = 10;

/** A Service's endpoint changes not written yet: since when, the last seen, and when it changed. */
interface PendingEndpoints {
  since: number;
  want: string;
  changedAt: number;
}

const KLB = kuryrKinds.KuryrLoadBalancer;

/** What the spec comes from: kuryr.conf. */
export function serviceOptions(ctx: KuryrContext, workers?: number): ServiceControllerOptions {
  const { neutronDefaults, octaviaDefaults } = ctx.options;
  return {
    spec: {
      serviceSubnetId: neutronDefaults.serviceSubnet,
      projectId: ctx.projectId,
      provider: octaviaDefaults.provider,
      timeoutClientData: octaviaDefaults.timeoutClientData,
      timeoutMemberData: octaviaDefaults.timeoutMemberData,
    },
    coalesceMs: octaviaDefaults.memberBatchWindowMs,
    workers,
  };
}

/** Upstream's `service` handler. */
export function registerServiceController(mgr: Manager, ctx: KuryrContext, workers?: number): void {
  const opts = serviceOptions(ctx, workers);
  mgr
    .controller(SERVICE_CONTROLLER)
    .for(kinds.Service, { predicates: [specOrMetadataChanged()] })
    // A KuryrLoadBalancer gone (its load balancer released) lets the Service finalizer go.
    .watches(KLB, (klb) => [sameName(klb)], { predicates: [specOrMetadataChanged()] })
    .withOptions({ maxConcurrentReconciles: opts.workers ?? 4 })
    .complete((req, signal) => reconcileService(mgr, opts, req, signal));
}

/** Upstream's `endpoints` handler, on discovery.k8s.io/v1 EndpointSlices. */
export function registerEndpointSliceController(mgr: Manager, ctx: KuryrContext, workers?: number): void {
  const opts = serviceOptions(ctx, workers);
  const pending = new Map<string, PendingEndpoints>();
  mgr
    .controller(ENDPOINTSLICE_CONTROLLER)
    .watches(kinds.EndpointSlice, (es) => {
      const name = es.metadata?.labels?.[SERVICE_NAME_LABEL];
      return name ? [{ namespace: es.metadata?.namespace ?? 'default', name }] : [];
    })
    // The KuryrLoadBalancer's create (by the service controller) brings the endpoints in.
    .watches(KLB, (klb) => [sameName(klb)], { predicates: [specOrMetadataChanged()] })
    .withOptions({ maxConcurrentReconciles: opts.workers ?? 4 })
    .complete((req, signal) => reconcileEndpoints(mgr, opts, pending, req, signal));
}

const sameName = (o: { metadata?: { namespace?: string; name?: string } }): Request => ({
  namespace: o.metadata?.namespace ?? 'default',
  name: o.metadata?.name ?? '',
});

async function reconcileService(
  mgr: Manager,
  opts: ServiceControllerOptions,
  req: Request,
  signal: AbortSignal,
): Promise<Result> {
  let svc = await mgr.client.get(kinds.Service, req, { signal });
  const klb = await mgr.client.get(KLB, req, { signal });
  if (!svc) return {};
  const result = klbSpecFor(svc, [], opts.spec);
  const theirs = cloudProviderOwned(svc);
  if (theirs && !klb && !isDeleting(svc))
    mgr.events.event(svc, 'Warning', LbReason.ServedByCloudProvider, `not served by kuryr: ${theirs}`);
  if (isDeleting(svc) || result.kind === 'skipped') {
    if (klb) {
      if (!isDeleting(klb)) await ignoreNotFound(mgr.api.delete(KLB, req, { signal }));
      // The KuryrLoadBalancer's disappearance wakes us again.
      return {};
    }
    if (hasFinalizer(svc, Finalizers.Service)) {
      // Fresh: the cache may not have seen the KuryrLoadBalancer we just created.
      const live = await ignoreNotFound(mgr.api.get(KLB, req, { signal }));
      if (live) return {};
      // A Service already gone (its other finalizers came off first) needs nothing more.
      await ignoreNotFound(removeFinalizer(mgr.api, kinds.Service, svc, Finalizers.Service, { signal }));
    }
    return {};
  }
  for (const problem of result.problems)
    mgr.events.event(svc, 'Warning', LbReason.ServiceSpecIgnored, problem);
  if (!hasFinalizer(svc, Finalizers.Service)) {
    svc = await addFinalizer(mgr.api, kinds.Service, svc, Finalizers.Service, { signal });
  }
  const { endpointSlices: _unused, ...serviceFields } = result.spec;
  if (!klb) {
    await createKlb(mgr, opts, svc, serviceFields, signal);
    return {};
  }
  if (isDeleting(klb)) return {};
  const current = { ...(klb.spec ?? {}) };
  delete current.endpointSlices;
  if (isDeepStrictEqual(current, serviceFields)) return {};
  const draft = clone(klb);
  draft.spec = {
    ...serviceFields,
    ...(klb.spec?.endpointSlices ? { endpointSlices: klb.spec.endpointSlices } : {}),
  };
  await mergePatch(mgr.api, KLB, klb, draft, { signal });
  return {};
}

async function createKlb(
  mgr: Manager,
  opts: ServiceControllerOptions,
  svc: V1Service,
  spec: KlbSpec,
  signal: AbortSignal,
): Promise<void> {
  const klb: KuryrLoadBalancer = {
    apiVersion: KLB.apiVersion,
    kind: KLB.kind,
    metadata: {
      name: svc.metadata?.name ?? '',
      namespace: svc.metadata?.namespace ?? 'default',
      finalizers: [Finalizers.KuryrLoadBalancer],
      ownerReferences: [ownerReference({ apiVersion: 'v1', kind: 'Service', metadata: svc.metadata ?? {} })],
    },
    spec,
  };
  try {
    await mgr.api.create(KLB, klb, { signal });
  } catch (err) {
    // Made by an earlier pass whose write the cache has not shown yet: the next pass updates it.
    if (!isAlreadyExists(err)) throw err;
  }
}

async function reconcileEndpoints(
  mgr: Manager,
  opts: ServiceControllerOptions,
  pending: Map<string, PendingEndpoints>,
  req: Request,
  signal: AbortSignal,
): Promise<Result> {
  const key = `${req.namespace ?? 'default'}/${req.name}`;
  const klb = await mgr.client.get(KLB, req, { signal });
  const svc = await mgr.client.get(kinds.Service, req, { signal });
  if (!klb || isDeleting(klb) || !svc || isDeleting(svc)) {
    pending.delete(key);
    return {};
  }
  const slices: V1EndpointSlice[] = await mgr.client.list(kinds.EndpointSlice, {
    namespace: req.namespace ?? 'default',
    labelSelector: { matchLabels: { [SERVICE_NAME_LABEL]: req.name } },
    signal,
  });
  const result = klbSpecFor(svc, slices, opts.spec);
  if (result.kind === 'skipped') return {};
  const want = result.spec.endpointSlices ?? [];
  if (isDeepStrictEqual(klb.spec?.endpointSlices ?? [], want)) {
    pending.delete(key);
    return {};
  }
  // Each change of a burst holds the write back until the changes are quiet; the write carries them all.
  const now = mgr.clock.now();
  const windowMs = opts.coalesceMs ?? 0;
  const wantJson = JSON.stringify(want);
  const seen = pending.get(key);
  const entry: PendingEndpoints =
    seen === undefined
      ? { since: now, want: wantJson, changedAt: now }
      : seen.want === wantJson
        ? seen
        : { since: seen.since, want: wantJson, changedAt: now };
  const waitMs = Math.min(entry.changedAt + windowMs, entry.since + MAX_WINDOWS * windowMs) - now;
  if (waitMs > 0) {
    pending.set(key, entry);
    return { requeueAfterMs: waitMs };
  }
  pending.delete(key);
  const draft = clone(klb);
  draft.spec = { ...draft.spec, endpointSlices: want };
  await mergePatch(mgr.api, KLB, klb, draft, { signal });
  return {};
}
