/**
 * The route controller (k8s.io/cloud-provider `controllers/route` with OCCM's Routes, `[Route]
 * router-id`): the Neutron router carries one route per Node podCIDR, via the Node's InternalIP
 * of that family, and the Node's port lets the podCIDR through (an allowed address pair). Routes of
 * the cluster (destination in `--cluster-cidr`) that no Node asks for any more are removed with
 * their pairs; every other route on the router is left alone. A Node whose routes are all in
 * place gets `NetworkUnavailable=False` (`RouteCreated`); one that cannot have them gets
 * `NetworkUnavailable=True` (`NoRouteCreated`) and a `FailedToCreateRoute` Warning, as upstream.
 *
 * Each pass reads everything afresh (the Nodes from the cache, the router and the ports from
 * Neutron) and remembers nothing, so a restart, a second replica taking over, or a write that
 * failed half way is repaired by the next pass. One key (the router) makes passes serial; a Node
 * change triggers one at once, and upstream's `--route-reconciliation-period` (10 s) repeats it.
 *
 * Better than upstream where it costs nothing: all missing routes go in one `add_extraroutes` call
 * and all stale ones in one `remove_extraroutes` call (OCCM: one call per route, each followed by
 * a router GET); the fallback without `extraroute-atomic` writes with `If-Match`, so a route
 * someone else adds meanwhile is never lost; the Nodes' ports come from one list per 40 servers.
 */
import type { V1Node, V1NodeCondition } from '@kubernetes/client-node';
import type { Cidr } from '../../lib/cidr.ts';
import {
  fieldsChanged,
  kinds,
  metaTime,
  RetryAfterError,
  type Manager,
  type Predicate,
  type ReconcileContext,
  type Result,
} from '../../kube/index.ts';
import type { Logger } from '../../lib/log.ts';
import { isNotFound } from '../../openstack/core/errors.ts';
import type { Port } from '../../openstack/network/v2/ports.ts';
import type { LiveConfig } from '../config/types.ts';
import { changedSections } from '../secret/compare.ts';
import { serverIdForRegion } from '../../openstack/services/provider-id.ts';
import {
  hasFixedIp,
  hasPair,
  pairKey,
  portsOfServers,
  portWithIp,
  routerNetworkIds,
  updatePairs,
} from '../routes/node-ports.ts';
import {
  planRoutes,
  routeKey,
  type DesiredRoute,
  type RouteEntry,
  type RouteNode,
  type RoutePlan,
} from '../routes/plan.ts';
import { neutronMessage, RouterRoutes } from '../routes/router-routes.ts';
import type { OpenStackApi } from '../secret/rotating-client.ts';

export const ROUTE_CONTROLLER = 'route';

/** The Node condition the route controller owns. */
export const NETWORK_UNAVAILABLE = 'NetworkUnavailable';

/** Upstream's route controller reasons and messages, spelled as it writes them. */
export const RouteReason = {
  RouteCreated: 'RouteCreated',
  NoRouteCreated: 'NoRouteCreated',
  /** Warning Event on the Node. */
  FailedToCreateRoute: 'FailedToCreateRoute',
} as const;
const CREATED_MESSAGE = 'RouteController created a route';
const FAILED_MESSAGE = 'RouteController failed to create a route';

export interface RouteControllerOptions {
  /** `[Route] router-id` at start: the controller's key. Each pass reads the router id of the current config. */
  routerId: string;
  /** `--cluster-cidr`, parsed: which routes on the router are the cluster's. */
  clusterCidrs: readonly Cidr[];
  /** Upstream `--route-reconciliation-period` (10 s). */
  periodMs: number;
}

