/**
 * OpenStackCluster and OpenStackClusterTemplate, v1beta1 ↔ v1beta2 (CAPO main
 * `api/v1beta1/conversion.go`, `docs/book/src/topics/crd-changes/v1beta1-to-v1beta2.md`):
 *
 * - apiServerLoadBalancer, disableAPIServerFloatingIP, apiServerFloatingIP, apiServerFixedIP and
 *   apiServerPort ↔ `apiServer.{managedLoadBalancer, enableFloatingIP, floatingIP, fixedIP, port}`;
 * - networkMTU, disablePortSecurity ↔ `managedNetwork.{mtu, enablePortSecurity}`;
 * - externalRouterIPs ↔ `managedRouter.externalIPs`; disableExternalNetwork ↔ enableExternalNetwork;
 * - managedSecurityGroups.allNodesSecurityGroupRules ↔ clusterNodesSecurityGroupRules;
 * - the bastion's machine spec as an OpenStackMachine's;
 * - status: apiServerLoadBalancer ↔ apiServerManagedLoadBalancer, failureDomains map ↔ list
 *   (sorted by name), and the changes every kind shares (./status.ts).
 *
 * A v1beta2 struct that converts to nothing in v1beta1 (an empty `apiServer`, say) is kept for
 * the way back, and so is a v1beta1 value with no v1beta2 spelling (an empty externalRouterIPs).
 */
import { type Carry, isObj, type Json } from './carry.ts';
import { rename, renameNegated, updateObject } from './fields.ts';
import { machineSpecDown, machineSpecUp, resolvedDown, resolvedUp, templateSpec } from './machine.ts';
import { conditionsDown, conditionsUp, deprecatedStatusDown, deprecatedStatusUp } from './status.ts';

/** v1beta1 field → field of `apiServer` (negated for disableAPIServerFloatingIP). */
const API_SERVER_FIELDS = [
  ['apiServerLoadBalancer', 'managedLoadBalancer'],
  ['apiServerFloatingIP', 'floatingIP'],
  ['apiServerFixedIP', 'fixedIP'],
  ['apiServerPort', 'port'],
] as const;

/**
 * Gathers flat v1beta1 fields into the v1beta2 struct `key` (built by `gather`); when there are
 * none, brings back a struct kept by an earlier conversion.
 */
function gatherInto(spec: Json, carry: Carry, path: string, key: string, gather: () => Json): void {
  const struct = gather();
  if (Object.keys(struct).length > 0) spec[key] = struct;
  else {
    const taken = carry.take(`${path}.${key}`);
    if (taken !== undefined) spec[key] = taken;
  }
}

export function clusterSpecUp(spec: Json, carry: Carry, path: string): Json {
  gatherInto(spec, carry, path, 'apiServer', () => {
    const api: Json = {};
    for (const [from, to] of API_SERVER_FIELDS) {
      if (spec[from] === undefined) continue;
      api[to] = spec[from];
      delete spec[from];
    }
    const disabled = spec.disableAPIServerFloatingIP;
    if (disabled !== undefined) api.enableFloatingIP = typeof disabled === 'boolean' ? !disabled : disabled;
    delete spec.disableAPIServerFloatingIP;
    return api;
  });
  gatherInto(spec, carry, path, 'managedNetwork', () => {
    const net: Json = {};
    if (spec.networkMTU !== undefined) net.mtu = spec.networkMTU;
    delete spec.networkMTU;
    const disabled = spec.disablePortSecurity;
    if (disabled !== undefined) net.enablePortSecurity = typeof disabled === 'boolean' ? !disabled : disabled;
    delete spec.disablePortSecurity;
    return net;
  });
  gatherInto(spec, carry, path, 'managedRouter', () => {
    const ips = spec.externalRouterIPs;
    if (ips === undefined) return {};
    delete spec.externalRouterIPs;
    if (Array.isArray(ips) && ips.length > 0) return { externalIPs: ips };
    carry.keep(`${path}.externalRouterIPs`, ips);
    return {};
  });
  renameNegated(spec, 'disableExternalNetwork', 'enableExternalNetwork');
  updateObject(spec, 'managedSecurityGroups', (m) => {
    rename(m, 'allNodesSecurityGroupRules', 'clusterNodesSecurityGroupRules');
    return m;
  });
  updateObject(spec, 'bastion', (b) => {
    updateObject(b, 'spec', (s) => machineSpecUp(s, carry, `${path}.bastion.spec`));
    return b;
  });
  return spec;
}

/** Spreads a v1beta2 struct into flat v1beta1 fields; keeps it whole when it spreads to nothing. */
function spreadFrom(spec: Json, carry: Carry, path: string, key: string, spread: (s: Json) => number): void {
  const struct = spec[key];
  if (struct === undefined) return;
  delete spec[key];
  const n = isObj(struct) ? spread(struct) : 0;
  if (n === 0) carry.keep(`${path}.${key}`, struct);
}

