/**
 * kuryr.conf's `[neutron]` group → the OpenStack cloud the controller talks to. Upstream registers
 * there kuryr-lib's own options (`region_name`, `endpoint_type`, …) and keystoneauth's session and
 * auth options (`register_session_conf_options`, `register_auth_conf_options`, then the options of
 * the plugin `auth_type` names): the keys OpenShift's cluster-network-operator renders (auth_type,
 * auth_url, username, password, the project and domains, region_name, insecure, cafile). They
 * become the same Draft every other source produces, so one validator (src/openstack/config)
 * checks them and names `kuryr.conf:<line>` and `[neutron] <key>` in its problems.
 *
 * As keystoneauth does, an empty value (`token = ""`, which the operator writes for every credential
 * it has not got) is unset, and a key that belongs to another plugin than the chosen one is ignored —
 * named in a warning when it holds something.
 *
 * Without `auth_url` or `auth_type` in `[neutron]`, the cloud comes from where every shiftstack
 * command finds one (clouds.yaml with OS_CLOUD, the OS_* variables: src/openstack/config/resolve.ts).
 */
import { closest } from '../../lib/config.ts';
import {
  applyDefaultDomain,
  AUTH_URL,
  DEFAULT_DOMAIN,
  OTHER_CREDENTIALS,
  USER_AND_SCOPE,
} from '../../openstack/config/auth-keys.ts';
import type { Draft, DraftField, DraftFields, Located, TextField } from '../../openstack/config/draft.ts';
import { absolutePath } from '../../openstack/config/files.ts';
import { finalizeAfter, warning, type Finalized } from '../../openstack/config/finalize.ts';
import { Problems } from '../../openstack/config/problems.ts';
import { resolveCloudConfig } from '../../openstack/config/resolve.ts';
import type { AuthType, LoadContext } from '../../openstack/config/types.ts';
import {
  parseAuthType,
  parseBoolWord,
  parseInterface,
  parseSeconds,
  parseSystemScope,
} from '../../openstack/config/values.ts';
import { iniLast, iniSection, iniWhere, substitute, type IniDocument, type IniEntry } from './ini.ts';

export const NEUTRON_GROUP = 'neutron';

/** Which keystoneauth plugins register a field's options (v3password, v3token, v3applicationcredential). */
function pluginsOf(field: DraftField): readonly AuthType[] {
  if (field === 'authUrl') return ['password', 'token', 'v3applicationcredential'];
  if (field.startsWith('applicationCredential')) return ['v3applicationcredential'];
  if (field === 'token') return ['token'];
  if (field === 'password' || field.startsWith('user')) return ['password'];
  return ['password', 'token'];
}

interface AuthKey {
  field: DraftField;
  key: string;
  plugins: readonly AuthType[];
}

/** The key spellings of auth-keys.ts (one table with clouds.yaml and OS_*), with the plugins that read them. */
const AUTH_KEYS: readonly AuthKey[] = [...AUTH_URL, ...USER_AND_SCOPE, ...OTHER_CREDENTIALS].flatMap(
  ([field, keys]) => keys.map((key) => ({ field, key, plugins: pluginsOf(field) })),
);

/** keystoneauth's session options and kuryr-lib's `[neutron]` options we act on. */
const SESSION_KEYS = ['cafile', 'certfile', 'keyfile', 'insecure', 'timeout', 'region_name', 'endpoint_type'];
const METHOD_KEYS = [
  'auth_type',
  'auth_plugin',
  'auth_section',
  'system_scope',
  'default_domain_id',
  'default_domain_name',
];

/**
 * Options of `[neutron]` upstream reads that change nothing here, with why: kuryr-lib's options for
 * the Docker network plugin (not Kubernetes) and keystoneauth's logging switches.
 */
export const NEUTRON_IGNORED: Readonly<Record<string, string>> = {
  enable_dhcp: "kuryr-lib's option for libnetwork's subnets; Kuryr-Kubernetes does not read it",
  default_subnetpool_v4:
    "kuryr-lib's option for libnetwork; the namespace subnet pool is [namespace_subnet] pod_subnet_pool",
  default_subnetpool_v6:
    "kuryr-lib's option for libnetwork; the namespace subnet pool is [namespace_subnet] pod_subnet_pool",
  vif_plugging_is_fatal:
    "kuryr-lib's option for libnetwork; a pod's port is waited for by the KuryrPort controller",
  vif_plugging_timeout:
    "kuryr-lib's option for libnetwork; a pod's port is waited for by the KuryrPort controller",
  collect_timing: "keystoneauth's timing log; request durations are in shiftstack's openstack_* metrics",
  split_loggers: "keystoneauth's logger split; requests are logged at debug level by shiftstack",
};

const KNOWN = new Set([
  ...AUTH_KEYS.map((k) => k.key),
  ...SESSION_KEYS,
  ...METHOD_KEYS,
  ...Object.keys(NEUTRON_IGNORED),
]);

export interface NeutronCloud extends Finalized {
  /** Where the credentials came from: kuryr.conf's `[neutron]`, or the usual search without it. */
  from: 'kuryr.conf' | 'clouds.yaml or OS_* variables';
}

