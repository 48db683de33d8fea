/**
 * Which resources the emulator serves: the built-in ones and, as CRDs come and go, custom ones.
 * Discovery, OpenAPI, routing and the garbage collector's owner lookups all read from here, and
 * `generation` changes whenever the set changes (discovery ETags, kubectl cache invalidation).
 */
import type { ResourceDef } from './types.ts';

/** Built-in groups in the order the real server lists them in `/apis`. */
const GROUP_ORDER = [
  'apps',
  'events.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'batch',
  'networking.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'scheduling.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
];

export interface GroupInfo {
  name: string;
  /** Versions, preferred first. */
  versions: string[];
}

/** Kubernetes version priority: GA before beta before alpha, higher numbers first (`v2 > v1 > v1beta2`). */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return { ok: false, major: 0, stage: 0, minor: 0 };
    const stage = m[2] === 'alpha' ? 1 : m[2] === 'beta' ? 2 : 3;
    return { ok: true, major: Number(m[1]), stage, minor: Number(m[3] ?? 0) };
  };
  const pa = parse(a);
  const pb = parse(b);
  if (pa.ok !== pb.ok) return pa.ok ? -1 : 1;
  if (!pa.ok) return a < b ? -1 : a > b ? 1 : 0;
  if (pa.stage !== pb.stage) return pb.stage - pa.stage;
  if (pa.major !== pb.major) return pb.major - pa.major;
  return pb.minor - pa.minor;
}

export class Registry {
  private readonly defs = new Map<string, ResourceDef>();
  /** Bumped on every change, for discovery ETags. */
  generation = 0;

  private static key(group: string, version: string, resource: string): string {
    return `${group}/${version}/${resource}`;
  }

  add(def: ResourceDef): void {
    this.defs.set(Registry.key(def.group, def.version, def.resource), def);
    this.generation++;
  }

  /** Removes every version of a resource (a CRD deleted or changed). */
  removeResource(group: string, resource: string): void {
    for (const [k, d] of this.defs) if (d.group === group && d.resource === resource) this.defs.delete(k);
    this.generation++;
  }

  get(group: string, version: string, resource: string): ResourceDef | undefined {
    return this.defs.get(Registry.key(group, version, resource));
  }

  all(): ResourceDef[] {
    return [...this.defs.values()];
  }

  /** The served resource for an `apiVersion` and `kind` (owner references, apply bodies). */
  byKind(apiVersion: string, kind: string): ResourceDef | undefined {
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    for (const d of this.defs.values())
      if (d.group === group && d.version === version && d.kind === kind) return d;
    return undefined;
  }

  /** Any served version of a group and kind: owner references may name a version not served. */
  byGroupKind(group: string, kind: string): ResourceDef | undefined {
    return this.preferredOf(this.all().filter((d) => d.group === group && d.kind === kind));
  }

  /** The preferred served version of a group and resource. */
  preferred(group: string, resource: string): ResourceDef | undefined {
    return this.preferredOf(this.all().filter((d) => d.group === group && d.resource === resource));
  }

  private preferredOf(defs: ResourceDef[]): ResourceDef | undefined {
    return defs.sort((a, b) => compareVersions(a.version, b.version))[0];
  }

  /** One definition per storage, for scans across every resource (namespace deletion, GC). */
  storages(): ResourceDef[] {
    const seen = new Map<string, ResourceDef>();
    for (const d of this.defs.values()) {
      const cur = seen.get(d.storageKey);
      // Prefer the definition whose group owns the storage (core events over events.k8s.io).
      if (!cur || (d.storageKey.startsWith(`${d.group}/`) && !cur.storageKey.startsWith(`${cur.group}/`))) {
        seen.set(d.storageKey, d);
      }
    }
    return [...seen.values()];
  }

  /** Groups other than core, in the real server's order, custom groups after, alphabetically. */
  groups(): GroupInfo[] {
    const byGroup = new Map<string, Set<string>>();
    for (const d of this.defs.values()) {
      if (!d.group) continue;
      let s = byGroup.get(d.group);
      if (!s) {
        s = new Set();
        byGroup.set(d.group, s);
      }
      s.add(d.version);
    }
    const names = [...byGroup.keys()].sort((a, b) => {
      const ia = GROUP_ORDER.indexOf(a);
      const ib = GROUP_ORDER.indexOf(b);
      if (ia >= 0 || ib >= 0) return (ia < 0 ? 1e6 : ia) - (ib < 0 ? 1e6 : ib);
      return a < b ? -1 : a > b ? 1 : 0;
    });
    return names.map((name) => ({
      name,
      versions: [...(byGroup.get(name) ?? [])].sort(compareVersions),
    }));
  }

  /** Resources of one group/version, in name order (discovery lists them sorted). */
  resources(group: string, version: string): ResourceDef[] {
    return this.all()
      .filter((d) => d.group === group && d.version === version)
      .sort((a, b) => (a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0));
  }
}
