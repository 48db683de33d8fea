import { randomBytes } from 'node:crypto';
import type { IdentityApi, ProjectView } from '../core/contracts.ts';
import { SimError } from '../core/errors.ts';
import { hexId, opaqueToken } from '../core/ids.ts';
import type { AuthContext } from '../core/types.ts';

export interface Domain {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
}

export interface Project {
  id: string;
  name: string;
  domain_id: string;
  description: string;
  enabled: boolean;
  tags: string[];
}

export interface User {
  id: string;
  name: string;
  domain_id: string;
  password: string;
  enabled: boolean;
  email?: string;
}

export interface Role {
  id: string;
  name: string;
}

export interface ApplicationCredential {
  id: string;
  name: string;
  description: string | null;
  user_id: string;
  project_id: string;
  secret: string;
  expires_at: string | null;
  unrestricted: boolean | null;
  role_ids: string[];
}

export type Scope =
  | { kind: 'unscoped' }
  | { kind: 'project'; projectId: string }
  | { kind: 'domain'; domainId: string }
  | { kind: 'system' };

export interface Token {
  id: string;
  userId: string;
  methods: string[];
  scope: Scope;
  roleIds: string[];
  issuedAt: number;
  expiresAt: number;
  auditId: string;
  appCredId?: string;
}

/** Keystone answers every authentication failure with the same text, so as not to tell an attacker which part was wrong. */
export const UNAUTHORIZED = 'The request you have made requires authentication.';

export const unauthorized = () => new SimError(401, UNAUTHORIZED, { type: 'Unauthorized' });

interface Snapshot {
  domains: Domain[];
  projects: Project[];
  users: User[];
  roles: Role[];
  assignments: [string, string[]][];
  appCreds: ApplicationCredential[];
  tokens: Token[];
}

/** Roles that imply others, as `keystone-manage bootstrap` sets them up: admin ⇒ member ⇒ reader. */
const IMPLIED: Readonly<Record<string, readonly string[]>> = { admin: ['member'], member: ['reader'] };

export class IdentityStore implements IdentityApi {
  readonly domains = new Map<string, Domain>();
  readonly projects = new Map<string, Project>();
  readonly users = new Map<string, User>();
  readonly roles = new Map<string, Role>();
  /** `${userId}:${projectId}` → role ids assigned directly. */
  readonly assignments = new Map<string, string[]>();
  readonly appCreds = new Map<string, ApplicationCredential>();
  readonly tokens = new Map<string, Token>();
  ttlMs: number;

  constructor(ttlMs: number) {
    this.ttlMs = ttlMs;
  }

  seed(password: string): void {
    this.domains.set('default', {
      id: 'default',
      name: 'Default',
      description: 'The default domain',
      enabled: true,
    });
    for (const name of [
      'admin',
      'member',
      'reader',
      'service',
      'load-balancer_member',
      'load-balancer_observer',
      'load-balancer_admin',
    ]) {
      this.createRole(name);
    }
    const projects: [string, string][] = [
      ['admin', 'Bootstrap project for initializing the cloud.'],
      ['service', 'Service accounts'],
      ['demo', 'Unprivileged test project'],
      ['alt_demo', 'Second unprivileged test project'],
    ];
    for (const [name, description] of projects)
      this.createProject({ name, domain_id: 'default', description });
    const admin = this.createUser({ name: 'admin', domain_id: 'default', password });
    this.assign(admin.id, this.projectByName('admin', 'default')!.id, ['admin']);
    for (const name of ['demo', 'alt_demo']) {
      const u = this.createUser({ name, domain_id: 'default', password });
      this.assign(u.id, this.projectByName(name, 'default')!.id, [
        'member',
        'reader',
        'load-balancer_member',
      ]);
    }
  }

  createRole(name: string): Role {
    const role = { id: hexId(), name };
    this.roles.set(role.id, role);
    return role;
  }

