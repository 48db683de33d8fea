/**
 * Finding the load balancer of an identity: by known id, else by the deterministic name, else by a
 * legacy name (adopted). Load balancers on their way out (PENDING_DELETE, DELETED) are not candidates,
 * so a Service deleted and recreated quickly gets a new one instead of the dying one. Several
 * candidates under one name is an answer of its own: the engine refuses to pick (and never creates a
 * third), as OCCM's ErrMultipleResults does.
 */
import { isNotFound } from '../../core/errors.ts';
import type { LoadBalancer } from '../../loadbalancer/v2/loadbalancers.ts';
import type { LoadBalancerApi } from './api.ts';
import type { CallOptions, LoadBalancerIdentity } from './types.ts';

export type FindResult =
  | { kind: 'none' }
  | {
      kind: 'found';
      lb: LoadBalancer;
      /** The name is ours (current, legacy, or alsoNamed); false for a load balancer shared by id. */
      owned: boolean;
      how: 'id' | 'name' | 'legacy';
    }
  | { kind: 'multiple'; name: string; ids: string[] };

const GONE = new Set(['PENDING_DELETE', 'DELETED']);

export interface FindOptions extends CallOptions {
  /** remove() wants a load balancer being deleted too, to report Deleting until it is gone. */
  includeDeleting?: boolean | undefined;
}

export async function findLoadBalancer(
  api: LoadBalancerApi,
  identity: LoadBalancerIdentity,
  options: FindOptions = {},
): Promise<FindResult> {
  const { signal } = options;
  const alive = (lb: LoadBalancer) => options.includeDeleting || !GONE.has(lb.provisioning_status);
  const ours = (lb: LoadBalancer) =>
    lb.name === identity.name || isLegacy(identity, lb.name) || (identity.alsoNamed?.(lb.name) ?? false);

  if (identity.id) {
    const lb = await api.loadBalancer.loadBalancers.get(identity.id, { signal }).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    // A recorded id whose load balancer is gone (deleted to recreate it after ERROR, or by hand)
    // falls through to the name, so the record heals instead of pinning a dead id.
    if (lb && alive(lb)) return { kind: 'found', lb, owned: ours(lb), how: 'id' };
  }

  const names: [string, 'name' | 'legacy'][] = [
    [identity.name, 'name'],
    ...(identity.legacyNames ?? [])
      .filter((n) => n !== identity.name)
      .map((n): [string, 'legacy'] => [n, 'legacy']),
  ];
  // One round trip for every name: a lookup by name is either the first (nothing recorded yet,
  // where each name is asked anyway) or the last of a deletion (the recorded id is gone).
  const lists = await Promise.all(
    names.map(([name]) => api.loadBalancer.loadBalancers.list({ name }, { signal }).all()),
  );
  for (const [i, [name, how]] of names.entries()) {
    const found = lists[i]!.filter(alive);
    if (found.length > 1) return { kind: 'multiple', name, ids: found.map((lb) => lb.id) };
    const lb = found[0];
    if (lb) return { kind: 'found', lb, owned: true, how };
  }
  return { kind: 'none' };
}

function isLegacy(identity: LoadBalancerIdentity, name: string): boolean {
  return (identity.legacyNames ?? []).includes(name);
}

/** Tags on the load balancer that name other identities sharing it. */
export function foreignTags(identity: LoadBalancerIdentity, tags: readonly string[] | undefined): string[] {
  const prefix = identity.sharedTagPrefix;
  if (prefix === undefined) return [];
  return (tags ?? []).filter((t) => t.startsWith(prefix) && t !== identity.name);
}
