/**
 * Neutron v2.0 as a namespace bound to one ServiceClient: `client.network.ports.list({ device_id }, { signal })`.
 * The declarations and functions are exported too, for code that holds a ServiceClient
 * (`ports.get(sc, id)`, `addSubports(sc, trunkId, subPorts)`).
 */
import type { CallOptions } from '../../core/call-options.ts';
import type { ServiceClient } from '../../core/service-client.ts';
import { ExtensionCache, listExtensions } from './extensions.ts';
import { associateFloatingIp, disassociateFloatingIp, floatingIps } from './floating-ips.ts';
import { networks } from './networks.ts';
import { ports } from './ports.ts';
import { getQuota, getQuotaDetails } from './quotas.ts';
import type { RevisionOptions } from './resource.ts';
import {
  addExtraRoutes,
  addRouterInterface,
  clearRouterGateway,
  removeExtraRoutes,
  removeRouterInterface,
  routers,
  setRouterGateway,
  type ExternalGatewayInfo,
  type Route,
  type RouterInterfaceRef,
} from './routers.ts';
import { securityGroupRules } from './security-group-rules.ts';
import { securityGroups } from './security-groups.ts';
import { subnetPools } from './subnetpools.ts';
import { subnets } from './subnets.ts';
import {
  addTag,
  hasTag,
  listTags,
  removeAllTags,
  removeTag,
  replaceTags,
  type TaggableResource,
} from './tags.ts';
import { addSubports, getSubports, removeSubports, trunks, type SubPort } from './trunks.ts';

export * from './extensions.ts';
export * from './floating-ips.ts';
export * from './networks.ts';
export * from './ports.ts';
export * from './quotas.ts';
export * from './resource.ts';
export * from './routers.ts';
export * from './security-group-rules.ts';
export * from './security-groups.ts';
export * from './subnetpools.ts';
export * from './subnets.ts';
export * from './tags.ts';
export * from './trunks.ts';

export function networkV2(sc: ServiceClient) {
  const extensions = new ExtensionCache(sc);
  const { update: _noRuleUpdate, ...rules } = securityGroupRules.bind(sc);
  return {
    client: sc,
    networks: networks.bind(sc),
    subnets: subnets.bind(sc),
    /** Subnet pools; a subnet created with `subnetpool_id` and no `cidr` gets the pool's next free prefix. */
    subnetPools: subnetPools.bind(sc),
    /** Ports; `createBulk` is all or nothing. */
    ports: ports.bind(sc),
    trunks: {
      ...trunks.bind(sc),
      addSubports: (trunkId: string, subPorts: readonly SubPort[], o?: CallOptions) =>
        addSubports(sc, trunkId, subPorts, o),
      removeSubports: (trunkId: string, subPorts: readonly { port_id: string }[], o?: CallOptions) =>
        removeSubports(sc, trunkId, subPorts, o),
      getSubports: (trunkId: string, o?: CallOptions) => getSubports(sc, trunkId, o),
    },
    securityGroups: securityGroups.bind(sc),
    /** Rules cannot be updated: create the new one, delete the old. */
    securityGroupRules: rules,
    routers: {
      ...routers.bind(sc),
      addInterface: (routerId: string, ref: RouterInterfaceRef, o?: CallOptions) =>
        addRouterInterface(sc, routerId, ref, o),
      removeInterface: (routerId: string, ref: RouterInterfaceRef, o?: CallOptions) =>
        removeRouterInterface(sc, routerId, ref, o),
      setGateway: (routerId: string, gateway: ExternalGatewayInfo, o?: RevisionOptions) =>
        setRouterGateway(sc, routerId, gateway, o),
      clearGateway: (routerId: string, o?: RevisionOptions) => clearRouterGateway(sc, routerId, o),
      /** extraroute-atomic: adds routes server-side, next to whatever is there. */
      addExtraRoutes: (routerId: string, routes: readonly Route[], o?: CallOptions) =>
        addExtraRoutes(sc, routerId, routes, o),
      removeExtraRoutes: (routerId: string, routes: readonly Route[], o?: CallOptions) =>
        removeExtraRoutes(sc, routerId, routes, o),
    },
    floatingIps: {
      ...floatingIps.bind(sc),
      associate: (
        id: string,
        portId: string,
        o?: RevisionOptions & { fixedIpAddress?: string | undefined },
      ) => associateFloatingIp(sc, id, portId, o),
      disassociate: (id: string, o?: RevisionOptions) => disassociateFloatingIp(sc, id, o),
    },
    tags: {
      add: (resource: TaggableResource, id: string, tag: string, o?: CallOptions) =>
        addTag(sc, resource, id, tag, o),
      replace: (resource: TaggableResource, id: string, tags: readonly string[], o?: CallOptions) =>
        replaceTags(sc, resource, id, tags, o),
      remove: (resource: TaggableResource, id: string, tag: string, o?: CallOptions) =>
        removeTag(sc, resource, id, tag, o),
      removeAll: (resource: TaggableResource, id: string, o?: CallOptions) =>
        removeAllTags(sc, resource, id, o),
      list: (resource: TaggableResource, id: string, o?: CallOptions) => listTags(sc, resource, id, o),
      has: (resource: TaggableResource, id: string, tag: string, o?: CallOptions) =>
        hasTag(sc, resource, id, tag, o),
    },
    extensions: {
      /** Reads the list afresh. */
      list: (o?: CallOptions) => listExtensions(sc, o),
      /** Whether the deployment has an extension (`trunk`, `revision-if-match`, …); the list is read once per client. */
      has: (alias: string, o?: CallOptions) => extensions.has(alias, o),
    },
    quotas: {
      get: (projectId: string, o?: CallOptions) => getQuota(sc, projectId, o),
      getDetails: (projectId: string, o?: CallOptions) => getQuotaDetails(sc, projectId, o),
    },
  };
}

export type NetworkV2 = ReturnType<typeof networkV2>;
