/**
 * rbac.authorization.k8s.io/v1: Roles, ClusterRoles and their bindings, stored and validated so
 * deploy manifests apply as they would on a real cluster. Requests made with ServiceAccount tokens
 * are authorized by them (src/sim/kube/auth/rbac.ts); the emulator's admin token is not.
 */
import { field, type FieldError } from '../errors.ts';
import { asArray, asObj, asString, type Obj } from '../json.ts';
import { col } from '../table.ts';
import type { ResourceDef } from '../types.ts';
import { builtin } from './common.ts';

const GROUP = 'rbac.authorization.k8s.io';

function validateRules(obj: Obj): FieldError[] {
  const errs: FieldError[] = [];
  (asArray(obj.rules) ?? []).forEach((r, i) => {
    const rule = asObj(r) ?? {};
    if ((asArray(rule.verbs) ?? []).length === 0)
      errs.push(field.required(`rules[${i}].verbs`, 'verbs must contain at least one value'));
    const hasResources = (asArray(rule.resources) ?? []).length > 0;
    const hasUrls = (asArray(rule.nonResourceURLs) ?? []).length > 0;
    if (!hasResources && !hasUrls)
      errs.push(field.required(`rules[${i}].resources`, 'resource rules must supply at least one resource'));
    if (hasResources && rule.apiGroups === undefined)
      errs.push(field.required(`rules[${i}].apiGroups`, 'resource rules must supply at least one api group'));
  });
  return errs;
}

function validateBinding(obj: Obj, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = asObj(obj.roleRef);
  if (!ref) return [field.required('roleRef')];
  if (asString(ref.apiGroup) !== GROUP)
    errs.push(field.notSupported('roleRef.apiGroup', ref.apiGroup, [GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(asString(ref.kind) ?? ''))
    errs.push(field.notSupported('roleRef.kind', ref.kind, kinds));
  if (!asString(ref.name)) errs.push(field.required('roleRef.name'));
  (asArray(obj.subjects) ?? []).forEach((s, i) => {
    const subject = asObj(s) ?? {};
    const kind = asString(subject.kind);
    if (!['ServiceAccount', 'User', 'Group'].includes(kind ?? '')) {
      errs.push(field.notSupported(`subjects[${i}].kind`, kind, ['ServiceAccount', 'User', 'Group']));
    }
    if (!asString(subject.name)) errs.push(field.required(`subjects[${i}].name`));
  });
  return errs;
}

/** The role a binding points at cannot change: the API server refuses, and kubectl apply must recreate. */
function roleRefImmutable(obj: Obj, old: Obj): FieldError[] {
  return JSON.stringify(obj.roleRef) === JSON.stringify(old.roleRef)
    ? []
    : [field.invalid('roleRef', obj.roleRef, 'cannot change roleRef')];
}

const roleColumns = [
  col('Created At', (o) => asString(asObj(o.metadata)?.creationTimestamp) ?? '', {
    description: 'Creation time',
  }),
];
const bindingColumns = [
  col('Role', (o) => `${asString(asObj(o.roleRef)?.kind) ?? ''}/${asString(asObj(o.roleRef)?.name) ?? ''}`, {
    description: 'The role this binding grants',
  }),
];

export const roles: ResourceDef = builtin({
  group: GROUP,
  resource: 'roles',
  kind: 'Role',
  namespaced: true,
  columns: roleColumns,
  strategy: { nameRule: 'path', validate: (_ctx, obj) => validateRules(obj) },
});

export const clusterroles: ResourceDef = builtin({
  group: GROUP,
  resource: 'clusterroles',
  kind: 'ClusterRole',
  namespaced: false,
  columns: roleColumns,
  strategy: { nameRule: 'path', validate: (_ctx, obj) => validateRules(obj) },
});

export const rolebindings: ResourceDef = builtin({
  group: GROUP,
  resource: 'rolebindings',
  kind: 'RoleBinding',
  namespaced: true,
  columns: bindingColumns,
  strategy: {
    // RBAC names are path segments (system:cloud-controller-manager), not DNS subdomains.
    nameRule: 'path',
    validate: (_ctx, obj) => validateBinding(obj, true),
    validateUpdate: (_ctx, obj, old) => [...validateBinding(obj, true), ...roleRefImmutable(obj, old)],
  },
});

export const clusterrolebindings: ResourceDef = builtin({
  group: GROUP,
  resource: 'clusterrolebindings',
  kind: 'ClusterRoleBinding',
  namespaced: false,
  columns: bindingColumns,
  strategy: {
    nameRule: 'path',
    validate: (_ctx, obj) => validateBinding(obj, false),
    validateUpdate: (_ctx, obj, old) => [...validateBinding(obj, false), ...roleRefImmutable(obj, old)],
  },
});
