/**
 * What the route controller wants on the router, worked out without any I/O: one route per Node
 * podCIDR, via the Node's first InternalIP of the same family (OCCM's getAddrByNodeName), and
 * the difference with the router's routes.
 *
 * Ownership is upstream's isResponsibleForRoute: a route is the cluster's when its destination
 * overlaps `--cluster-cidr` (its first or last address is inside). Only those are ever removed, so
 * routes someone else put on the router stay whatever their nexthop. For the same reason a
 * podCIDR outside `--cluster-cidr` gets no route: the controller could not tell it as its own later.
 */
import {
  cidrContains,
  formatCidr,
  formatIp,
  parseCidr,
  parseIp,
  type Cidr,
  type Ip,
} from '../../lib/cidr.ts';

export interface RouteEntry {
  destination: string;
  nexthop: string;
}

/** The route controller's view of one Node. */
export interface RouteNode {
  name: string;
  podCIDRs: readonly string[];
  /** InternalIP addresses in status order. */
  internalIPs: readonly string[];
}

export interface DesiredRoute extends RouteEntry {
  node: string;
}

/** A podCIDR that cannot be routed, and why (the message of the Node's Warning Event). */
export interface RouteProblem {
  node: string;
  podCIDR: string;
  message: string;
}

export interface RoutePlan {
  /** Desired and not on the router, destinations and nexthops in canonical form. */
  add: DesiredRoute[];
  /** On the router, the cluster's, and no longer desired; as the router spells them. */
  remove: RouteEntry[];
  /** Every desired route (present or to add). */
  desired: DesiredRoute[];
  problems: RouteProblem[];
}

/** `--cluster-cidr`: one CIDR, or two of different families (dual stack), comma-separated. */
export function parseClusterCidrs(text: string): Cidr[] {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) throw new RangeError('--cluster-cidr is empty');
  if (items.length > 2) {
    throw new RangeError(`--cluster-cidr "${text}": at most two CIDRs (one IPv4, one IPv6) are accepted`);
  }
  const cidrs = items.map((item) => {
    const c = parseCidr(item);
    if (!c) throw new RangeError(`--cluster-cidr "${item}" is not a CIDR (write it as 10.244.0.0/16)`);
    return c;
  });
  if (cidrs.length === 2 && cidrs[0]!.family === cidrs[1]!.family) {
    throw new RangeError(`--cluster-cidr "${text}": two CIDRs must be one IPv4 and one IPv6 (dual stack)`);
  }
  return cidrs;
}

/** The canonical text of a route, so `10.244.1.0/24 via fd00::0001` equals `… via fd00::1`. */
export function routeKey(r: RouteEntry): string {
  const dest = parseCidr(r.destination);
  const hop = parseIp(r.nexthop);
  return `${dest ? formatCidr(dest) : r.destination} via ${hop ? formatIp(hop) : r.nexthop}`;
}

/** upstream isResponsibleForRoute: the destination's first or last address is in a cluster CIDR. */
export function isClusterRoute(clusterCidrs: readonly Cidr[], destination: string): boolean {
  const dest = parseCidr(destination);
  if (!dest) return false;
  const first: Ip = { family: dest.family, bytes: dest.network };
  const last: Ip = { family: dest.family, bytes: lastAddress(dest) };
  return clusterCidrs.some((c) => cidrContains(c, first) || cidrContains(c, last));
}

function lastAddress(c: Cidr): Uint8Array {
  const bits = c.family === 4 ? c.prefix + 96 : c.prefix;
  return Uint8Array.from(c.network, (b, i) => {
    const left = bits - i * 8;
    const mask = left >= 8 ? 0xff : left <= 0 ? 0 : (0xff << (8 - left)) & 0xff;
    return b | (~mask & 0xff);
  });
}

/** Routes the Nodes ask for, and the podCIDRs that cannot have one. */
export function desiredRoutes(
  nodes: readonly RouteNode[],
  clusterCidrs: readonly Cidr[],
): { routes: DesiredRoute[]; problems: RouteProblem[] } {
  const routes: DesiredRoute[] = [];
  const problems: RouteProblem[] = [];
  for (const node of nodes) {
    for (const podCIDR of node.podCIDRs) {
      const dest = parseCidr(podCIDR);
      const problem = (message: string) => problems.push({ node: node.name, podCIDR, message });
      if (!dest) {
        problem(`podCIDR "${podCIDR}" is not a CIDR`);
        continue;
      }
      if (!isClusterRoute(clusterCidrs, podCIDR)) {
        problem(
          `podCIDR ${podCIDR} is outside --cluster-cidr ${clusterCidrs.map(formatCidr).join(',')}; no route is created for it`,
        );
        continue;
      }
      const hop = node.internalIPs.map((a) => parseIp(a)).find((ip): ip is Ip => ip?.family === dest.family);
      if (!hop) {
        problem(`no InternalIP of IPv${dest.family} to route podCIDR ${podCIDR} to`);
        continue;
      }
      routes.push({ node: node.name, destination: formatCidr(dest), nexthop: formatIp(hop) });
    }
  }
  return { routes, problems };
}

/** The writes that take the router from `current` to what the Nodes ask for. */
export function planRoutes(
  current: readonly RouteEntry[],
  nodes: readonly RouteNode[],
  clusterCidrs: readonly Cidr[],
): RoutePlan {
  const { routes: desired, problems } = desiredRoutes(nodes, clusterCidrs);
  const wanted = new Set(desired.map(routeKey));
  const present = new Set(current.map(routeKey));
  const seen = new Set<string>();
  const add = desired.filter((r) => {
    const key = routeKey(r);
    // Two Nodes given the same podCIDR via the same address would be one route, added once.
    if (present.has(key) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const remove = current.filter(
    (r) => isClusterRoute(clusterCidrs, r.destination) && !wanted.has(routeKey(r)),
  );
  return { add, remove, desired, problems };
}
