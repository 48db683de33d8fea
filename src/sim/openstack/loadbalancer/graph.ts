/**
 * The single-call ("fully populated") load balancer create: listeners with their default pools and
 * L7 policies, pools with members and health monitor, all validated before anything is created,
 * as Octavia's _graph_create does inside one database transaction.
 */
import { creating, type Change } from './lifecycle.ts';
import { validatePolicyAction, validateRule, newPolicy, newRule, RULE_CREATE_FIELDS } from './l7policies.ts';
import { HM_GRAPH_FIELDS, newHealthMonitor, validateHealthMonitor } from './healthmonitors.ts';
import {
  LISTENER_MUTABLE_FIELDS,
  checkDuplicatePort,
  checkPoolProtocol,
  newListener,
  validateListenerOptions,
} from './listeners.ts';
import { MEMBER_CREATE_FIELDS, duplicateMember, newMember } from './members.ts';
import {
  L7POLICY_ACTIONS,
  LB_ALGORITHMS,
  LISTENER_PROTOCOLS,
  POOL_PROTOCOLS,
  type LoadBalancerRecord,
  type Provisioned,
} from './model.ts';
import { POOL_MUTABLE_FIELDS, newPool, validatePoolOptions } from './pools.ts';
import type { ProviderDriver } from './providers.ts';
import {
  bool,
  enumOf,
  int,
  mandatory,
  numEnumOf,
  obj,
  objList,
  str,
  strList,
  type Fields,
  type Parsed,
} from './schema.ts';
import type { OctaviaStore } from './store.ts';
import { validation } from './errors.ts';

const { project_id: _p, tenant_id: _t, ...MEMBER_GRAPH_FIELDS } = MEMBER_CREATE_FIELDS;

export const POOL_GRAPH_FIELDS: Fields = {
  ...POOL_MUTABLE_FIELDS,
  protocol: enumOf(POOL_PROTOCOLS),
  lb_algorithm: enumOf(LB_ALGORITHMS),
  healthmonitor: obj(HM_GRAPH_FIELDS),
  members: objList(MEMBER_GRAPH_FIELDS),
};

const POLICY_GRAPH_FIELDS: Fields = {
  name: str(),
  description: str(),
  admin_state_up: bool(),
  action: mandatory(enumOf(L7POLICY_ACTIONS)),
  position: int(1, 2_147_483_647),
  redirect_pool: obj(POOL_GRAPH_FIELDS),
  redirect_url: str(),
  redirect_prefix: str(),
  redirect_http_code: numEnumOf([301, 302, 303, 307, 308]),
  rules: objList(RULE_CREATE_FIELDS),
  tags: strList(),
};

export const LISTENER_GRAPH_FIELDS: Fields = {
  ...LISTENER_MUTABLE_FIELDS,
  protocol: mandatory(enumOf(LISTENER_PROTOCOLS)),
  protocol_port: mandatory(int(1, 65535)),
  default_pool: obj(POOL_GRAPH_FIELDS),
  l7policies: objList(POLICY_GRAPH_FIELDS),
};

interface PlannedListener {
  spec: Parsed;
  defaultPool: string | undefined;
  policies: { spec: Parsed; redirectPool: string | undefined }[];
}

export interface GraphPlan {
  pools: Parsed[];
  listeners: PlannedListener[];
}

