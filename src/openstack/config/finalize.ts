/**
 * Turns a {@link Draft} from any source into a {@link CloudConfig}, checking what Keystone will check
 * at the first request (a complete auth method, domains for names, one scope) so that the user learns
 * it from the config file's own keys instead of from a 401.
 */
import { stat } from 'node:fs/promises';
import { ConfigError } from '../../lib/config.ts';
import type { Draft, DraftField, DraftFields, Located } from './draft.ts';
import { Problems } from './problems.ts';
import type { AuthType, CloudConfig } from './types.ts';
import { AUTH_URL_EXAMPLE, checkNotKeystoneV2, parseUrl } from './values.ts';

export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

export interface Finalized {
  config: CloudConfig;
  warnings: string[];
}

/** A warning line in the same shape as a ConfigError line, without a value (it may be a secret). */
export function warning(file: string, key: string, text: string): string {
  return key ? `${file}: key "${key}": ${text}` : `${file}: ${text}`;
}

const TEXT_FIELDS = [
  'username',
  'userId',
  'password',
  'userDomainName',
  'userDomainId',
  'projectName',
  'projectId',
  'projectDomainName',
  'projectDomainId',
  'domainName',
  'domainId',
  'applicationCredentialId',
  'applicationCredentialName',
  'applicationCredentialSecret',
  'token',
  'trustId',
  'regionName',
] as const;

export async function finalizeDraft(draft: Draft, signal?: AbortSignal): Promise<Finalized> {
  const v = new Validation(draft);
  const authUrl = v.authUrl();
  v.applyDomain();
  const authType = v.fields.authType?.value ?? inferAuthType(v.fields);
  if (authType === 'password') v.password();
  else if (authType === 'v3applicationcredential') v.applicationCredential();
  else v.token();
  if (authType !== 'v3applicationcredential') v.scope();
  await v.tls(signal);
  const endpointOverride = v.endpointOverrides();
  v.problems.throwIfAny(v.warnings);

  const f = v.fields;
  const config: CloudConfig = {
    authUrl: authUrl!,
    authType,
    systemScope: f.systemScope?.value ?? false,
    interface: f.interface?.value ?? 'public',
    tls: { insecure: f.insecure?.value ?? false },
    endpointOverride,
    requestTimeoutMs: f.requestTimeoutMs?.value ?? DEFAULT_REQUEST_TIMEOUT_MS,
    source: draft.source,
  };
  for (const name of TEXT_FIELDS) {
    const at = f[name];
    if (at) config[name] = at.value;
  }
  if (f.caFile) config.tls.caFile = f.caFile.value;
  if (f.certFile) config.tls.certFile = f.certFile.value;
  if (f.keyFile) config.tls.keyFile = f.keyFile.value;
  return { config, warnings: v.warnings };
}

/**
 * finalizeDraft after a reader that found `warnings`: they come first, in the result or in the
 * ConfigError (an ignored, misspelt key often explains the problem).
 */
export async function finalizeAfter(
  warnings: readonly string[],
  draft: Draft,
  signal?: AbortSignal,
): Promise<Finalized> {
  try {
    const done = await finalizeDraft(draft, signal);
    return { config: done.config, warnings: [...warnings, ...done.warnings] };
  } catch (err) {
    throw ConfigError.withWarnings(err, warnings);
  }
}

/** What gophercloud and keystoneauth pick when no auth type is written: the credential that is there. */
function inferAuthType(f: DraftFields): AuthType {
  if (f.applicationCredentialId || f.applicationCredentialName || f.applicationCredentialSecret) {
    return 'v3applicationcredential';
  }
  if (f.token && !f.password) return 'token';
  return 'password';
}

class Validation {
  readonly problems = new Problems();
  readonly warnings: string[] = [];
  /** A copy: applying the domain rule must not change the caller's draft. */
  readonly fields: DraftFields;
  private readonly draft: Draft;

