/**
 * ValidatingAdmissionPolicies and their bindings (admissionregistration.k8s.io/v1, GA in 1.30):
 * stored with the defaults and structural validation of k8s.io/kubernetes
 * `pkg/apis/admissionregistration` (v1 defaults, `validation.go`), so manifests that ship them (the
 * cloud controller managers' operands) apply as on a real server. Not evaluated: the CEL
 * expressions are neither compiled nor enforced on admission, and no type checker fills the
 * policy's status (see docs/sim-kube.md).
 */
import { field, type FieldError } from '../errors.ts';
import { asArray, asObj, asString, isObj, type Obj } from '../json.ts';
import { CONDITIONS, keyed } from '../patch/hints.ts';
import { col } from '../table.ts';
import type { ResourceDef } from '../types.ts';
import {
  builtin,
  dns1123Subdomain,
  qualifiedName,
  STATUS_SUBRESOURCE_HOOKS,
  specGeneration,
} from './common.ts';

const GROUP = 'admissionregistration.k8s.io';

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge', 'Unauthorized'];
const VALIDATION_ACTIONS = ['Audit', 'Deny', 'Warn'];
const PARAMETER_NOT_FOUND_ACTIONS = ['Deny', 'Allow'];

/** v1 `SetDefaults_MatchResources` and `SetDefaults_Rule` (scope `*`). */
function defaultMatchResources(m: Obj | undefined): void {
  if (!m) return;
  m.matchPolicy ??= 'Equivalent';
  m.namespaceSelector ??= {};
  m.objectSelector ??= {};
  for (const list of ['resourceRules', 'excludeResourceRules'])
    for (const r of asArray(m[list]) ?? []) {
      const rule = asObj(r);
      if (rule) rule.scope ??= '*';
    }
}

function defaultPolicy(obj: Obj): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  spec.failurePolicy ??= 'Fail';
  defaultMatchResources(asObj(spec.matchConstraints));
}

function defaultBinding(obj: Obj): void {
  const spec = asObj(obj.spec);
  if (!spec) return;
  defaultMatchResources(asObj(spec.matchResources));
  const paramRef = asObj(spec.paramRef);
  if (paramRef) paramRef.parameterNotFoundAction ??= 'Deny';
}

function strings(v: unknown): string[] {
  return (asArray(v) ?? []).filter((x): x is string => typeof x === 'string');
}

/** `validateRuleWithOperations` (allowing subresources, as admission policies do). */
function validateRule(rule: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const operations = strings(rule.operations);
  if (operations.length === 0) errs.push(field.required(`${path}.operations`));
  if (operations.length > 1 && operations.includes('*'))
    errs.push(
      field.invalid(`${path}.operations`, operations, "if '*' is present, must not specify other operations"),
    );
  operations.forEach((o, i) => {
    if (!OPERATIONS.includes(o)) errs.push(field.notSupported(`${path}.operations[${i}]`, o, OPERATIONS));
  });
  for (const list of ['apiGroups', 'apiVersions', 'resources']) {
    const items = strings(rule[list]);
    if (items.length === 0) errs.push(field.required(`${path}.${list}`));
    if (items.length > 1 && items.includes('*'))
      errs.push(field.invalid(`${path}.${list}`, items, "if '*' is present, must not specify other " + list));
  }
  const scope = asString(rule.scope);
  if (scope !== undefined && !SCOPES.includes(scope))
    errs.push(field.notSupported(`${path}.scope`, scope, SCOPES));
  return errs;
}

function validateSelector(v: unknown, path: string): FieldError[] {
  if (v === undefined) return [field.required(path)];
  return isObj(v) ? [] : [field.invalid(path, v, 'must be a label selector')];
}

/** `validateMatchResources`, after defaulting. */
function validateMatchResources(m: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const policy = asString(m.matchPolicy);
  if (policy === undefined) errs.push(field.required(`${path}.matchPolicy`));
  else if (!MATCH_POLICIES.includes(policy))
    errs.push(field.notSupported(`${path}.matchPolicy`, policy, MATCH_POLICIES));
  errs.push(...validateSelector(m.namespaceSelector, `${path}.namespaceSelector`));
  errs.push(...validateSelector(m.objectSelector, `${path}.objectSelector`));
  for (const list of ['resourceRules', 'excludeResourceRules'])
    (asArray(m[list]) ?? []).forEach((r, i) =>
      errs.push(...validateRule(asObj(r) ?? {}, `${path}.${list}[${i}]`)),
    );
  return errs;
}

