/**
 * The RBAC authorizer: rbac.authorization.k8s.io/v1 Roles, ClusterRoles and their bindings read
 * from the store on every request, with the matching rules of Kubernetes' `rbac/v1` helpers
 * (`*` for verbs, groups and resources, a star before a subresource, `resourceNames`, non-resource
 * URLs with a trailing `*`). Non-resource rules count only through ClusterRoleBindings; a RoleBinding grants
 * in its own namespace only.
 *
 * Every real cluster also has the bootstrap policy the API server creates at start
 * (`system:discovery`, `system:public-info-viewer`, `system:basic-user` bound to the
 * authenticated group, `cluster-admin`, `system:auth-delegator`, …), and `system:masters` is a
 * superuser group outside RBAC. The emulator stores none of these objects (so `kubectl get
 * clusterroles` lists only what was applied), but honours them here: a binding may name a
 * bootstrap ClusterRole, and a stored ClusterRole of the same name wins.
 */
import { asArray, asObj, asString, type Obj } from '../json.ts';
import type { RequestInfo } from './request-info.ts';

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
}

export interface Decision {
  allowed: boolean;
  /** Why it was allowed (RBAC's wording), or '' when no rule allowed it. */
  reason: string;
}

/** The RBAC objects as stored; `namespace` narrows the namespaced kinds. */
export interface RbacObjects {
  list(
    resource: 'roles' | 'rolebindings' | 'clusterroles' | 'clusterrolebindings',
    namespace?: string,
  ): Obj[];
}

export const SUPERUSER_GROUP = 'system:masters';
export const AUTHENTICATED_GROUP = 'system:authenticated';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';