  constructor(draft: Draft) {
    this.draft = draft;
    this.fields = { ...draft.fields };
  }

  authUrl(): string | undefined {
    const at = this.fields.authUrl;
    if (!at) {
      this.missing(
        'authUrl',
        'required key is missing',
        `set it to the Keystone v3 URL, e.g. ${AUTH_URL_EXAMPLE}`,
      );
      return undefined;
    }
    const url = parseUrl(at.value, at.file, at.key, this.problems, AUTH_URL_EXAMPLE);
    if (url) checkNotKeystoneV2(url, at.file, at.key, this.problems);
    return url;
  }

  /**
   * A domain given once stands for the user's and the project's domain when a project is the scope
   * (openstacksdk and gophercloud both read it so); without a project it is the scope itself.
   */
  applyDomain(): void {
    const f = this.fields;
    if (!f.projectName && !f.projectId) return;
    if (!f.userDomainName && !f.userDomainId) {
      if (f.domainName) f.userDomainName = f.domainName;
      if (f.domainId) f.userDomainId = f.domainId;
    }
    if (!f.projectDomainName && !f.projectDomainId) {
      if (f.domainName) f.projectDomainName = f.domainName;
      if (f.domainId) f.projectDomainId = f.domainId;
    }
    delete f.domainName;
    delete f.domainId;
  }

  password(): void {
    const f = this.fields;
    if (!f.username && !f.userId) {
      this.missing(
        'username',
        'password auth needs a user',
        `set ${this.key('username')} (with ${this.key('userDomainName')}) or ${this.key('userId')}`,
      );
    }
    if (!f.password)
      this.missing('password', 'password auth needs a password', `set ${this.key('password')}`);
    this.userDomain();
  }

  applicationCredential(): void {
    const f = this.fields;
    if (!f.applicationCredentialSecret) {
      this.missing(
        'applicationCredentialSecret',
        'application credential auth needs the secret',
        `set ${this.key('applicationCredentialSecret')} to the secret shown when the credential was created`,
      );
    }
    if (!f.applicationCredentialId && !f.applicationCredentialName) {
      this.missing(
        'applicationCredentialId',
        'application credential auth needs the credential',
        `set ${this.key('applicationCredentialId')} (or ${this.key('applicationCredentialName')} with the user)`,
      );
    } else if (!f.applicationCredentialId && !f.username && !f.userId) {
      this.missing(
        'username',
        'an application credential given by name needs its owner',
        `set ${this.key('username')} and ${this.key('userDomainName')}, or ${this.key('userId')}; or use ${this.key('applicationCredentialId')} instead`,
      );
    } else if (!f.applicationCredentialId) {
      this.userDomain();
    }
    if (f.trustId) {
      this.problems.add(
        f.trustId.file,
        f.trustId.key,
        f.trustId.value,
        'a trust cannot be used with an application credential',
        `remove ${f.trustId.key}, or authenticate with a user and password`,
      );
    }
    for (const scope of [f.projectName, f.projectId, f.domainName, f.domainId, f.systemScope]) {
      if (scope && scope.value !== false) {
        this.warn(scope, 'ignored: an application credential is always scoped to its own project');
      }
    }
  }

  token(): void {
    if (!this.fields.token) {
      this.missing(
        'token',
        'token auth needs a token',
        `set ${this.key('token')} (or choose another auth type)`,
      );
    }
  }