/** `[neutron]` as a validated cloud; every problem of the group in one ConfigError. */
export async function neutronCloud(doc: IniDocument, ctx: LoadContext): Promise<NeutronCloud> {
  const section = iniSection(doc, NEUTRON_GROUP);
  const problems = new Problems();
  const warnings: string[] = [];
  const value = (entry: IniEntry | undefined): Located<string> | undefined => {
    if (!entry) return undefined;
    const s = substitute(doc, entry, NEUTRON_GROUP);
    if ('problem' in s) {
      problems.list.push(s.problem);
      return undefined;
    }
    if (s.value === '') return undefined;
    return { value: s.value, file: iniWhere(entry), key: `[${NEUTRON_GROUP}] ${entry.rawName}` };
  };
  const last = (key: string) => value(iniLast(section, key));

  for (const [name, entries] of groupByName(section?.entries ?? [])) {
    const entry = entries[entries.length - 1]!;
    const at = iniWhere(entry);
    const key = `[${NEUTRON_GROUP}] ${entry.rawName}`;
    const ignored = NEUTRON_IGNORED[name];
    if (ignored !== undefined) warnings.push(warning(at, key, `ignored: ${ignored}`));
    else if (!KNOWN.has(name)) {
      const hint = closest(name, [...KNOWN]);
      warnings.push(
        warning(at, key, `not an option of [neutron], ignored${hint ? ` (did you mean "${hint}"?)` : ''}`),
      );
    }
  }

  const authUrl = last('auth_url');
  const authTypeRaw = last('auth_type') ?? last('auth_plugin');
  if (!authUrl && !authTypeRaw) {
    const done = await resolveCloudConfig(ctx);
    return {
      ...done,
      warnings: [...warnings, ...done.warnings],
      from: 'clouds.yaml or OS_* variables',
    };
  }

  const fields: DraftFields = {};
  if (authTypeRaw) {
    const t = parseAuthType(authTypeRaw.value, authTypeRaw.file, authTypeRaw.key, problems);
    if (t) fields.authType = { ...authTypeRaw, value: t };
  }
  const section_ = last('auth_section');
  if (section_) {
    warnings.push(
      warning(
        section_.file,
        section_.key,
        'not supported: write the auth options in [neutron] itself; ignored',
      ),
    );
  }
  // keystoneauth reads only the chosen plugin's options; without auth_type the plugin is the one
  // the credentials written imply (finalizeDraft's rule), so every credential is read.
  const chosen = fields.authType?.value;
  for (const { field, key, plugins } of AUTH_KEYS) {
    const found = last(key);
    if (!found || fields[field]) continue;
    if (chosen && !plugins.includes(chosen)) {
      warnings.push(
        warning(found.file, found.key, `not an option of auth_type ${authTypeRaw!.value}, ignored`),
      );
      continue;
    }
    fields[field as TextField] = found;
  }
  const scope = last('system_scope');
  if (scope) {
    const v = parseSystemScope(scope.value, scope.file, scope.key, problems);
    if (v !== undefined) fields.systemScope = { ...scope, value: v };
  }
  for (const domain of DEFAULT_DOMAIN) {
    const found = last(domain[0]);
    if (found) applyDefaultDomain(fields, domain, found);
  }
  const region = last('region_name');
  if (region) fields.regionName = region;
  const endpointType = last('endpoint_type');
  if (endpointType) {
    const v = parseInterface(endpointType.value, endpointType.file, endpointType.key, problems);
    if (v) fields.interface = { ...endpointType, value: v };
  }
  const insecure = last('insecure');
  if (insecure) {
    const v = parseBoolWord(insecure.value, insecure.file, insecure.key, problems);
    if (v !== undefined) fields.insecure = { ...insecure, value: v };
  }
  const timeout = last('timeout');
  if (timeout) {
    const v = parseSeconds(timeout.value, timeout.file, timeout.key, problems);
    if (v !== undefined) fields.requestTimeoutMs = { ...timeout, value: v };
  }
  for (const [field, key] of [
    ['caFile', 'cafile'],
    ['certFile', 'certfile'],
    ['keyFile', 'keyfile'],
  ] as const) {
    const found = last(key);
    if (found) fields[field] = { ...found, value: absolutePath(found.value, ctx) };
  }
  problems.throwIfAny(warnings);

  const file = doc.files.join(', ');
  const keyOf = new Map<DraftField, string>([
    ...AUTH_KEYS.map((k) => [k.field, k.key] as const).reverse(),
    ['authType', 'auth_type'],
    ['regionName', 'region_name'],
    ['interface', 'endpoint_type'],
    ['caFile', 'cafile'],
    ['certFile', 'certfile'],
    ['keyFile', 'keyfile'],
    ['insecure', 'insecure'],
    ['requestTimeoutMs', 'timeout'],
    ['systemScope', 'system_scope'],
  ]);
  const draft: Draft = {
    fields,
    endpointOverride: {},
    where: (field) => ({ file, key: `[${NEUTRON_GROUP}] ${keyOf.get(field) ?? field}` }),
    source: { kind: 'kuryr.conf', files: [...doc.files], env: [] },
  };
  return { ...(await finalizeAfter(warnings, draft, ctx.signal)), from: 'kuryr.conf' };
}

function groupByName(entries: readonly IniEntry[]): Map<string, IniEntry[]> {
  const out = new Map<string, IniEntry[]>();
  for (const e of entries) out.set(e.name, [...(out.get(e.name) ?? []), e]);
  return out;
}
