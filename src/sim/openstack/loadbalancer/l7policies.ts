/** L7 policies and rules: /v2/lbaas/l7policies and /v2/lbaas/l7policies/{id}/rules. */
import { SimError } from '../core/errors.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import { compareCreated } from './collection.ts';
import { authorize, type Ctx } from './context.ts';
import { notFound } from './errors.ts';
import { checkPoolProtocol } from './listeners.ts';
import { listResponse, PROVISIONED_ATTRIBUTES } from './listing.ts';
import {
  L7POLICY_ACTIONS,
  L7RULE_COMPARE_TYPES,
  L7RULE_TYPES,
  newProvisioned,
  type L7PolicyRecord,
  type L7RuleRecord,
  type ListenerRecord,
} from './model.ts';
import { ProviderDriver } from './providers.ts';
import { readHandlers, selectOne } from './reads.ts';
import {
  bool,
  enumOf,
  int,
  mandatory,
  numEnumOf,
  objList,
  parseRoot,
  str,
  strList,
  uuidField,
  type Fields,
  type Parsed,
} from './schema.ts';
import { listenerTarget, policyTarget, ruleTarget } from './targets.ts';

const MAX_POSITION = 2_147_483_647;
const MAX_RULES = 50;

const RULE_MUTABLE_FIELDS: Fields = {
  type: enumOf(L7RULE_TYPES),
  compare_type: enumOf(L7RULE_COMPARE_TYPES),
  key: str(),
  value: str(),
  invert: bool(),
  admin_state_up: bool(),
  tags: strList(),
};

export const RULE_CREATE_FIELDS: Fields = {
  ...RULE_MUTABLE_FIELDS,
  type: mandatory(enumOf(L7RULE_TYPES)),
  compare_type: mandatory(enumOf(L7RULE_COMPARE_TYPES)),
  value: mandatory(str()),
};

const RULE_POST_FIELDS: Fields = { ...RULE_CREATE_FIELDS, project_id: str(), tenant_id: str() };

const POLICY_MUTABLE_FIELDS: Fields = {
  name: str(),
  description: str(),
  admin_state_up: bool(),
  action: enumOf(L7POLICY_ACTIONS),
  position: int(1, MAX_POSITION),
  redirect_pool_id: uuidField(),
  redirect_url: str(),
  redirect_prefix: str(),
  redirect_http_code: numEnumOf([301, 302, 303, 307, 308]),
  tags: strList(),
};

const POLICY_POST_FIELDS: Fields = {
  ...POLICY_MUTABLE_FIELDS,
  action: mandatory(enumOf(L7POLICY_ACTIONS)),
  listener_id: mandatory(uuidField()),
  rules: objList(RULE_CREATE_FIELDS),
  project_id: str(),
  tenant_id: str(),
};

const l7Args = (msg: string) => new SimError(400, `Invalid L7 Policy arguments: ${msg}`);
const l7Rule = (msg: string) => new SimError(400, `Error parsing L7Rule: Invalid L7 Rule: ${msg}`);

/** validate.sanitize_l7policy_api_args: each action needs its target and nothing else. */
export function validatePolicyAction(p: Parsed, hasPool: boolean): void {
  const action = p.action as string | undefined;
  if (action === 'REDIRECT_TO_URL' && !p.redirect_url) throw l7Args('redirect_url must not be None');
  if (action === 'REDIRECT_TO_POOL' && !hasPool) {
    throw l7Args('redirect_pool_id or redirect_pool must not be None');
  }
  if (action === 'REDIRECT_PREFIX' && !p.redirect_prefix) throw l7Args('redirect_prefix must not be None');
  if (hasPool && p.redirect_url)
    throw l7Args('Cannot specify redirect_pool_id and redirect_url at the same time');
  for (const url of [p.redirect_url, p.redirect_prefix]) {
    if (typeof url === 'string' && !/^https?:\/\/[^\s/]+/.test(url)) {
      throw new SimError(400, `Validation failure: Not a valid URL: ${url}`);
    }
  }
}

export function validateRule(r: Parsed): void {
  const type = r.type as string;
  const compare = r.compare_type as string;
  if (['HEADER', 'COOKIE', 'SSL_DN_FIELD'].includes(type) && !r.key)
    throw l7Rule('L7 rule type requires a key');
  if (type === 'FILE_TYPE' && compare !== 'REGEX' && compare !== 'EQUAL_TO') {
    throw l7Rule('invalid comparison type for rule type');
  }
  if (['SSL_CONN_HAS_CERT', 'SSL_VERIFY_RESULT'].includes(type) && compare !== 'EQUAL_TO') {
    throw l7Rule('invalid comparison type for rule type');
  }
  if (compare === 'REGEX') {
    try {
      new RegExp(r.value as string);
    } catch (err) {
      throw new SimError(
        400,
        `Error parsing L7Rule: Unable to parse regular expression: ${(err as Error).message}`,
      );
    }
  }
}