export function clusterSpecDown(spec: Json, carry: Carry, path: string): Json {
  spreadFrom(spec, carry, path, 'apiServer', (api) => {
    let n = 0;
    for (const [to, from] of API_SERVER_FIELDS) {
      if (api[from] === undefined) continue;
      spec[to] = api[from];
      n++;
    }
    const enabled = api.enableFloatingIP;
    if (enabled !== undefined) {
      spec.disableAPIServerFloatingIP = typeof enabled === 'boolean' ? !enabled : enabled;
      n++;
    }
    return n;
  });
  spreadFrom(spec, carry, path, 'managedNetwork', (net) => {
    let n = 0;
    if (net.mtu !== undefined) {
      spec.networkMTU = net.mtu;
      n++;
    }
    const enabled = net.enablePortSecurity;
    if (enabled !== undefined) {
      spec.disablePortSecurity = typeof enabled === 'boolean' ? !enabled : enabled;
      n++;
    }
    return n;
  });
  spreadFrom(spec, carry, path, 'managedRouter', (router) => {
    const ips = router.externalIPs;
    if (!Array.isArray(ips) || ips.length === 0) return 0;
    spec.externalRouterIPs = ips;
    return 1;
  });
  if (spec.externalRouterIPs === undefined) {
    const taken = carry.take(`${path}.externalRouterIPs`);
    if (taken !== undefined) spec.externalRouterIPs = taken;
  }
  renameNegated(spec, 'enableExternalNetwork', 'disableExternalNetwork');
  updateObject(spec, 'managedSecurityGroups', (m) => {
    rename(m, 'clusterNodesSecurityGroupRules', 'allNodesSecurityGroupRules');
    return m;
  });
  updateObject(spec, 'bastion', (b) => {
    updateObject(b, 'spec', (s) => machineSpecDown(s, carry, `${path}.bastion.spec`));
    return b;
  });
  return spec;
}

/** v1beta1's map by name → v1beta2's list, sorted by name unless a kept order still fits. */
function failureDomainsUp(s: Json, carry: Carry): void {
  const fds = s.failureDomains;
  if (!isObj(fds)) return;
  let names = Object.keys(fds).sort();
  const kept = carry.take('status.failureDomains');
  if (
    Array.isArray(kept) &&
    kept.length === names.length &&
    [...(kept as unknown[])].map(String).sort().join('\n') === names.join('\n')
  ) {
    names = (kept as unknown[]).map(String);
  }
  s.failureDomains = names.map((name) => ({ name, ...(isObj(fds[name]) ? fds[name] : {}) }));
}

function failureDomainsDown(s: Json, carry: Carry): void {
  const list = s.failureDomains;
  if (!Array.isArray(list)) return;
  const map: Json = {};
  const names: string[] = [];
  for (const fd of list) {
    if (!isObj(fd) || typeof fd.name !== 'string') continue;
    const { name, ...rest } = fd;
    map[name] = rest;
    names.push(name);
  }
  if (names.join('\n') !== [...names].sort().join('\n')) carry.keep('status.failureDomains', names);
  s.failureDomains = map;
}

export function openStackClusterUp(o: Json, carry: Carry): void {
  updateObject(o, 'spec', (s) => clusterSpecUp(s, carry, 'spec'));
  updateObject(o, 'status', (s) => {
    deprecatedStatusUp(s, carry);
    conditionsUp(s, carry, 'status.conditions');
    rename(s, 'apiServerLoadBalancer', 'apiServerManagedLoadBalancer');
    failureDomainsUp(s, carry);
    updateObject(s, 'bastion', (b) => {
      updateObject(b, 'resolved', resolvedUp);
      return b;
    });
    updateObject(s, 'acceptedSpec', (a) => clusterSpecUp(a, carry, 'status.acceptedSpec'));
    return s;
  });
}

export function openStackClusterDown(o: Json, carry: Carry): void {
  updateObject(o, 'spec', (s) => clusterSpecDown(s, carry, 'spec'));
  updateObject(o, 'status', (s) => {
    conditionsDown(s, carry, 'status.conditions');
    deprecatedStatusDown(s, carry);
    rename(s, 'apiServerManagedLoadBalancer', 'apiServerLoadBalancer');
    failureDomainsDown(s, carry);
    updateObject(s, 'bastion', (b) => {
      updateObject(b, 'resolved', resolvedDown);
      return b;
    });
    updateObject(s, 'acceptedSpec', (a) => clusterSpecDown(a, carry, 'status.acceptedSpec'));
    return s;
  });
}

export function openStackClusterTemplateUp(o: Json, carry: Carry): void {
  templateSpec(o, (s) => clusterSpecUp(s, carry, 'spec.template.spec'));
}

export function openStackClusterTemplateDown(o: Json, carry: Carry): void {
  templateSpec(o, (s) => clusterSpecDown(s, carry, 'spec.template.spec'));
}
