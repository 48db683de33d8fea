/**
 * One clouds.yaml cloud entry (already merged with secure.yaml) to a {@link Draft}: openstacksdk's
 * key names, aliases (`tenant_*`, `endpoint_type`, `auth_plugin`, `-` for `_`) and auth keys written
 * beside `auth:` rather than in it (the ones in `auth:` win).
 */
import { closest, ConfigError } from '../../lib/config.ts';
import {
  applyDefaultDomain,
  AUTH_URL,
  DEFAULT_DOMAIN,
  OTHER_CREDENTIALS,
  SYSTEM_SCOPE,
  USER_AND_SCOPE,
  type FieldKeys,
} from './auth-keys.ts';
import type { Draft, DraftField, DraftFields, Located, TextField } from './draft.ts';
import { put } from './draft.ts';
import { absolutePath } from './files.ts';
import { warning } from './finalize.ts';
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
import { isUnset } from './yaml-tree.ts';
import type { YamlNode } from './yaml-tree.ts';

/** Auth keys in the order they are read (and problems reported); `system_scope` is parsed apart. */
const AUTH_FIELDS: FieldKeys = [...AUTH_URL, ...USER_AND_SCOPE, ...OTHER_CREDENTIALS, ...SYSTEM_SCOPE];

const AUTH_KEYS = new Set([...AUTH_FIELDS.flatMap(([, names]) => names), ...DEFAULT_DOMAIN.map(([n]) => n)]);

/** The name errors use for a field that lives outside `auth:`. */
const CLOUD_KEY_OF: Partial<Record<DraftField, string>> = {
  authType: 'auth_type',
  regionName: 'region_name',
  interface: 'interface',
  caFile: 'cacert',
  certFile: 'cert',
  keyFile: 'key',
  insecure: 'verify',
  requestTimeoutMs: 'api_timeout',
};

const CLOUD_KEYS = new Set([
  'auth',
  'auth_type',
  'auth_plugin',
  'region_name',
  'regions',
  'interface',
  'endpoint_type',
  'cacert',
  'cert',
  'key',
  'verify',
  'insecure',
  'identity_api_version',
  'api_timeout',
  'profile',
  'cloud',
]);

/** openstacksdk settings for one service that shiftstack has no use for; named so the warning can say so. */
const PER_SERVICE = /_(api_version|service_type|service_name|interface|endpoint_type|region_name)$/;

interface Found {
  node: YamlNode;
  key: string;
}

export function cloudEntryToDraft(
  entry: YamlNode,
  cloud: string,
  file: string,
  source: Draft['source'],
  ctx: LoadContext,
): { draft: Draft; warnings: string[] } {
  const prefix = `clouds.${cloud}`;
  if (entry.kind !== 'map') {
    throw new ConfigError([
      {
        file: entry.file,
        key: prefix,
        value: undefined,
        problem: 'expected a map of settings',
        fix: 'indent the cloud’s settings (auth:, region_name:, …) under its name',
      },
    ]);
  }
  const reader = new EntryReader(entry, prefix, ctx);
  const fields = reader.read();
  const endpointOverride = reader.endpointOverrides();
  reader.problems.throwIfAny(reader.warnings);

  const authKeyOf = new Map(AUTH_FIELDS.map(([field, names]) => [field, names[0]!]));
  const where = (field: DraftField) => {
    const authKey = authKeyOf.get(field);
    return { file, key: authKey ? `${prefix}.auth.${authKey}` : `${prefix}.${CLOUD_KEY_OF[field] ?? field}` };
  };
  return { draft: { fields, endpointOverride, where, source }, warnings: reader.warnings };
}

class EntryReader {
  readonly problems = new Problems();
  readonly warnings: string[] = [];
  private readonly top: Map<string, YamlNode>;
  private readonly auth: Map<string, YamlNode>;
  private readonly fields: DraftFields = {};
  private readonly prefix: string;
  private readonly ctx: LoadContext;

  constructor(entry: YamlNode & { kind: 'map' }, prefix: string, ctx: LoadContext) {
    this.top = entry.entries;
    this.prefix = prefix;
    this.ctx = ctx;
    const auth = entry.entries.get('auth');
    if (auth && auth.kind !== 'map') {
      this.problems.add(
        auth.file,
        `${prefix}.auth`,
        auth.value,
        'expected a map',
        'indent auth_url, username, … under auth:',
      );
    }
    this.auth = auth?.kind === 'map' ? auth.entries : new Map<string, YamlNode>();
  }

