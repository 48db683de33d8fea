/** POST /v3/auth/tokens: the identity methods and scopes Keystone accepts, with its error behaviour. */
import { SimError } from '../core/errors.ts';
import { unauthorized, type IdentityStore, type Scope, type Token, type User } from './store.ts';

const VALIDATION_SUFFIX =
  ' The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.';

export const validationError = (message: string) =>
  new SimError(400, `${message}${VALIDATION_SUFFIX}`, { type: 'ValidationError' });

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function authenticate(store: IdentityStore, body: unknown): Token {
  const auth = obj(obj(body)?.auth);
  if (!auth) throw validationError("'auth' is a required property");
  const identity = obj(auth.identity);
  if (!identity) throw validationError('Expecting to find identity in auth.');
  const methods = identity.methods;
  if (!Array.isArray(methods) || methods.length === 0 || !methods.every((m) => typeof m === 'string')) {
    throw validationError('Expecting to find methods in identity.');
  }
  const method = methods[0] as string;
  if (!obj(identity[method])) throw validationError(`Expecting to find ${method} in identity.`);

  switch (method) {
    case 'password':
      return passwordAuth(store, obj(identity.password)!, auth.scope);
    case 'application_credential':
      return appCredAuth(store, obj(identity.application_credential)!, auth.scope);
    case 'token':
      return tokenAuth(store, obj(identity.token)!, auth.scope);
    default:
      throw unauthorized();
  }
}

function resolveDomain(store: IdentityStore, ref: unknown): string | undefined {
  const d = obj(ref);
  if (!d) return undefined;
  const id = str(d.id);
  if (id) return store.domains.has(id) ? id : undefined;
  const name = str(d.name);
  return name ? store.domainByName(name)?.id : undefined;
}

function resolveUser(store: IdentityStore, ref: Json): User | undefined {
  const id = str(ref.id);
  if (id) return store.users.get(id);
  const name = str(ref.name);
  if (!name) throw validationError('Expecting to find id or name in user.');
  if (!obj(ref.domain)) throw validationError('Expecting to find domain in user.');
  const domainId = resolveDomain(store, ref.domain);
  return domainId ? store.userByName(name, domainId) : undefined;
}

function passwordAuth(store: IdentityStore, password: Json, scopeRef: unknown): Token {
  const userRef = obj(password.user);
  if (!userRef) throw validationError('Expecting to find user in password.');
  const user = resolveUser(store, userRef);
  if (!user || !user.enabled || str(userRef.password) !== user.password) throw unauthorized();
  return scoped(store, user, ['password'], scopeRef);
}

function tokenAuth(store: IdentityStore, token: Json, scopeRef: unknown): Token {
  const id = str(token.id);
  if (!id) throw validationError('Expecting to find id in token.');
  const existing = store.liveToken(id);
  if (!existing) throw unauthorized();
  // Application-credential tokens cannot be rescoped or renewed into other tokens.
  if (existing.appCredId)
    throw new SimError(403, 'Application credentials cannot request a new token.', { type: 'Forbidden' });
  const user = store.users.get(existing.userId);
  if (!user) throw unauthorized();
  const token2 = scoped(store, user, ['token', ...existing.methods.filter((m) => m !== 'token')], scopeRef);
  // A token obtained from a token never outlives the original (Keystone keeps expires_at).
  token2.expiresAt = Math.min(token2.expiresAt, existing.expiresAt);
  return token2;
}

function appCredAuth(store: IdentityStore, ref: Json, scopeRef: unknown): Token {
  const secret = str(ref.secret);
  if (!secret) throw validationError('Expecting to find secret in application_credential.');
  let ac;
  const id = str(ref.id);
  if (id) {
    // Unlike password auth, Keystone tells an unknown credential id (404) from a wrong secret (401).
    ac = store.appCreds.get(id);
    if (!ac) throw new SimError(404, `Could not find Application Credential: ${id}.`, { type: 'NotFound' });
  } else {
    const name = str(ref.name);
    const userRef = obj(ref.user);
    if (!name || !userRef)
      throw validationError('Expecting to find id or name and user in application_credential.');
    const user = resolveUser(store, userRef);
    if (!user)
      throw new SimError(404, `Could not find user: ${str(userRef.name) ?? str(userRef.id) ?? ''}.`, {
        type: 'NotFound',
      });
    ac = [...store.appCreds.values()].find((a) => a.user_id === user.id && a.name === name);
  }
  if (!ac || ac.secret !== secret) throw unauthorized();
  if (ac.expires_at && Date.parse(ac.expires_at) <= Date.now()) throw unauthorized();
  if (scopeRef !== undefined) throw unauthorized();
  const user = store.users.get(ac.user_id);
  if (!user?.enabled) throw unauthorized();
  // Roles the user has lost since the credential was made are dropped; with none left it is useless.
  const current = new Set(store.effectiveRoles(user.id, ac.project_id));
  const roles = ac.role_ids.filter((r) => current.has(r));
  if (roles.length === 0) throw unauthorized();
  return store.issueToken(
    user.id,
    ['application_credential'],
    { kind: 'project', projectId: ac.project_id },
    roles,
    ac.id,
  );
}

function scoped(store: IdentityStore, user: User, methods: string[], scopeRef: unknown): Token {
  const scope = parseScope(store, scopeRef);
  switch (scope.kind) {
    case 'unscoped':
      return store.issueToken(user.id, methods, scope, []);
    case 'project': {
      const roles = store.effectiveRoles(user.id, scope.projectId);
      if (roles.length === 0) throw unauthorized();
      return store.issueToken(user.id, methods, scope, roles);
    }
    case 'system': {
      const roles = store.systemRoles(user.id);
      if (!roles.some((r) => store.roles.get(r)?.name === 'admin')) throw unauthorized();
      return store.issueToken(user.id, methods, scope, roles);
    }
    case 'domain': {
      const roles = user.domain_id === scope.domainId ? store.systemRoles(user.id) : [];
      if (roles.length === 0) throw unauthorized();
      return store.issueToken(user.id, methods, scope, roles);
    }
  }
}

function parseScope(store: IdentityStore, ref: unknown): Scope {
  if (ref === undefined || ref === null) return { kind: 'unscoped' };
  const scope = obj(ref);
  if (!scope) throw validationError('Invalid scope.');
  if (scope.system !== undefined) return { kind: 'system' };
  const projectRef = obj(scope.project);
  if (projectRef) {
    const id = str(projectRef.id);
    const project = id
      ? store.projects.get(id)
      : (() => {
          const name = str(projectRef.name);
          if (!name) throw validationError('Expecting to find id or name in project.');
          if (!obj(projectRef.domain)) throw validationError('Expecting to find domain in project.');
          const domainId = resolveDomain(store, projectRef.domain);
          return domainId ? store.projectByName(name, domainId) : undefined;
        })();
    if (!project || !project.enabled) throw unauthorized();
    return { kind: 'project', projectId: project.id };
  }
  const domainRef = scope.domain;
  if (domainRef !== undefined) {
    const domainId = resolveDomain(store, domainRef);
    if (!domainId) throw unauthorized();
    return { kind: 'domain', domainId };
  }
  if (scope['OS-TRUST:trust'] !== undefined) {
    throw new SimError(501, 'Trust-scoped tokens are not supported by the emulator.', {
      type: 'NotImplemented',
    });
  }
  throw validationError('Invalid scope.');
}
