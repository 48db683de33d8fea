/**
 * Neutron routers: the external gateway is a field of the router; interfaces are actions.
 * https://docs.openstack.org/api-ref/network/v2/#routers-routers
 */
import type { CallOptions } from '../../core/call-options.ts';
import { unwrap } from '../../core/resource.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { neutronResource, type ListParams, type RevisionOptions, type TagFilters } from './resource.ts';

export interface ExternalGatewayInfo {
  network_id: string;
  enable_snat?: boolean;
  external_fixed_ips?: { subnet_id?: string; ip_address?: string }[];
}

export interface Route {
  destination: string;
  nexthop: string;
}

export interface Router {
  id: string;
  name: string;
  description: string;
  project_id: string;
  admin_state_up: boolean;
  status: string;
  external_gateway_info: ExternalGatewayInfo | null;
  routes: Route[];
  distributed?: boolean;
  ha?: boolean;
  availability_zone_hints?: string[];
  availability_zones?: string[];
  flavor_id?: string | null;
  tags: string[];
  created_at?: string;
  updated_at?: string;
  revision_number: number;
}

interface RouterWritable {
  name?: string;
  description?: string;
  admin_state_up?: boolean;
  external_gateway_info?: ExternalGatewayInfo | Record<string, never> | null;
  distributed?: boolean;
  ha?: boolean;
}

/** Fields not declared here are sent as given (Neutron rejects unknown ones with a 400). */
export interface RouterCreateOpts extends RouterWritable {
  availability_zone_hints?: string[];
  flavor_id?: string;
  project_id?: string;
  [field: string]: unknown;
}

export interface RouterUpdateOpts extends RouterWritable {
  routes?: Route[];
  [field: string]: unknown;
}

export interface RouterListQuery extends ListParams, TagFilters {
  id?: string | readonly string[];
  name?: string | readonly string[];
  project_id?: string;
  status?: string;
  admin_state_up?: boolean;
  description?: string;
}

export const routers = neutronResource<Router, RouterCreateOpts, RouterUpdateOpts, RouterListQuery>({
  path: 'routers',
  key: 'router',
  collection: 'routers',
  label: 'router',
});

/** Which interface to add or remove: a subnet (the router takes its gateway IP) or a port. */
export type RouterInterfaceRef = { subnet_id: string } | { port_id: string };

/** What add/remove_router_interface answer (not wrapped). */
export interface RouterInterfaceInfo {
  id: string;
  project_id?: string;
  port_id: string;
  network_id: string;
  subnet_id: string;
  subnet_ids: string[];
}

/** `PUT /v2.0/routers/{id}/add_router_interface`; a subnet already attached is a 400. */
export function addRouterInterface(
  sc: ServiceClient,
  routerId: string,
  ref: RouterInterfaceRef,
  options: CallOptions = {},
): Promise<RouterInterfaceInfo> {
  return routerInterface(sc, routerId, 'add', ref, options);
}

/** `PUT /v2.0/routers/{id}/remove_router_interface`; 404 when that interface is not on the router. */
export function removeRouterInterface(
  sc: ServiceClient,
  routerId: string,
  ref: RouterInterfaceRef,
  options: CallOptions = {},
): Promise<RouterInterfaceInfo> {
  return routerInterface(sc, routerId, 'remove', ref, options);
}

/** The two interface actions differ only in their verb, which names both the path and the metrics label. */
async function routerInterface(
  sc: ServiceClient,
  routerId: string,
  verb: 'add' | 'remove',
  ref: RouterInterfaceRef,
  options: CallOptions,
): Promise<RouterInterfaceInfo> {
  const res = await sc.request<RouterInterfaceInfo>({
    method: 'PUT',
    path: `routers/${encodeURIComponent(routerId)}/${verb}_router_interface`,
    body: ref,
    label: `router_${verb}_interface`,
    signal: options.signal,
  });
  return res.body;
}

/**
 * `PUT /v2.0/routers/{id}/add_extraroutes` (the `extraroute-atomic` extension) → the router with
 * its routes. Neutron adds them in one transaction next to the ones already there, so a route
 * someone else adds meanwhile is never lost; one already present is not added twice. A nexthop
 * outside the router's subnets, or more routes than `max_routes`, is a 400 and nothing is added.
 */
export function addExtraRoutes(
  sc: ServiceClient,
  routerId: string,
  routes: readonly Route[],
  options: CallOptions = {},
): Promise<Router> {
  return extraRoutes(sc, routerId, 'add', routes, options);
}

/** `PUT /v2.0/routers/{id}/remove_extraroutes`: removes exactly these routes; one not there is ignored. */
export function removeExtraRoutes(
  sc: ServiceClient,
  routerId: string,
  routes: readonly Route[],
  options: CallOptions = {},
): Promise<Router> {
  return extraRoutes(sc, routerId, 'remove', routes, options);
}

async function extraRoutes(
  sc: ServiceClient,
  routerId: string,
  verb: 'add' | 'remove',
  routes: readonly Route[],
  options: CallOptions,
): Promise<Router> {
  const res = await sc.request<Record<string, Router>>({
    method: 'PUT',
    path: `routers/${encodeURIComponent(routerId)}/${verb}_extraroutes`,
    body: { router: { routes: routes.map((r) => ({ destination: r.destination, nexthop: r.nexthop })) } },
    label: `router_${verb}_extraroutes`,
    signal: options.signal,
  });
  return unwrap(res.body, 'router');
}

/** Sets the external gateway (an update of `external_gateway_info`). */
export function setRouterGateway(
  sc: ServiceClient,
  routerId: string,
  gateway: ExternalGatewayInfo,
  options: RevisionOptions = {},
): Promise<Router> {
  return routers.update(sc, routerId, { external_gateway_info: gateway }, options);
}

/** Removes the external gateway: Neutron reads an empty `external_gateway_info` as "none". */
export function clearRouterGateway(
  sc: ServiceClient,
  routerId: string,
  options: RevisionOptions = {},
): Promise<Router> {
  return routers.update(sc, routerId, { external_gateway_info: {} }, options);
}