  scope(): void {
    const f = this.fields;
    const project = f.projectId ?? f.projectName;
    const domain = f.domainId ?? f.domainName;
    const system = f.systemScope?.value ? f.systemScope : undefined;
    if (f.trustId) {
      for (const scope of [project, domain, system]) {
        if (scope) this.warn(scope, `ignored: the trust in ${f.trustId.key} sets the scope`);
      }
      return;
    }
    if (system && (project || domain)) {
      this.problems.add(
        system.file,
        system.key,
        system.value,
        'a token has exactly one scope, and a project or domain is also set',
        `remove ${system.key}, or remove the project and domain`,
      );
    }
    if (f.projectName && !f.projectId && !f.projectDomainName && !f.projectDomainId) {
      this.missing(
        'projectDomainName',
        'Keystone needs the domain of a project given by name',
        `set ${this.key('projectDomainName')} (usually "Default") or ${this.key('projectDomainId')}, or use ${this.key('projectId')}`,
      );
    }
    if (!project && !domain && !system) {
      this.warn(
        { value: undefined, ...this.draft.where('projectName') },
        'no project, domain or system scope: Keystone will issue an unscoped token with no service catalog; set a project',
      );
    }
  }

  async tls(signal?: AbortSignal): Promise<void> {
    const f = this.fields;
    if (f.keyFile && !f.certFile) {
      this.problems.add(
        f.keyFile.file,
        f.keyFile.key,
        f.keyFile.value,
        'a client key without a client certificate',
        `set ${this.key('certFile')} to the matching certificate, or remove ${f.keyFile.key}`,
      );
    }
    if (f.insecure?.value && f.caFile) {
      this.warn(f.caFile, `not used: ${f.insecure.key} turns certificate verification off`);
    }
    for (const file of [f.caFile, f.certFile, f.keyFile]) {
      if (file) await this.checkFile(file, signal);
    }
  }

  endpointOverrides(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [service, at] of Object.entries(this.draft.endpointOverride)) {
      const url = parseUrl(at.value, at.file, at.key, this.problems, `https://${service}.example.com`);
      if (url) out[service] = url;
    }
    return out;
  }

  /**
   * Keystone resolves a user name only within a domain; an id needs none. A domain given once
   * (`domain-name`) is the user's only with a project (see applyDomain), so the fix says which.
   */
  private userDomain(): void {
    const f = this.fields;
    if (!f.username || f.userId || f.userDomainName || f.userDomainId) return;
    const set = `set ${this.key('userDomainName')} (usually "Default") or ${this.key('userDomainId')}`;
    const domain = f.domainName ?? f.domainId;
    const unread = this.draft.unread;
    const project = unread?.projectName ?? unread?.projectId;
    let fix = set;
    if (domain && project) {
      const field = unread?.projectName ? 'projectName' : 'projectId';
      fix = `rename ${project} to ${this.key(field)}: with a project, ${domain.key} is the user's domain too; or ${set}`;
    } else if (domain) {
      fix = `${set}: ${domain.key} stands for the user's domain only together with a project (${this.key('projectName')} or ${this.key('projectId')}); without one it is the token's scope`;
    }
    this.missing('userDomainName', 'Keystone needs the domain of a user given by name', fix);
  }

  /** Early, so a bad path fails at startup with its key rather than at the first TLS handshake. */
  private async checkFile(at: Located<string>, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    try {
      const s = await stat(at.value);
      if (!s.isFile()) this.problems.add(at.file, at.key, at.value, 'not a file', 'point it at a PEM file');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      this.problems.add(
        at.file,
        at.key,
        at.value,
        code === 'ENOENT' ? 'the file does not exist' : `the file cannot be read (${code ?? String(err)})`,
        code === 'ENOENT'
          ? 'check the path (relative paths are taken from the working directory), or remove the key'
          : 'check the file permissions for the user running shiftstack',
      );
    }
  }

  private key(field: DraftField): string {
    return this.draft.where(field).key;
  }

  /** A missing field; when the source holds it under an unknown name, the fix is the rename. */
  private missing(field: DraftField, text: string, fix: string): void {
    const w = this.draft.where(field);
    const unread = this.draft.unread?.[field];
    this.problems.add(
      w.file,
      w.key,
      undefined,
      text,
      unread ? `rename ${unread} to ${w.key}; or ${fix}` : fix,
    );
  }

  private warn(at: Located<unknown>, text: string): void {
    this.warnings.push(warning(at.file, at.key, text));
  }
}
