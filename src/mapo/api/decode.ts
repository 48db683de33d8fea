/**
 * `decodeProviderSpec`: a Machine's `spec.providerSpec.value` read once into a typed
 * OpenstackProviderSpec, or the problems that stop it, each naming its field path
 * (`spec.providerSpec.value.networks[0].uuid`) and the fix. Never throws on user input.
 *
 * Three kinds of problem:
 * - `invalid` (fatal): a wrong type or value; upstream would fail too, or do something the user
 *   cannot have meant.
 * - `unsupported` (fatal): a valid field this implementation does not act on yet
 *   ({@link NOT_SUPPORTED_YET}, the one list later steps shrink). Refused rather than dropped,
 *   so a Machine never comes up different from what its spec says.
 * - `ignored` (not fatal): a key upstream ignores too (unknown, or deprecated "silently
 *   ignored" in openshift/api); said once so a typo does not go unnoticed.
 *
 * The machine controller puts the fatal ones in `status.errorReason: InvalidConfiguration` and
 * `errorMessage` (phase Failed); each problem's `reason` is its Event reason.
 */
import { ConfigError, parseConfig } from '../../lib/config.ts';
import {
  LEGACY_PROVIDER_API_VERSION,
  lenientProviderSpec,
  type OpenstackProviderSpec,
  PROVIDER_API_VERSION,
  PROVIDER_SPEC_KIND,
  strictProviderSpec,
} from './providerspec.ts';

export type ProblemKind = 'invalid' | 'unsupported' | 'ignored';

export const ProviderSpecEventReasons = {
  invalid: 'InvalidProviderSpec',
  unsupported: 'UnsupportedProviderSpecField',
  ignored: 'IgnoredProviderSpecField',
} as const satisfies Record<ProblemKind, string>;

export interface ProviderSpecProblem {
  /** The field, from the object's root: `spec.providerSpec.value.networks[0].uuid`. */
  path: string;
  kind: ProblemKind;
  /** What is wrong. */
  problem: string;
  /** What to do about it. */
  fix: string;
  /** The value found (a list or map shown as `[list]`/`{…}`); undefined when missing. */
  value?: unknown;
  /** Whether the Machine cannot be built from this spec. */
  fatal: boolean;
  /** The Event reason. */
  reason: (typeof ProviderSpecEventReasons)[ProblemKind];
}

export type DecodedProviderSpec =
  /** Decoded; `problems` holds only the ignored keys, if any. */
  | { spec: OpenstackProviderSpec; problems: ProviderSpecProblem[] }
  | { spec: undefined; problems: ProviderSpecProblem[] };

/** A field a table entry is about: `networks[].profile` walks every network. */
type FieldPattern = string;

interface TableEntry {
  field: FieldPattern;
  /** Present is enough unless given: which values of the field count. */
  when?: (value: unknown) => boolean;
  why: string;
  fix: string;
}

/**
 * The fields of OpenstackProviderSpec this implementation does not act on yet. A Machine using
 * one goes Failed with the field named, rather than coming up without it. Later steps remove
 * entries as they implement them; docs/mapo.md shows this table.
 */
export const NOT_SUPPORTED_YET: readonly TableEntry[] = [
  {
    field: 'floatingIP',
    why: 'associating a floating IP is not implemented (upstream deprecated it: a MachineSet cannot share one address)',
    fix: 'remove floatingIP and attach the address outside the Machine API',
  },
  {
    field: 'ports[].projectID',
    why: 'ports are created in the project of the clouds.yaml credentials',
    fix: 'remove projectID (or use credentials of that project)',
  },
  {
    field: 'ports[].tenantID',
    why: 'ports are created in the project of the clouds.yaml credentials',
    fix: 'remove tenantID (or use credentials of that project)',
  },
  {
    field: 'networks[].profile',
    when: hasUnknownProfileKey,
    why: 'only the binding-profile keys capabilities (switchdev) and trusted are carried to the port',
    fix: 'keep only capabilities: switchdev and trusted in profile',
  },
  {
    field: 'ports[].profile',
    when: hasUnknownProfileKey,
    why: 'only the binding-profile keys capabilities (switchdev) and trusted are carried to the port',
    fix: 'keep only capabilities: switchdev and trusted in profile',
  },
];

const DEPRECATED = 'deprecated in openshift/api and ignored there too';
const deprecated = (field: FieldPattern, fix: string): TableEntry => ({ field, why: DEPRECATED, fix });

/** Fields upstream declares but silently ignores: accepted, reported as ignored. */
export const IGNORED: readonly TableEntry[] = [
  deprecated('networks[].fixedIp', 'use networks[].subnets, or ports[].fixedIPs'),
  deprecated('networks[].subnets[].portSecurity', 'set portSecurity on the network'),
  deprecated('networks[].subnets[].filter.networkId', 'set uuid on the network instead'),
  deprecated('ports[].hostID', 'remove it'),
  deprecated('rootVolume.sourceType', 'remove it'),
  deprecated('rootVolume.deviceType', 'remove it'),
  ...['status', 'adminStateUp', 'shared'].map((k) => deprecated(`networks[].filter.${k}`, 'remove it')),
  deprecated('networks[].subnets[].filter.enableDhcp', 'remove it'),
  ...['limit', 'marker', 'sortKey', 'sortDir'].flatMap((k) => [
    deprecated(`networks[].filter.${k}`, 'remove it'),
    deprecated(`networks[].subnets[].filter.${k}`, 'remove it'),
    deprecated(`securityGroups[].filter.${k}`, 'remove it'),
  ]),
];