export function registerRouteController(
  mgr: Manager,
  os: OpenStackApi,
  config: LiveConfig,
  opts: RouteControllerOptions,
): void {
  const r = new RouteReconciler(mgr, os, config, opts);
  const controller = mgr
    .controller(ROUTE_CONTROLLER)
    .watches(kinds.Node, () => [{ name: opts.routerId }], { predicates: [routeRelevant] })
    .complete((_req, signal, ctx) => r.reconcile(signal, ctx));
  // The first pass runs even without any Node: routes of Nodes deleted while no CCM ran go too.
  controller.enqueue({ name: opts.routerId });
  // A rotated [Route] (another router) is applied by a pass now, not at the next period.
  config.onChange((next, previous) => {
    if (changedSections(previous, next).includes('[Route]')) controller.enqueue({ name: opts.routerId });
  });
}

/** What a route depends on, and the condition it writes; kubelet's heartbeats change none of it. */
const routeRelevant: Predicate<V1Node> = fieldsChanged((node) => [
  podCIDRs(node),
  internalIPs(node),
  node.spec?.providerID,
  conditionOf(node)?.status,
  conditionOf(node)?.reason,
]);

function podCIDRs(node: V1Node): string[] {
  const list = node.spec?.podCIDRs ?? [];
  if (list.length > 0) return list;
  return node.spec?.podCIDR ? [node.spec.podCIDR] : [];
}

function internalIPs(node: V1Node): string[] {
  return (node.status?.addresses ?? []).filter((a) => a.type === 'InternalIP').map((a) => a.address);
}

function conditionOf(node: V1Node): V1NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === NETWORK_UNAVAILABLE);
}

/** One Node's troubles in a pass, for its condition and Event. */
class Troubles {
  private readonly byNode = new Map<string, string[]>();

  add(node: string, message: string): void {
    const list = this.byNode.get(node) ?? [];
    list.push(message);
    this.byNode.set(node, list);
  }

  of(node: string): string[] | undefined {
    return this.byNode.get(node);
  }
}

class RouteReconciler {
  private readonly mgr: Manager;
  private readonly os: OpenStackApi;
  private readonly config: LiveConfig;
  private readonly opts: RouteControllerOptions;
  /** Ports already reported as without port security: once per process, not every period. */
  private readonly warnedPorts = new Set<string>();

  constructor(mgr: Manager, os: OpenStackApi, config: LiveConfig, opts: RouteControllerOptions) {
    this.mgr = mgr;
    this.os = os;
    this.config = config;
    this.opts = opts;
  }

  async reconcile(signal: AbortSignal, ctx: ReconcileContext): Promise<Result> {
    try {
      await this.pass(signal, ctx.log);
    } catch (err) {
      if (signal.aborted) throw err;
      // Upstream's loop runs every period whatever the last pass did; so does this one.
      const message = `couldn't reconcile node routes: ${neutronMessage(err)}`;
      throw new RetryAfterError(message, this.opts.periodMs, { cause: err });
    }
    return { requeueAfterMs: this.opts.periodMs };
  }

  private async pass(signal: AbortSignal, log: Logger): Promise<void> {
    const config = this.config.current();
    const routerId = config.route.routerId;
    if (!routerId) {
      // Removed from the config while running: nothing is ours to manage until it is set again.
      log.warn('[Route] router-id is no longer set: the routes are left as they are');
      return;
    }
    const network = this.os.network;
    const nodes = (await this.mgr.client.list(kinds.Node, { signal })).filter((n) => podCIDRs(n).length > 0);
    const atomic = await network.extensions.has('extraroute-atomic', { signal });
    if (!atomic && !(await network.extensions.has('extraroute', { signal }))) {
      throw new Error(
        'Neutron has neither the extraroute nor the extraroute-atomic extension: routes cannot be set',
      );
    }
    const ifMatch = await network.extensions.has('revision-if-match', { signal });
    const pairs = await network.extensions.has('allowed-address-pairs', { signal });
    const router = await network.routers.get(routerId, { signal }).catch((err: unknown) => {
      if (isNotFound(err)) throw new Error(`[Route] router-id ${routerId}: no such router`, { cause: err });
      throw err;
    });

    const views: RouteNode[] = nodes.map((n) => ({
      name: n.metadata!.name!,
      podCIDRs: podCIDRs(n),
      internalIPs: internalIPs(n),
    }));
    const plan = planRoutes(router.routes, views, this.opts.clusterCidrs);
    const troubles = new Troubles();
    for (const p of plan.problems) troubles.add(p.node, p.message);

    const ports = new NodePorts(this.os, routerId, config.cloud.regionName, nodes, signal);
    if (pairs) await ports.load();

    const remove = pairs ? await this.removePairs(plan, ports, { ifMatch, signal, log }) : plan.remove;
    const failures = await new RouterRoutes(network, routerId, { atomic, ifMatch }).apply(
      plan.add,
      remove,
      signal,
    );
    for (const r of remove) log.info(routeFields(r), 'deleted route');
    for (const r of plan.add) {
      const refused = failures.get(routeKey(r));
      if (refused === undefined) log.info({ ...routeFields(r), node: r.node }, 'created route');
      else troubles.add(r.node, `Could not create route ${r.destination} via ${r.nexthop}: ${refused}`);
    }

    if (pairs) await this.ensurePairs(plan.desired, failures, ports, troubles, { ifMatch, signal, log });
    await this.writeConditions(nodes, troubles, signal);
  }

