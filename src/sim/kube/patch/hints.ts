/**
 * What the Go struct tags and OpenAPI extensions of the real types say about each field: the
 * strategic-merge-patch strategy and merge key (`patchStrategy`, `patchMergeKey`) and the
 * server-side-apply list semantics (`listType`, `listMapKey`). Built-in kinds get tables of the
 * fields controllers touch; custom resources get them from their openAPIV3Schema.
 *
 * Paths are field names only: list elements are not a step (`spec.containers.ports`).
 */

export type ListType =
  | { type: 'atomic' }
  | { type: 'set' }
  /** `defaults`: values of key fields an item may omit (service port `protocol: TCP`). */
  | { type: 'map'; keys: string[]; defaults?: Readonly<Record<string, unknown>> };

export interface FieldHint {
  /** Strategic merge: `merge`, `retainKeys`, `replace`; absent means replace (atomic). */
  patchStrategy?: readonly string[];
  patchMergeKey?: string;
  /** Server-side apply: how a list is owned and merged. Unlisted lists are atomic. */
  list?: ListType;
  /** `x-kubernetes-map-type: atomic` objects are owned and replaced as a whole. */
  atomicMap?: boolean;
}

export interface Hints {
  get(path: readonly string[]): FieldHint | undefined;
}

export type HintTable = Readonly<Record<string, FieldHint>>;

export function tableHints(...tables: HintTable[]): Hints {
  const all = new Map<string, FieldHint>();
  for (const t of tables) for (const [k, v] of Object.entries(t)) all.set(k, v);
  return { get: (path) => all.get(path.join('.')) };
}

/** Prefixes every path of a table (a pod template inside a Deployment). */
export function mount(prefix: string, table: HintTable): HintTable {
  const out: Record<string, FieldHint> = {};
  for (const [k, v] of Object.entries(table)) out[`${prefix}.${k}`] = v;
  return out;
}

/** A list merged by key in both strategic merge patch and apply. */
export function keyed(
  mergeKey: string,
  applyKeys: string[] = [mergeKey],
  retainKeys = false,
  keyDefaults?: Record<string, unknown>,
): FieldHint {
  return {
    patchStrategy: retainKeys ? ['merge', 'retainKeys'] : ['merge'],
    patchMergeKey: mergeKey,
    list: { type: 'map', keys: applyKeys, ...(keyDefaults ? { defaults: keyDefaults } : {}) },
  };
}

export const SET: FieldHint = { patchStrategy: ['merge'], list: { type: 'set' } };

export const METADATA_HINTS: HintTable = {
  'metadata.finalizers': SET,
  'metadata.ownerReferences': keyed('uid'),
  'metadata.managedFields': { list: { type: 'atomic' } },
};

const CONTAINER: HintTable = {
  ports: keyed('containerPort', ['containerPort', 'protocol'], false, { protocol: 'TCP' }),
  env: keyed('name'),
  volumeMounts: keyed('mountPath'),
  volumeDevices: keyed('devicePath'),
  resizePolicy: { list: { type: 'atomic' } },
};

export const POD_SPEC_HINTS: HintTable = {
  containers: keyed('name'),
  ...mount('containers', CONTAINER),
  initContainers: keyed('name'),
  ...mount('initContainers', CONTAINER),
  ephemeralContainers: keyed('name'),
  ...mount('ephemeralContainers', CONTAINER),
  volumes: keyed('name', ['name'], true),
  imagePullSecrets: keyed('name'),
  hostAliases: keyed('ip'),
  topologySpreadConstraints: keyed('topologyKey', ['topologyKey', 'whenUnsatisfiable']),
  schedulingGates: keyed('name'),
  resourceClaims: keyed('name', ['name'], true),
};

export const CONDITIONS: FieldHint = keyed('type');