/** The binding-profile keys MAPO translates (capabilities: switchdev → OVS offload; trusted → trusted VF). */
function hasUnknownProfileKey(profile: unknown): boolean {
  if (profile === null || typeof profile !== 'object') return false;
  return Object.entries(profile).some(
    ([k, v]) => !(k === 'trusted' || (k === 'capabilities' && String(v).includes('switchdev'))),
  );
}

/**
 * Decodes `raw` (a Machine's `spec.providerSpec.value`), found at `where` in its object
 * (`spec.providerSpec.value`, or `spec.template.spec.providerSpec.value` for a MachineSet).
 */
export function decodeProviderSpec(raw: unknown, where: string): DecodedProviderSpec {
  if (raw === undefined || raw === null) {
    return failed([
      problem('invalid', where, {
        problem: 'the OpenStack provider spec is missing',
        fix: `set ${where} to an OpenstackProviderSpec (apiVersion ${PROVIDER_API_VERSION})`,
      }),
    ]);
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    return failed([
      problem('invalid', where, {
        problem: `expected an OpenstackProviderSpec object, got ${Array.isArray(raw) ? 'a list' : typeof raw}`,
        fix: `set ${where} to an OpenstackProviderSpec (apiVersion ${PROVIDER_API_VERSION})`,
      }),
    ]);
  }
  // Go reads null as the zero value: a key written empty (`keyName:`) is a key not written.
  const doc = withoutNulls(raw) as object;

  const problems = [...typeProblems(doc, where)];
  const unknownOnly = problems.every((p) => !p.fatal);
  if (!unknownOnly) return failed(problems);
  const spec = lenientProviderSpec.parse(doc);
  problems.push(...valueProblems(spec, where), ...tableProblems(spec, where));
  return problems.some((p) => p.fatal) ? failed(problems) : { spec, problems };
}

/** The fatal problems as one line for `status.errorMessage`. */
export function errorMessageOf(problems: readonly ProviderSpecProblem[]): string {
  return problems
    .filter((p) => p.fatal)
    .map(formatProviderSpecProblem)
    .join('; ');
}

export function formatProviderSpecProblem(p: ProviderSpecProblem): string {
  const value = p.value === undefined ? '' : ` (value ${JSON.stringify(p.value)})`;
  const kind = p.kind === 'unsupported' ? 'not supported yet: ' : p.kind === 'ignored' ? 'ignored: ' : '';
  return `${p.path}${value}: ${kind}${p.problem}. Fix: ${p.fix}`;
}

/* ------------------------------------------------------------------ the steps */

/** Types and shapes, through the strict schema: each zod issue becomes a problem; unknown keys are ignored ones. */
function typeProblems(doc: object, where: string): ProviderSpecProblem[] {
  try {
    parseConfig(strictProviderSpec, doc, where);
    return [];
  } catch (err) {
    if (!ConfigError.is(err)) throw err;
    return err.problems.map((p) =>
      problem(p.problem === 'unknown key' ? 'ignored' : 'invalid', joinPath(where, p.path ?? []), {
        problem: p.problem === 'unknown key' ? 'unknown field' : p.problem,
        fix: p.fix,
        value: p.value,
      }),
    );
  }
}