  /**
   * Takes the pairs of the routes to remove off their ports, and answers the routes that may go.
   * Pairs go first: a pass that stops half way finds the route still there and takes its pair away
   * next time, where the other order would forget the pair for good. For the same reason a route
   * whose pair could not be removed stays until a later pass manages.
   */
  private async removePairs(
    plan: RoutePlan,
    ports: NodePorts,
    o: { ifMatch: boolean; signal: AbortSignal; log: Logger },
  ): Promise<RouteEntry[]> {
    const wanted = new Set<string>();
    for (const d of plan.desired) {
      const port = ports.ofNode(d);
      if (port) wanted.add(`${port.id} ${pairKey(d.destination)}`);
    }
    const removable: RouteEntry[] = [];
    for (const r of plan.remove) {
      const port = await ports.ofNexthop(r.nexthop);
      if (port && hasPair(port, r.destination) && !wanted.has(`${port.id} ${pairKey(r.destination)}`)) {
        try {
          await updatePairs(this.os.network, port, { remove: [r.destination] }, o);
          o.log.info({ port: port.id, ...routeFields(r) }, 'removed allowed address pair of a stale route');
        } catch (err) {
          if (o.signal.aborted) throw err;
          o.log.error(
            { err, port: port.id, ...routeFields(r) },
            'could not remove the allowed address pair; the route stays for now',
          );
          continue;
        }
      }
      removable.push(r);
    }
    return removable;
  }

  /** Every routed podCIDR is an allowed address pair of the port its route points at. */
  private async ensurePairs(
    desired: readonly DesiredRoute[],
    failures: ReadonlyMap<string, string>,
    ports: NodePorts,
    troubles: Troubles,
    o: { ifMatch: boolean; signal: AbortSignal; log: Logger },
  ): Promise<void> {
    const perPort = new Map<string, { port: Port; add: string[]; nodes: Set<string> }>();
    for (const d of desired) {
      if (failures.has(routeKey(d))) continue;
      const port = ports.ofNode(d) ?? (ports.serverOf(d.node) ? undefined : await ports.ofNexthop(d.nexthop));
      if (!port) {
        troubles.add(d.node, `no port with address ${d.nexthop} found for the route to ${d.destination}`);
        continue;
      }
      if (port.port_security_enabled === false) {
        // Nothing filters the pods' addresses on such a port; Neutron refuses pairs on it anyway.
        if (!this.warnedPorts.has(port.id)) {
          this.warnedPorts.add(port.id);
          o.log.warn({ port: port.id, node: d.node }, 'port security is off: no allowed address pair needed');
        }
        continue;
      }
      if (hasPair(port, d.destination)) continue;
      const entry = perPort.get(port.id) ?? { port, add: [], nodes: new Set<string>() };
      entry.add.push(d.destination);
      entry.nodes.add(d.node);
      perPort.set(port.id, entry);
    }
    for (const { port, add, nodes } of perPort.values()) {
      try {
        await updatePairs(this.os.network, port, { add }, { ifMatch: o.ifMatch, signal: o.signal });
        o.log.info({ port: port.id, pairs: add }, 'added allowed address pairs');
      } catch (err) {
        if (o.signal.aborted) throw err;
        for (const node of nodes) {
          troubles.add(node, `Could not allow ${add.join(', ')} on port ${port.id}: ${neutronMessage(err)}`);
        }
      }
    }
  }

