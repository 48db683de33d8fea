/** Placement on `/placement`: the fake driver's compute node, its inventory, traits and allocations. */
import type { EmulatedCloud } from '../core/cloud.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import { placementErrorRenderer } from './errors.ts';
import { Microversions } from './microversion.ts';
import { placementRoutes } from './routes.ts';
import { PlacementStore } from './store.ts';

export { PlacementStore, type ConsumerRecord, type ProviderRecord } from './store.ts';

/** The hypervisor of the emulated cloud, as nova-compute registers it. */
export const COMPUTE_NODE_NAME = 'compute-0';
/**
 * Its provider uuid, which Nova also uses as the compute node (hypervisor) id from 2.53. Fixed, and
 * equal to the recorded cloud's, so provider-keyed answers compare key for key with the samples.
 */
export const COMPUTE_NODE_UUID = 'ecd831fd-cda0-47aa-bcd5-e0fe136cd0b6';

export function registerPlacement(cloud: EmulatedCloud): PlacementStore {
  const store = new PlacementStore(() => cloud.changed());
  store.seedComputeNode(COMPUTE_NODE_NAME, COMPUTE_NODE_UUID);
  const mv = new Microversions();
  cloud.register(
    {
      name: 'placement',
      type: 'placement',
      prefix: '/placement',
      catalogPath: '',
      routes: placementRoutes(store, mv),
      renderError: placementErrorRenderer(mv),
      before: (req: SimRequest) => mv.negotiate(req),
      decorate: (req: SimRequest, res: SimResponse) => {
        cacheHeaders(mv.minor(req), res);
        mv.decorate(req, res);
      },
    },
    { persistent: store },
  );
  return store;
}

/** From 1.15 successful reads say when their data last changed and that it must not be cached. */
function cacheHeaders(minor: number, res: SimResponse): void {
  const headers = res.headers;
  if (!headers?.['last-modified']) return;
  if (minor >= 15 && res.status === 200) {
    res.headers = { ...headers, 'cache-control': 'no-cache' };
    return;
  }
  const { 'last-modified': _dropped, ...rest } = headers;
  res.headers = rest;
}