/** Rules between fields, which a type cannot say. */
function valueProblems(spec: OpenstackProviderSpec, where: string): ProviderSpecProblem[] {
  const out: ProviderSpecProblem[] = [];
  const at = (...path: (string | number)[]) => joinPath(where, path);

  if (
    spec.apiVersion &&
    spec.apiVersion !== PROVIDER_API_VERSION &&
    spec.apiVersion !== LEGACY_PROVIDER_API_VERSION
  ) {
    out.push(
      problem('invalid', at('apiVersion'), {
        problem: 'not the OpenStack provider spec’s API version',
        fix: `set it to ${PROVIDER_API_VERSION}`,
        value: spec.apiVersion,
      }),
    );
  }
  if (spec.kind && spec.kind !== PROVIDER_SPEC_KIND) {
    out.push(
      problem('invalid', at('kind'), {
        problem: `not an ${PROVIDER_SPEC_KIND}: this Machine is for another provider`,
        fix: `set it to ${PROVIDER_SPEC_KIND}, with the fields of an OpenStack machine`,
        value: spec.kind,
      }),
    );
  }
  if (!spec.image && !spec.rootVolume?.sourceUUID) {
    out.push(
      problem('invalid', at('image'), {
        problem: 'no image: neither image nor rootVolume.sourceUUID is set',
        fix: 'set image to the name of a Glance image, e.g. rhcos',
      }),
    );
  } else if (spec.image && spec.rootVolume?.sourceUUID && spec.image !== spec.rootVolume.sourceUUID) {
    out.push(
      problem('ignored', at('rootVolume', 'sourceUUID'), {
        problem: `image is set, so the root volume is made from image ${JSON.stringify(spec.image)}`,
        fix: 'remove rootVolume.sourceUUID (deprecated), or make it the same as image',
        value: spec.rootVolume.sourceUUID,
      }),
    );
  }

  spec.networks?.forEach((net, i) => {
    const byFilter = net.filter && Object.values(net.filter).some((v) => v !== undefined && v !== '');
    if (!net.uuid && !byFilter && !net.subnets?.length) {
      out.push(
        problem('invalid', at('networks', i), {
          problem: 'names no network: no uuid, no filter and no subnets',
          fix: 'set uuid, a filter (name, tags, …) or subnets',
        }),
      );
    }
    net.subnets?.forEach((subnet, j) => {
      const subnetByFilter =
        subnet.filter && Object.values(subnet.filter).some((v) => v !== undefined && v !== '');
      if (!subnet.uuid && !subnetByFilter) {
        out.push(
          problem('invalid', at('networks', i, 'subnets', j), {
            problem: 'names no subnet: no uuid and an empty filter',
            fix: 'set uuid, or a filter (name, tags, cidr, …)',
          }),
        );
      }
    });
  });

  const seen = new Set<string>();
  spec.additionalBlockDevices?.forEach((device, i) => {
    if (device.name === 'root') {
      out.push(
        problem('invalid', at('additionalBlockDevices', i, 'name'), {
          problem: 'the name root is the root volume’s',
          fix: 'choose another name',
          value: device.name,
        }),
      );
    } else if (seen.has(device.name)) {
      out.push(
        problem('invalid', at('additionalBlockDevices', i, 'name'), {
          problem: 'two block devices have this name',
          fix: 'give each block device its own name',
          value: device.name,
        }),
      );
    }
    seen.add(device.name);
    if (device.storage.volume && device.storage.type !== 'Volume') {
      out.push(
        problem('invalid', at('additionalBlockDevices', i, 'storage', 'volume'), {
          problem: 'volume options on a Local block device',
          fix: 'set storage.type to Volume, or remove storage.volume',
        }),
      );
    }
  });
  return out;
}

/** The fields of NOT_SUPPORTED_YET (fatal) and IGNORED (not) that the spec uses. */
function tableProblems(spec: OpenstackProviderSpec, where: string): ProviderSpecProblem[] {
  const out: ProviderSpecProblem[] = [];
  const tables = [
    ['unsupported', NOT_SUPPORTED_YET],
    ['ignored', IGNORED],
  ] as const;
  for (const [kind, table] of tables) {
    for (const entry of table) {
      for (const { path, value } of fieldsAt(spec, entry.field)) {
        if (!isSet(value) || (entry.when && !entry.when(value))) continue;
        out.push(
          problem(kind, joinPath(where, path), {
            problem: entry.why,
            fix: entry.fix,
            value: shown(value),
          }),
        );
      }
    }
  }
  return out;
}

/* ------------------------------------------------------------------ helpers */

function problem(
  kind: ProblemKind,
  path: string,
  what: { problem: string; fix: string; value?: unknown },
): ProviderSpecProblem {
  return {
    path,
    kind,
    problem: what.problem,
    fix: what.fix,
    ...(what.value !== undefined ? { value: what.value } : {}),
    fatal: kind !== 'ignored',
    reason: ProviderSpecEventReasons[kind],
  };
}

function failed(problems: ProviderSpecProblem[]): DecodedProviderSpec {
  return { spec: undefined, problems };
}

/** `where` + `networks[0].uuid`. */
function joinPath(where: string, path: readonly (string | number)[]): string {
  let out = where;
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : out ? `.${seg}` : seg;
  return out;
}

/** Every value at a pattern such as `networks[].subnets[].filter.limit`, with its concrete path. */
function fieldsAt(root: unknown, pattern: FieldPattern): { path: (string | number)[]; value: unknown }[] {
  let found: { path: (string | number)[]; value: unknown }[] = [{ path: [], value: root }];
  for (const part of pattern.split('.')) {
    const list = part.endsWith('[]');
    const key = list ? part.slice(0, -2) : part;
    found = found.flatMap(({ path, value }) => {
      const next =
        value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
      if (!list) return [{ path: [...path, key], value: next }];
      return Array.isArray(next)
        ? next.map((v, i) => ({ path: [...path, key, i], value: v as unknown }))
        : [];
    });
  }
  return found;
}

/** Go's omitempty: an empty string is a field not set. */
function isSet(value: unknown): boolean {
  return value !== undefined && value !== '';
}

function shown(value: unknown): unknown {
  if (value !== null && typeof value === 'object') return Array.isArray(value) ? '[list]' : '{…}';
  return value;
}

function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, withoutNulls(v)]),
  );
}
