/**
 * Cluster API's Cluster and Machine between cluster.x-k8s.io/v1beta1 (stored, what our controllers
 * read) and v1beta2, with the field mapping of CAPI's `api/core/v1beta1/conversion.go`:
 *
 * - references: v1beta1 `{apiVersion, kind, name, namespace, …}` ↔ v1beta2 `{apiGroup, kind, name}`;
 *   going down, the version is the contract's (`v1beta1` for Cluster API's `*.cluster.x-k8s.io`
 *   groups, which CAPI reads from the referenced CRD's contract label) and the namespace the object's;
 * - `status.infrastructureReady`/`controlPlaneReady`/`bootstrapReady` ↔ `status.initialization`;
 * - v1beta1 `status.conditions`, `failureReason`, `failureMessage` ↔ `status.deprecated.v1beta1`,
 *   and v1beta1 `status.v1beta2.*` ↔ v1beta2 `status.conditions` (and the replica counters);
 * - Cluster `status.failureDomains` map ↔ list by name; `spec.topology.class`/`classNamespace` ↔
 *   `classRef`; Machine `spec.node*Timeout` durations ↔ `spec.deletion.node*TimeoutSeconds`,
 *   `status.nodeRef` ↔ `{name}`; v1beta2's `spec.minReadySeconds` has no v1beta1 field.
 *
 * What one version cannot hold survives in `cluster.x-k8s.io/conversion-data` (lossless.ts).
 */
import { parseGoDuration } from '../../openstack/config/duration.ts';
import { at, type FieldMapping, losslessConversion, onlyInB } from '../../kube/conversion/lossless.ts';
import type { KindConversion } from '../../kube/conversion/types.ts';

type Obj = Record<string, unknown>;
const GROUP = 'cluster.x-k8s.io';

/** The version a v1beta2 reference's group has under Cluster API's v1beta1 contract. */
function contractVersion(apiGroup: string): string {
  return apiGroup === GROUP || apiGroup.endsWith(`.${GROUP}`) ? 'v1beta1' : 'v1';
}

