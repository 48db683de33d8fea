/**
 * Discovery documents: `/version`, legacy discovery (`/api` APIVersions, `/apis` APIGroupList,
 * `/apis/<group>` APIGroup, `/api/v1` and `/apis/<group>/<version>` APIResourceList with verbs,
 * scope, kind, short names, categories and subresources) and aggregated discovery
 * (`apidiscovery.k8s.io/v2`, what kubectl 1.32 asks for first).
 */
import { createHash } from 'node:crypto';
import type { Obj } from './json.ts';
import type { Registry } from './registry.ts';
import type { ResourceDef } from './types.ts';

export interface VersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
}

export const DEFAULT_VERSION: VersionInfo = { major: '1', minor: '32', gitVersion: 'v1.32.4+shiftstack' };

export function versionDoc(v: VersionInfo): Obj {
  return {
    major: v.major,
    minor: v.minor,
    gitVersion: v.gitVersion,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2025-04-22T00:00:00Z',
    goVersion: 'go1.23.8',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

const SUB_VERBS: Record<string, string[]> = {
  status: ['get', 'patch', 'update'],
  scale: ['get', 'patch', 'update'],
  finalize: ['update'],
  token: ['create'],
  eviction: ['create'],
};

function subKind(def: ResourceDef, sub: string): { group: string; version: string; kind: string } {
  if (sub === 'scale') return { group: 'autoscaling', version: 'v1', kind: 'Scale' };
  if (sub === 'token') return { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' };
  if (sub === 'eviction') return { group: 'policy', version: 'v1', kind: 'Eviction' };
  return { group: def.group, version: def.version, kind: def.kind };
}

/** A short stable hash, as `storageVersionHash` is. */
function hash(s: string): string {
  return createHash('sha256').update(s).digest('base64').slice(0, 11);
}

export function apiVersions(serverAddress: string): Obj {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groupEntry(name: string, versions: string[]): Obj {
  const gv = (v: string) => ({ groupVersion: `${name}/${v}`, version: v });
  return { name, versions: versions.map(gv), preferredVersion: gv(versions[0] ?? 'v1') };
}

export function apiGroupList(registry: Registry): Obj {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: registry.groups().map((g) => groupEntry(g.name, g.versions)),
  };
}

export function apiGroup(registry: Registry, group: string): Obj | undefined {
  const g = registry.groups().find((x) => x.name === group);
  return g ? { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(g.name, g.versions) } : undefined;
}

export function apiResourceList(registry: Registry, group: string, version: string): Obj | undefined {
  const defs = registry.resources(group, version);
  if (defs.length === 0) return undefined;
  const resources: Obj[] = [];
  for (const d of defs) {
    resources.push({
      name: d.resource,
      singularName: d.singular,
      namespaced: d.namespaced,
      kind: d.kind,
      verbs: d.verbs,
      ...(d.shortNames.length ? { shortNames: d.shortNames } : {}),
      ...(d.categories.length ? { categories: d.categories } : {}),
      storageVersionHash: hash(`${d.storageKey}`),
    });
    for (const sub of [...d.subresources].sort()) {
      const k = subKind(d, sub);
      resources.push({
        name: `${d.resource}/${sub}`,
        singularName: '',
        namespaced: d.namespaced,
        ...(k.group !== d.group || k.version !== d.version ? { group: k.group, version: k.version } : {}),
        kind: k.kind,
        verbs: SUB_VERBS[sub] ?? ['get'],
      });
    }
  }
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: group ? `${group}/${version}` : version,
    resources,
  };
}

function discoveryResource(d: ResourceDef): Obj {
  return {
    resource: d.resource,
    responseKind: { group: d.group, version: d.version, kind: d.kind },
    scope: d.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: d.singular,
    verbs: d.verbs,
    ...(d.shortNames.length ? { shortNames: d.shortNames } : {}),
    ...(d.categories.length ? { categories: d.categories } : {}),
    ...(d.subresources.length
      ? {
          subresources: [...d.subresources].sort().map((sub) => ({
            subresource: sub,
            responseKind: subKind(d, sub),
            verbs: SUB_VERBS[sub] ?? ['get'],
          })),
        }
      : {}),
  };
}

function discoveryGroup(registry: Registry, name: string, versions: string[]): Obj {
  return {
    metadata: name ? { name, creationTimestamp: null } : { creationTimestamp: null },
    versions: versions.map((v) => ({
      version: v,
      resources: registry.resources(name, v).map(discoveryResource),
      freshness: 'Current',
    })),
  };
}

/** Aggregated discovery for `/api` (legacy: true) or `/apis`, as APIGroupDiscoveryList. */
export function aggregatedDiscovery(registry: Registry, legacy: boolean, apiVersion: 'v2' | 'v2beta1'): Obj {
  const items = legacy
    ? [discoveryGroup(registry, '', ['v1'])]
    : registry.groups().map((g) => discoveryGroup(registry, g.name, g.versions));
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${apiVersion}`,
    metadata: {},
    items,
  };
}