export function newPolicy(
  p: Parsed,
  listener: ListenerRecord,
  redirectPoolId: string | null,
): L7PolicyRecord {
  const action = p.action as string;
  const redirects = action === 'REDIRECT_TO_URL' || action === 'REDIRECT_PREFIX';
  return {
    ...newProvisioned(p, listener.project_id),
    description: (p.description as string | null) ?? '',
    listener_id: listener.id,
    action,
    position: (p.position as number | null) ?? MAX_POSITION,
    redirect_pool_id: action === 'REDIRECT_TO_POOL' ? redirectPoolId : null,
    redirect_url: action === 'REDIRECT_TO_URL' ? ((p.redirect_url as string | null) ?? null) : null,
    redirect_prefix: action === 'REDIRECT_PREFIX' ? ((p.redirect_prefix as string | null) ?? null) : null,
    redirect_http_code: redirects ? ((p.redirect_http_code as number | null) ?? 302) : null,
    rule_ids: [],
  };
}

export function newRule(r: Parsed, policy: L7PolicyRecord): L7RuleRecord {
  return {
    ...newProvisioned(r, policy.project_id),
    // L7 rules have no name of their own.
    name: '',
    l7policy_id: policy.id,
    type: r.type as string,
    compare_type: r.compare_type as string,
    key: (r.key as string | null) ?? null,
    value: r.value as string,
    invert: (r.invert as boolean | null) ?? false,
  };
}

const POLICY_ATTRIBUTES: Readonly<Record<string, (p: L7PolicyRecord) => unknown>> = {
  ...PROVISIONED_ATTRIBUTES,
  name: (p) => p.name,
  description: (p) => p.description,
  action: (p) => p.action,
  position: (p) => p.position,
  listener_id: (p) => p.listener_id,
  redirect_pool_id: (p) => p.redirect_pool_id,
  redirect_url: (p) => p.redirect_url,
  redirect_prefix: (p) => p.redirect_prefix,
  redirect_http_code: (p) => p.redirect_http_code,
};

const RULE_ATTRIBUTES: Readonly<Record<string, (r: L7RuleRecord) => unknown>> = {
  ...PROVISIONED_ATTRIBUTES,
  type: (r) => r.type,
  compare_type: (r) => r.compare_type,
  key: (r) => r.key,
  value: (r) => r.value,
  invert: (r) => r.invert,
};