function groupOf(apiVersion: unknown): string {
  if (typeof apiVersion !== 'string') return '';
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

function namespaceOf(obj: Obj): string | undefined {
  const meta = obj['metadata'] as Obj | undefined;
  return typeof meta?.['namespace'] === 'string' ? meta['namespace'] : undefined;
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Drops undefined members; undefined when nothing is left. */
function compact(o: Obj): Obj | undefined {
  const out = Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A reference at the same path in both versions. */
function reference(name: string, ...path: string[]): FieldMapping {
  const p = at(...path);
  return {
    name,
    takeA: (o) => p.take(o),
    putA: p.put,
    takeB: (o) => p.take(o),
    putB: p.put,
    toB: (ref) =>
      isObj(ref)
        ? compact({ apiGroup: groupOf(ref['apiVersion']), kind: ref['kind'], name: ref['name'] })
        : ref,
    toA: (ref, obj) => {
      if (!isObj(ref)) return ref;
      const group = typeof ref['apiGroup'] === 'string' ? ref['apiGroup'] : '';
      return compact({
        apiVersion: group ? `${group}/${contractVersion(group)}` : undefined,
        kind: ref['kind'],
        name: ref['name'],
        namespace: namespaceOf(obj),
      });
    },
  };
}

/** Several top-level fields of one object (`status`) taken together. */
function fieldsOf(parent: string, keys: readonly string[]) {
  return {
    take: (o: Obj): Obj | undefined => {
      const node = o[parent];
      if (!isObj(node)) return undefined;
      const taken: Obj = {};
      for (const k of keys) {
        if (k in node) taken[k] = node[k];
        delete node[k];
      }
      return compact(taken);
    },
    put: (o: Obj, value: Obj | undefined) => {
      if (!value) return;
      const node = isObj(o[parent]) ? o[parent] : (o[parent] = {});
      Object.assign(node, value);
    },
  };
}

/** v1beta1's readiness booleans ↔ v1beta2's `status.initialization`. */
function initialization(pairs: Record<string, string>): FieldMapping {
  const a = fieldsOf('status', Object.keys(pairs));
  const b = at('status', 'initialization');
  return {
    name: 'initialization',
    takeA: a.take,
    putA: a.put,
    takeB: (o) => b.take(o),
    putB: b.put,
    toB: (ready: Obj | undefined) => {
      if (!ready || !Object.values(ready).some((v) => v === true)) return undefined;
      return Object.fromEntries(Object.entries(pairs).map(([from, to]) => [to, ready[from] === true]));
    },
    // The v1beta1 booleans default to false: a status without them reads as all false.
    toA: (init: Obj | undefined, obj: Obj) => {
      if (!isObj(obj['status'])) return undefined;
      return Object.fromEntries(Object.entries(pairs).map(([from, to]) => [from, init?.[to] === true]));
    },
  };
}

/** v1beta1 conditions and failure fields ↔ v1beta2 `status.deprecated.v1beta1`. */
function deprecatedV1beta1(): FieldMapping {
  const a = fieldsOf('status', ['conditions', 'failureReason', 'failureMessage']);
  const b = at('status', 'deprecated');
  return {
    name: 'deprecated',
    takeA: a.take,
    putA: a.put,
    takeB: (o) => b.take(o),
    putB: b.put,
    toB: (legacy) => (legacy ? { v1beta1: legacy } : undefined),
    toA: (dep: Obj | undefined) => (isObj(dep?.['v1beta1']) ? compact(dep['v1beta1']) : undefined),
  };
}

/** v1beta1 `status.v1beta2.{keys}` ↔ v1beta2 `status.{keys}`. */
function v1beta2Status(keys: readonly string[]): FieldMapping {
  const a = at('status', 'v1beta2');
  const b = fieldsOf('status', keys);
  return {
    name: 'v1beta2',
    takeA: (o) => a.take(o),
    putA: a.put,
    takeB: b.take,
    putB: b.put,
    toB: (v) => (isObj(v) ? compact(v) : undefined),
    toA: (v) => v,
  };
}

function failureDomains(): FieldMapping {
  const p = at('status', 'failureDomains');
  return {
    name: 'failureDomains',
    takeA: (o) => p.take(o),
    putA: p.put,
    takeB: (o) => p.take(o),
    putB: p.put,
    toB: (map) =>
      isObj(map)
        ? Object.keys(map)
            .sort()
            .map((name) => ({ name, ...(map[name] as Obj) }))
        : undefined,
    toA: (list) =>
      Array.isArray(list)
        ? Object.fromEntries(list.map(({ name, ...rest }) => [String(name), rest]))
        : undefined,
  };
}

function topologyClass(): FieldMapping {
  const a = {
    take: (o: Obj): Obj | undefined => {
      const topology = (o['spec'] as Obj | undefined)?.['topology'];
      if (!isObj(topology)) return undefined;
      const taken = compact({ class: topology['class'], classNamespace: topology['classNamespace'] });
      delete topology['class'];
      delete topology['classNamespace'];
      return taken;
    },
    put: (o: Obj, v: Obj | undefined) => {
      if (!v) return;
      const spec = isObj(o['spec']) ? o['spec'] : (o['spec'] = {});
      const topology = isObj(spec['topology']) ? spec['topology'] : (spec['topology'] = {});
      Object.assign(topology, v);
    },
  };
  const b = at('spec', 'topology', 'classRef');
  return {
    name: 'topologyClass',
    takeA: a.take,
    putA: a.put,
    takeB: (o) => b.take(o),
    putB: b.put,
    toB: (v: Obj | undefined) =>
      v ? compact({ name: v['class'], namespace: v['classNamespace'] }) : undefined,
    toA: (v: Obj | undefined) =>
      v ? compact({ class: v['name'], classNamespace: v['namespace'] }) : undefined,
  };
}

const TIMEOUTS = ['nodeDrainTimeout', 'nodeVolumeDetachTimeout', 'nodeDeletionTimeout'] as const;

/** Machine `spec.node*Timeout` (Go durations) ↔ `spec.deletion.node*TimeoutSeconds`. */
function deletionTimeouts(): FieldMapping {
  const a = fieldsOf('spec', TIMEOUTS);
  const b = at('spec', 'deletion');
  return {
    name: 'deletion',
    takeA: a.take,
    putA: a.put,
    takeB: (o) => b.take(o),
    putB: b.put,
    toB: (v: Obj | undefined) => {
      if (!v) return undefined;
      // CAPI's ConvertToSeconds: whole seconds, truncated.
      const seconds = (d: unknown) => {
        const ms = typeof d === 'string' ? parseGoDuration(d) : undefined;
        return ms === undefined ? undefined : Math.trunc(ms / 1000);
      };
      return compact(Object.fromEntries(TIMEOUTS.map((t) => [`${t}Seconds`, seconds(v[t])])));
    },
    toA: (v: Obj | undefined) => {
      if (!v) return undefined;
      const duration = (s: unknown) => (typeof s === 'number' ? goSeconds(s) : undefined);
      return compact(Object.fromEntries(TIMEOUTS.map((t) => [t, duration(v[`${t}Seconds`])])));
    },
  };
}

/** Go's Duration.String() of whole seconds: `0s`, `45s`, `1m30s`, `2h0m0s`. */
export function goSeconds(total: number): string {
  if (total === 0) return '0s';
  const sign = total < 0 ? '-' : '';
  let n = Math.abs(total);
  const h = Math.floor(n / 3600);
  n -= h * 3600;
  const m = Math.floor(n / 60);
  const s = n - m * 60;
  if (h > 0) return `${sign}${h}h${m}m${s}s`;
  if (m > 0) return `${sign}${m}m${s}s`;
  return `${sign}${s}s`;
}

function nodeRef(): FieldMapping {
  const p = at('status', 'nodeRef');
  return {
    name: 'nodeRef',
    takeA: (o) => p.take(o),
    putA: p.put,
    takeB: (o) => p.take(o),
    putB: p.put,
    toB: (ref) => (isObj(ref) ? compact({ name: ref['name'] }) : undefined),
    toA: (ref) => (isObj(ref) ? compact({ apiVersion: 'v1', kind: 'Node', name: ref['name'] }) : undefined),
  };
}

export const CLUSTER_CONVERSION: KindConversion = losslessConversion({
  group: GROUP,
  kind: 'Cluster',
  a: 'v1beta1',
  b: 'v1beta2',
  fields: [
    reference('infrastructureRef', 'spec', 'infrastructureRef'),
    reference('controlPlaneRef', 'spec', 'controlPlaneRef'),
    topologyClass(),
    initialization({
      infrastructureReady: 'infrastructureProvisioned',
      controlPlaneReady: 'controlPlaneInitialized',
    }),
    failureDomains(),
    deprecatedV1beta1(),
    v1beta2Status(['conditions', 'controlPlane', 'workers']),
  ],
});

export const MACHINE_CONVERSION: KindConversion = losslessConversion({
  group: GROUP,
  kind: 'Machine',
  a: 'v1beta1',
  b: 'v1beta2',
  fields: [
    reference('infrastructureRef', 'spec', 'infrastructureRef'),
    reference('configRef', 'spec', 'bootstrap', 'configRef'),
    deletionTimeouts(),
    onlyInB('minReadySeconds', 'spec', 'minReadySeconds'),
    initialization({
      bootstrapReady: 'bootstrapDataSecretCreated',
      infrastructureReady: 'infrastructureProvisioned',
    }),
    nodeRef(),
    deprecatedV1beta1(),
    v1beta2Status(['conditions']),
  ],
});

/** The Cluster API stand-ins' conversions, served when `--act-as-cluster-api-core` is on. */
export const CLUSTER_API_CONVERSIONS: readonly KindConversion[] = [CLUSTER_CONVERSION, MACHINE_CONVERSION];
