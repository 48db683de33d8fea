/**
 * Who a request is and what it may do. The token the emulator was started with is the cluster
 * admin (group `system:masters`, never held to RBAC); ServiceAccount tokens issued by
 * `issueServiceAccountToken` authenticate as that ServiceAccount (while it exists, as the real
 * server's service-account lookup checks) and every request made with one is authorized by the
 * RBAC objects in the store and recorded in `audit`, so a test can run a controller as its
 * ServiceAccount and see what it did and what was refused. The same answers back the review
 * APIs: TokenReview and SubjectAccessReview.
 */
import { randomBytes } from 'node:crypto';
import { StatusError } from '../errors.ts';
import type { Obj } from '../json.ts';
import { asObj, asString } from '../json.ts';
import {
  AUTHENTICATED_GROUP,
  authorize,
  forbiddenText,
  serviceAccountUsername,
  SUPERUSER_GROUP,
  type Decision,
  type RbacObjects,
  type UserInfo,
} from './rbac.ts';
import { requestInfo, type RequestInfo } from './request-info.ts';
import type { ServiceAccountTokens } from '../tokens.ts';

export type { Decision, UserInfo } from './rbac.ts';
export type { RequestInfo } from './request-info.ts';

/** The user the emulator's own token authenticates as (kubeadm's admin.conf user). */
export const ADMIN_USER: UserInfo = {
  username: 'kubernetes-admin',
  groups: [SUPERUSER_GROUP, AUTHENTICATED_GROUP],
};

/** One request made with a non-admin token, and the authorizer's answer. */
export interface AuditEntry extends RequestInfo {
  user: string;
  allowed: boolean;
  reason: string;
}

export interface AuthDeps {
  rbac: RbacObjects;
  /** The TokenRequest JWTs (`kubectl create token`), verified here too when given. */
  tokens?: ServiceAccountTokens;
  now?: () => Date;
  /** The stored ServiceAccount, or undefined when it does not exist. */
  serviceAccount(namespace: string, name: string): Obj | undefined;
  /** Entries kept in `audit` (the oldest go first). */
  auditSize?: number;
}

type Holder =
  | { kind: 'static'; user: UserInfo }
  | { kind: 'serviceaccount'; namespace: string; name: string; uid?: string };

export class Auth {
  private readonly deps: AuthDeps;
  private readonly tokens = new Map<string, Holder>();
  private readonly entries: AuditEntry[] = [];

  constructor(deps: AuthDeps) {
    this.deps = deps;
  }

  /** A token that always authenticates as `user` (the emulator's admin token). */
  addStaticToken(token: string, user: UserInfo): void {
    this.tokens.set(token, { kind: 'static', user });
  }

  /** A bearer token for a ServiceAccount, as a TokenRequest or a mounted token would give a pod. */
  issueServiceAccountToken(namespace: string, name: string): string {
    const token = `sim-sa.${randomBytes(24).toString('base64url')}`;
    this.tokens.set(token, { kind: 'serviceaccount', namespace, name });
    return token;
  }

  /** The user a bearer token stands for, or undefined (an unknown token, or its ServiceAccount is gone). */
  authenticate(token: string): UserInfo | undefined {
    const holder = this.tokens.get(token) ?? this.requested(token);
    if (!holder) return undefined;
    if (holder.kind === 'static') return holder.user;
    const sa = this.deps.serviceAccount(holder.namespace, holder.name);
    if (!sa) return undefined;
    const uid = asString(asObj(sa.metadata)?.uid);
    // A requested token is bound to the ServiceAccount's uid: one deleted and made again does not inherit it.
    if (holder.uid !== undefined && holder.uid !== uid) return undefined;
    return {
      username: serviceAccountUsername(holder.namespace, holder.name),
      ...(uid ? { uid } : {}),
      groups: ['system:serviceaccounts', `system:serviceaccounts:${holder.namespace}`, AUTHENTICATED_GROUP],
    };
  }

  /** The holder of a TokenRequest JWT whose signature holds and that has not expired. */
  private requested(token: string): Holder | undefined {
    const subject = this.deps.tokens?.verify(token, this.deps.now?.() ?? new Date());
    return subject && { kind: 'serviceaccount', ...subject };
  }

  authorize(user: UserInfo, attrs: RequestInfo): Decision {
    return authorize(this.deps.rbac, user, attrs);
  }

  /**
   * Authenticates and authorizes one HTTP request made with `token` (not the admin's fast path):
   * 401 for a token nobody issued, 403 with the real server's message when RBAC allows nothing.
   */
  admit(token: string | undefined, method: string, url: URL): UserInfo {
    const user = token === undefined ? undefined : this.authenticate(token);
    if (!user) throw new StatusError(401, 'Unauthorized', 'Unauthorized');
    const attrs = requestInfo(method, url);
    const decision = this.authorize(user, attrs);
    if (!user.groups.includes(SUPERUSER_GROUP)) this.record({ ...attrs, user: user.username, ...decision });
    if (!decision.allowed) throw forbidden(user, attrs);
    return user;
  }

  /** What non-admin tokens did, oldest first. */
  get audit(): readonly AuditEntry[] {
    return this.entries;
  }

  clearAudit(): void {
    this.entries.length = 0;
  }

  private record(entry: AuditEntry): void {
    this.entries.push(entry);
    const max = this.deps.auditSize ?? 10_000;
    if (this.entries.length > max) this.entries.splice(0, this.entries.length - max);
  }
}

function forbidden(user: UserInfo, attrs: RequestInfo): StatusError {
  const why = forbiddenText(user, attrs);
  if (!attrs.resourceRequest) return new StatusError(403, 'Forbidden', `forbidden: ${why}`);
  const qualified = attrs.apiGroup ? `${attrs.resource}.${attrs.apiGroup}` : attrs.resource;
  const subject = attrs.name ? `${qualified} "${attrs.name}"` : qualified;
  return new StatusError(403, 'Forbidden', `${subject} is forbidden: ${why}`, {
    name: attrs.name,
    ...(attrs.apiGroup ? { group: attrs.apiGroup } : {}),
    kind: attrs.resource,
  });
}
