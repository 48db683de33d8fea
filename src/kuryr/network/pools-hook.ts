/**
 * The seam between namespace networks and port pools: before a namespace's network is deleted,
 * its pools must give up their ports (upstream's `delete_network_pools(net_id)`, called by the
 * KuryrNetwork handler's finalize). The pool code (kuryr-pods) registers how it does that for a
 * context; the kuryrnetwork controller calls it. Without a registration, nothing is called and the
 * teardown's own leftover pass (our unreferenced ports, off their trunk) does the freeing.
 */
import type { KuryrContext } from '../context.ts';

/** Frees every pool of `networkId`: its ports off their trunks and deleted; resolves once done. */
export type ReleaseNetworkPools = (networkId: string, signal: AbortSignal) => Promise<void>;

const hooks = new WeakMap<KuryrContext, ReleaseNetworkPools>();

/** Called by the pool code at its registration. */
export function setNetworkPoolsRelease(ctx: KuryrContext, release: ReleaseNetworkPools): void {
  hooks.set(ctx, release);
}

export function networkPoolsRelease(ctx: KuryrContext): ReleaseNetworkPools | undefined {
  return hooks.get(ctx);
}