  roleByName(name: string): Role | undefined {
    for (const r of this.roles.values()) if (r.name === name) return r;
    return undefined;
  }

  createProject(spec: {
    name: string;
    domain_id: string;
    description?: string;
    enabled?: boolean;
    tags?: string[];
    id?: string;
  }): Project {
    const existing = this.projectByName(spec.name, spec.domain_id);
    if (existing) {
      throw new SimError(
        409,
        `Conflict occurred attempting to store project - it is not permitted to have two projects with either the same name or same id in the same domain: name is ${spec.name}, project id ${existing.id}.`,
      );
    }
    const project: Project = {
      id: spec.id ?? hexId(),
      name: spec.name,
      domain_id: spec.domain_id,
      description: spec.description ?? '',
      enabled: spec.enabled ?? true,
      tags: spec.tags ?? [],
    };
    this.projects.set(project.id, project);
    return project;
  }

  projectByName(name: string, domainId: string): Project | undefined {
    for (const p of this.projects.values()) if (p.name === name && p.domain_id === domainId) return p;
    return undefined;
  }

  createUser(spec: {
    name: string;
    domain_id: string;
    password: string;
    enabled?: boolean;
    email?: string;
  }): User {
    for (const u of this.users.values()) {
      if (u.name === spec.name && u.domain_id === spec.domain_id) {
        throw new SimError(
          409,
          `Conflict occurred attempting to store user - Duplicate entry found with name ${spec.name} at domain ID ${spec.domain_id}.`,
        );
      }
    }
    const user: User = { id: hexId(), enabled: true, ...spec };
    this.users.set(user.id, user);
    return user;
  }

  userByName(name: string, domainId: string): User | undefined {
    for (const u of this.users.values()) if (u.name === name && u.domain_id === domainId) return u;
    return undefined;
  }

  domainByName(name: string): Domain | undefined {
    for (const d of this.domains.values()) if (d.name === name) return d;
    return undefined;
  }

  assign(userId: string, projectId: string, roleNames: string[]): void {
    const key = `${userId}:${projectId}`;
    const ids = new Set(this.assignments.get(key) ?? []);
    for (const n of roleNames) {
      const r = this.roleByName(n) ?? this.createRole(n);
      ids.add(r.id);
    }
    this.assignments.set(key, [...ids]);
  }

  /** Direct and implied roles of a user on a project, in Keystone's order (direct first). */
  effectiveRoles(userId: string, projectId: string): string[] {
    const direct = this.assignments.get(`${userId}:${projectId}`) ?? [];
    const out = new Set<string>(direct);
    const queue = [...direct];
    for (let i = 0; i < queue.length && i < 64; i++) {
      const name = this.roles.get(queue[i]!)?.name;
      for (const impliedName of IMPLIED[name ?? ''] ?? []) {
        const r = this.roleByName(impliedName);
        if (r && !out.has(r.id)) {
          out.add(r.id);
          queue.push(r.id);
        }
      }
    }
    return [...out];
  }

  /** Roles a user has anywhere (system scope is granted to admins of the admin project, as bootstrap does). */
  systemRoles(userId: string): string[] {
    const adminProject = this.projectByName('admin', 'default');
    return adminProject ? this.effectiveRoles(userId, adminProject.id) : [];
  }

  projectsOf(userId: string): Project[] {
    const out: Project[] = [];
    for (const [key, roles] of this.assignments) {
      const [u, p] = key.split(':');
      if (u === userId && roles.length > 0) {
        const project = this.projects.get(p!);
        if (project) out.push(project);
      }
    }
    return out;
  }

  issueToken(userId: string, methods: string[], scope: Scope, roleIds: string[], appCredId?: string): Token {
    const now = Date.now();
    const token: Token = {
      id: opaqueToken(),
      userId,
      methods,
      scope,
      roleIds,
      issuedAt: now,
      expiresAt: now + this.ttlMs,
      auditId: randomBytes(16).toString('base64url').slice(0, 22),
      ...(appCredId ? { appCredId } : {}),
    };
    this.tokens.set(token.id, token);
    this.pruneExpired(now);
    return token;
  }