  /** upstream updateNetworkingCondition: written only when it changes; a failure also as an Event. */
  private async writeConditions(
    nodes: readonly V1Node[],
    troubles: Troubles,
    signal: AbortSignal,
  ): Promise<void> {
    const now = metaTime(this.mgr.clock.now());
    for (const node of nodes) {
      const name = node.metadata!.name!;
      const problems = troubles.of(name);
      if (problems) {
        this.mgr.events.event(node, 'Warning', RouteReason.FailedToCreateRoute, problems.join('; '));
      }
      const ok = problems === undefined;
      const current = conditionOf(node);
      if (current?.status === (ok ? 'False' : 'True')) continue;
      // Plain JSON: the times go as metav1.Time strings, not the client type's Dates.
      const condition = {
        type: NETWORK_UNAVAILABLE,
        status: ok ? 'False' : 'True',
        reason: ok ? RouteReason.RouteCreated : RouteReason.NoRouteCreated,
        message: ok ? CREATED_MESSAGE : FAILED_MESSAGE,
        lastTransitionTime: now,
        lastHeartbeatTime: now,
      };
      try {
        // A strategic merge by condition type: kubelet's conditions are not touched.
        await this.mgr.api.patch(
          kinds.Node,
          { name },
          'strategic',
          { status: { conditions: [condition] } },
          { subresource: 'status', signal },
        );
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }
  }
}

function routeFields(r: RouteEntry): { destination: string; nexthop: string } {
  return { destination: r.destination, nexthop: r.nexthop };
}

/**
 * The ports of the Nodes' servers, read once per pass, and the router's networks for nexthops
 * with no Node's server behind them (read only when such a nexthop comes up).
 */
class NodePorts {
  private readonly os: OpenStackApi;
  private readonly routerId: string;
  private readonly signal: AbortSignal;
  private readonly servers = new Map<string, string>();
  private ports: Port[] = [];
  private networks: Promise<string[]> | undefined;

  constructor(
    os: OpenStackApi,
    routerId: string,
    region: string | undefined,
    nodes: readonly V1Node[],
    signal: AbortSignal,
  ) {
    this.os = os;
    this.routerId = routerId;
    this.signal = signal;
    for (const n of nodes) {
      const pid = n.spec?.providerID;
      if (!pid) continue;
      try {
        this.servers.set(n.metadata!.name!, serverIdForRegion(pid, region));
      } catch {
        // Another region's Node, or not ours: its port is searched by address like any other.
      }
    }
  }

  async load(): Promise<void> {
    this.ports = await portsOfServers(this.os.network, [...this.servers.values()], this.signal);
  }

  serverOf(node: string): string | undefined {
    return this.servers.get(node);
  }

  /** The port of the route's Node server that has the nexthop address. */
  ofNode(route: DesiredRoute): Port | undefined {
    const server = this.servers.get(route.node);
    if (!server) return undefined;
    return this.ports.find((p) => p.device_id === server && hasFixedIp(p, route.nexthop));
  }

  /** A Node's port with this address, else the one port on the router's networks with it. */
  async ofNexthop(ip: string): Promise<Port | undefined> {
    const own = this.ports.find((p) => hasFixedIp(p, ip));
    if (own) return own;
    this.networks ??= routerNetworkIds(this.os.network, this.routerId, this.signal);
    return portWithIp(this.os.network, ip, await this.networks, this.signal);
  }
}