  read(): DraftFields {
    this.readAuth();
    this.readMethod();
    this.readRegion();
    this.readTls();
    this.readTimeouts();
    this.warnUnknown();
    return this.fields;
  }

  endpointOverrides(): Record<string, Located<string>> {
    const out: Record<string, Located<string>> = {};
    for (const [name, node] of this.top) {
      const service = endpointOverrideService(name);
      const at = service && this.text({ node, key: `${this.prefix}.${name}` });
      if (service && at) out[service] = at;
    }
    return out;
  }

  private readAuth(): void {
    const f = this.fields;
    for (const [field, names] of AUTH_FIELDS) {
      const found = this.pick(names);
      if (!found) continue;
      if (field === 'systemScope') {
        const at = this.scalar(found);
        const value = at && parseSystemScope(String(at.value), at.file, at.key, this.problems);
        if (at && value !== undefined) f.systemScope = { ...at, value };
      } else {
        put(f, field as TextField, this.text(found));
      }
    }
    for (const domain of DEFAULT_DOMAIN) {
      const found = this.pick([domain[0]]);
      const at = found && this.text(found);
      if (at) applyDefaultDomain(f, domain, at);
    }
  }

  private readMethod(): void {
    const authType = this.own('auth_type') ?? this.own('auth_plugin');
    const typeText = authType && this.text(authType);
    const type = typeText && parseAuthType(typeText.value, typeText.file, typeText.key, this.problems);
    if (typeText && type) this.fields.authType = { ...typeText, value: type };

    const version = this.own('identity_api_version');
    const versionAt = version && this.scalar(version);
    if (versionAt) checkIdentityVersion(versionAt.value, versionAt.file, versionAt.key, this.problems);

    const iface = this.own('interface') ?? this.own('endpoint_type');
    const ifaceText = iface && this.text(iface);
    const value = ifaceText && parseInterface(ifaceText.value, ifaceText.file, ifaceText.key, this.problems);
    if (ifaceText && value) this.fields.interface = { ...ifaceText, value };
  }

  private readRegion(): void {
    const region = this.own('region_name');
    const at = region && this.text(region);
    if (at) {
      const [first = '', ...rest] = at.value.split(',').map((r) => r.trim());
      if (rest.length > 0) {
        this.warnings.push(
          warning(at.file, at.key, `a comma-separated list; using the first region, ${first}`),
        );
      }
      if (first) this.fields.regionName = { ...at, value: first };
      return;
    }
    const regions = this.own('regions');
    if (regions) this.readRegionList(regions);
  }

  /** openstacksdk's `regions:` list: names or `{ name, values }`; one cloud config uses the first. */
  private readRegionList({ node, key }: Found): void {
    const list = node.kind === 'leaf' && Array.isArray(node.value) ? (node.value as unknown[]) : undefined;
    if (!list) {
      this.problems.add(
        node.file,
        key,
        undefined,
        'expected a list of regions',
        'write regions: [RegionOne] or use region_name',
      );
      return;
    }
    const first: unknown = list[0];
    const named =
      first && typeof first === 'object' ? (first as { name?: unknown; values?: unknown }) : undefined;
    const name = typeof first === 'string' ? first : typeof named?.name === 'string' ? named.name : undefined;
    if (!name) {
      this.problems.add(
        node.file,
        `${key}.0`,
        undefined,
        'expected a region name',
        'write each region as a name, or as { name: RegionOne }',
      );
      return;
    }
    if (list.length > 1) {
      this.warnings.push(
        warning(
          node.file,
          key,
          `${list.length} regions; using the first, ${name}; set region_name to choose`,
        ),
      );
    }
    if (named?.values !== undefined) {
      this.warnings.push(warning(node.file, `${key}.0.values`, 'per-region settings are not applied'));
    }
    this.fields.regionName = { value: name, file: node.file, key };
  }

