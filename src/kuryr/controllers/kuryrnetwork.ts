/**
 * The `kuryrnetwork` controller (upstream's KuryrNetworkHandler): a KuryrNetwork's Neutron network,
 * subnet and router interface (src/kuryr/network/provision.ts), each step's ids written to the
 * status before the next Neutron write, with upstream's Events; `status.nsLabels` follows
 * `spec.nsLabels` once the network is there (kuryr-np's namespace selectors read it). On delete:
 * the network's pools freed (kuryr-pods' hook), the interface off the router, the network with its
 * subnet deleted (only ours), then the finalizer.
 *
 * Never waits: a network still holding ports is a requeue after 2 s. A Neutron failure is an Event
 * with upstream's reason and Neutron's message, then a throw, so the work queue backs off per key.
 * The status is read from the API server, not the cache, so a write we just made is never missed.
 */
import {
  addFinalizer,
  hasFinalizer,
  isDeleting,
  isNotFound,
  kinds,
  objectKey,
  removeFinalizer,
  specOrMetadataChanged,
  type Manager,
  type ReconcileContext,
  type Request,
  type Result,
} from '../../kube/index.ts';
import { Finalizers, kuryrKinds, readVif, type KuryrNetwork } from '../api/index.ts';
import type { KuryrContext } from '../context.ts';
import type { NamespaceRef } from '../network/names.ts';
import { networkPoolsRelease } from '../network/pools-hook.ts';
import {
  NamespaceNetworkError,
  provisionStep,
  type NamespaceNetworkSettings,
  type NamespaceNetworkStatus,
} from '../network/provision.ts';
import { teardownNamespaceNetwork } from '../network/teardown.ts';

export const KURYRNETWORK_CONTROLLER = 'kuryrnetwork';

/** A network that still holds ports is looked at again after this. */
const TEARDOWN_RETRY_MS = 2_000;

export function registerKuryrNetworkController(mgr: Manager, ctx: KuryrContext): void {
  mgr
    .controller(KURYRNETWORK_CONTROLLER)
    // Our own status writes wake nothing: each reconcile runs its steps to the end.
    .for(kuryrKinds.KuryrNetwork, { predicates: [specOrMetadataChanged()] })
    .complete((req, signal, rctx) => reconcile(mgr, ctx, req, signal, rctx));
}

function settingsFor(ctx: KuryrContext, kns: KuryrNetwork): NamespaceNetworkSettings | string {
  const { podSubnetPool, podRouter } = ctx.options.namespaceSubnet;
  if (!podSubnetPool || !podRouter) {
    return `[namespace_subnet] ${!podSubnetPool ? 'pod_subnet_pool' : 'pod_router'} is not set: namespace networks need both`;
  }
  const mtu = ctx.options.neutronDefaults.networkDeviceMtu;
  return {
    projectId: kns.spec.projectId || ctx.projectId,
    subnetPoolId: podSubnetPool,
    routerId: podRouter,
    ...(mtu > 0 ? { mtu } : {}),
    tags: ctx.tags,
  };
}

/** The namespace's name and uid: the uid from the owner reference the driver set, else the Namespace. */
async function namespaceOf(mgr: Manager, kns: KuryrNetwork, signal: AbortSignal): Promise<NamespaceRef> {
  const name = kns.spec.nsName;
  const owner = kns.metadata?.ownerReferences?.find((o) => o.kind === 'Namespace' && o.name === name);
  if (owner) return { name, uid: owner.uid };
  const ns = await mgr.client.get(kinds.Namespace, { name }, { signal });
  return { name, uid: ns?.metadata?.uid ?? '' };
}

