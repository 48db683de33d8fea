/** L7 policies and rules: /v2/lbaas/l7policies and /v2/lbaas/l7policies/{id}/rules. */
import { SimError } from '../core/errors.ts';
import { uuid } from '../core/ids.ts';
import type { SimRequest, SimResponse } from '../core/types.ts';
import { compareCreated } from './collection.ts';
import { authorize, listScope, type Ctx } from './context.ts';
import { notFound } from './errors.ts';
import type { Change } from './lifecycle.ts';
import { checkPoolProtocol, selectOne } from './listeners.ts';
import { listResponse } from './listing.ts';
import {
  L7POLICY_ACTIONS,
  L7RULE_COMPARE_TYPES,
  L7RULE_TYPES,
  octaviaTime,
  type L7PolicyRecord,
  type L7RuleRecord,
  type ListenerRecord,
} from './model.ts';
import { ProviderDriver } from './providers.ts';
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
import { stampUpdate, takeCreateFaults } from './writes.ts';

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
    id: uuid(),
    name: (p.name as string | null) ?? '',
    description: (p.description as string | null) ?? '',
    project_id: listener.project_id,
    provisioning_status: 'PENDING_CREATE',
    admin_state_up: (p.admin_state_up as boolean | null) ?? true,
    created_at: octaviaTime(),
    updated_at: null,
    tags: (p.tags as string[] | null) ?? [],
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
    id: uuid(),
    name: '',
    project_id: policy.project_id,
    provisioning_status: 'PENDING_CREATE',
    admin_state_up: (r.admin_state_up as boolean | null) ?? true,
    created_at: octaviaTime(),
    updated_at: null,
    tags: (r.tags as string[] | null) ?? [],
    l7policy_id: policy.id,
    type: r.type as string,
    compare_type: r.compare_type as string,
    key: (r.key as string | null) ?? null,
    value: r.value as string,
    invert: (r.invert as boolean | null) ?? false,
  };
}

const POLICY_ATTRIBUTES: Readonly<Record<string, (p: L7PolicyRecord) => unknown>> = {
  id: (p) => p.id,
  name: (p) => p.name,
  description: (p) => p.description,
  action: (p) => p.action,
  position: (p) => p.position,
  listener_id: (p) => p.listener_id,
  redirect_pool_id: (p) => p.redirect_pool_id,
  redirect_url: (p) => p.redirect_url,
  redirect_prefix: (p) => p.redirect_prefix,
  redirect_http_code: (p) => p.redirect_http_code,
  admin_state_up: (p) => p.admin_state_up,
  provisioning_status: (p) => p.provisioning_status,
  created_at: (p) => p.created_at,
  updated_at: (p) => p.updated_at,
  project_id: (p) => p.project_id,
};

const RULE_ATTRIBUTES: Readonly<Record<string, (r: L7RuleRecord) => unknown>> = {
  id: (r) => r.id,
  type: (r) => r.type,
  compare_type: (r) => r.compare_type,
  key: (r) => r.key,
  value: (r) => r.value,
  invert: (r) => r.invert,
  admin_state_up: (r) => r.admin_state_up,
  provisioning_status: (r) => r.provisioning_status,
  created_at: (r) => r.created_at,
  updated_at: (r) => r.updated_at,
  project_id: (r) => r.project_id,
};