  private readTls(): void {
    for (const [field, name] of [
      ['caFile', 'cacert'],
      ['certFile', 'cert'],
      ['keyFile', 'key'],
    ] as const) {
      const found = this.own(name);
      const at = found && this.text(found);
      if (at) this.fields[field] = { ...at, value: absolutePath(at.value, this.ctx) };
    }
    // requests' rule, which openstacksdk follows: `insecure: true` wins over anything `verify` says.
    for (const [name, invert] of [
      ['verify', true],
      ['insecure', false],
    ] as const) {
      const found = this.own(name);
      const at = found && this.scalar(found);
      const value =
        at &&
        parseBoolWord(
          typeof at.value === 'number' ? String(at.value) : at.value,
          at.file,
          at.key,
          this.problems,
        );
      if (!at || value === undefined) continue;
      const insecure = invert ? !value : value;
      if (insecure || !this.fields.insecure?.value) this.fields.insecure = { ...at, value: insecure };
    }
  }

  private readTimeouts(): void {
    const found = this.own('api_timeout');
    const at = found && this.scalar(found);
    if (!at) return;
    if (typeof at.value === 'boolean') {
      this.problems.add(
        at.file,
        at.key,
        at.value,
        'expected a number of seconds',
        'set it to a number of seconds, e.g. 60',
      );
      return;
    }
    const value = parseSeconds(at.value, at.file, at.key, this.problems);
    if (value !== undefined) this.fields.requestTimeoutMs = { ...at, value };
  }

  private warnUnknown(): void {
    for (const [name, node] of this.top) {
      if (CLOUD_KEYS.has(name) || AUTH_KEYS.has(name) || endpointOverrideService(name)) continue;
      const key = `${this.prefix}.${name}`;
      if (PER_SERVICE.test(name)) {
        this.warnings.push(
          warning(node.file, key, 'an openstacksdk per-service setting shiftstack does not use; ignored'),
        );
      } else {
        this.unknown(node, key, closest(name, [...CLOUD_KEYS, ...AUTH_KEYS, 'network_endpoint_override']));
      }
    }
    for (const [name, node] of this.auth) {
      if (!AUTH_KEYS.has(name))
        this.unknown(node, `${this.prefix}.auth.${name}`, closest(name, [...AUTH_KEYS]));
    }
    const profile = this.own('profile') ?? this.own('cloud');
    if (profile) {
      this.warnings.push(
        warning(
          profile.node.file,
          profile.key,
          'vendor profiles are not supported; only the settings written in this entry are used',
        ),
      );
    }
  }

  /** Names only: an unknown key may be a misspelt password, so its value is never repeated. */
  private unknown(node: YamlNode, key: string, suggestion: string | undefined): void {
    this.warnings.push(
      warning(node.file, key, `unknown key, ignored${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`),
    );
  }

  /** The first of `names` that is set, looking in `auth:` before the cloud's top level. */
  private pick(names: readonly string[]): Found | undefined {
    for (const [map, at] of [
      [this.auth, `${this.prefix}.auth`],
      [this.top, this.prefix],
    ] as const) {
      for (const n of names) {
        const node = map.get(n);
        if (node && !isUnset(node)) return { node, key: `${at}.${n}` };
      }
    }
    return undefined;
  }

  /** A key of the cloud itself (not of `auth:`), if set. */
  private own(name: string): Found | undefined {
    const node = this.top.get(name);
    return node && !isUnset(node) ? { node, key: `${this.prefix}.${name}` } : undefined;
  }

  /** A scalar as text; numbers are ids here, as openstacksdk's str() makes them. */
  private text({ node, key }: Found): Located<string> | undefined {
    if (node.kind === 'map' || (typeof node.value !== 'string' && typeof node.value !== 'number')) {
      const shown = node.kind === 'map' ? '{…}' : node.value;
      this.problems.add(node.file, key, shown, 'expected a string', `set ${key} to a string`);
      return undefined;
    }
    return { value: String(node.value), file: node.file, key };
  }

  /** A string, number or boolean as written, for keys whose parser accepts several types. */
  private scalar(found: Found): Located<string | number | boolean> | undefined {
    const { node, key } = found;
    if (node.kind === 'leaf' && (typeof node.value === 'boolean' || typeof node.value === 'number')) {
      return { value: node.value, file: node.file, key };
    }
    return this.text(found);
  }
}