async function reconcile(
  mgr: Manager,
  ctx: KuryrContext,
  req: Request,
  signal: AbortSignal,
  rctx: ReconcileContext,
): Promise<Result> {
  let kns: KuryrNetwork;
  try {
    kns = await mgr.api.get(kuryrKinds.KuryrNetwork, req, { signal });
  } catch (err) {
    if (isNotFound(err)) return {};
    throw err;
  }
  const settings = settingsFor(ctx, kns);
  if (typeof settings === 'string') {
    mgr.events.event(kns, 'Warning', 'NamespaceSubnetNotConfigured', settings);
    rctx.log.warn({ kuryrnetwork: `${req.namespace}/${req.name}` }, settings);
    return {};
  }
  const ns = await namespaceOf(mgr, kns, signal);
  if (isDeleting(kns)) return finalize(mgr, ctx, kns, ns, settings, signal);

  kns = await addFinalizer(mgr.api, kuryrKinds.KuryrNetwork, kns, Finalizers.KuryrNetwork, { signal });
  for (let i = 0; i < 4; i++) {
    const status: NamespaceNetworkStatus = { ...kns.status };
    let step;
    try {
      step = await provisionStep(ctx.os.network, ns, status, settings, signal);
    } catch (err) {
      if (err instanceof NamespaceNetworkError) mgr.events.event(kns, 'Warning', err.reason, err.message);
      throw err;
    }
    if (step.kind === 'ready') break;
    kns = await patchStatus(mgr, kns, step.status, signal);
    mgr.events.event(kns, 'Normal', step.reason, step.message);
  }
  if (kns.status?.netId && kns.status.routerId && !sameLabels(kns.status.nsLabels, kns.spec.nsLabels)) {
    await patchStatus(mgr, kns, { nsLabels: kns.spec.nsLabels }, signal);
  }
  return {};
}

function sameLabels(a: unknown, b: unknown): boolean {
  const x = (a ?? {}) as Record<string, unknown>;
  const y = (b ?? {}) as Record<string, unknown>;
  const kx = Object.keys(x);
  return kx.length === Object.keys(y).length && kx.every((k) => x[k] === y[k]);
}

async function patchStatus(
  mgr: Manager,
  kns: KuryrNetwork,
  status: NamespaceNetworkStatus & { nsLabels?: unknown },
  signal: AbortSignal,
): Promise<KuryrNetwork> {
  // Upstream's CRD has no status subresource: the status is written on the object itself.
  // nsLabels is replaced whole (a removed label must go), where a merge patch would merge the maps;
  // it is written only once the status has the network, so /status exists.
  if ('nsLabels' in status) {
    return mgr.api.patch(
      kuryrKinds.KuryrNetwork,
      objectKey(kns),
      'json',
      [{ op: 'add', path: '/status/nsLabels', value: status.nsLabels as never }],
      { signal },
    );
  }
  return mgr.api.patch(kuryrKinds.KuryrNetwork, objectKey(kns), 'merge', { status }, { signal });
}

async function finalize(
  mgr: Manager,
  ctx: KuryrContext,
  kns: KuryrNetwork,
  ns: NamespaceRef,
  settings: NamespaceNetworkSettings,
  signal: AbortSignal,
): Promise<Result> {
  if (!hasFinalizer(kns, Finalizers.KuryrNetwork)) return {};
  const result = await teardownNamespaceNetwork(ctx.os.network, ns, kns.status ?? {}, settings, {
    referencedPorts: await portsOfNamespace(mgr, ns.name, signal),
    releasePools: networkPoolsRelease(ctx),
    signal,
  });
  if (result.kind === 'waiting') {
    mgr.events.event(kns, 'Normal', 'NetworkDeletionPending', result.message);
    return { requeueAfterMs: TEARDOWN_RETRY_MS };
  }
  if (result.deleted)
    mgr.events.event(kns, 'Normal', 'DeleteNetworkSucceed', `Neutron network ${result.deleted} deleted`);
  await removeFinalizer(mgr.api, kuryrKinds.KuryrNetwork, kns, Finalizers.KuryrNetwork, { signal });
  return {};
}

/** Ports the namespace's KuryrPorts still name: never taken as leftovers. */
async function portsOfNamespace(mgr: Manager, namespace: string, signal: AbortSignal): Promise<Set<string>> {
  const out = new Set<string>();
  for (const kp of await mgr.client.list(kuryrKinds.KuryrPort, { namespace, signal })) {
    for (const entry of Object.values(kp.status?.vifs ?? {})) {
      try {
        out.add(readVif(entry.vif).id);
      } catch {
        // Unreadable: it names no port we could protect; the pool code owns what it made.
      }
    }
  }
  return out;
}