  /** A live token or undefined; expired tokens are forgotten. */
  liveToken(id: string, now = Date.now()): Token | undefined {
    const t = this.tokens.get(id);
    if (!t) return undefined;
    if (t.expiresAt <= now) return undefined;
    if (t.appCredId && !this.appCreds.has(t.appCredId)) return undefined;
    if (!this.users.get(t.userId)?.enabled) return undefined;
    return t;
  }

  validate(tokenId: string): AuthContext {
    const t = this.liveToken(tokenId);
    if (!t) throw unauthorized();
    return this.context(t);
  }

  context(t: Token): AuthContext {
    const user = this.users.get(t.userId)!;
    const project = t.scope.kind === 'project' ? this.projects.get(t.scope.projectId) : undefined;
    const roles = t.roleIds.map((id) => this.roles.get(id)?.name).filter((n): n is string => !!n);
    return {
      token: t.id,
      userId: user.id,
      userName: user.name,
      domainId: user.domain_id,
      projectId: project?.id,
      projectName: project?.name,
      roles,
      isAdmin: roles.includes('admin'),
      systemScope: t.scope.kind === 'system',
      expiresAt: t.expiresAt,
    };
  }

  getProject(id: string): ProjectView | undefined {
    const p = this.projects.get(id);
    return p ? { id: p.id, name: p.name, domain_id: p.domain_id } : undefined;
  }

  expireAllTokens(): void {
    const now = Date.now();
    for (const t of this.tokens.values()) t.expiresAt = Math.min(t.expiresAt, now - 1);
  }

  createAppCred(spec: {
    userId: string;
    projectId: string;
    name: string;
    description?: string | null;
    secret?: string;
    expires_at?: string | null;
    unrestricted?: boolean | null;
    roleIds: string[];
  }): ApplicationCredential {
    for (const ac of this.appCreds.values()) {
      if (ac.user_id === spec.userId && ac.name === spec.name) {
        throw new SimError(
          409,
          `Conflict occurred attempting to store application_credential - Duplicate entry found with name ${spec.name}.`,
        );
      }
    }
    const ac: ApplicationCredential = {
      id: hexId(),
      name: spec.name,
      description: spec.description ?? null,
      user_id: spec.userId,
      project_id: spec.projectId,
      secret: spec.secret ?? randomBytes(64).toString('base64url'),
      expires_at: spec.expires_at ?? null,
      unrestricted: spec.unrestricted ?? null,
      role_ids: spec.roleIds,
    };
    this.appCreds.set(ac.id, ac);
    return ac;
  }

  private pruneExpired(now: number) {
    // Bounded work per issue: drop a few long-expired tokens so the map does not grow forever.
    let budget = 8;
    for (const [id, t] of this.tokens) {
      if (budget-- <= 0) break;
      if (t.expiresAt + 60_000 < now) this.tokens.delete(id);
    }
  }

  snapshot(): Snapshot {
    return {
      domains: [...this.domains.values()],
      projects: [...this.projects.values()],
      users: [...this.users.values()],
      roles: [...this.roles.values()],
      assignments: [...this.assignments.entries()],
      appCreds: [...this.appCreds.values()],
      tokens: [...this.tokens.values()],
    };
  }

  restore(data: unknown): void {
    const s = data as Snapshot;
    const fill = <T extends { id: string }>(map: Map<string, T>, items: T[]) => {
      map.clear();
      for (const i of items) map.set(i.id, i);
    };
    fill(this.domains, s.domains);
    fill(this.projects, s.projects);
    fill(this.users, s.users);
    fill(this.roles, s.roles);
    fill(this.appCreds, s.appCreds);
    fill(this.tokens, s.tokens);
    this.assignments.clear();
    for (const [k, v] of s.assignments) this.assignments.set(k, v);
  }
}