/** `validateValidatingAdmissionPolicySpec` without the CEL compilation. */
function validatePolicy(obj: Obj): FieldError[] {
  const spec = asObj(obj.spec) ?? {};
  const errs: FieldError[] = [];
  const failurePolicy = asString(spec.failurePolicy);
  if (failurePolicy === undefined) errs.push(field.required('spec.failurePolicy'));
  else if (!FAILURE_POLICIES.includes(failurePolicy))
    errs.push(field.notSupported('spec.failurePolicy', failurePolicy, FAILURE_POLICIES));
  const paramKind = asObj(spec.paramKind);
  if (paramKind) {
    if (!asString(paramKind.apiVersion)) errs.push(field.required('spec.paramKind.apiVersion'));
    if (!asString(paramKind.kind)) errs.push(field.required('spec.paramKind.kind'));
  }
  const match = asObj(spec.matchConstraints);
  if (!match) errs.push(field.required('spec.matchConstraints'));
  else {
    errs.push(...validateMatchResources(match, 'spec.matchConstraints'));
    // At least one resource rule: it gives the expressions their type.
    if ((asArray(match.resourceRules) ?? []).length === 0)
      errs.push(field.required('spec.matchConstraints.resourceRules'));
  }
  const names = new Set<string>();
  (asArray(spec.matchConditions) ?? []).forEach((c, i) => {
    const cond = asObj(c) ?? {};
    const at = `spec.matchConditions[${i}]`;
    if (!asString(cond.expression)?.trim()) errs.push(field.required(`${at}.expression`));
    const name = asString(cond.name);
    if (!name) errs.push(field.required(`${at}.name`));
    else {
      errs.push(...qualifiedName(`${at}.name`, name));
      if (names.has(name)) errs.push(field.duplicate(`${at}.name`, name));
      names.add(name);
    }
  });
  const validations = asArray(spec.validations) ?? [];
  const auditAnnotations = asArray(spec.auditAnnotations) ?? [];
  if (validations.length === 0 && auditAnnotations.length === 0) {
    const why = 'validations or auditAnnotations must contain at least one item';
    errs.push(field.required('spec.validations', why), field.required('spec.auditAnnotations', why));
  }
  validations.forEach((v, i) => {
    const val = asObj(v) ?? {};
    const at = `spec.validations[${i}]`;
    if (!asString(val.expression)?.trim())
      errs.push(field.required(`${at}.expression`, 'expression is not specified'));
    const message = asString(val.message);
    if (message !== undefined && message.length > 0 && !message.trim())
      errs.push(field.invalid(`${at}.message`, message, 'message must be non-empty if specified'));
    else if (message !== undefined && /[\r\n]/.test(message.trim()))
      errs.push(field.invalid(`${at}.message`, message, 'message must not contain line breaks'));
    const reason = asString(val.reason);
    if (reason !== undefined && !REASONS.includes(reason))
      errs.push(field.notSupported(`${at}.reason`, reason, REASONS));
  });
  const keys = new Set<string>();
  auditAnnotations.forEach((a, i) => {
    const ann = asObj(a) ?? {};
    const at = `spec.auditAnnotations[${i}]`;
    const key = asString(ann.key) ?? '';
    if (!key) errs.push(field.required(`${at}.key`));
    else if (keys.has(key)) errs.push(field.duplicate(`${at}.key`, key));
    keys.add(key);
    if (!asString(ann.valueExpression)?.trim()) errs.push(field.required(`${at}.valueExpression`));
  });
  (asArray(spec.variables) ?? []).forEach((v, i) => {
    const variable = asObj(v) ?? {};
    const at = `spec.variables[${i}]`;
    const name = asString(variable.name)?.trim();
    if (!name) errs.push(field.required(`${at}.name`, 'name is not specified'));
    else if (!/^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name))
      errs.push(field.invalid(`${at}.name`, name, 'name is not a valid CEL identifier'));
    if (!asString(variable.expression)?.trim())
      errs.push(field.required(`${at}.expression`, 'expression is not specified'));
  });
  return errs;
}

