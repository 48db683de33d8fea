/**
 * Writes a route plan to the Neutron router without ever losing a route someone else writes at
 * the same time:
 *
 * - with `extraroute-atomic`, one `remove_extraroutes` and one `add_extraroutes` call carry the
 *   whole plan (OCCM sends one call per route); Neutron edits the list server-side;
 * - without it, the list is read, changed and written back with `If-Match` on the router's
 *   revision (when Neutron has `revision-if-match`), and read again after a 412 (OCCM writes it
 *   back unconditionally under a process-local lock, which another writer does not see).
 *
 * Neutron refuses a whole batch for one bad route (a nexthop off the router's subnets, more than
 * `max_routes`): the adds are then retried one by one, so one Node's problem does not hold back
 * the others, and each refusal is reported against its route.
 */
import { isBadRequest, isPreconditionFailed, OpenStackHttpError } from '../../openstack/core/errors.ts';
import type { NetworkV2 } from '../../openstack/network/v2/index.ts';
import type { Route, Router } from '../../openstack/network/v2/routers.ts';
import { routeKey, type RouteEntry } from './plan.ts';

/** Rewrites of the whole list tried before giving up on a router that keeps changing. */
const MAX_REWRITES = 5;

export interface RouteWriteMode {
  /** Neutron has `extraroute-atomic`. */
  atomic: boolean;
  /** Neutron has `revision-if-match`: rewrites of the whole list are conditional. */
  ifMatch: boolean;
}

/** Routes Neutron refused, by `routeKey`, with its message. */
export type RouteFailures = Map<string, string>;

/** Neutron's own words for a refusal, else the error's. */
export function neutronMessage(err: unknown): string {
  if (OpenStackHttpError.is(err)) return err.serviceMessage ?? err.message;
  return err instanceof Error ? err.message : String(err);
}

const wire = (r: RouteEntry): Route => ({ destination: r.destination, nexthop: r.nexthop });

export class RouterRoutes {
  private readonly network: NetworkV2;
  private readonly routerId: string;
  private readonly mode: RouteWriteMode;

  constructor(network: NetworkV2, routerId: string, mode: RouteWriteMode) {
    this.network = network;
    this.routerId = routerId;
    this.mode = mode;
  }

  /** Removes `remove`, then adds `add`; resolves to the adds Neutron refused (400). */
  async apply(
    add: readonly RouteEntry[],
    remove: readonly RouteEntry[],
    signal: AbortSignal,
  ): Promise<RouteFailures> {
    const failures: RouteFailures = new Map();
    if (add.length === 0 && remove.length === 0) return failures;
    const write = this.mode.atomic
      ? (a: readonly RouteEntry[], r: readonly RouteEntry[]) => this.atomic(a, r, signal)
      : (a: readonly RouteEntry[], r: readonly RouteEntry[]) => this.rewrite(a, r, signal);
    try {
      await write(add, remove);
      return failures;
    } catch (err) {
      if (!isBadRequest(err) || add.length === 0) throw err;
      if (add.length === 1) {
        failures.set(routeKey(add[0]!), neutronMessage(err));
        return failures;
      }
    }
    // The batch was refused as a whole (and, atomic, after the removals went through).
    if (!this.mode.atomic) await write([], remove);
    for (const route of add) {
      try {
        await write([route], []);
      } catch (err) {
        if (!isBadRequest(err)) throw err;
        failures.set(routeKey(route), neutronMessage(err));
      }
    }
    return failures;
  }

  private async atomic(
    add: readonly RouteEntry[],
    remove: readonly RouteEntry[],
    signal: AbortSignal,
  ): Promise<void> {
    if (remove.length > 0)
      await this.network.routers.removeExtraRoutes(this.routerId, remove.map(wire), { signal });
    if (add.length > 0) await this.network.routers.addExtraRoutes(this.routerId, add.map(wire), { signal });
  }

  /** Read, change, write back at the revision read; again after a 412. */
  private async rewrite(
    add: readonly RouteEntry[],
    remove: readonly RouteEntry[],
    signal: AbortSignal,
  ): Promise<void> {
    const drop = new Set(remove.map(routeKey));
    for (let attempt = 0; attempt < MAX_REWRITES; attempt++) {
      const router: Router = await this.network.routers.get(this.routerId, { signal });
      const kept = router.routes.filter((r) => !drop.has(routeKey(r)));
      const have = new Set(kept.map(routeKey));
      const next = [...kept, ...add.filter((r) => !have.has(routeKey(r))).map(wire)];
      if (next.length === router.routes.length && kept.length === router.routes.length) return;
      try {
        await this.network.routers.update(
          this.routerId,
          { routes: next },
          { signal, ...(this.mode.ifMatch ? { ifRevision: router.revision_number } : {}) },
        );
        return;
      } catch (err) {
        if (!isPreconditionFailed(err)) throw err;
      }
    }
    throw new Error(
      `router ${this.routerId} changed under every one of ${MAX_REWRITES} route list rewrites; trying again next period`,
    );
  }
}