interface Rule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const get = ['get'];
const BOOTSTRAP_ROLES: Record<string, Rule[]> = {
  'cluster-admin': [
    { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
    { verbs: ['*'], nonResourceURLs: ['*'] },
  ],
  'system:discovery': [
    {
      verbs: get,
      nonResourceURLs: [
        '/api',
        '/api/*',
        '/apis',
        '/apis/*',
        '/healthz',
        '/livez',
        '/openapi',
        '/openapi/*',
        '/readyz',
        '/version',
        '/version/',
      ],
    },
  ],
  'system:public-info-viewer': [
    { verbs: get, nonResourceURLs: ['/healthz', '/livez', '/readyz', '/version', '/version/'] },
  ],
  'system:basic-user': [
    {
      verbs: ['create'],
      apiGroups: ['authorization.k8s.io'],
      resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
    },
    { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
  ],
  'system:auth-delegator': [
    { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'] },
    { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'] },
  ],
};

const group = (name: string) => ({ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name });
const BOOTSTRAP_BINDINGS: Obj[] = [
  ['system:discovery', [group(AUTHENTICATED_GROUP)]],
  ['system:basic-user', [group(AUTHENTICATED_GROUP)]],
  ['system:public-info-viewer', [group(AUTHENTICATED_GROUP), group(UNAUTHENTICATED_GROUP)]],
].map(([name, subjects]) => ({
  metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
  subjects,
}));

export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

function has(list: string[] | undefined, value: string): boolean {
  return (list ?? []).some((x) => x === '*' || x === value);
}

function resourceMatches(rule: Rule, resource: string, subresource: string): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  return (rule.resources ?? []).some(
    (r) => r === '*' || r === combined || (subresource !== '' && r === `*/${subresource}`),
  );
}

function urlMatches(rule: Rule, path: string): boolean {
  return (rule.nonResourceURLs ?? []).some(
    (u) => u === '*' || u === path || (u.endsWith('*') && path.startsWith(u.slice(0, -1))),
  );
}

/** rbac/v1 RuleAllows. */
export function ruleAllows(rule: Rule, attrs: RequestInfo): boolean {
  if (!has(rule.verbs, attrs.verb)) return false;
  if (!attrs.resourceRequest) return urlMatches(rule, attrs.path);
  if (!has(rule.apiGroups, attrs.apiGroup) || !resourceMatches(rule, attrs.resource, attrs.subresource))
    return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(attrs.name);
}

function strings(v: unknown): string[] | undefined {
  const a = asArray(v);
  return a ? a.filter((x): x is string => typeof x === 'string') : undefined;
}

function rulesOf(role: Obj | undefined): Rule[] {
  return (asArray(role?.rules) ?? []).map((r) => {
    const o = asObj(r) ?? {};
    const rule: Rule = { verbs: strings(o.verbs) ?? [] };
    for (const k of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
      const v = strings(o[k]);
      if (v) rule[k] = v;
    }
    return rule;
  });
}

function subjectText(s: Obj): string {
  const kind = asString(s.kind) ?? '';
  const name = asString(s.name) ?? '';
  const ns = asString(s.namespace);
  return kind === 'ServiceAccount' && ns ? `${kind} "${name}/${ns}"` : `${kind} "${name}"`;
}

/** The subject of a binding that names this user, if any (rbac appliesToUser). */
function matchingSubject(binding: Obj, user: UserInfo, bindingNamespace: string): Obj | undefined {
  for (const s of asArray(binding.subjects) ?? []) {
    const subject = asObj(s);
    if (!subject) continue;
    const name = asString(subject.name) ?? '';
    switch (asString(subject.kind)) {
      case 'User':
        if (user.username === name) return subject;
        break;
      case 'Group':
        if (user.groups.includes(name)) return subject;
        break;
      case 'ServiceAccount': {
        const ns = asString(subject.namespace) || bindingNamespace;
        if (user.username === serviceAccountUsername(ns, name)) return subject;
        break;
      }
    }
  }
  return undefined;
}

function nameOf(o: Obj): string {
  return asString(asObj(o.metadata)?.name) ?? '';
}

export function authorize(objects: RbacObjects, user: UserInfo, attrs: RequestInfo): Decision {
  if (user.groups.includes(SUPERUSER_GROUP)) return { allowed: true, reason: '' };
  const clusterRoles = new Map(objects.list('clusterroles').map((r) => [nameOf(r), r]));
  const clusterRoleRules = (name: string): Rule[] =>
    clusterRoles.has(name) ? rulesOf(clusterRoles.get(name)) : (BOOTSTRAP_ROLES[name] ?? []);

  for (const binding of [...BOOTSTRAP_BINDINGS, ...objects.list('clusterrolebindings')]) {
    const subject = matchingSubject(binding, user, '');
    if (!subject) continue;
    const ref = asObj(binding.roleRef) ?? {};
    if (asString(ref.kind) !== 'ClusterRole') continue;
    const role = asString(ref.name) ?? '';
    if (clusterRoleRules(role).some((r) => ruleAllows(r, attrs))) {
      return {
        allowed: true,
        reason: `RBAC: allowed by ClusterRoleBinding "${nameOf(binding)}" of ClusterRole "${role}" to ${subjectText(subject)}`,
      };
    }
  }
  if (!attrs.resourceRequest || !attrs.namespace) return { allowed: false, reason: '' };

  const roles = new Map(objects.list('roles', attrs.namespace).map((r) => [nameOf(r), r]));
  for (const binding of objects.list('rolebindings', attrs.namespace)) {
    const subject = matchingSubject(binding, user, attrs.namespace);
    if (!subject) continue;
    const ref = asObj(binding.roleRef) ?? {};
    const kind = asString(ref.kind);
    const role = asString(ref.name) ?? '';
    const rules =
      kind === 'Role' ? rulesOf(roles.get(role)) : kind === 'ClusterRole' ? clusterRoleRules(role) : [];
    if (rules.some((r) => ruleAllows(r, attrs))) {
      return {
        allowed: true,
        reason: `RBAC: allowed by RoleBinding "${nameOf(binding)}/${attrs.namespace}" of ${kind} "${role}" to ${subjectText(subject)}`,
      };
    }
  }
  return { allowed: false, reason: '' };
}

/** The Forbidden message of the real server (authorization's forbiddenMessage). */
export function forbiddenText(user: UserInfo, attrs: RequestInfo): string {
  if (!attrs.resourceRequest) return `User "${user.username}" cannot ${attrs.verb} path "${attrs.path}"`;
  const resource = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const where = attrs.namespace ? `in the namespace "${attrs.namespace}"` : 'at the cluster scope';
  return `User "${user.username}" cannot ${attrs.verb} resource "${resource}" in API group "${attrs.apiGroup}" ${where}`;
}