export function l7Handlers(ctx: Ctx) {
  const { store, life, views, cloud } = ctx;

  function lock(listener: ListenerRecord): Change[] {
    const lb = store.lbOfListener(listener);
    return [
      { record: lb, pending: 'PENDING_UPDATE', final: 'ACTIVE' },
      { record: listener, pending: 'PENDING_UPDATE', final: 'ACTIVE' },
    ];
  }

  function redirectPool(listener: ListenerRecord, poolId: string): string {
    const pool = store.pools.get(poolId);
    if (!pool || pool.loadbalancer_id !== listener.loadbalancer_id) throw notFound('Pool', poolId);
    checkPoolProtocol(listener.protocol, pool.protocol);
    return pool.id;
  }

  function ruleOf(policy: L7PolicyRecord, id: string): L7RuleRecord {
    const r = store.l7rules.get(id);
    if (!r || r.l7policy_id !== policy.id) throw notFound('L7 Rule', id);
    return r;
  }

  return {
    list: (req: SimRequest): SimResponse => {
      const visible = listScope(req);
      return listResponse(req, {
        collection: 'l7policies',
        items: store.l7policies.ordered(),
        visible,
        lookup: (id) => store.l7policies.get(id),
        view: (p) => views.l7policy(p),
        attributes: POLICY_ATTRIBUTES,
        tags: (p) => p.tags,
      });
    },

    get: (req: SimRequest): SimResponse => {
      const policy = store.l7policy(req.params.l7policy_id!);
      authorize(req, policy.project_id);
      return { status: 200, body: { l7policy: selectOne(views.l7policy(policy), req) } };
    },

    create: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'l7policy', POLICY_POST_FIELDS);
      const listener = store.listener(body.listener_id as string);
      const lb = store.lbOfListener(listener);
      authorize(req, lb.project_id);
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
      const faults = takeCreateFaults(cloud, 'l7policy');
      life.begin({
        lb,
        lbPending: 'PENDING_UPDATE',
        lbFinal: 'ACTIVE',
        changes: [
          ...lock(listener),
          { record: policy, pending: 'PENDING_CREATE', final: faults.final },
          ...created.map((r): Change => ({ record: r, pending: 'PENDING_CREATE', final: faults.final })),
        ],
        key: 'octavia.child.create',
        stuck: faults.stuck,
      });
      return { status: 201, body: { l7policy: views.l7policy(policy) } };
    },

    update: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'l7policy', POLICY_MUTABLE_FIELDS);
      const policy = store.l7policy(req.params.l7policy_id!);
      const listener = store.listener(policy.listener_id);
      const lb = store.lbOfListener(listener);
      authorize(req, lb.project_id);
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
      stampUpdate(policy);
      life.begin({
        lb,
        lbPending: 'PENDING_UPDATE',
        lbFinal: 'ACTIVE',
        changes: [...lock(listener), { record: policy, pending: 'PENDING_UPDATE', final: 'ACTIVE' }],
        key: 'octavia.child.update',
      });
      return { status: 200, body: { l7policy: views.l7policy(policy) } };
    },

    remove: (req: SimRequest): SimResponse => {
      const policy = store.l7policy(req.params.l7policy_id!);
      const listener = store.listener(policy.listener_id);
      const lb = store.lbOfListener(listener);
      authorize(req, lb.project_id);
      life.assertChildWritable(lb);
      life.begin({
        lb,
        lbPending: 'PENDING_UPDATE',
        lbFinal: 'ACTIVE',
        changes: [
          ...lock(listener),
          {
            record: policy,
            pending: 'PENDING_DELETE',
            final: 'DELETED',
            remove: () => store.removeL7Policy(policy),
          },
        ],
        key: 'octavia.child.delete',
      });
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
      const rule = ruleOf(policy, req.params.l7rule_id!);
      authorize(req, rule.project_id);
      return { status: 200, body: { rule: selectOne(views.l7rule(rule), req) } };
    },

    createRule: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'rule', RULE_POST_FIELDS);
      const policy = store.l7policy(req.params.l7policy_id!);
      const listener = store.listener(policy.listener_id);
      const lb = store.lbOfListener(listener);
      authorize(req, lb.project_id);
      validateRule(body);
      life.assertChildWritable(lb);
      if (policy.rule_ids.length >= MAX_RULES)
        throw new SimError(409, `Too many rules on L7 policy ${policy.id}`);
      new ProviderDriver(lb.provider).l7rule();
      const rule = newRule(body, policy);
      store.addL7Rule(rule);
      const faults = takeCreateFaults(cloud, 'l7rule');
      life.begin({
        lb,
        lbPending: 'PENDING_UPDATE',
        lbFinal: 'ACTIVE',
        changes: [
          ...lock(listener),
          { record: policy, pending: 'PENDING_UPDATE', final: 'ACTIVE' },
          { record: rule, pending: 'PENDING_CREATE', final: faults.final },
        ],
        key: 'octavia.child.create',
        stuck: faults.stuck,
      });
      return { status: 201, body: { rule: views.l7rule(rule) } };
    },

    updateRule: (req: SimRequest): SimResponse => {
      const body = parseRoot(req.body, 'rule', RULE_MUTABLE_FIELDS);
      const policy = store.l7policy(req.params.l7policy_id!);
      const rule = ruleOf(policy, req.params.l7rule_id!);
      const listener = store.listener(policy.listener_id);
      const lb = store.lbOfListener(listener);
      authorize(req, lb.project_id);
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
      stampUpdate(rule);
      life.begin({
        lb,
        lbPending: 'PENDING_UPDATE',
        lbFinal: 'ACTIVE',
        changes: [
          ...lock(listener),
          { record: policy, pending: 'PENDING_UPDATE', final: 'ACTIVE' },
          { record: rule, pending: 'PENDING_UPDATE', final: 'ACTIVE' },
        ],
        key: 'octavia.child.update',
      });
      return { status: 200, body: { rule: views.l7rule(rule) } };
    },

    removeRule: (req: SimRequest): SimResponse => {
      const policy = store.l7policy(req.params.l7policy_id!);
      const rule = ruleOf(policy, req.params.l7rule_id!);
      const listener = store.listener(policy.listener_id);
      const lb = store.lbOfListener(listener);
      authorize(req, lb.project_id);
      life.assertChildWritable(lb);
      life.begin({
        lb,
        lbPending: 'PENDING_UPDATE',
        lbFinal: 'ACTIVE',
        changes: [
          ...lock(listener),
          { record: policy, pending: 'PENDING_UPDATE', final: 'ACTIVE' },
          {
            record: rule,
            pending: 'PENDING_DELETE',
            final: 'DELETED',
            remove: () => store.removeL7Rule(rule),
          },
        ],
        key: 'octavia.child.delete',
      });
      return { status: 204 };
    },
  };
}
