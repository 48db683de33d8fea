/**
 * OS_* environment variables, as an openrc file or `openstack` CLI users set them. Errors name the
 * file `environment` and the variable. An empty variable counts as unset (openrc files often
 * `export OS_PROJECT_ID=` to clear one).
 */
import { closest } from '../../lib/config.ts';
import {
  applyDefaultDomain,
  AUTH_URL,
  CREDENTIAL_FIELDS,
  DEFAULT_DOMAIN,
  envVariable,
  OTHER_CREDENTIALS,
  SYSTEM_SCOPE,
  USER_AND_SCOPE,
  type FieldKeys,
} from './auth-keys.ts';
import type { Draft, DraftField, DraftFields, Located, TextField } from './draft.ts';
import { finalizeAfter, warning } from './finalize.ts';
import type { Finalized } from './finalize.ts';
import { absolutePath } from './files.ts';
import { Problems } from './problems.ts';
import type { LoadContext } from './types.ts';
import {
  checkIdentityVersion,
  endpointOverrideService,
  parseAuthType,
  parseBoolWord,
  parseInterface,
  parseSeconds,
  parseSystemScope,
} from './values.ts';

export const ENVIRONMENT = 'environment';

type Env = LoadContext['env'];

const fromAuthKeys = (keys: FieldKeys): FieldKeys =>
  keys.map(([field, names]) => [field, names.map(envVariable)] as const);

/**
 * Each field and its variables, the preferred spelling first (it wins, and it is what errors name).
 * The variables used are reported (`source.env`) in this order.
 */
const VARIABLES: FieldKeys = [
  ...fromAuthKeys(AUTH_URL),
  ['authType', ['OS_AUTH_TYPE']],
  ...fromAuthKeys(USER_AND_SCOPE),
  ...fromAuthKeys(SYSTEM_SCOPE),
  ...fromAuthKeys(OTHER_CREDENTIALS),
  ['regionName', ['OS_REGION_NAME']],
  ['interface', ['OS_INTERFACE', 'OS_ENDPOINT_TYPE']],
  ['caFile', ['OS_CACERT']],
  ['certFile', ['OS_CERT']],
  ['keyFile', ['OS_KEY']],
  ['insecure', ['OS_INSECURE']],
  ['requestTimeoutMs', ['OS_API_TIMEOUT']],
];

/** Variables that choose or locate a config rather than hold one (openstacksdk's "selectors"). */
const SELECTORS = [
  'OS_CLOUD',
  'OS_CLOUD_NAME',
  'OS_CLIENT_CONFIG_FILE',
  'OS_CLIENT_SECURE_FILE',
  'OS_REGION_NAME',
];

/** Known elsewhere (OCCM, python-openstackclient, test runners); never worth a warning. */
const IGNORED = /^OS_(CCM_|TEST|STD|LOG|[A-Z0-9_]+_API_VERSION$|PREFER_IPV6$|FORCE_IPV4$)/;

const KNOWN = new Set([
  ...VARIABLES.flatMap(([, names]) => names),
  ...DEFAULT_DOMAIN.map(([key]) => envVariable(key)),
  ...SELECTORS,
  'OS_IDENTITY_API_VERSION',
]);

function get(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

/** What makes the environment a cloud of its own; OS_CACERT or OS_INTERFACE alone only tune another source. */
const CLOUD_FIELDS: ReadonlySet<DraftField> = new Set<DraftField>(['authUrl', ...CREDENTIAL_FIELDS]);

/** True when the environment holds a cloud (an auth URL or a credential), not just a selector such as OS_CLOUD. */
export function envHasCloud(env: Env): boolean {
  return VARIABLES.some(
    ([field, names]) => CLOUD_FIELDS.has(field) && names.some((n) => get(env, n) !== undefined),
  );
}

/** Reads the OS_* variables into a draft; value errors are thrown together, unknown look-alikes are warnings. */
export function readEnvironment(ctx: LoadContext): { draft: Draft; warnings: string[] } {
  const { env } = ctx;
  const problems = new Problems();
  const warnings: string[] = [];
  const fields: DraftFields = {};
  const used: string[] = [];
  const at = (name: string): Located<string> | undefined => {
    const value = get(env, name);
    if (value === undefined) return undefined;
    used.push(name);
    return { value, file: ENVIRONMENT, key: name };
  };

  for (const [field, names] of VARIABLES) {
    const found = names.map(at).find((v) => v !== undefined);
    if (!found) continue;
    const { value, file, key } = found;
    switch (field) {
      case 'authType': {
        const v = parseAuthType(value, file, key, problems);
        if (v) fields.authType = { ...found, value: v };
        break;
      }
      case 'interface': {
        const v = parseInterface(value, file, key, problems);
        if (v) fields.interface = { ...found, value: v };
        break;
      }
      case 'insecure': {
        const v = parseBoolWord(value, file, key, problems);
        if (v !== undefined) fields.insecure = { ...found, value: v };
        break;
      }
      case 'systemScope': {
        const v = parseSystemScope(value, file, key, problems);
        if (v !== undefined) fields.systemScope = { ...found, value: v };
        break;
      }
      case 'requestTimeoutMs': {
        const v = parseSeconds(value, file, key, problems);
        if (v !== undefined) fields.requestTimeoutMs = { ...found, value: v };
        break;
      }
      case 'caFile':
      case 'certFile':
      case 'keyFile':
        fields[field] = { ...found, value: absolutePath(value, ctx) };
        break;
      default:
        fields[field as TextField] = found;
    }
  }
  for (const domain of DEFAULT_DOMAIN) {
    const found = at(envVariable(domain[0]));
    if (found) applyDefaultDomain(fields, domain, found);
  }
  const version = at('OS_IDENTITY_API_VERSION');
  if (version) checkIdentityVersion(version.value, version.file, version.key, problems);

  const endpointOverride: Record<string, Located<string>> = {};
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('OS_') || KNOWN.has(name) || get(env, name) === undefined) continue;
    const service = endpointOverrideService(name.slice(3));
    if (service) {
      endpointOverride[service] = at(name)!;
      continue;
    }
    if (IGNORED.test(name)) continue;
    // Only look-alikes are reported: many tools set OS_* variables of their own.
    const suggestion = closest(name, [...KNOWN]);
    if (suggestion)
      warnings.push(warning(ENVIRONMENT, name, `unknown variable, ignored (did you mean ${suggestion}?)`));
  }

  problems.throwIfAny(warnings);
  const primary = new Map(VARIABLES.map(([field, names]) => [field, names[0]!]));
  return {
    draft: {
      fields,
      endpointOverride,
      where: (field) => ({ file: ENVIRONMENT, key: primary.get(field) ?? field }),
      source: { kind: 'environment', files: [], env: [...new Set(used)] },
    },
    warnings,
  };
}

/** Reads and validates the OS_* variables as a {@link CloudConfig}. */
export async function loadEnvironment(ctx: LoadContext): Promise<Finalized> {
  const { draft, warnings } = readEnvironment(ctx);
  return finalizeAfter(warnings, draft, ctx.signal);
}
