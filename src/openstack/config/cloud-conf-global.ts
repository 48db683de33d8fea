/**
 * The `[Global]` section of OCCM's cloud.conf (client.AuthOpts in cloud-provider-openstack): every
 * key it reads, with OCCM's value rules, and warnings for keys it would ignore.
 */
import { resolve } from 'node:path';
import { closest } from '../../lib/config.ts';
import { GCFG_BOOL_FIX, gcfgBool, gcfgLast, gcfgWhere } from '../../lib/gcfg.ts';
import type { GcfgDocument, GcfgEntry, GcfgSection } from '../../lib/gcfg.ts';
import type { DraftField, DraftFields, Located, TextField } from './draft.ts';
import { warning } from './finalize.ts';
import type { Problems } from './problems.ts';
import type { LoadContext } from './types.ts';
import { parseInterface } from './values.ts';

/** `[Global]` keys that map straight onto a field. */
const GLOBAL_FIELDS: Readonly<Record<string, DraftField>> = {
  'auth-url': 'authUrl',
  username: 'username',
  'user-id': 'userId',
  password: 'password',
  'tenant-id': 'projectId',
  'tenant-name': 'projectName',
  'tenant-domain-id': 'projectDomainId',
  'tenant-domain-name': 'projectDomainName',
  'domain-id': 'domainId',
  'domain-name': 'domainName',
  'user-domain-id': 'userDomainId',
  'user-domain-name': 'userDomainName',
  region: 'regionName',
  'os-endpoint-type': 'interface',
  'ca-file': 'caFile',
  'cert-file': 'certFile',
  'key-file': 'keyFile',
  'tls-insecure': 'insecure',
  token: 'token',
  'trust-id': 'trustId',
  'application-credential-id': 'applicationCredentialId',
  'application-credential-name': 'applicationCredentialName',
  'application-credential-secret': 'applicationCredentialSecret',
};

const GLOBAL_OTHER = ['trustee-id', 'trustee-password', 'use-clouds', 'clouds-file', 'cloud'];
const GLOBAL_KEYS = [...Object.keys(GLOBAL_FIELDS), ...GLOBAL_OTHER];

/** Spellings from clouds.yaml and the openstack CLI that users carry over, and what cloud.conf calls them. */
const HINTS: Readonly<Record<string, string>> = {
  'project-id': 'tenant-id',
  'project-name': 'tenant-name',
  'project-domain-id': 'tenant-domain-id',
  'project-domain-name': 'tenant-domain-name',
  'region-name': 'region',
  interface: 'os-endpoint-type',
  'endpoint-type': 'os-endpoint-type',
  insecure: 'tls-insecure',
  verify: 'tls-insecure',
  cacert: 'ca-file',
  'ca-cert': 'ca-file',
  cert: 'cert-file',
  key: 'key-file',
};

/** Keys of the in-tree provider that OCCM never read. */
const IN_TREE = new Set(['secret-name', 'secret-namespace', 'kubeconfig-path']);

export interface GlobalSection {
  fields: DraftFields;
  /** Unknown keys that look meant for a field (see Draft.unread). */
  unread: Partial<Record<DraftField, string>>;
  useClouds: boolean;
  cloudsFile?: Located<string>;
  cloudName?: Located<string>;
  warnings: string[];
}

/** Reads `[Global]`; value problems go to `problems`, the caller throws them with any others. */
export function readGlobalSection(
  document: GcfgDocument,
  global: GcfgSection,
  ctx: LoadContext,
  problems: Problems,
): GlobalSection {
  const reader = new GlobalReader(document, global, problems);
  reader.warnKeys();
  const fields = reader.fields(ctx);
  reader.applyTrustee(fields);
  const cloudsFile = reader.text('clouds-file');
  const cloudName = reader.text('cloud');
  return {
    fields,
    unread: reader.unread,
    useClouds: reader.useClouds(),
    ...(cloudsFile ? { cloudsFile } : {}),
    ...(cloudName ? { cloudName } : {}),
    warnings: reader.warnings,
  };
}

class GlobalReader {
  readonly warnings: string[] = [];
  readonly unread: Partial<Record<DraftField, string>> = {};
  private readonly document: GcfgDocument;
  private readonly global: GcfgSection;
  private readonly problems: Problems;

  constructor(document: GcfgDocument, global: GcfgSection, problems: Problems) {
    this.document = document;
    this.global = global;
    this.problems = problems;
  }

