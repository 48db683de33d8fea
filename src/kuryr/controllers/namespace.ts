/**
 * The `namespace` controller (upstream's NamespaceHandler, as OpenShift runs it since 4.10): it
 * makes no network itself — a namespace's first pod does, through the namespace SubnetsDriver — but
 * keeps an existing KuryrNetwork's `spec.nsLabels` equal to the namespace's labels (kuryr-np's
 * namespace selectors follow them), and deletes the KuryrNetwork when its namespace goes, so the
 * kuryrnetwork controller's finalizer frees the network before the namespace is gone.
 *
 * With `[kubernetes] pod_subnets_driver = namespace` this controller also installs that driver in
 * the context (kuryr-pods' port code asks `ctx.subnets` at each reconcile).
 */
import { isNotFound, kinds, objectKey, type Manager, type Request, type Result } from '../../kube/index.ts';
import { kuryrKinds } from '../api/index.ts';
import type { KuryrContext } from '../context.ts';
import { namespaceSubnets, nsLabelsOf } from '../network/namespace-driver.ts';

export const NAMESPACE_CONTROLLER = 'namespace';

/** Puts the namespace driver in the context when kuryr.conf asks for it (idempotent). */
export function installNamespaceSubnets(mgr: Manager, ctx: KuryrContext): void {
  if (ctx.options.kubernetes.podSubnetsDriver === 'namespace' && ctx.subnets.name !== 'namespace') {
    ctx.subnets = namespaceSubnets(mgr, ctx);
  }
}

export function registerNamespaceController(mgr: Manager, ctx: KuryrContext): void {
  installNamespaceSubnets(mgr, ctx);
  mgr
    .controller(NAMESPACE_CONTROLLER)
    .for(kinds.Namespace)
    // A KuryrNetwork made (by a pod) after its namespace's last change still gets its labels.
    .watches(kuryrKinds.KuryrNetwork, (kns) => [{ name: kns.metadata?.namespace ?? '' }])
    .complete((req, signal) => reconcile(mgr, req, signal));
}

function sameLabels(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

async function reconcile(mgr: Manager, req: Request, signal: AbortSignal): Promise<Result> {
  const name = req.name;
  const kns = await mgr.client.get(kuryrKinds.KuryrNetwork, { namespace: name, name }, { signal });
  if (!kns) return {};
  const ns = await mgr.client.get(kinds.Namespace, { name }, { signal });
  if (!ns || ns.metadata?.deletionTimestamp) {
    if (kns.metadata?.deletionTimestamp) return {};
    try {
      await mgr.api.delete(kuryrKinds.KuryrNetwork, objectKey(kns), { signal });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    return {};
  }
  const labels = nsLabelsOf(ns);
  if (kns.metadata?.deletionTimestamp || sameLabels(kns.spec.nsLabels ?? {}, labels)) return {};
  // Replaced whole, so a label removed from the namespace goes from nsLabels too.
  await mgr.api.patch(
    kuryrKinds.KuryrNetwork,
    objectKey(kns),
    'json',
    [{ op: 'add', path: '/spec/nsLabels', value: labels }],
    { signal },
  );
  return {};
}