/** Validates the whole tree; throws before any object exists. */
export function planGraph(listeners: Parsed[], pools: Parsed[], driver: ProviderDriver): GraphPlan {
  const fullPools = [...pools];
  const required = new Set<string>();
  const planned: PlannedListener[] = [];
  const poolRef = (p: Parsed | null | undefined): string | undefined => {
    if (!p) return undefined;
    const name = p.name as string | null | undefined;
    if (!name) throw validation('Pools must be named when creating a fully populated loadbalancer.');
    if (Object.keys(p).some((k) => k !== 'name')) fullPools.push(p);
    else required.add(name);
    return name;
  };
  for (const l of listeners) {
    const defaultPool = poolRef(l.default_pool as Parsed | null | undefined);
    const policies = ((l.l7policies as Parsed[] | null | undefined) ?? []).map((p) => ({
      spec: p,
      redirectPool: poolRef(p.redirect_pool as Parsed | null | undefined),
    }));
    planned.push({ spec: l, defaultPool, policies });
  }
  const names = fullPools.map((p) => p.name as string | null | undefined);
  if (new Set(names).size !== names.length) {
    throw validation('Pool names must be unique when creating a fully populated loadbalancer.');
  }
  for (const ref of required) {
    if (!names.includes(ref))
      throw validation(`Pool '${ref}' was referenced but no full definition was found.`);
  }
  const poolProtocol = new Map<string, string>();
  for (const p of fullPools) {
    for (const attr of ['protocol', 'lb_algorithm']) {
      if (!p[attr]) {
        throw validation(`Pool definition for '${String(p.name)}' missing required attribute: ${attr}`);
      }
    }
    const protocol = p.protocol as string;
    validatePoolOptions(protocol, p);
    const seen = new Set<string>();
    for (const m of (p.members as Parsed[] | null | undefined) ?? []) {
      const key = `${String(m.address)}|${String(m.protocol_port)}`;
      if (seen.has(key)) throw duplicateMember(m.address as string, m.protocol_port as number);
      seen.add(key);
    }
    const hm = p.healthmonitor as Parsed | null | undefined;
    if (hm) validateHealthMonitor(hm.type as string, { protocol }, hm);
    poolProtocol.set(p.name as string, protocol);
  }
  const accepted: { protocol: string; protocol_port: number }[] = [];
  for (const { spec, defaultPool, policies } of planned) {
    const protocol = spec.protocol as string;
    validateListenerOptions(protocol, spec, undefined);
    checkDuplicatePort(accepted, protocol, spec.protocol_port as number);
    accepted.push({ protocol, protocol_port: spec.protocol_port as number });
    if (defaultPool) checkPoolProtocol(protocol, poolProtocol.get(defaultPool)!);
    for (const { spec: policy, redirectPool } of policies) {
      validatePolicyAction(policy, Boolean(redirectPool));
      if (redirectPool) checkPoolProtocol(protocol, poolProtocol.get(redirectPool)!);
      ((policy.rules as Parsed[] | null | undefined) ?? []).forEach(validateRule);
    }
  }
  for (const { spec, policies } of planned) {
    driver.listener({
      protocol: spec.protocol as string,
      allowed_cidrs: spec.allowed_cidrs as string[] | null,
    });
    if (policies.length > 0) driver.l7policy();
  }
  for (const p of fullPools) {
    driver.pool({
      protocol: p.protocol as string,
      lb_algorithm: p.lb_algorithm as string,
      session_persistence: p.session_persistence as Parsed | null | undefined,
    });
    for (const m of (p.members as Parsed[] | null | undefined) ?? []) driver.member(m);
    const hm = p.healthmonitor as Parsed | null | undefined;
    if (hm) driver.healthmonitor(hm.type as string);
  }
  return { pools: fullPools, listeners: planned };
}

/** Creates the planned objects under `lb`; returns the state changes the create transition settles. */
export function buildGraph(
  store: OctaviaStore,
  lb: LoadBalancerRecord,
  plan: GraphPlan,
  final: 'ACTIVE' | 'ERROR',
): Change[] {
  const created: Provisioned[] = [];
  const poolIds = new Map<string, string>();
  for (const spec of plan.pools) {
    const pool = newPool(spec, lb);
    store.addPool(pool);
    created.push(pool);
    poolIds.set(pool.name, pool.id);
    const hm = spec.healthmonitor as Parsed | null | undefined;
    if (hm) {
      const record = newHealthMonitor(hm, pool);
      store.addHealthMonitor(record);
      created.push(record);
    }
    for (const m of (spec.members as Parsed[] | null | undefined) ?? []) {
      const member = newMember(m, pool);
      store.addMember(member);
      created.push(member);
    }
  }
  for (const { spec, defaultPool, policies } of plan.listeners) {
    const listener = newListener(spec, lb, defaultPool ? (poolIds.get(defaultPool) ?? null) : null);
    // Octavia writes the listener row twice in a graph create (its L7 policies are attached after).
    listener.updated_at = listener.created_at;
    store.addListener(listener);
    created.push(listener);
    for (const { spec: p, redirectPool } of policies) {
      const policy = newPolicy(p, listener, redirectPool ? (poolIds.get(redirectPool) ?? null) : null);
      store.addL7Policy(policy);
      created.push(policy);
      for (const r of (p.rules as Parsed[] | null | undefined) ?? []) {
        const rule = newRule(r, policy);
        store.addL7Rule(rule);
        created.push(rule);
      }
    }
  }
  return created.map((record) => creating(record, final));
}