/** `validateValidatingAdmissionPolicyBindingSpec`. */
function validateBinding(obj: Obj): FieldError[] {
  const spec = asObj(obj.spec) ?? {};
  const errs: FieldError[] = [];
  const policyName = asString(spec.policyName);
  if (!policyName) errs.push(field.required('spec.policyName'));
  else errs.push(...dns1123Subdomain('spec.policyName', policyName));
  const paramRef = asObj(spec.paramRef);
  if (paramRef) {
    const hasName = !!asString(paramRef.name);
    const hasSelector = paramRef.selector !== undefined && paramRef.selector !== null;
    if (hasName && hasSelector) {
      errs.push(field.forbidden('spec.paramRef.name', 'name and selector are mutually exclusive'));
      errs.push(field.forbidden('spec.paramRef.selector', 'name and selector are mutually exclusive'));
    }
    if (!hasName && !hasSelector)
      errs.push(field.required('spec.paramRef', 'one of name or selector must be specified'));
    const action = asString(paramRef.parameterNotFoundAction);
    if (!action) errs.push(field.required('spec.paramRef.parameterNotFoundAction'));
    else if (!PARAMETER_NOT_FOUND_ACTIONS.includes(action))
      errs.push(
        field.notSupported('spec.paramRef.parameterNotFoundAction', action, PARAMETER_NOT_FOUND_ACTIONS),
      );
  }
  const match = asObj(spec.matchResources);
  if (match) errs.push(...validateMatchResources(match, 'spec.matchResources'));
  const actions = strings(spec.validationActions);
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (!VALIDATION_ACTIONS.includes(a))
      errs.push(field.notSupported(`spec.validationActions[${i}]`, a, VALIDATION_ACTIONS));
    if (seen.has(a)) errs.push(field.duplicate(`spec.validationActions[${i}]`, a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn'))
    errs.push(
      field.invalid(
        'spec.validationActions',
        actions,
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  if (seen.size === 0)
    errs.push(field.required('spec.validationActions', 'at least one validation action is required'));
  return errs;
}

/** printValidatingAdmissionPolicy's PARAMKIND. */
function paramKind(o: Obj): string {
  const p = asObj(asObj(o.spec)?.paramKind);
  return p ? `${asString(p.apiVersion) ?? ''}/${asString(p.kind) ?? ''}` : '<unset>';
}

/** printValidatingAdmissionPolicyBinding's PARAMREF. */
function paramRef(o: Obj): string {
  const p = asObj(asObj(o.spec)?.paramRef);
  if (!p) return '<unset>';
  const name = asString(p.name);
  if (name) return asString(p.namespace) ? `${asString(p.namespace)}/${name}` : `*/${name}`;
  return p.selector !== undefined ? JSON.stringify(p.selector) : '<unset>';
}

export const validatingadmissionpolicies: ResourceDef = builtin({
  group: GROUP,
  resource: 'validatingadmissionpolicies',
  kind: 'ValidatingAdmissionPolicy',
  namespaced: false,
  categories: ['api-extensions'],
  subresources: ['status'],
  hints: { 'spec.matchConditions': keyed('name'), 'status.conditions': CONDITIONS },
  columns: [
    col('Validations', (o) => (asArray(asObj(o.spec)?.validations) ?? []).length, {
      type: 'integer',
      description: 'Validations indicates the number of validation rules defined in this configuration',
    }),
    col('ParamKind', paramKind, {
      description: 'ParamKind specifies the kind of resources used to parameterize this policy',
    }),
  ],
  strategy: {
    statusSubresource: true,
    generationOf: specGeneration,
    ...STATUS_SUBRESOURCE_HOOKS,
    prepareForCreate(_ctx, obj) {
      delete obj.status;
      defaultPolicy(obj);
    },
    prepareForUpdate(ctx, obj, old) {
      STATUS_SUBRESOURCE_HOOKS.prepareForUpdate!(ctx, obj, old);
      defaultPolicy(obj);
    },
    validate: (_ctx, obj) => validatePolicy(obj),
  },
});

export const validatingadmissionpolicybindings: ResourceDef = builtin({
  group: GROUP,
  resource: 'validatingadmissionpolicybindings',
  kind: 'ValidatingAdmissionPolicyBinding',
  namespaced: false,
  categories: ['api-extensions'],
  columns: [
    col('PolicyName', (o) => asString(asObj(o.spec)?.policyName) ?? '', {
      description: 'PolicyName indicates the policy definition which the policy binding binded to',
    }),
    col('ParamRef', paramRef, {
      description: 'ParamRef indicates the param resource which sets the configration param',
    }),
  ],
  strategy: {
    generationOf: specGeneration,
    prepareForCreate(_ctx, obj) {
      defaultBinding(obj);
    },
    prepareForUpdate(_ctx, obj) {
      defaultBinding(obj);
    },
    validate: (_ctx, obj) => validateBinding(obj),
  },
});
