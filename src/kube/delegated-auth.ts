/**
 * Delegated authentication and authorization for a component's own HTTP port, as Kubernetes
 * components and controller-runtime do it: the bearer token is checked with a TokenReview, the
 * user's access to the path with a SubjectAccessReview (non-resource attributes: the path and the
 * lower-case method), both answered by the API server; so a Prometheus ServiceAccount bound to a
 * ClusterRole with `nonResourceURLs: ["/metrics"], verbs: ["get"]` may scrape, and nobody else.
 *
 * Two flavours, as upstream has them:
 * - component-base (`anonymous: true`, the cloud controller manager's secure port): a request
 *   without a token is `system:anonymous` and is authorized like anyone else; the
 *   `alwaysAllowPaths` (`/healthz`, `/readyz`, `/livez`) skip the access review, so kubelet probes
 *   need no token and cost no API call.
 * - controller-runtime (`anonymous: false`, CAPO's `--diagnostics-address`): no token is 401.
 *
 * Answers are cached (upstream: 10 s for components, 1 min for controller-runtime), keyed by a
 * digest of the token, never the token itself; a review that fails is not cached and gives 500.
 */
import { createHash } from 'node:crypto';
import type { V1SubjectAccessReview, V1TokenReview, V1UserInfo } from '@kubernetes/client-node';
import type { GuardDecision, GuardedRequest, RequestGuard } from '../lib/health-server.ts';
import type { Logger } from '../lib/log.ts';
import type { KubeClient } from './client.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import { kinds } from './resource.ts';

export interface DelegatedAuthOptions {
  /** Creates TokenReviews (`--authentication-kubeconfig`'s client). */
  authentication: KubeClient;
  /** Creates SubjectAccessReviews (`--authorization-kubeconfig`'s client); the authentication client by default. */
  authorization?: KubeClient;
  /** A request without a token is `system:anonymous` (true) or 401 (false). */
  anonymous: boolean;
  /** Paths anyone may get without an access review; a trailing `*` matches a prefix. */
  alwaysAllowPaths?: readonly string[];
  /** How long a TokenReview answer is kept (10 s). */
  tokenCacheTtlMs?: number;
  /** How long an allowed / a denied SubjectAccessReview answer is kept (10 s each). */
  authorizedCacheTtlMs?: number;
  unauthorizedCacheTtlMs?: number;
  /** Answers kept in each cache. */
  cacheSize?: number;
  /** Bound on each review call (10 s, as upstream's webhook timeouts). */
  timeoutMs?: number;
  log?: Logger;
  clock?: Clock;
}

export const ANONYMOUS: Required<Pick<V1UserInfo, 'username' | 'groups'>> = {
  username: 'system:anonymous',
  groups: ['system:unauthenticated'],
};

/** A bounded cache whose entries expire; the oldest entry goes first when full. */
class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();
  private readonly size: number;
  private readonly clock: Clock;

  constructor(size: number, clock: Clock) {
    this.size = size;
    this.clock = clock;
  }

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= this.clock.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.clock.now() + ttlMs });
    if (this.entries.size > this.size) this.entries.delete(this.entries.keys().next().value as string);
  }
}

function pathAllowed(patterns: readonly string[], path: string): boolean {
  return patterns.some((p) => p === path || (p.endsWith('*') && path.startsWith(p.slice(0, -1))));
}

const denied = (status: 401 | 403 | 500, message: string): GuardDecision => ({
  allowed: false,
  status,
  message,
});

/** A guard for `startHealthServer` that asks the API server who the caller is and what it may get. */
export function delegatedAuth(opts: DelegatedAuthOptions): RequestGuard {
  const clock = opts.clock ?? systemClock;
  const size = opts.cacheSize ?? 1024;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const users = new TtlCache<V1UserInfo | null>(size, clock);
  const decisions = new TtlCache<boolean>(size, clock);
  const allowPaths = opts.alwaysAllowPaths ?? [];

  async function authenticate(token: string): Promise<V1UserInfo | null> {
    const key = createHash('sha256').update(token).digest('hex');
    const cached = users.get(key);
    if (cached !== undefined) return cached;
    const review = await opts.authentication.create<V1TokenReview>(
      kinds.TokenReview,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      { signal: AbortSignal.timeout(timeoutMs) },
    );
    const user = review.status?.authenticated && review.status.user?.username ? review.status.user : null;
    users.set(key, user, opts.tokenCacheTtlMs ?? 10_000);
    return user;
  }

  async function authorize(user: V1UserInfo, verb: string, path: string): Promise<boolean> {
    const key = JSON.stringify([user.username, user.uid ?? '', user.groups ?? [], verb, path]);
    const cached = decisions.get(key);
    if (cached !== undefined) return cached;
    const review = await (opts.authorization ?? opts.authentication).create<V1SubjectAccessReview>(
      kinds.SubjectAccessReview,
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          ...(user.uid ? { uid: user.uid } : {}),
          ...(user.groups ? { groups: user.groups } : {}),
          ...(user.extra ? { extra: user.extra } : {}),
          nonResourceAttributes: { path, verb },
        },
      },
      { signal: AbortSignal.timeout(timeoutMs) },
    );
    const allowed = review.status?.allowed === true;
    decisions.set(
      key,
      allowed,
      allowed ? (opts.authorizedCacheTtlMs ?? 10_000) : (opts.unauthorizedCacheTtlMs ?? 10_000),
    );
    return allowed;
  }

  return async (req: GuardedRequest): Promise<GuardDecision> => {
    const token = /^Bearer\s+(\S.*)$/i.exec(req.authorization ?? '')?.[1]?.trim();
    let user: V1UserInfo;
    if (token) {
      let reviewed: V1UserInfo | null;
      try {
        reviewed = await authenticate(token);
      } catch (err) {
        opts.log?.error({ err, path: req.path }, 'could not review a bearer token (TokenReview)');
        return denied(500, 'Internal Server Error: the token could not be reviewed');
      }
      if (!reviewed) return denied(401, 'Unauthorized');
      user = reviewed;
    } else if (opts.anonymous) {
      user = ANONYMOUS;
    } else {
      return denied(401, 'Unauthorized');
    }
    if (pathAllowed(allowPaths, req.path)) return { allowed: true };
    const verb = req.method.toLowerCase();
    try {
      if (await authorize(user, verb, req.path)) return { allowed: true };
    } catch (err) {
      opts.log?.error(
        { err, path: req.path, user: user.username },
        'could not review access (SubjectAccessReview)',
      );
      return denied(500, 'Internal Server Error: access could not be reviewed');
    }
    return denied(403, `forbidden: User "${user.username}" cannot ${verb} path "${req.path}"`);
  };
}