  /** Unknown keys (with the cloud.conf spelling when a clouds.yaml one was used) and repeated keys. */
  warnKeys(): void {
    const seen = new Map<string, GcfgEntry[]>();
    for (const entry of this.global.entries) seen.set(entry.name, [...(seen.get(entry.name) ?? []), entry]);
    for (const [name, entries] of seen) {
      const last = entries[entries.length - 1]!;
      const at = this.at(last);
      if (!GLOBAL_KEYS.includes(name)) {
        const hint = HINTS[name] ?? closest(name, GLOBAL_KEYS);
        const meant = hint === undefined ? undefined : GLOBAL_FIELDS[hint];
        if (meant && !IN_TREE.has(name)) this.unread[meant] = at.key;
        this.warn(
          at,
          IN_TREE.has(name)
            ? 'a key of the old in-tree provider that OCCM does not read; ignored'
            : `unknown key, ignored${hint ? ` (did you mean "${hint}"?)` : ''}`,
        );
      } else if (entries.length > 1) {
        this.warn(at, `set ${entries.length} times; this last one wins`);
      }
    }
  }

  fields(ctx: LoadContext): DraftFields {
    const fields: DraftFields = {};
    for (const [name, field] of Object.entries(GLOBAL_FIELDS)) {
      const found = this.text(name);
      if (!found) continue;
      if (field === 'interface') {
        const v = parseInterface(found.value, found.file, found.key, this.problems);
        if (v) fields.interface = { ...found, value: v };
      } else if (field === 'insecure') {
        const v = this.tlsInsecure(found);
        if (v !== undefined) fields.insecure = { ...found, value: v };
      } else if (field === 'caFile' || field === 'certFile' || field === 'keyFile') {
        fields[field] = { ...found, value: resolve(ctx.cwd, found.value) };
      } else {
        fields[field as TextField] = found;
      }
    }
    return fields;
  }

  /** Trusts the way OCCM does them: the trustee's id and password, when given, replace the user's. */
  applyTrustee(fields: DraftFields): void {
    const trusteeId = this.text('trustee-id');
    const trusteePassword = this.text('trustee-password');
    if (!fields.trustId) {
      for (const unused of [trusteeId, trusteePassword]) {
        if (unused) this.warn(unused, 'ignored: trust-id is not set');
      }
      return;
    }
    if (trusteeId) {
      for (const shadowed of [fields.username, fields.userDomainName, fields.userDomainId]) {
        if (shadowed) this.warn(shadowed, `ignored: ${trusteeId.key} names the user`);
      }
      delete fields.username;
      delete fields.userDomainName;
      delete fields.userDomainId;
      fields.userId = trusteeId;
    }
    if (trusteePassword) fields.password = trusteePassword;
  }

  /** A gcfg boolean, so `use-clouds` alone on a line means true. */
  useClouds(): boolean {
    const entry = gcfgLast(this.global, 'use-clouds');
    if (!entry) return false;
    const v = gcfgBool(entry);
    if (v === undefined) {
      const at = this.at(entry);
      this.problems.add(at.file, at.key, entry.value, 'not a boolean', GCFG_BOOL_FIX);
    }
    return v ?? false;
  }

  /** The last value of a key that needs text; an implicit `key` alone is gcfg's "blank value" error. */
  text(name: string): Located<string> | undefined {
    const entry = gcfgLast(this.global, name);
    if (!entry) return undefined;
    if (entry.implicit) {
      const at = this.at(entry);
      this.problems.add(
        at.file,
        at.key,
        undefined,
        'the key has no value',
        `write ${entry.rawName} = <value>, or remove the line`,
      );
      return undefined;
    }
    return entry.value === '' ? undefined : this.at(entry);
  }

  /** OCCM compares the text with "true", so only the exact lower-case words mean what they say. */
  private tlsInsecure(found: Located<string>): boolean | undefined {
    if (found.value === 'true' || found.value === 'false') return found.value === 'true';
    this.problems.add(
      found.file,
      found.key,
      found.value,
      'not true or false',
      'write tls-insecure = true or tls-insecure = false (lower case: OCCM compares the text)',
    );
    return undefined;
  }

  private at(entry: GcfgEntry): Located<string> {
    return {
      value: entry.value,
      file: gcfgWhere(this.document, entry.line),
      key: `[Global] ${entry.rawName}`,
    };
  }

  private warn(at: Located<unknown>, text: string): void {
    this.warnings.push(warning(at.file, at.key, text));
  }
}

/** The `[Global]` (or `[Metadata]`) key that sets a field, for "set …" fixes. */
export function confKeyOf(field: DraftField): string {
  if (field === 'requestTimeoutMs') return '[Metadata] request-timeout';
  const name = Object.entries(GLOBAL_FIELDS).find(([, f]) => f === field)?.[0];
  return `[Global] ${name ?? field}`;
}