export function l7Handlers(ctx: Ctx) {
  const { store, life, views } = ctx;

  function redirectPool(listener: ListenerRecord, poolId: string): string {
    const pool = store.pools.get(poolId);
    if (!pool || pool.loadbalancer_id !== listener.loadbalancer_id) throw notFound('Pool', poolId);
    checkPoolProtocol(listener.protocol, pool.protocol);
    return pool.id;
  }

  return {
    ...readHandlers({
      collection: 'l7policies',
      item: 'l7policy',
      records: store.l7policies,
      param: 'l7policy_id',
      find: (id) => store.l7policy(id),
      view: (p) => views.l7policy(p),
      attributes: POLICY_ATTRIBUTES,
    }),

    create: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'l7policy', POLICY_POST_FIELDS);
      const { listener, lb } = listenerTarget(store, req, body.listener_id as string);
      validatePolicyAction(body, Boolean(body.redirect_pool_id));
      const poolId = body.redirect_pool_id ? redirectPool(listener, body.redirect_pool_id as string) : null;
      const rules = (body.rules as Parsed[] | null | undefined) ?? [];
      rules.forEach(validateRule);
      life.assertChildWritable(lb);
      new ProviderDriver(lb.provider).l7policy();
      const policy = newPolicy(body, listener, poolId);
      store.addL7Policy(policy);
      const created = rules.map((r) => newRule(r, policy));
      for (const r of created) store.addL7Rule(r);
      life.createChild(lb, [listener], 'l7policy', [policy, ...created]);
      return { status: 201, body: { l7policy: views.l7policy(policy) } };
    },

    update: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'l7policy', POLICY_MUTABLE_FIELDS);
      const { policy, listener, lb } = policyTarget(store, req);
      const merged: Parsed = {
        action: policy.action,
        redirect_url: policy.redirect_url,
        redirect_prefix: policy.redirect_prefix,
        ...body,
      };
      const poolId =
        'redirect_pool_id' in body
          ? body.redirect_pool_id
            ? redirectPool(listener, body.redirect_pool_id as string)
            : null
          : policy.redirect_pool_id;
      // Giving a redirect target switches the action to match, as Octavia's sanitizer does.
      if (!('action' in body)) {
        if (body.redirect_pool_id) merged.action = 'REDIRECT_TO_POOL';
        else if (body.redirect_url) merged.action = 'REDIRECT_TO_URL';
        else if (body.redirect_prefix) merged.action = 'REDIRECT_PREFIX';
      }
      if (merged.action !== 'REDIRECT_TO_URL' && !('redirect_url' in body)) merged.redirect_url = null;
      validatePolicyAction(merged, merged.action === 'REDIRECT_TO_POOL' && Boolean(poolId));
      life.assertChildWritable(lb);
      const action = merged.action as string;
      policy.action = action;
      policy.redirect_pool_id = action === 'REDIRECT_TO_POOL' ? (poolId ?? null) : null;
      policy.redirect_url =
        action === 'REDIRECT_TO_URL' ? ((merged.redirect_url as string | null) ?? null) : null;
      policy.redirect_prefix =
        action === 'REDIRECT_PREFIX' ? ((merged.redirect_prefix as string | null) ?? null) : null;
      const redirects = action === 'REDIRECT_TO_URL' || action === 'REDIRECT_PREFIX';
      policy.redirect_http_code = redirects
        ? ((body.redirect_http_code as number | null | undefined) ?? policy.redirect_http_code ?? 302)
        : null;
      if ('name' in body) policy.name = (body.name as string | null) ?? '';
      if ('description' in body) policy.description = (body.description as string | null) ?? '';
      if ('admin_state_up' in body) policy.admin_state_up = (body.admin_state_up as boolean | null) ?? true;
      if ('tags' in body) policy.tags = (body.tags as string[] | null) ?? [];
      if (typeof body.position === 'number') {
        policy.position = body.position;
        store.renumberPolicies(listener, policy);
      }
      life.updateChild(lb, [listener], policy);
      return { status: 200, body: { l7policy: views.l7policy(policy) } };
    },

    remove: (req: SimRequest): SimResponse => {
      const { policy, listener, lb } = policyTarget(store, req);
      life.assertChildWritable(lb);
      life.deleteChild(lb, [listener], policy, () => store.removeL7Policy(policy));
      return { status: 204 };
    },

    listRules: (req: SimRequest): SimResponse => {
      const policy = store.l7policy(req.params.l7policy_id!);
      authorize(req, policy.project_id);
      const rules = policy.rule_ids.flatMap((id) => store.l7rules.get(id) ?? []).sort(compareCreated);
      return listResponse(req, {
        collection: 'rules',
        items: rules,
        lookup: (id) => store.l7rules.get(id),
        view: (r) => views.l7rule(r),
        attributes: RULE_ATTRIBUTES,
        tags: (r) => r.tags,
      });
    },

    getRule: (req: SimRequest): SimResponse => {
      const policy = store.l7policy(req.params.l7policy_id!);
      const rule = store.ruleIn(policy, req.params.l7rule_id!);
      authorize(req, rule.project_id);
      return { status: 200, body: { rule: selectOne(views.l7rule(rule), req) } };
    },

    createRule: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'rule', RULE_POST_FIELDS);
      const { policy, listener, lb } = policyTarget(store, req);
      validateRule(body);
      life.assertChildWritable(lb);
      if (policy.rule_ids.length >= MAX_RULES)
        throw new SimError(409, `Too many rules on L7 policy ${policy.id}`);
      new ProviderDriver(lb.provider).l7rule();
      const rule = newRule(body, policy);
      store.addL7Rule(rule);
      life.createChild(lb, [listener, policy], 'l7rule', [rule]);
      return { status: 201, body: { rule: views.l7rule(rule) } };
    },

    updateRule: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'rule', RULE_MUTABLE_FIELDS);
      const { policy, rule, listener, lb } = ruleTarget(store, req);
      const merged: Parsed = { ...rule, ...body };
      validateRule(merged);
      life.assertChildWritable(lb);
      if (typeof body.type === 'string') rule.type = body.type;
      if (typeof body.compare_type === 'string') rule.compare_type = body.compare_type;
      if ('key' in body) rule.key = (body.key as string | null) ?? null;
      if (typeof body.value === 'string') rule.value = body.value;
      if ('invert' in body) rule.invert = (body.invert as boolean | null) ?? false;
      if ('admin_state_up' in body) rule.admin_state_up = (body.admin_state_up as boolean | null) ?? true;
      if ('tags' in body) rule.tags = (body.tags as string[] | null) ?? [];
      life.updateChild(lb, [listener, policy], rule);
      return { status: 200, body: { rule: views.l7rule(rule) } };
    },

    removeRule: (req: SimRequest): SimResponse => {
      const { policy, rule, listener, lb } = ruleTarget(store, req);
      life.assertChildWritable(lb);
      life.deleteChild(lb, [listener, policy], rule, () => store.removeL7Rule(rule));
      return { status: 204 };
    },
  };
}
